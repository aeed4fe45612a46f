"""TileLang kernels in the IR phase.

Without TileLang: one notice, no findings, the exit code unchanged (always runs). With TileLang
and nvcc: kernels are lowered to CUDA on the CPU, compiled to PTX and linted, with findings on the
user's statements (the planted bugs of fixtures/ir/tilelang_* are checked by test_ir_fixtures).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernlint.ir import phase
from kernlint.ir.phase import run_ir_phase
from kernlint.source.phase import read_module
from kernlint.ir.tilelang import NOTICE_MISSING, nvcc_path, pin_line_directives, tilelang_available, tilelang_entries

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "tilelang"

needs_tilelang = pytest.mark.skipif(
    not tilelang_available() or nvcc_path() is None,
    reason="needs the tilelang extra and nvcc (pip install 'kernlint[tilelang]')")


# ---------------------------------------------------------------- no TileLang: the notice path


def test_without_tilelang_one_notice_and_no_work(monkeypatch, tmp_path):
    monkeypatch.setattr(phase, "tilelang_available", lambda: False)
    stats: dict = {}
    files = [str(FIXTURES / "softmax_tail_good.py"), str(FIXTURES / "gemm_tail_good.py")]
    assert run_ir_phase(files, cache_dir=tmp_path, stats=stats) == []
    assert stats["notices"] == [NOTICE_MISSING]
    assert stats["specializations"] == 0 and stats["compiled"] == 0


def _check(args, cwd):
    # a TileLang that cannot be imported, whatever this machine has installed
    code = ("import sys; sys.modules['tilelang'] = None; from kernlint.cli import entry; "
            f"sys.argv = ['kernlint', *{[str(a) for a in args]!r}]; entry()")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_cli_says_so_once_and_keeps_the_exit_code(tmp_path):
    for name in ("softmax_tail_good.py", "gemm_tail_good.py", "softmax_tail_bad.py"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    plain = _check(["check", "."], tmp_path)
    with_ir = _check(["check", ".", "--ir"], tmp_path)
    assert with_ir.returncode == plain.returncode == 1, with_ir.stderr
    assert with_ir.stdout.count(NOTICE_MISSING) == 1, with_ir.stdout
    assert NOTICE_MISSING not in plain.stdout
    (tmp_path / "softmax_tail_bad.py").unlink()
    assert _check(["check", ".", "--ir"], tmp_path).returncode == 0


# ---------------------------------------------------------------- what is lowered (source only)


def test_entries_take_factory_arguments_from_call_sites():
    path = FIXTURES / "gemm_fp16_acc_bad.py"
    (entry,) = tilelang_entries(read_module(str(path), path.read_text()))
    assert entry.factory == "matmul" and entry.names == {"matmul", "main"}
    assert entry.def_line == 10 and entry.op_lines["gemm"] == [23]
    (spec,) = entry.specs
    assert spec.origin == "launch"
    assert {k: spec.constexprs[k] for k in ("M", "N", "K")} == {"M": 1024, "N": 1024, "K": 8192}


def test_entries_guess_what_no_call_site_gives(tmp_path):
    src = (ROOT / "fixtures" / "ir" / "tilelang_bank_conflict_good.py").read_text().split("\n\ndef run")[0] + "\n"
    path = tmp_path / "k.py"
    path.write_text(src)
    (entry,) = tilelang_entries(read_module(str(path), src))
    (spec,) = entry.specs
    assert spec.origin == "fallback" and spec.constexprs["M"] == spec.constexprs["N"] == 1024
    assert "guessed M,N" in spec.label


def test_line_directives_are_pinned_and_library_code_moves_to_its_tile_op(tmp_path):
    user = str(tmp_path / "k.py")
    lib = "/site-packages/tilelang/cuda/intrinsics/macro/mma_macro_generator.py"
    cuda = "\n".join([
        "extern \"C\" __global__ void main_kernel(float* A) {",
        f'#line 10 "{user}"',
        "  float acc[4];",
        "  int x = 0;",
        f'#line 19 "{user}"',
        "  acc[0] = 0.f;",
        f'#line 402 "{lib}"',
        "  mma(acc);",
        "  mma(acc);",
        f'#line 24 "{user}"',
        "  A[0] = acc[0];",
        "}",
    ])
    out, counts = pin_line_directives(cuda, user, {"gemm": [12, 23]}, def_line=10, body=(9, 24))
    lines = out.splitlines()
    pinned = [(lines[i - 1], ln) for i, ln in enumerate(lines) if i and lines[i - 1].startswith("#line")]
    governing = {code.strip(): int(d.split()[1]) for d, code in pinned}
    # every code line names its own line: no renumbering after a directive
    assert governing["float acc[4];"] == 10 and governing["int x = 0;"] == 10
    assert governing["acc[0] = 0.f;"] == 19
    assert governing["mma(acc);"] == 23  # the T.gemm after the last user line (19), not the one at 12
    assert governing["A[0] = acc[0];"] == 24
    assert counts == {"direct": 3, "op": 2, "def": 2, "unmapped": 1}  # the closing brace is under line 24


# ---------------------------------------------------------------- lowering (TileLang + nvcc)


@needs_tilelang
def test_findings_sit_on_the_statement(ir_cache):
    # fixtures/ir/tilelang_*: the planted bugs are checked with the other IR fixtures; here, where
    # they land: the line of the statement and its first column (#line directives carry no column)
    path = ROOT / "fixtures" / "ir" / "tilelang_bank_conflict_bad.py"
    stats: dict = {}
    (finding,) = run_ir_phase([str(path)], cache_dir=ir_cache, jobs=1, stats=stats)
    assert stats["tilelang_kernels"] == 1 and stats["failed"] == 0
    line = path.read_text().splitlines()[finding.span.line - 1]
    assert line.strip() == "B[bx * blk + i, by * blk + j] = tile[j, i]"
    assert finding.span.col == len(line) - len(line.lstrip()) + 1
    assert finding.measurements["conflict_ways"] == 32.0


@needs_tilelang
def test_the_profiler_is_pointed_at_the_kernel_tilelang_generates(ir_cache):
    # TileLang compiles `transpose` as a kernel named after its prim_func: ncu's kernel filter must
    # name that one (filtering on `transpose` profiled nothing, so the finding stayed inconclusive)
    from kernlint.dynamic.confirm import plan

    path = ROOT / "fixtures" / "ir" / "tilelang_bank_conflict_bad.py"
    (finding,) = run_ir_phase([str(path)], cache_dir=ir_cache, jobs=1)
    assert finding.kernel == "transpose" and finding.device_symbol == "main_kernel"
    (step,) = plan([finding], str(path), gpu=True)
    assert step.tool == "ncu" and "regex:^(main_kernel)($|[^A-Za-z0-9_])" in step.argv


@needs_tilelang
def test_kernels_sharing_a_gpu_name_are_not_judged_by_ncu(ir_cache, tmp_path):
    # both prim_funcs are called `main`, so both kernels run as main_kernel: ncu's rows for that name
    # mix the two, and a conflict measured in one must not confirm a finding in the other
    import sys

    from kernlint.dynamic.confirm import Step, _run_ncu
    from kernlint.model import Verdict

    text = (ROOT / "fixtures" / "ir" / "tilelang_bank_conflict_bad.py").read_text().split("\n\ndef run")[0]
    twin = text.split("@tilelang.jit", 1)[1].replace("def transpose(", "def transpose_again(")
    path = tmp_path / "two_kernels.py"
    path.write_text(text + "\n\n@tilelang.jit" + twin + "\n")
    findings = run_ir_phase([str(path)], cache_dir=ir_cache, jobs=1)
    assert {f.kernel for f in findings} == {"transpose", "transpose_again"}
    assert all(f.evidence["device_symbol_shared_by"] == ["transpose", "transpose_again"] for f in findings)
    again = run_ir_phase([str(path)], cache_dir=ir_cache, jobs=1)  # from the cache: the same verdict on names
    assert [f.evidence.get("device_symbol_shared_by") for f in again] == [["transpose", "transpose_again"]] * 2
    step = Step("ncu", "ncu", findings=findings, argv=[sys.executable, "-c", "pass"])
    judged, _, _ = _run_ncu(step, None, 60)
    assert [f.verdict for f in judged] == [Verdict.INCONCLUSIVE] * 2
    assert "cannot be told apart" in judged[0].evidence["dynamic"][-1]["note"]
    # one kernel alone keeps its own name to itself
    (alone,) = run_ir_phase([str(ROOT / "fixtures" / "ir" / "tilelang_bank_conflict_bad.py")], cache_dir=ir_cache, jobs=1)
    assert "device_symbol_shared_by" not in alone.evidence


@needs_tilelang
def test_gemm_lowers_with_statement_level_locations(ir_cache):
    path = FIXTURES / "gemm_fp16_acc_good.py"
    findings = run_ir_phase([str(path)], cache_dir=ir_cache, select=["KL305"], jobs=1)
    # the accumulator is stored to global memory straight from the wgmma fragment layout: 16 bytes
    # per 32-byte sector; reported on the T.copy that does it (staging through shared memory fixes it)
    assert [(f.rule, f.span.line) for f in findings] == [("KL305", 24)]
    assert findings[0].measurements["sector_ratio"] == 2.0


@needs_tilelang
def test_kernels_sharing_a_gpu_name_are_told_apart_by_their_launch_shape(ir_cache):
    # fixtures/ir/tilelang_shared_name_bad.py: a transpose (128x128 blocks of 128 threads at its run()
    # sizes) and a staged copy (64x64 of 256) both run as main_kernel. The IR phase records each
    # kernel's launch shape; ncu's rows recorded on an H200 for that file are then told apart.
    import sys

    from kernlint.dynamic.confirm import Step, _run_ncu
    from kernlint.model import Verdict

    path = ROOT / "fixtures" / "ir" / "tilelang_shared_name_bad.py"
    (finding,) = run_ir_phase([str(path)], cache_dir=ir_cache, jobs=1)
    assert finding.kernel == "transpose" and finding.device_symbol == "main_kernel"
    assert finding.evidence["launch_config"] == {"grid": [128, 128, 1], "block": [128, 1, 1]}
    assert finding.evidence["device_symbol_launches"]["staged_copy"] == [{"grid": [64, 64, 1], "block": [256, 1, 1]}]
    recorded = (ROOT / "tests" / "data" / "dynamic" / "tilelang_shared_name_bad.ncu.plain.txt").read_text()
    step = Step("ncu", "ncu", findings=[finding], argv=[sys.executable, "-c", f"import sys; sys.stdout.write({recorded!r})"])
    (judged,) = _run_ncu(step, None, 60)[0]
    assert judged.verdict is Verdict.CONFIRMED, judged.evidence["dynamic"]
    assert judged.evidence["dynamic"][-1]["launches"] == 1
    assert 0.99 < judged.measurements["measured_over_predicted"] < 1.01
