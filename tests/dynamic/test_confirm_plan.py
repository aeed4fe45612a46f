"""Planning the fewest tool processes, the no-GPU path and the GPU script's dry run (CPU only)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kernlint.dynamic import confirm as confirm_mod
from kernlint.dynamic.confirm import GpuRequired, confirm, plan
from kernlint.dynamic.sanitizer import sanitizer_command
from kernlint.model import Finding, Level, Span, Verdict

from .fixture_marks import FIXTURES

ROOT = Path(__file__).resolve().parents[2]


def _f(rule, path, line, kernel):
    return Finding(rule=rule, path=str(path), span=Span.point(line), message="m", level=Level.ERROR, kernel=kernel)


def test_plan_groups_one_process_per_tool():
    path = FIXTURES / "oob_no_mask_bad.py"
    findings = [_f("KL101", path, 14, "add_kernel"), _f("KL101", path, 15, "add_kernel"),
                _f("KL102", path, 16, "add_kernel"), _f("KL103", path, 16, "add_kernel")]
    steps = plan(findings, str(path), gpu=True)
    assert [(s.kind, s.tool) for s in steps] == [("sanitizer", "memcheck"), ("interpreter", "interpreter")]
    memcheck, interp = steps
    assert len(memcheck.findings) == 3
    # the race only the interpreter sees; the out-of-bounds ones only if memcheck leaves them unconfirmed
    assert [f.rule for f in interp.findings] == ["KL103"] and len(interp.second_opinion) == 3
    memcheck.findings[0].verdict = Verdict.CONFIRMED
    assert len(interp.to_judge()) == 3
    assert memcheck.env == {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
    assert "--padding" in memcheck.argv and "kns=add_kernel" in memcheck.argv
    # without a GPU the memcheck findings fall back to the interpreter: one process in all
    steps = plan(findings, str(path), gpu=False)
    assert [(s.kind, len(s.findings)) for s in steps] == [("interpreter", 4)]


def test_no_gpu_require_gpu_raises(monkeypatch):
    monkeypatch.setattr(confirm_mod, "cuda_available", lambda: False)
    with pytest.raises(GpuRequired):
        confirm([], "x.py", require_gpu=True)


def test_no_gpu_uses_interpreter_and_says_so():
    path = FIXTURES / "oob_le_mask_bad.py"
    findings = [_f("KL101", path, 15, "scale_kernel"), _f("KL102", path, 16, "scale_kernel")]
    result = confirm(findings, str(path), gpu=False)
    assert any("no CUDA GPU" in n for n in result.notices)
    assert [f.verdict for f in result.findings] == [Verdict.CONFIRMED, Verdict.CONFIRMED]
    assert result.findings[0].measurements["max_bytes_past_end"] == 4
    assert result.new_findings == []


def test_no_gpu_without_fallback_leaves_findings_suspected():
    path = FIXTURES / "oob_le_mask_bad.py"
    findings = [_f("KL101", path, 15, "scale_kernel")]
    result = confirm(findings, str(path), gpu=False, interpreter_fallback=False)
    assert result.findings[0].verdict == Verdict.SUSPECTED and result.steps == []


def test_sanitizer_command_rejects_unknown_tool():
    with pytest.raises(ValueError):
        sanitizer_command("leakcheck", ["python", "x.py"])


def test_gpu_script_dry_run_prints_batched_and_raw_commands():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "dynamic_gpu_check.py"), "unused", "--dry-run",
                          "--fixtures", "race_global_store_bad"], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert len(lines) == 10  # 4 sanitizer tools + ncu, batched and raw
    assert sum("--clock-control none" in ln for ln in lines) == 1
    assert all("race_global_store_bad.py" in ln for ln in lines)


@pytest.mark.gpu
@pytest.mark.skipif(not confirm_mod.cuda_available(), reason="needs a CUDA GPU")
def test_gpu_memcheck_confirms_planted_out_of_bounds():
    path = FIXTURES / "oob_no_mask_bad.py"
    findings = [_f("KL101", path, 14, "add_kernel"), _f("KL102", path, 16, "add_kernel")]
    result = confirm(findings, str(path), require_gpu=True)
    assert all(f.verdict == Verdict.CONFIRMED for f in result.findings)


@pytest.mark.gpu
@pytest.mark.skipif(not confirm_mod.cuda_available(), reason="needs a CUDA GPU")
def test_gpu_memcheck_refutes_clean_twin():
    path = FIXTURES / "oob_no_mask_good.py"
    findings = [_f("KL101", path, 15, "add_kernel")]
    result = confirm(findings, str(path), require_gpu=True)
    assert result.findings[0].verdict == Verdict.REFUTED


def test_discovery_plan_without_a_gpu_is_one_interpreter_process_over_every_kernel():
    steps = plan([], str(FIXTURES / "race_reader_writer_bad.py"), gpu=False, discover=True)
    assert [(s.kind, s.every_kernel) for s in steps] == [("interpreter", True)]
    # a KL104 joins it: the invalid access its wrap causes confirms it
    kl104 = _f("KL104", FIXTURES / "race_reader_writer_bad.py", 14, "diff_inplace_kernel")
    (step,) = plan([kl104], str(FIXTURES / "race_reader_writer_bad.py"), gpu=False, discover=True)
    assert step.to_judge() == [kl104]
    assert plan([kl104], str(FIXTURES / "race_reader_writer_bad.py"), gpu=False) == []  # judge mode: skipped


def test_discovery_plan_on_a_gpu_runs_memcheck_over_every_kernel_and_the_tools_the_source_needs():
    path = FIXTURES / "oob_no_mask_bad.py"
    findings = [_f("KL101", path, 14, "add_kernel")]
    steps = plan(findings, str(path), gpu=True, discover=True)
    assert [(s.kind, s.tool) for s in steps] == [("sanitizer", "memcheck"), ("interpreter", "interpreter")]
    assert not any(a.startswith("kns=") or "regex:" in a for a in steps[0].argv)  # no kernel filter
    steps = plan(findings, str(path), gpu=True, discover=True, features=frozenset({"shared", "barrier"}),
                 gsan_available=True)
    assert [s.tool for s in steps] == ["memcheck", "racecheck", "synccheck", "interpreter", "gsan"]
    assert "--gsan" in steps[-1].argv
    # judge mode: only what the findings ask for, limited to their kernels
    (memcheck, interp) = plan(findings, str(path), gpu=True)
    assert any("add_kernel" in a for a in memcheck.argv) and not interp.every_kernel


def test_gsan_assertions_become_race_evidence():
    from kernlint.dynamic import gsan

    text = ("/src/k.py:17: scatter_kernel: block: [3,0,0], thread: [5,0,0] Assertion `Write after write race "
            "detected` failed.\n/src/k.py:17: scatter_kernel: block: [4,0,0], thread: [1,0,0] Assertion `Write after "
            "write race detected` failed.\n/src/k.py:9: f: block: [1,0,0], thread: [0,0,0] Assertion `Read after "
            "write race detected` failed.\n")
    ev = gsan.parse(text)
    assert [(e.kind, e.path, e.line, e.detail["programs"]) for e in ev] == [
        ("race-write", "/src/k.py", 17, [[3, 0, 0]]), ("race-read", "/src/k.py", 9, [[1, 0, 0]])]
    assert all(e.category == "race" for e in ev)


def test_entry_points_and_run_files(tmp_path):
    from kernlint.confirm_glue import command_argv
    from kernlint.dynamic.interp_runner import has_entry_point

    assert command_argv("wrapper.py") == [sys.executable, str(Path("wrapper.py").resolve())]
    assert command_argv("pytest tests/x.py -k add") == ["pytest", "tests/x.py", "-k", "add"]
    lib = tmp_path / "lib.py"
    lib.write_text("import triton\n\n@triton.jit\ndef k(x):\n    pass\n")
    script = tmp_path / "script.py"
    script.write_text("def main():\n    pass\n\nif __name__ == '__main__':\n    main()\n")
    assert not has_entry_point(str(lib)) and has_entry_point(str(script))
    assert has_entry_point(str(FIXTURES / "oob_no_mask_bad.py"))
