"""Each IR rule's bad examples yield exactly that rule at the marked lines; good ones yield nothing."""

from __future__ import annotations

import pytest

from kernlint.ir.phase import ir_rules, run_ir_phase
from kernlint.rule import expected_lines

CASES = [(cls, kind, i) for cls in ir_rules() for kind in ("bad", "good")
         for i in range(len(getattr(cls, kind)))]


def test_ir_rules_are_catalogued_and_valid():
    codes = [cls.code for cls in ir_rules()]
    assert {"KL300", "KL301", "KL302", "KL303", "KL304", "KL305", "KL306", "KL307"} <= set(codes)
    for cls in ir_rules():
        assert cls.validate() == [], cls.validate()


@pytest.mark.parametrize("cls,kind,index", CASES, ids=[f"{c.code}-{k}{i}" for c, k, i in CASES])
def test_example(cls, kind, index, tmp_path, ir_cache):
    source = getattr(cls, kind)[index]
    path = tmp_path / f"{cls.code.lower()}_{kind}{index}.py"
    path.write_text(source)
    findings = run_ir_phase([str(path)], select=[cls.code], cache_dir=ir_cache, jobs=1)
    got = {(f.span.line, f.rule) for f in findings}
    want = {(line, code) for line, codes in expected_lines(source).items() for code in codes
            if code == cls.code}
    assert got == want, [f.message for f in findings]
    for f in findings:
        assert f.phase.value == "ir"
        assert f.evidence["specialization_label"]
        assert f.evidence["excerpt"]
