"""The source phase runs over all 184 TritonBench-G reference modules without crashing."""

import json

from kernlint.source.phase import lint_text
from tests.helpers import source_rules


def test_tritonbench_references_lint_without_crash(corpus):
    tasks = json.loads((corpus / "TritonBench_G_v1.json").read_text())
    assert len(tasks) == 184
    rules = source_rules()
    kernels = 0
    for i, task in enumerate(tasks):
        result, _ = lint_text(f"tb{i:03d}.py", task["output"], rules)
        assert result.errors == [], (i, result.errors)
        kernels += len(result.kernels)
        for f in result.findings:
            assert f.span.line >= 1 and f.message
    assert kernels >= 250
