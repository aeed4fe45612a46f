"""Tolerances by dtype and per problem; wrong outputs named for what they look like
(precision-downgrade, constant-output, shape-overfit); the library-fallback verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kernlint.eval import census, correctness as C, policy as P

#: the eval fixtures (not through ``conftest``: several test folders have one, and which module that
#: name means depends on what ran before)
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "eval"


def test_fp32_is_held_to_1e_4_and_half_precision_to_1e_2_relative_to_the_rms():
    r = torch.randn(4096)
    assert C.compare(r + 5e-5, r).ok and not C.compare(r + 5e-4, r).ok
    for low in (torch.float16, torch.bfloat16):
        h = torch.randn(4096).to(low)
        assert C.compare(h + 0.005, h).ok and not C.compare(h + 0.05, h).ok
    big = torch.randn(4096) * 1e4
    assert C.compare(big + 0.5, big).ok  # scaled with the magnitude, as before


def test_a_problem_sets_its_own_tolerance_for_every_dtype_or_one():
    loose = C.parse_tolerances({"rtol": 1e-2, "atol": 1e-2})
    r = torch.randn(256)
    assert not C.compare(r + 5e-3, r).ok and C.compare(r + 5e-3, r, tolerances=loose).ok
    only_half = C.parse_tolerances({"float16": {"atol": 0.5}})
    assert set(only_half) == {torch.float16} and only_half[torch.float16] == (1e-2, 0.5, 1e-4)
    assert C.tolerances_to_json(only_half) == {"float16": {"rtol": 1e-2, "atol": 0.5, "atol_floor": 1e-4}}
    assert C.parse_tolerances(None) == {}
    for bad in (0.1, {"float32": 1e-3}, {"rtol": -1.0}, {"tol": 1.0}, {"floaty": {"rtol": 1.0}}):
        with pytest.raises(ValueError):
            C.parse_tolerances(bad)


def test_an_error_of_half_precision_size_on_an_fp32_output_and_only_that():
    torch.manual_seed(0)
    a, b = torch.randn(64, 256), torch.randn(256, 32)
    ref = a @ b
    half = (a.half() @ b.half()).float()
    assert not C.compare(half, ref).ok and C.low_precision_sized(half, ref) == ["out"]
    assert C.low_precision_sized(ref * -1, ref) == []  # wrong, not imprecise
    assert C.low_precision_sized(ref.clone(), ref) == []  # right
    assert C.low_precision_sized((half, ref * 2), (ref, ref)) == []  # one leaf plainly wrong
    h = ref.half()
    assert C.low_precision_sized(h + 0.5, h) == []  # an fp16 task has no lower precision here


def test_constant_leaves():
    r = torch.relu(torch.randn(64))
    assert C.constant_leaves(torch.zeros(64), r) == ["out"]
    assert C.constant_leaves(r.clone(), r) == []
    assert C.constant_leaves(torch.zeros(64), torch.zeros(64)) == []


def test_dtype_census_sees_casts_through_the_dispatcher():
    x = torch.randn(8)
    got = census.dtype_census(lambda: (x.half() * 2).float())
    assert "float16" in got["produced"]
    assert any(k.startswith("float32->float16") for k in got["conversions"])
    assert any(k.startswith("float16->float32") for k in got["conversions"])
    assert census.dtype_census(lambda: x * 2)["conversions"] == {}


def _result(**over) -> dict:
    res = {"correctness": {"passed_all": True, "passed": 4, "trials": 4}, "metrics": {}, "timings": {}, "cheats": []}
    res.update(over)
    return res


def test_wrong_outputs_are_named_beside_wrong():
    ff = {"variant": 0, "seed": 0, "run": 1, "reason": "1% outside", "max_abs_err": 0.01,
          "low_precision_sized": ["out"], "precision_evidence": {
              "dtype_census": {"conversions": {"float32->float16 (_to_copy)": 2}, "produced": {"float16": 3}}}}
    v, why = P.judge(_result(correctness={"passed_all": False, "passed": 0, "first_failure": ff}), [], P.Policy())
    assert v == "wrong" and why[0].startswith("precision-downgrade:") and "float32->float16" in why[0]
    assert why[-1].startswith("wrong:")
    ff = {"variant": 1, "seed": 0, "run": 1, "reason": "shape", "constant_leaves": ["out"]}
    corr = {"passed_all": False, "passed": 2, "first_failure": ff, "variants": [{"variant": 1, "input_shapes": [[3]]}]}
    v, why = P.judge(_result(correctness=corr), [], P.Policy())
    assert v == "wrong" and [w.split(":")[0] for w in why] == ["shape-overfit", "constant-output", "wrong"]


def test_a_candidate_that_runs_on_the_problem_s_shape_only_is_a_shape_overfit():
    res = _result(error_kind="runtime-error", error="view size is not compatible", stage_final="correctness-v1-s0")
    v, why = P.judge(res, [], P.Policy())
    assert v == "runtime-error" and why[0].startswith("shape-overfit:") and why[1].startswith("runtime-error:")
    res.update(stage_final="correctness-v0-s1")
    assert P.judge(res, [], P.Policy())[1][0].startswith("runtime-error:")


def test_library_fallback_by_device_time_or_flops_and_configurable():
    census_ = {"library_time_share": 0.8, "device_us": 10.0,
               "top_library_kernels": [{"kernel": "nvjet_gemm", "share": 0.8}]}
    v, why = P.judge(_result(metrics={"census": census_}), [], P.Policy())
    assert v == "library-fallback" and "80%" in why[0] and "nvjet_gemm" in why[0]
    assert P.judge(_result(metrics={"census": census_}), [], P.Policy(max_library_share=0.9))[0] == "passed"
    assert P.judge(_result(metrics={"census": census_}), [], P.Policy(max_library_share=None))[0] == "passed"
    v, why = P.judge(_result(metrics={"library_flop_share": 1.0}), [], P.Policy())
    assert v == "library-fallback" and "FLOPs" in why[0]
    assert P.judge(_result(metrics={"library_flop_share": 0.0, "census": {"library_time_share": 0.1,
                                                                         "device_us": 5.0}}), [], P.Policy())[0] == "passed"
    assert P.reward("library-fallback", 2.0) == 0.25


def test_a_problem_s_own_tolerance_reaches_the_judge():
    from kernlint import evaluate

    relu = (FIXTURES / "problems" / "relu.py").read_text()
    half = (FIXTURES / "candidates" / "relu" / "honest.py").read_text().replace(
        "return relu(x)", "return relu(x.half()).float()")
    assert half != (FIXTURES / "candidates" / "relu" / "honest.py").read_text()
    strict = evaluate(relu, half, seeds=(0,), shape_variants=(0,), timing=False)
    assert strict.verdict == "wrong" and strict.reasons[0].startswith("precision-downgrade:")
    loose = evaluate(relu + '\nTOLERANCE = {"rtol": 1e-2, "atol": 1e-2}\n', half, seeds=(0,), shape_variants=(0,),
                     timing=False)
    assert loose.verdict == "passed", loose.reasons
    assert loose.record["correctness"]["tolerances"]["float32"]["rtol"] == 1e-2
    bad = evaluate(relu + "\nTOLERANCE = {'rtol': -1}\n", half, seeds=(0,), shape_variants=(0,), timing=False)
    assert bad.verdict == "skipped" and "TOLERANCE" in bad.reasons[0]
