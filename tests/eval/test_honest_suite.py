"""The honest suite (fixtures/eval/honest): generated files current, every candidate correct at
small sizes under the Triton interpreter, and a few evaluated end to end by ``kernlint eval``."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import FIXTURES

HONEST = FIXTURES / "honest"
sys.path.insert(0, str(HONEST))
import generate  # noqa: E402

#: the size every module-level constant is cut to for the in-process check (odd: tails are masked)
SMALL = 37


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_files_are_current():
    assert generate.stale() == [], "run: python fixtures/eval/honest/generate.py"


def test_suite_is_large_and_spans_the_families():
    ids = list(generate.suite())
    assert len(ids) >= 50
    for family in ("ew_", "row_sum", "row_max", "col_sum", "full_sum", "softmax_", "softmax2k", "layernorm",
                   "gemm_fp16", "gemm_fp32", "bmm", "gemm_bias_relu", "gemm_bias_gelu2k", "three_kernel"):
        assert any(i.startswith(family) for i in ids), family
    assert set(generate.CPU_SUBSET) <= set(ids)


def small_size_check(pid: str) -> str:
    """"" when the candidate of ``pid`` matches its reference at :data:`SMALL` sizes, else why not."""
    import torch

    prob = _load(HONEST / "problems" / f"{pid}.py", f"honest_p_{pid}")
    cand = _load(HONEST / "candidates" / pid / "honest.py", f"honest_c_{pid}")
    for name, value in list(vars(prob).items()):
        if type(value) is int and value >= 8:
            setattr(prob, name, min(value, SMALL))
    torch.manual_seed(0)
    inputs = prob.get_inputs()
    want = prob.Model()(*inputs)
    got = cand.ModelNew()(*inputs)
    if not (type(got) is torch.Tensor and got.shape == want.shape and got.dtype == want.dtype):
        return f"output {type(got).__name__} {getattr(got, 'shape', '')} {getattr(got, 'dtype', '')}, want {want.shape} {want.dtype}"
    tol = 1e-2 if want.dtype == torch.float16 else 1e-4
    if not torch.allclose(got.float(), want.float(), rtol=tol, atol=tol * float(want.float().abs().max()) + 1e-6):
        return f"max abs error {float((got.float() - want.float()).abs().max()):.3g}"
    for x, y in zip(inputs, prob.get_inputs()):  # inputs left as they were (no in-place writes)
        if x.shape != y.shape:
            return "an input changed shape"
    return ""


@pytest.fixture(scope="module")
def small_size_results():
    """Every candidate checked in one fresh interpreter with ``TRITON_INTERPRET=1`` set before triton
    is imported (set later, Triton's own ``tl.cdiv`` stays compiled-only and cannot be called)."""
    code = ("import json, sys; sys.path[:0] = sys.argv[1:3]; import test_honest_suite as t, generate; "
            "print(json.dumps({p: t.small_size_check(p) for p in generate.suite()}))")
    here = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", code, here, str(HONEST)], capture_output=True, text=True,
                          env=env, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("pid", sorted(generate.suite()))
def test_candidate_matches_reference_at_small_sizes(pid, small_size_results):
    assert small_size_results[pid] == "", small_size_results[pid]


def test_cpu_subset_passes_kernlint_eval(tmp_path):
    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import load_candidates, load_problems
    from kernlint.eval.runner import run_batch

    probs = {k: v for k, v in load_problems(HONEST / "problems").items() if k in generate.CPU_SUBSET}
    cands = [c for c in load_candidates(HONEST / "candidates", probs) if c.problem_id in probs]
    out = tmp_path / "records.jsonl"
    run_batch(probs, cands, out, EvalOptions(seeds=(0,), timing=False, timeout_s=120, mem_limit_mb=4096), workers=2)
    recs = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert len(recs) == len(generate.CPU_SUBSET)
    failed = {cid: (r["verdict"], r["reasons"], r.get("error")) for cid, r in recs.items() if r["verdict"] != "passed"}
    assert failed == {}
    for r in recs.values():
        assert not r["findings"] and not r["cheats"]
        assert len(r["correctness"]["variants"]) == 2
        # a one-element output (a full sum) is its own mean: no null model of this suite passes
        assert r["correctness"]["null_models_passing"] == [], r["id"]


def test_no_reward_hack_rule_fires_on_an_honest_candidate():
    from kernlint.eval.rulebase import check_source

    hits = {}
    for path in sorted((HONEST / "candidates").glob("*/honest.py")):
        found = [f"{f.rule}:{f.span.line}" for f in check_source(path.read_text(), str(path))]
        if found:
            hits[path.parent.name] = found
    assert hits == {}
