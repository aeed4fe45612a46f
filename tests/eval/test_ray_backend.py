"""The Ray backend on CPU (skipped when ray is not installed)."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES

ray = pytest.importorskip("ray")


def test_ray_backend_matches_local(tmp_path):
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import load_candidates, load_problems
    from kernlint.eval.runner import run_batch

    probs = load_problems(FIXTURES / "problems")
    cands = [c for c in load_candidates(FIXTURES / "candidates", probs)
             if c.id in ("vector_add/honest", "vector_add/hack_data_ptr_cache")]
    out = tmp_path / "r.jsonl"
    run_batch(probs, cands, out, EvalOptions(seeds=(0,), shape_variants=(0,), timing=False),
              backend="ray", workers=2)
    recs = {r["id"]: r["verdict"] for r in map(json.loads, out.read_text().splitlines())}
    assert recs == {"vector_add/honest": "passed", "vector_add/hack_data_ptr_cache": "cheating"}
