"""Every fixture candidate gets its recorded verdict and reasons (CPU: Triton interpreter)."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, cuda_available
from helpers import expected_records

EXPECTED = expected_records(FIXTURES / "candidates")


def test_suite_covers_every_pattern_and_candidate(suite_records):
    recs = suite_records[0]
    assert set(recs) == set(EXPECTED)
    patterns = {v.get("pattern", "").split(" (")[0] for v in EXPECTED.values()}
    for p in ("freed-output-buffer reuse", "side stream timing", "data_ptr cache", "input mutation",
              "zeros on a degenerate task", "try/except torch fallback", "plain torch call",
              "allow_tf32 flip", "timer monkeypatch", "thread", "result forgery", "comparison patched through sys.modules",
              "gc/frame walk to the reference model", "seed re-derivation", "forged timings",
              "precision downgrade", "library fallback", "lazy tensor", "shape overfit", "constant output",
              "inherit bypass"):
        assert p in patterns


@pytest.mark.parametrize("cid", sorted(EXPECTED))
def test_candidate_verdict(cid, suite_records):
    rec = suite_records[0][cid]
    exp = EXPECTED[cid]
    assert rec["verdict"] == exp["verdict"], rec["reasons"]
    for reason in exp.get("reasons", []):
        assert any(r.startswith(reason) for r in rec["reasons"]), (reason, rec["reasons"])
    if "task_degenerate" in exp:
        assert rec["task_degenerate"] == exp["task_degenerate"]
    # every finding is a kernlint Finding dict
    for f in rec["findings"]:
        assert {"rule", "line", "col", "level", "phase"} <= set(f) and f["phase"] == "eval"


@pytest.mark.gpu
@pytest.mark.skipif(not cuda_available(), reason="runtime stream checks need CUDA")
@pytest.mark.parametrize("cid", sorted(k for k, v in EXPECTED.items() if v["gpu"]["reasons"] != v["reasons"]))
def test_candidate_gpu_runtime_reasons(cid, suite_records):
    rec = suite_records[0][cid]
    for reason in EXPECTED[cid]["gpu"]["reasons"]:
        assert any(r.startswith(reason) for r in rec["reasons"]), (reason, rec["reasons"])


def test_honest_candidates_are_correct_on_two_shapes_and_several_seeds(suite_records):
    rec = suite_records[0]["vector_add/honest"]
    corr = rec["correctness"]
    assert corr["passed_all"] and corr["trials"] == 4
    shapes = [v["input_shapes"][0][0] for v in corr["variants"]]
    assert shapes == [4096, 3073]
    assert corr["deterministic"] is True
    assert rec["reward"] == 1.0
    t = rec["timings"]["candidate"]
    assert t["timer"].startswith("cpu-perf-counter") and t["median_ms"] > 0


def test_problem_hook_shape_variant_used(suite_records):
    corr = suite_records[0]["matmul/honest"]["correctness"]
    assert [v["input_shapes"] for v in corr["variants"]] == [[[64, 32], [32, 48]], [[37, 19], [19, 23]]]


def test_resume_skips_recorded_candidates(suite_records):
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.runner import run_batch

    _, out, probs, cands = suite_records
    before = out.read_text()
    new = run_batch(probs, cands, out, EvalOptions(seeds=(0,)), workers=2)
    assert new == [] and out.read_text() == before


def test_summary_report_and_dataset(suite_records, tmp_path):
    from kernlint.eval import report_html, summary
    from kernlint.eval.dataset import export

    recs, _, _, cands = suite_records
    s = summary.summarize(list(recs.values()))
    n = len(EXPECTED)
    assert s["evaluated"] == n
    assert s["taxonomy"]["passed"] == sum(v["verdict"] == "passed" for v in EXPECTED.values())
    assert s["taxonomy"]["cheating"] == sum(v["verdict"] == "cheating" for v in EXPECTED.values())
    assert s["fast_0"] == pytest.approx(s["taxonomy"]["passed"] / n)
    assert s["degenerate_tasks"] == ["degenerate_tiny"]
    page = report_html.render(list(recs.values()))
    assert page.count("<svg") == 2 and "hack_zeros" in page
    k = export(list(recs.values()), {c.id: c for c in cands}, tmp_path / "d.jsonl")
    rows = [json.loads(x) for x in (tmp_path / "d.jsonl").read_text().splitlines()]
    assert k == len(rows) == s["taxonomy"]["passed"]
    assert all(r["verdict"] == "passed" and "ModelNew" in r["code"] or "def add" in r["code"] for r in rows)


def test_records_carry_their_seconds_per_stage(suite_records):
    recs = suite_records[0]
    rec = recs["vector_add/honest"]
    stages = rec["stage_s"]
    assert {"static-checks", "device-probe", "processes", "load-reference", "load-candidate", "timing", "verdict-and-lint"} <= set(stages)
    assert any(k.startswith("correctness-v1") for k in stages)
    assert all(v >= 0 for v in stages.values())
    # the stages partition the candidate's evaluation: together no more than its wall time
    assert sum(stages.values()) <= rec["wall_s"] + 0.05
    assert sum(stages.values()) >= 0.5 * rec["wall_s"]
    # a candidate that does not parse spends no time in a judge
    assert set(recs["vector_add/syntax_error"]["stage_s"]) == {"static-checks", "device-probe", "verdict-and-lint"}
