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



def test_the_ray_cluster_kernlint_starts_keeps_nvlink_multicast_off(tmp_path, monkeypatch):
    """The cluster's workers get NCCL_NVLS_ENABLE=0 in their environment (Ray's runtime_env)."""
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import load_candidates, load_problems
    from kernlint.eval.runner import run_batch

    monkeypatch.delenv("NCCL_NVLS_ENABLE", raising=False)
    started = []
    real_init = ray.init
    monkeypatch.setattr(ray, "init", lambda *a, **k: started.append(k) or real_init(*a, **k))
    probs = load_problems(FIXTURES / "problems")
    cands = [c for c in load_candidates(FIXTURES / "candidates", probs) if c.id == "vector_add/honest"]
    run_batch(probs, cands, tmp_path / "r.jsonl", EvalOptions(seeds=(0,), shape_variants=(0,), timing=False),
              backend="ray", workers=1)
    assert [k.get("runtime_env") for k in started] == [{"env_vars": {"NCCL_NVLS_ENABLE": "0"}}]
