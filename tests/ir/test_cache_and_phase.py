"""The on-disk cache: a warm run compiles nothing and returns the same findings; edits invalidate."""

from __future__ import annotations

import time

from kernlint.ir.phase import attach_to_source_findings, run_ir_phase
from kernlint.model import Finding, Level, Span

SOURCE = '''import triton
import triton.language as tl


@triton.jit
def _get(ptr, offs):
    return tl.load(ptr + offs)


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, _get(x_ptr, offs), mask=offs < n)
'''


def test_warm_run_hits_cache_and_matches(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(SOURCE)
    cache = tmp_path / "cache"
    cold_stats, warm_stats = {}, {}
    t0 = time.perf_counter()
    cold = run_ir_phase([str(path)], cache_dir=cache, stats=cold_stats)
    t1 = time.perf_counter()
    warm = run_ir_phase([str(path)], cache_dir=cache, stats=warm_stats)
    t2 = time.perf_counter()
    assert cold_stats["compiled"] == 1 and warm_stats["compiled"] == 0
    assert warm_stats["findings_cache_hits"] == 1
    assert [f.to_dict() for f in cold] == [f.to_dict() for f in warm]
    assert [f.rule for f in cold] == ["KL301"]
    assert (t2 - t1) * 5 < (t1 - t0)
    # a different rule selection reuses the compiled artefact
    other = {}
    run_ir_phase([str(path)], cache_dir=cache, select=["KL303"], stats=other)
    assert other["compiled"] == 0 and other["artifact_cache_hits"] == 1
    # editing the file invalidates
    path.write_text(SOURCE.replace("tl.load(ptr + offs)", "tl.load(ptr + offs, mask=offs < 1024)"))
    edited = {}
    assert run_ir_phase([str(path)], cache_dir=cache, stats=edited) == []
    assert edited["compiled"] == 1


def test_other_arch_is_a_separate_entry(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(SOURCE)
    stats = {}
    findings = run_ir_phase([str(path)], arch="sm_80", cache_dir=tmp_path / "c", stats=stats)
    assert stats["compiled"] == 1
    assert findings and findings[0].evidence["target"] == "sm_80"


def test_module_side_effects_do_not_run(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "k.py"
    path.write_text(SOURCE + f"\nopen({str(marker)!r}, 'w').write('x')\n")
    run_ir_phase([str(path)], cache_dir=None, select=["KL300"])
    assert not marker.exists()


def test_import_error_is_a_finding_at_its_line(tmp_path):
    path = tmp_path / "k.py"
    path.write_text("import triton\nimport not_a_module_kernlint\n" + SOURCE.split("\n", 1)[1])
    findings = run_ir_phase([str(path)], cache_dir=None, select=["KL300"])
    assert [(f.rule, f.span.line) for f in findings] == [("KL300", 2)]
    # the environment's, not the kernel's: a note, never an error
    assert findings[0].level is Level.NOTE and "was not compiled" in findings[0].message


def test_a_module_an_installed_package_no_longer_has_is_an_error(tmp_path):
    # (``triton.ops`` went away in Triton 3): the module fails wherever this Triton is installed
    path = tmp_path / "k.py"
    path.write_text("import triton\nimport triton.not_a_module_kernlint\n" + SOURCE.split("\n", 1)[1])
    findings = run_ir_phase([str(path)], cache_dir=None, select=["KL300"])
    assert [(f.rule, f.span.line, f.level) for f in findings] == [("KL300", 2, Level.ERROR)]


def test_timeout_becomes_a_finding(tmp_path, monkeypatch):
    import kernlint.ir.compile as compile_module

    real = compile_module.compile_job

    def slow(job):  # outlasts the timeout however warm Triton's own cache of this kernel is
        time.sleep(2)
        return real(job)

    # (the workers are forked: they run the module as the parent left it)
    monkeypatch.setattr(compile_module, "compile_job", slow)
    path = tmp_path / "k.py"
    path.write_text(SOURCE)
    findings = run_ir_phase([str(path)], cache_dir=None, select=["KL300"], timeout_s=0.01)
    assert [f.rule for f in findings] == ["KL300"]
    assert "timed out" in findings[0].message


def test_ir_evidence_attaches_to_a_source_finding(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(SOURCE)
    ir = run_ir_phase([str(path)], cache_dir=None, select=["KL301"])
    source = [Finding("KL101", str(path), Span(7, 12, 7, 30), "unmasked load", Level.WARNING)]
    try:
        remaining = attach_to_source_findings(source, ir)
    except KeyError:  # the core's KL101 is not in this checkout's catalogue
        return
    if source[0].rule in __import__("kernlint.catalogue", fromlist=["x"]).all_rules():
        assert remaining == [] and source[0].evidence["ir"][0]["rule"] == "KL301"


def test_a_kernlint_bug_planning_one_file_is_its_error_and_the_other_file_is_compiled(tmp_path, monkeypatch):
    import kernlint.ir.phase as ir_phase

    trips, fine = tmp_path / "a_trips.py", tmp_path / "b_fine.py"
    trips.write_text(SOURCE)
    fine.write_text(SOURCE)
    real = ir_phase.specializations_for

    def specializations_for(kernel, source, **kw):  # a stand-in for any bug, met on one file only
        if kernel.path.endswith("a_trips.py"):
            raise TypeError("'_Unknown' object is not iterable")
        return real(kernel, source, **kw)

    monkeypatch.setattr(ir_phase, "specializations_for", specializations_for)
    monkeypatch.setattr("kernlint.source.phase.RAISE_INTERNAL_ERRORS", False)
    monkeypatch.delenv("KERNLINT_DEBUG", raising=False)
    stats = {}
    findings = run_ir_phase([str(trips), str(fine)], cache_dir=None, stats=stats)
    (error,) = stats["errors"]
    assert error.path == str(trips) and error.message.startswith("internal error: TypeError: ")
    assert stats["compiled"] == 1 and {f.path for f in findings} == {str(fine)} and findings[0].rule == "KL301"


def test_check_with_ir_parses_each_file_once(tmp_path, monkeypatch):
    """``check --ir`` hands the source phase's model of the file to the IR phase: one parse, and
    the specialization comes from the launch facts (a block size bound by tuple unpacking)."""
    import ast

    import libcst

    from kernlint.config import Config
    from kernlint.pipeline import Options, run_check

    path = tmp_path / "k.py"
    path.write_text(SOURCE + "\n\ndef launch(x, y):\n    BLOCK, n = 256, x.numel()\n"
                             "    copy[(1,)](x, y, n, BLOCK=BLOCK)\n")
    parses: list[str] = []
    real_cst, real_ast = libcst.parse_module, ast.parse

    def cst_parse(*args, **kwargs):
        parses.append("libcst")
        return real_cst(*args, **kwargs)

    def ast_parse(source, filename="<unknown>", mode="exec", **kwargs):
        if mode == "exec":  # literal_eval of a config value parses an expression: not the module
            parses.append("ast")
        return real_ast(source, filename, mode, **kwargs)

    jobs: list = []
    monkeypatch.setattr(libcst, "parse_module", cst_parse)
    monkeypatch.setattr(ast, "parse", ast_parse)
    monkeypatch.setattr("kernlint.ir.phase.run_jobs", lambda pending, **kw: jobs.extend(pending) or {})
    run_check([path], Config(root=tmp_path), Options(ir_arch="sm_90"))
    assert parses == ["libcst"]
    (job,) = jobs  # ``_get`` is a helper, not compiled on its own
    assert job.kernel == "copy" and job.spec.constexprs == {"BLOCK": 256} and job.spec.origin == "launch"
