"""A batch's warm slot: the reference's values measured once per problem and reused (named in the
record), executors started ahead of their job, and a candidate in a spare executor still sandboxed."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import FIXTURES, cuda_available
from test_boundary import PROBE, _probe

from kernlint.eval.reuse import ProblemCache, Reuse

JOB = {"problem": {"id": "p", "kind": "kernelbench", "source": "x = 1"}, "candidate": {"id": "p/a"}}
CLEAN = {"status": "ok", "cheats": [], "correctness": {"passed_all": True}}


def test_a_value_is_measured_once_and_names_its_source():
    cache = ProblemCache()
    calls = []
    first = Reuse(cache, JOB)
    assert first.value("timing", "dev", lambda: calls.append(1) or {"ms": 1.0}, 50) == {"ms": 1.0}
    first.commit(dict(CLEAN))
    later = Reuse(cache, {**JOB, "candidate": {"id": "p/b"}})
    got = later.value("timing", "dev", lambda: calls.append(2) or {"ms": 9.0}, 50)
    assert got == {"ms": 1.0} and calls == [1]
    res = dict(CLEAN)
    later.commit(res)
    assert res["reused"] == {"timing": "p/a"}
    got["ms"] = 5.0  # a reused value is a copy: a judge cannot change what the next one gets
    assert Reuse(cache, JOB).value("timing", "dev", lambda: None, 50) == {"ms": 1.0}


def test_other_options_devices_and_problems_do_not_share():
    cache = ProblemCache()
    r = Reuse(cache, JOB)
    r.value("timing", "dev", lambda: 1, 50)
    r.commit(dict(CLEAN))
    other_source = {**JOB, "problem": {**JOB["problem"], "source": "x = 2"}}
    for job, device, parts in ((JOB, "dev", (20,)), (JOB, "other", (50,)), (other_source, "dev", (50,))):
        assert Reuse(cache, job).value("timing", device, lambda: 2, *parts) == 2


def test_times_of_an_unclean_run_are_not_kept():
    for res in ({**CLEAN, "cheats": [{"reason": "background-thread"}]}, {**CLEAN, "status": "error"},
                {**CLEAN, "correctness": {"passed_all": False}}):
        cache = ProblemCache()
        r = Reuse(cache, JOB)
        r.value("timing", "dev", lambda: 1)
        r.value("flops", "dev", lambda: 10, timed=False)  # no candidate can change it: kept
        r.commit(res)
        assert len(cache) == 1 and Reuse(cache, JOB).value("flops", "dev", lambda: 0, timed=False) == 10


def test_spares_fit_only_the_sandbox_they_were_started_for():
    from kernlint.eval.isolation import Spares

    spares = Spares()
    try:
        first, ahead = spares.take({"A": "1"}, 2048, 60, None)
        assert not ahead
        first.close()
        started = spares.next
        second, ahead = spares.take({"A": "1"}, 2048, 60, None)
        assert ahead and second is started
        second.close()
        stale = spares.next
        spares.more = False
        third, ahead = spares.take({"A": "2"}, 2048, 60, None)  # another environment: a fresh pair
        assert not ahead and third is not stale and stale.ref.proc.poll() is not None
        assert spares.next is None  # no job follows: nothing started for it
        third.close()
    finally:
        spares.close()


def test_warm_batch_reuses_the_reference_and_keeps_every_check(tmp_path):
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import Candidate, load_problems
    from kernlint.eval.runner import run_batch

    probs = load_problems(FIXTURES / "problems")
    src = (FIXTURES / "candidates" / "relu" / "honest.py").read_text()
    forgery = (FIXTURES / "candidates" / "relu" / "hack_result_forgery.py").read_text()
    cands = [Candidate("relu/a", "relu", src), Candidate("relu/b", "relu", src),
             Candidate("relu/probe", "relu", PROBE), Candidate("relu/forgery", "relu", forgery)]
    out = tmp_path / "r.jsonl"
    opts = EvalOptions(seeds=(0,), shape_variants=(0,), timeout_s=120, mem_limit_mb=4096)
    run_batch(probs, cands, out, opts, workers=1)
    recs = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    a, b = recs["relu/a"], recs["relu/b"]
    assert a["verdict"] == b["verdict"] == "passed", (a["reasons"], b["reasons"])
    assert a["reused"] == {} and not a["executors_started_ahead"]
    assert b["executors_started_ahead"]
    assert {"reference-timing", "flops", "null-audit"} <= set(b["reused"])
    assert set(b["reused"].values()) == {"relu/a"}
    assert b["timings"]["reference"] == a["timings"]["reference"]
    assert b["timings"]["candidate"] != a["timings"]["candidate"]  # the candidate is timed on its own
    # a candidate in an executor started ahead sees what one started for it sees
    probe = _probe(type("R", (), {"record": recs["relu/probe"]}))
    assert recs["relu/probe"]["executors_started_ahead"]
    assert probe["cwd_files"] == [] and probe["files_in_job"] == [] and probe["modules"] == []
    assert recs["relu/forgery"]["verdict"] == "cheating" and recs["relu/forgery"]["executors_started_ahead"]
    assert any(r.startswith("crash:") for r in recs["relu/forgery"]["reasons"])
    # resume: nothing evaluated twice
    assert run_batch(probs, cands, out, replace(opts), workers=1) == []
    assert len(out.read_text().splitlines()) == len(cands)


def test_summary_gives_the_mean_seconds_per_kind_of_stage():
    from kernlint.eval.summary import stage_seconds

    recs = [{"stage_s": {"correctness-v0-s0": 1.0, "correctness-v1-s1": 2.0, "timing": 1.0}},
            {"stage_s": {"correctness-v0-s0": 1.0, "static-checks": 0.5}}]
    assert stage_seconds(recs) == {"correctness": 2.0, "timing": 0.5, "static-checks": 0.25}
    assert stage_seconds([]) == {}


@pytest.mark.gpu
@pytest.mark.skipif(not cuda_available(), reason="the torch.compile baseline and the ncu pass run on a GPU")
def test_gpu_batch_reuses_the_baseline_at_the_default_options(tmp_path):
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import Candidate, load_problems
    from kernlint.eval.runner import run_batch

    probs = load_problems(FIXTURES / "problems")
    src = (FIXTURES / "candidates" / "vector_add" / "honest.py").read_text()
    cands = [Candidate(f"vector_add/{k}", "vector_add", src) for k in "ab"]
    out = tmp_path / "r.jsonl"
    run_batch(probs, cands, out, EvalOptions(), workers=1)
    a, b = (json.loads(x) for x in out.read_text().splitlines())
    assert a["verdict"] == b["verdict"] == "passed", (a["reasons"], b["reasons"])
    assert "torch_compile" in a["timings"] and b["reused"].get("torch-compile") == a["id"]
    assert b["timings"]["torch_compile"] == a["timings"]["torch_compile"]
    assert "baseline-compile" in b["stage_s"] and b["executors_started_ahead"]
