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


def test_an_executor_whose_own_imports_fail_is_the_harness_s_failure_and_retried(tmp_path, monkeypatch):
    """Exit status HARNESS_FAILED before any request: ``harness-error`` (the verdict ``skipped``,
    never the candidate's crash), and the job is judged once more with fresh executors."""
    from kernlint.eval import isolation
    from kernlint.eval.policy import Policy, judge
    from kernlint.eval.wire import HARNESS_FAILED

    src = (FIXTURES / "problems" / "vector_add.py").read_text()
    honest = (FIXTURES / "candidates" / "vector_add" / "honest.py").read_text()
    job = {"problem": {"id": "vector_add", "kind": "kernelbench", "source": src},
           "candidate": {"id": "vector_add/honest", "source": honest}, "seeds": [0], "shape_variants": [0],
           "timing": False}
    real = isolation.Executors
    made = []

    class FirstFails(real):
        def __init__(self, *args):
            super().__init__(*args)
            made.append(self)
            if len(made) == 1:  # the candidate's executor of the first pair stops as a failed import would
                self.cand.proc.kill()
                self.cand = isolation.Process(self.cand.dir.parent, "candidate-x", None, 2048, 60,
                                              wrapper=["sh", "-c", f"exit {HARNESS_FAILED}", "sh"])

    monkeypatch.setattr(isolation, "Executors", FirstFails)
    res = isolation.run_job(job, timeout_s=120, mem_limit_mb=4096)
    assert len(made) == 2 and res["retried"] and res["status"] == "ok", res.get("error")
    first = isolation.Process(tmp_path, "alone", None, 2048, 60, wrapper=["sh", "-c", f"exit {HARNESS_FAILED}", "sh"])
    try:
        first.request({"op": "load"}, deadline=__import__("time").monotonic() + 30)
    except isolation.Gone as g:
        kind, detail = g.kind()
    assert kind == "harness-error" and "own imports failed" in detail
    assert judge({"status": "error", "error_kind": kind, "error": detail}, [], Policy())[0] == "skipped"
