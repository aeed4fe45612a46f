"""Injected faults complete with every record written and classified; the batch never stops."""

from __future__ import annotations

import json

from conftest import FIXTURES


def test_fault_batch_classified(tmp_path):
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import load_candidates, load_problems
    from kernlint.eval.runner import run_batch

    expected = json.loads((FIXTURES / "faults" / "expected.json").read_text())
    expected.pop("_doc")
    probs = load_problems(FIXTURES / "problems")
    cands = load_candidates(FIXTURES / "faults", probs)
    honest = load_candidates(FIXTURES / "candidates", probs)
    cands.append(next(c for c in honest if c.id == "vector_add/honest"))
    out = tmp_path / "records.jsonl"
    opts = EvalOptions(seeds=(0,), shape_variants=(0,), timeout_s=40, mem_limit_mb=2048, timing=False)
    run_batch(probs, cands, out, opts, workers=2)
    recs = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(recs) == set(expected) | {"vector_add/honest"}
    assert recs["vector_add/honest"]["verdict"] == "passed"
    for cid, exp in expected.items():
        assert recs[cid]["verdict"] == exp["verdict"], (cid, recs[cid]["reasons"])
        assert recs[cid]["error_kind"] in exp["error_kind"], (cid, recs[cid]["error"])
        assert recs[cid]["stage"].startswith("correctness"), recs[cid]["stage"]


def test_injected_fault_option_and_network_block(tmp_path):
    from kernlint.eval import isolation

    job = {"problem": {"kind": "kernelbench", "source": ""}, "candidate": {"source": ""}, "inject_fault": "segfault"}
    res = isolation.run_job(job, timeout_s=30, mem_limit_mb=2048)
    assert res["error_kind"] == "crash" and res["signal"] == "SIGSEGV"
    src = (FIXTURES / "problems" / "vector_add.py").read_text()
    probe = src + "\nimport socket\ntry:\n    socket.create_connection(('127.0.0.1', 9), timeout=1)\nexcept OSError as e:\n    BLOCKED = type(e).__name__\n"
    cand = probe + "\nclass ModelNew(Model):\n    def forward(self, a, b):\n        raise RuntimeError(BLOCKED)\n"
    job = {"problem": {"kind": "kernelbench", "source": src}, "candidate": {"source": cand},
           "seeds": [0], "shape_variants": [0], "timing": False}
    res = isolation.run_job(job, timeout_s=60, mem_limit_mb=4096, env={"SECRET_TOKEN": "x"})
    assert "NetworkDisabled" in res["error"]
    env = isolation.worker_env({}, home="/nonexistent")
    assert env["https_proxy"] == isolation.DEAD_PROXY
    assert not any("TOKEN" in k or "KEY" in k for k in env if k != "SECRET_TOKEN")
