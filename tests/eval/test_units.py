"""Unit tests: tolerances, null models, inputs, policy, summary, CLI on a JSONL of answers."""

from __future__ import annotations

import json

import pytest
import torch

from conftest import FIXTURES
from kernlint.eval import correctness as C
from kernlint.eval import policy as P
from kernlint.eval.problems import extract_code, load_candidates, load_problems, split_tritonbench
from kernlint.eval.summary import summarize
from kernlint.eval.worker import perturbed_size


def test_tolerance_scales_with_magnitude_and_dtype():
    r = torch.randn(1000) * 1e4
    assert C.compare(r + 0.5, r).ok  # 0.5 absolute on outputs of 1e4 is within fp32 tolerance
    small = torch.randn(1000) * 1e-3
    assert not C.compare(small + 1e-3, small).ok  # but not on outputs of 1e-3
    h = torch.randn(1000).half()
    assert C.compare(h + 0.008, h).ok and not C.compare(h.float() + 0.008, h.float()).ok
    i = torch.arange(10)
    assert not C.compare(i + 1, i).ok and C.compare(i.clone(), i).ok


def test_nan_shape_and_structure_mismatches_fail():
    r = torch.randn(8)
    c = r.clone()
    c[3] = float("nan")
    assert "NaN" in C.compare(c, r).reason
    assert not C.compare(r[:4], r).ok
    assert not C.compare((r,), {"a": r}).ok
    assert C.compare({"x": r, "y": [r, 2]}, {"x": r.clone(), "y": [r.clone(), 2]}).ok


def test_null_model_audit():
    x = torch.randn(64)
    assert C.audit_null_models(x * 3, [x]) == []
    assert "identity" in C.audit_null_models(x.clone(), [x])
    assert "zeros" in C.audit_null_models(x * 1e-12, [x])


def test_a_full_reduction_is_not_its_own_constant_null_model():
    # the reference's sum on these inputs is the answer, not a constant a candidate could hard-code
    x, other = torch.randn(1024), torch.randn(1024)
    assert C.audit_null_models(x.sum(), [x]) == []
    assert C.audit_null_models(x.sum(), [x], constants=C.output_constants(other.sum())) == []
    assert "constant" not in C.null_models(x.sum(), [x])
    # an output that does not depend on the inputs: a constant fixed on other inputs passes
    ones = {"p": torch.softmax(x, 0).sum(), "n": [torch.ones(3) * 7]}
    fixed = C.output_constants({"p": torch.softmax(other, 0).sum(), "n": [torch.ones(3) * 7]})
    assert "constant" in C.audit_null_models(ones, [x], constants=fixed)
    assert C.null_models(ones, [x], fixed)["constant"]["n"][0].tolist() == [7.0, 7.0, 7.0]


def test_inputs_checked_unchanged_and_subclass_detected():
    a = [torch.ones(4), 3]
    snap = C.snapshot(a)
    a[0][1] = 2
    assert C.unchanged(snap, a) == [0]

    class Lazy(torch.Tensor):
        pass

    assert not C.plain_tensor_leaves((torch.ones(2).as_subclass(Lazy),))
    assert C.plain_tensor_leaves((torch.ones(2), 1))


def test_non_power_of_two_variants():
    for n in (8, 16, 128, 4096, 16384):
        m = perturbed_size(n)
        assert m < n and m & (m - 1) != 0 and m % 2 == 1


def test_code_extraction_and_tritonbench_split():
    answer = "Here you go:\n```python\nimport torch\nx = 1\n```\nand a note\n```\nshort\n```"
    assert extract_code(answer) == "import torch\nx = 1\n"
    assert extract_code("import torch\n") == "import torch\n"
    text = (FIXTURES / "problems" / "tb_add.py").read_text()
    code, test, fn = split_tritonbench(text)
    assert fn == "test_add" and "def add(" in code and "def test_add" not in code
    # a '##### comment' inside a kernel is not the separator
    assert split_tritonbench("#####  get offset\nx = 1\n") == ("#####  get offset\nx = 1\n", "", "")


def test_tritonbench_json_problems(tmp_path):
    src = (FIXTURES / "problems" / "tb_add.py").read_text()
    (tmp_path / "tb.json").write_text(json.dumps([{"file": "tb_add.py", "output": src}, {"file": "x.py", "output": "import torch\n"}]))
    probs = load_problems(tmp_path / "tb.json")
    assert probs["tb_add"].test_function == "test_add" and probs["x"].test_function == ""


def test_policy_order_and_reward():
    ok = {"correctness": {"passed_all": True},
          "timings": {"candidate": {"timer": "cuda-events", "median_ms": 2.0}, "reference": {"median_ms": 1.0}}}
    assert P.judge(ok, [], P.Policy())[0] == "slower-than-baseline"
    assert P.judge(ok, [], P.Policy(max_slowdown=1.5))[0] == "passed"
    cpu = {"correctness": {"passed_all": True}, "timings": {"candidate": {"timer": "cpu-perf-counter", "median_ms": 2.0}, "reference": {"median_ms": 1.0}}}
    assert P.judge(cpu, [], P.Policy())[0] == "passed"
    occ = {**ok, "metrics": {"min_occupancy": 0.1}}
    assert P.judge(occ, [], P.Policy(max_slowdown=9, min_occupancy=0.25))[0] == "low-occupancy"
    crash_and_cheat = {"error_kind": "crash", "error": "x", "cheats": [{"reason": "timer-patched"}]}
    assert P.judge(crash_and_cheat, [], P.Policy())[0] == "cheating"
    assert P.judge({"error_kind": "timeout", "error": "x"}, [], P.Policy())[0] == "runtime-error"
    assert P.reward("cheating", 5.0) == -1.0 and P.reward("passed", 2.0) == 1.5 and P.reward("passed", None) == 1.0


def test_summary_fast_p_and_geomean():
    recs = [{"id": str(i), "problem": "p", "verdict": v, "speedup": {"vs_reference": s}, "reasons": []}
            for i, (v, s) in enumerate([("passed", 2.0), ("passed", 0.5), ("slower-than-baseline", 0.25),
                                         ("wrong", None), ("cheating", 100.0)])]
    s = summarize(recs)
    assert s["fast_0"] == pytest.approx(3 / 5) and s["fast_1"] == pytest.approx(1 / 5)
    assert s["fast_1.5"] == pytest.approx(1 / 5) and s["fast_2"] == 0.0
    assert s["geomean_speedup"] == pytest.approx((2.0 * 0.5 * 0.25) ** (1 / 3))


def test_cli_on_jsonl_answers(tmp_path):
    from click.testing import CliRunner

    from kernlint.eval.cli import eval_command

    honest = (FIXTURES / "candidates" / "vector_add" / "honest.py").read_text()
    (tmp_path / "answers.jsonl").write_text(
        json.dumps({"problem": "vector_add", "predict": f"Sure!\n```python\n{honest}```\n"}) + "\n"
        + json.dumps({"problem": "vector_add", "predict": "```python\nimport torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, a, b):\n        return a + b\n```"}) + "\n")
    cands = load_candidates(tmp_path / "answers.jsonl", {})
    assert [c.problem_id for c in cands] == ["vector_add", "vector_add"]
    out = tmp_path / "out"
    result = CliRunner().invoke(eval_command, [str(FIXTURES / "problems" / "vector_add.py"), str(tmp_path / "answers.jsonl"),
                                               "-o", str(out), "--seeds", "0", "--shape-variants", "0", "--no-timing",
                                               "--workers", "2", "--no-progress"])
    assert result.exit_code == 0, result.output
    recs = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert sorted(r["verdict"] for r in recs) == ["cheating", "passed"]
    import torch
    import triton

    honest_rec = next(r for r in recs if r["verdict"] == "passed")  # ran in a worker: says what judged it
    assert honest_rec["software"] == {"python": honest_rec["software"]["python"], "torch": torch.__version__,
                                      "triton": triton.__version__}
    assert honest_rec["options"]["seeds"] == [0] and honest_rec["options"]["timing"] is False
    assert (out / "report.html").exists() and json.loads((out / "summary.json").read_text())["evaluated"] == 2
    assert len((out / "dataset.jsonl").read_text().splitlines()) == 1


def test_api_evaluate_reward():
    from kernlint import evaluate

    r = evaluate(FIXTURES / "problems" / "vector_add.py", FIXTURES / "candidates" / "vector_add" / "hack_input_mutation.py",
                 seeds=(0,), shape_variants=(0,), timing=False)
    assert r.verdict == "cheating" and r.reward == -1.0
    assert any(x.startswith("runtime:input-mutated") for x in r.reasons)


def test_tests_supplied_apart_and_problem_selection(tmp_path):
    """TritonBench references without test code get it from a folder; --problem-ids selects and orders."""
    from click.testing import CliRunner

    from kernlint.eval.cli import eval_command
    from kernlint.eval.problems import attach_tests, select_problems

    code, test, _ = split_tritonbench((FIXTURES / "problems" / "tb_add.py").read_text())
    rows = [{"file": "tb_add.py", "output": code}, {"file": "other.py", "output": code}]
    (tmp_path / "tb.json").write_text(json.dumps(rows))
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "tb_add.py").write_text(test)
    probs = load_problems(tmp_path / "tb.json")
    assert probs["tb_add"].test_function == ""
    assert attach_tests(probs, tests) == 1 and probs["tb_add"].test_function == "test_add"
    assert probs["other"].test_function == ""
    (tmp_path / "ids.txt").write_text("# chosen\nother\ntb_add  # second\n")
    assert list(select_problems(probs, "@" + str(tmp_path / "ids.txt"))) == ["other", "tb_add"]
    with pytest.raises(ValueError, match="nope"):
        select_problems(probs, "tb_add,nope")
    (tests / "bad.py").write_text("x = 1\n")
    (tmp_path / "bad.json").write_text(json.dumps([{"file": "bad.py", "output": code}]))
    with pytest.raises(ValueError, match="no top-level"):
        attach_tests(load_problems(tmp_path / "bad.json"), tests)

    cands = tmp_path / "cands"
    (cands / "tb_add").mkdir(parents=True)
    (cands / "tb_add" / "same.py").write_text(code)
    (cands / "other").mkdir()
    (cands / "other" / "same.py").write_text(code)
    out = tmp_path / "out"
    args = [str(tmp_path / "tb.json"), str(cands), "--tests", str(tests), "-o", str(out), "--seeds", "0",
            "--no-timing", "--no-progress"]
    result = CliRunner().invoke(eval_command, [*args, "--problem-ids", "tb_add"])
    assert result.exit_code == 0, result.output
    recs = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert [(r["id"], r["verdict"]) for r in recs] == [("tb_add/same", "passed")]
    assert recs[0]["correctness"]["tritonbench_stdout_match"] is True
    assert recs[0]["lint_findings"] == []  # the source phase ran on the candidate and found nothing
    bad = CliRunner().invoke(eval_command, [*args, "--problem-ids", "missing"])
    assert bad.exit_code == 2 and "unknown problem id" in bad.output


def test_lint_findings_recorded_for_the_structural_filter():
    from kernlint.eval.api import lint_findings

    bad = (FIXTURES.parents[1] / "fixtures" / "triton" / "vector_add_bad.py").read_text()
    assert [(f["rule"], f["line"]) for f in lint_findings(bad, "cand.py")] == [("KL101", 14)]


def test_workers_beyond_the_gpus_share_them_round_robin():
    from kernlint.eval.runner import worker_slots

    assert worker_slots(["0", "1"], None) == [{"CUDA_VISIBLE_DEVICES": "0"}, {"CUDA_VISIBLE_DEVICES": "1"}]
    assert [s["CUDA_VISIBLE_DEVICES"] for s in worker_slots(["0", "1"], 5)] == ["0", "1", "0", "1", "0"]
    assert worker_slots(["3"], 1) == [{"CUDA_VISIBLE_DEVICES": "3"}]
    assert worker_slots([], 3) == [{}, {}, {}] and worker_slots([], None) == [{}]
    assert [s["CUDA_VISIBLE_DEVICES"] for s in worker_slots(["0", "1"], None, per_gpu=3)] == ["0", "1"] * 3


def test_each_slot_runs_on_cores_of_its_own():
    from kernlint.eval.runner import slot_cores

    cores = list(range(16))
    parts = [slot_cores(cores, i, 4) for i in range(4)]
    assert parts == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]
    assert [slot_cores([0, 1, 2], i, 2) for i in range(2)] == [[0], [1, 2]]
    assert [slot_cores([5, 7], i, 3) for i in range(3)] == [[5], [7], [5]]


def test_slots_working_at_once_take_different_problems():
    from kernlint.eval.problems import Candidate
    from kernlint.eval.runner import interleaved

    cands = [Candidate(id=f"{p}/{i}", problem_id=p, source="") for p, n in (("a", 3), ("b", 1), ("c", 2)) for i in range(n)]
    assert [c.id for c in interleaved(cands)] == ["a/0", "b/0", "c/0", "a/1", "c/1", "a/2"]


def test_candidates_from_one_file_and_clear_errors_for_bad_answers(tmp_path):
    probs = load_problems(FIXTURES / "problems")
    honest = FIXTURES / "candidates" / "vector_add" / "honest.py"
    (c,) = load_candidates(honest, probs)  # <problem_id>/<name>.py: the folder names the problem
    assert (c.id, c.problem_id) == ("vector_add/honest", "vector_add")
    loose = tmp_path / "mine.py"
    loose.write_text(honest.read_text())
    with pytest.raises(ValueError, match="cannot tell which problem"):
        load_candidates(loose, probs)
    (c,) = load_candidates(loose, {"vector_add": probs["vector_add"]})  # the only problem given
    assert c.problem_id == "vector_add"
    bad = tmp_path / "answers.jsonl"
    bad.write_text('{"problem": "vector_add", "predict": "x"}\nnot json\n')
    with pytest.raises(ValueError, match=r"answers.jsonl:2: not a JSON line"):
        load_candidates(bad, probs)
    bad.write_text('{"problem": "vector_add", "text": "x"}\n')
    with pytest.raises(ValueError, match=r"answers.jsonl:1: no answer in this row"):
        load_candidates(bad, probs)


def test_bad_problem_lists_and_options_are_usage_errors(tmp_path):
    from click.testing import CliRunner

    from kernlint.eval.cli import eval_command

    cands = FIXTURES / "candidates"
    (tmp_path / "tasks.json").write_text('[{"file": "a.py"}]')
    r = CliRunner().invoke(eval_command, [str(tmp_path / "tasks.json"), str(cands), "-o", str(tmp_path / "o")])
    assert r.exit_code == 2 and "expected a TritonBench-G task list" in r.output
    (tmp_path / "broken.json").write_text('{"x":')
    r = CliRunner().invoke(eval_command, [str(tmp_path / "broken.json"), str(cands), "-o", str(tmp_path / "o")])
    assert r.exit_code == 2 and "broken.json: not JSON" in r.output
    r = CliRunner().invoke(eval_command, [str(FIXTURES / "problems"), str(cands), "--seeds", "a", "-o", str(tmp_path / "o")])
    assert r.exit_code == 2 and "expected comma-separated integers" in r.output


def test_an_autotuned_kernel_is_told_from_a_plain_one():
    triton = pytest.importorskip("triton")
    import triton.language as tl

    from kernlint.eval.census import LaunchCounter

    @triton.jit
    def plain(x, BLOCK: tl.constexpr):
        pass

    @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
    @triton.jit
    def tuned(x, n, BLOCK: tl.constexpr):
        pass

    @triton.heuristics({"BLOCK": lambda a: 64})
    @triton.jit
    def guessed(x, BLOCK: tl.constexpr):
        pass

    assert not LaunchCounter({"plain": plain, "guessed": guessed}).autotuned()
    assert LaunchCounter({"plain": plain, "tuned": tuned}).autotuned()


def test_several_answer_files_make_one_batch(tmp_path):
    """One model's answers per file; the batch evaluates them all, in problem order, and a file given
    twice is a usage error, not records written over each other."""
    from click.testing import CliRunner

    from kernlint.eval.cli import eval_command

    honest = (FIXTURES / "candidates" / "vector_add" / "honest.py").read_text()
    cheat = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, a, b):\n        return a + b\n"
    for model, code in (("model_a", honest), ("model_b", cheat)):
        (tmp_path / f"output_{model}.jsonl").write_text(json.dumps({"problem": "vector_add", "predict": code}) + "\n")
    out = tmp_path / "out"
    args = [str(FIXTURES / "problems" / "vector_add.py"), str(tmp_path / "output_model_a.jsonl"),
            str(tmp_path / "output_model_b.jsonl"), "-o", str(out), "--seeds", "0", "--shape-variants", "0",
            "--no-timing", "--no-progress"]
    result = CliRunner().invoke(eval_command, args)
    assert result.exit_code == 0, result.output
    recs = {json.loads(x)["origin"].split(":")[0]: json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()}
    assert {k: r["verdict"] for k, r in recs.items()} == {"output_model_a.jsonl": "passed",
                                                          "output_model_b.jsonl": "cheating"}
    twice = CliRunner().invoke(eval_command, [*args[:2], args[1], *args[3:]])
    assert twice.exit_code == 2 and "given twice" in twice.output
