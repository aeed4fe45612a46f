"""Shared fixtures: the eval fixture suite is evaluated once per session (CPU, Triton interpreter)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "eval"


def cuda_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


@pytest.fixture(scope="session")
def suite_records(tmp_path_factory):
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import load_candidates, load_problems
    from kernlint.eval.runner import run_batch

    out = tmp_path_factory.mktemp("suite") / "records.jsonl"
    probs = load_problems(FIXTURES / "problems")
    cands = load_candidates(FIXTURES / "candidates", probs)
    opts = EvalOptions(seeds=(0, 1), timeout_s=120, mem_limit_mb=4096)
    run_batch(probs, cands, out, opts, workers=2)
    return {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}, out, probs, cands


