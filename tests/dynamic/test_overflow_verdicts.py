"""A run shows an int32 offset overflow only at the sizes that wrap it: a run that saw nothing leaves
a KL104 finding inconclusive (never refuted), while an out-of-bounds finding on a line that ran is
refuted."""

from kernlint.dynamic.verdicts import apply_evidence
from kernlint.model import Finding, Level, Span, Verdict


def _finding(rule: str) -> Finding:
    return Finding(rule=rule, path="k.py", span=Span.point(7, 13), message="static", level=Level.WARNING,
                   kernel="rows")


def test_a_clean_run_leaves_an_overflow_inconclusive_and_refutes_an_access():
    judged, new, _ = apply_evidence([_finding("KL104"), _finding("KL101")], [], tool="compute-sanitizer memcheck",
                                    categories={"out-of-bounds", "int-overflow"}, executed=lambda f: True)
    verdicts = {f.rule: f.verdict for f in judged}
    assert verdicts == {"KL104": Verdict.INCONCLUSIVE, "KL101": Verdict.REFUTED} and new == []
    assert "witness" in judged[0].evidence["dynamic"][0]["note"]


def test_the_wrapped_access_a_run_shows_confirms_the_overflow():
    """memcheck on the H200 (2026-12-04) running fixtures/triton/huge_grid_overflow_bad.py: the store at
    line 15 lands 2 GiB before the buffer; the KL104 finding at line 14 is confirmed through it, and the
    run's failure (the illegal address stops the process) does not make it inconclusive."""
    from pathlib import Path

    from kernlint import catalogue
    from kernlint.dynamic import sanitizer
    from kernlint.source.phase import lint_text

    root = Path(__file__).resolve().parents[2]
    path = root / "fixtures" / "triton" / "huge_grid_overflow_bad.py"
    report = sanitizer.parse_report((root / "tests" / "data" / "dynamic" /
                                     "huge_grid_overflow_bad.memcheck.padding.txt").read_text(), "memcheck")
    result, _ = lint_text(str(path), path.read_text(), [catalogue.all_rules()["KL104"]()])
    (finding,) = result.findings
    judged, new, _ = apply_evidence([finding], [r.to_evidence() for r in report.records],
                                    tool="compute-sanitizer memcheck", categories={"int-overflow", "out-of-bounds"},
                                    executed=lambda f: None)
    assert judged[0].verdict == Verdict.CONFIRMED and new == []
    # the wrapped offset lands 2 GiB before the buffer (the tool writes "2,147,481,088 bytes before")
    assert judged[0].measurements["max_bytes_before_start"] == report.records[0].bytes_before > 2**30


def test_an_index_of_minus_one_into_a_small_tensor_is_no_wrap():
    """The interpreter saw a load 4 bytes before a 112-byte tensor (a pad label of -1 used as an
    index): the out-of-bounds finding on that line is confirmed by it, the KL104 finding on the same
    line is not (a wrapped int32 offset lands 2 GiB away, counting the tensor's own size)."""
    from kernlint.dynamic.interp_check import InterpRecord

    record = InterpRecord(kind="oob-read", kernel="rows", path="k.py", line=7, lanes=1, tensor="x",
                          tensor_bytes=112, bytes_before_start=4, program_count=1)
    overflow, access = _finding("KL104"), _finding("KL101")  # (kernel "rows": the record's)
    judged, new, _ = apply_evidence([overflow, access], [record.to_evidence()], tool="interpreter",
                                    categories={"out-of-bounds", "int-overflow"}, executed=lambda f: True)
    verdicts = {f.rule: f.verdict for f in judged}
    assert verdicts["KL101"] == Verdict.CONFIRMED and verdicts["KL104"] != Verdict.CONFIRMED
    far = InterpRecord(kind="oob-read", kernel="rows", path="k.py", line=7, lanes=1, tensor="x",
                       tensor_bytes=112, bytes_before_start=2**31, program_count=1)
    overflow = _finding("KL104")
    judged, _, _ = apply_evidence([overflow], [far.to_evidence()], tool="interpreter",
                                  categories={"out-of-bounds", "int-overflow"}, executed=lambda f: True)
    assert judged[0].verdict == Verdict.CONFIRMED


def test_a_clean_run_leaves_a_foreign_stride_inconclusive_and_an_invalid_access_confirms_it():
    """KL114's defect leaves the tensor only where the stride passed is the larger one: a run at sizes
    where it is smaller shows nothing and refutes nothing; an invalid access at its line confirms it."""
    from kernlint.dynamic.interp_check import InterpRecord

    (clean,), _, _ = apply_evidence([_finding("KL114")], [], tool="interpreter", categories={"out-of-bounds"},
                                    executed=lambda f: True)
    assert clean.verdict == Verdict.INCONCLUSIVE and "inside the tensor" in clean.evidence["dynamic"][0]["note"]
    record = InterpRecord(kind="oob-read", kernel="rows", path="k.py", line=7, lanes=4, tensor="x",
                          tensor_bytes=48, bytes_past_end=16, program_count=2)
    (seen,), _, _ = apply_evidence([_finding("KL114")], [record.to_evidence()], tool="interpreter",
                                   categories={"out-of-bounds"}, executed=lambda f: True)
    assert seen.verdict == Verdict.CONFIRMED
