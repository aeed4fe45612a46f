"""Injected faults complete with every record written and classified; the batch never stops."""

from __future__ import annotations

import json

from conftest import FIXTURES
from helpers import expected_records


def test_fault_batch_classified(tmp_path):
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import load_candidates, load_problems
    from kernlint.eval.runner import run_batch

    expected = expected_records(FIXTURES / "faults")
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
        assert exp.get("error", "") in recs[cid]["error"], (cid, recs[cid]["error"])
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


def test_writes_outside_the_executor_folder_are_blocked(tmp_path):
    """In a fresh interpreter (an audit hook cannot be removed): writes, creates, removes and
    renames inside the folder work; outside it, and through a symlink that leads out, they raise."""
    import subprocess
    import sys
    import textwrap

    inside, outside = tmp_path / "executor", tmp_path / "judge"
    inside.mkdir()
    outside.mkdir()
    (outside / "verdict.json").write_text("{}")
    code = textwrap.dedent(f"""
        import os, shutil
        from pathlib import Path
        from kernlint.eval import guards
        inside, outside = Path({str(inside)!r}), Path({str(outside)!r})
        guards.block_writes_outside(str(inside))
        (inside / "a.txt").write_text("ok"); os.rename(inside / "a.txt", inside / "b.txt"); os.mkdir(inside / "d")
        (inside / "b.txt").unlink(); open(outside / "verdict.json").read()
        os.chdir(inside); open("rel.txt", "w").close(); os.remove("rel.txt"); os.mkdir("rd"); os.rmdir("rd")
        os.symlink(outside, inside / "out")
        blocked = []
        for name, act in [("write", lambda: (outside / "verdict.json").write_text("passed")),
                          ("append", lambda: open(outside / "x", "a")),
                          ("os.open", lambda: os.open(outside / "y", os.O_CREAT | os.O_WRONLY)),
                          ("symlink", lambda: (inside / "out" / "verdict.json").write_text("passed")),
                          ("remove", lambda: os.remove(outside / "verdict.json")),
                          ("rename", lambda: os.rename(outside / "verdict.json", inside / "v.json")),
                          ("rmtree", lambda: shutil.rmtree(outside)),
                          ("relative", lambda: os.remove("../judge/verdict.json"))]:
            try:
                act()
            except guards.WriteBlocked:
                blocked.append(name)
        print(",".join(blocked))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "write,append,os.open,symlink,remove,rename,rmtree,relative"
    assert (outside / "verdict.json").read_text() == "{}"


def test_the_thread_watchdog_stops_a_thread_explosion_without_an_address_space_limit():
    """On a GPU there is no address-space limit (CUDA reserves too much of it): the watchdog on the
    executor's thread count is what stops a candidate that starts threads without end."""
    from kernlint.eval import isolation

    src = (FIXTURES / "problems" / "vector_add.py").read_text()
    cand = (FIXTURES / "faults" / "vector_add" / "fault_thread_explosion.py").read_text()
    job = {"problem": {"id": "vector_add", "kind": "kernelbench", "source": src},
           "candidate": {"id": "vector_add/fault_thread_explosion", "source": cand}, "seeds": [0],
           "shape_variants": [0], "timing": False}
    res = isolation.run_job(job, timeout_s=120, mem_limit_mb=None)
    assert res["error_kind"] == "thread-limit", res.get("error")
    assert f"more than {isolation.THREAD_LIMIT} threads" in res["error"]


def test_workers_keep_nvlink_multicast_off_unless_the_judge_says_otherwise(monkeypatch):
    from kernlint.eval import isolation

    monkeypatch.delenv("NCCL_NVLS_ENABLE", raising=False)
    assert isolation.worker_env({}, home="/nonexistent")["NCCL_NVLS_ENABLE"] == "0"
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")
    monkeypatch.setenv("NCCL_DEBUG", "INFO")  # the rest of the judge's environment stays scrubbed
    env = isolation.worker_env({}, home="/nonexistent")
    assert env["NCCL_NVLS_ENABLE"] == "0" and "NCCL_DEBUG" not in env
