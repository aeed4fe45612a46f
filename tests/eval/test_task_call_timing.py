"""TritonBench tasks: the kernels of the test's calls of the task's function, timed apart from the test's
input creation, and torch.compile of that function as a baseline."""

import json
from pathlib import Path

import pytest
import torch

from kernlint.eval import timing

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "eval"


def test_range_stats_sum_each_iterations_ranges():
    assert timing.range_stats([1.0, 2.0, 1.5, 2.5, 1.0, 3.0], 3, "r")["median_ms"] == pytest.approx(4.0)
    assert timing.range_stats([1.0, 2.0, 1.5, 2.5, 1.0, 3.0], 3, "r")["ranges_per_call"] == 2
    assert "5 'r' ranges over 3 iterations" in timing.range_stats([1.0] * 5, 3, "r")["error"]
    assert "no kernel time" in timing.range_stats([0.0] * 6, 3, "r")["error"]
    assert "error" in timing.range_stats([], 3, "r")


def test_marked_ranges_sum_the_kernels_between_two_marks():
    """What a range times is the kernels between its marks, by position on the stream: a Triton
    kernel launched through the driver API counts as much as an ATen one."""
    mark, spin = timing.RANGE_MARK_KERNEL, timing.SPIN_KERNEL
    trace = [("randn", 5.0), (mark, 0.001), ("add_kernel", 1.0), ("elementwise", 0.5), (mark, 0.001),
             ("randn", 5.0), (mark, 0.001), ("add_kernel", 2.0), (mark, 0.001), (spin, 9.0), (mark, 0.001)]
    assert timing.marked_ranges(trace) == [1.5, 2.0]
    assert timing.marked_ranges([("randn", 5.0)]) == []


def test_device_kernels_leave_out_host_events_and_range_annotations():
    """A range's annotation on the device timeline spans its kernels and the host's gaps between
    them: counted as a kernel, it made honest candidates' kernels outlast their own CUDA events."""
    from types import SimpleNamespace as E

    from torch.autograd.profiler_util import Interval

    def ev(name, start, end, device="DeviceType.CUDA", annotation=False):
        return E(name=name, device_type=device, is_user_annotation=annotation, time_range=Interval(start, end))

    events = [ev("add_kernel", 30, 31), ev("kl::call", 10, 40, annotation=True), ev("randn", 5, 6),
              ev("aten::add", 9, 41, device="DeviceType.CPU"), ev("kernlint_range_mark", 10, 11)]
    assert [e.name for e in timing.device_kernels(events)] == ["randn", "kernlint_range_mark", "add_kernel"]


def test_the_range_mark_kernel_has_the_name_the_timer_looks_for():
    from kernlint.eval import range_mark

    assert range_mark.kernlint_range_mark.fn.__name__ == timing.RANGE_MARK_KERNEL


def test_in_range_opens_one_range_per_outermost_call():
    def fact(n):
        return 1 if n <= 1 else n * ranged(n - 1)

    ranged = timing.in_range(fact, "kl::call")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        assert ranged(4) == 24 and ranged(3) == 6
    assert sum(e.name == "kl::call" for e in prof.events()) == 2
    assert ranged.__wrapped__ is fact


REFERENCE = '''import torch

def add(x, y):
    """Adds two tensors element by element."""
    return x + y

##########
''' + (FIXTURES / "problems" / "tb_add.py").read_text().split("#" * 50, 1)[1].lstrip("#")


def test_a_tasks_function_is_compiled_for_the_baseline_and_its_test_calls_it(tmp_path):
    """torch.compile of the task's function, called by the task's own test (on CPU here: the compile
    baseline is asked for; on a GPU it is on by default)."""
    from click.testing import CliRunner

    from kernlint.eval.cli import eval_command

    (tmp_path / "T").mkdir()
    (tmp_path / "T" / "add.py").write_text(REFERENCE)
    (tmp_path / "T.jsonl").write_text(json.dumps([{"name": "add", "description": "Adds two tensors element by "
                                                   "element.", "file": "add.py", "difficulty": "1"}]))
    candidate = (FIXTURES / "problems" / "tb_add.py").read_text().split("#" * 50, 1)[0]
    (tmp_path / "output_m.jsonl").write_text(json.dumps({"instruction": "Functional Description: Adds two tensors "
                                                         "element by element.", "predict": candidate}) + "\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(eval_command, [str(tmp_path / "T.jsonl"), str(tmp_path / "output_m.jsonl"), "-o", str(out),
                                            "--seeds", "0", "--compile-baseline", "--no-progress"])
    assert res.exit_code == 0, res.output
    rec = json.loads((out / "records.jsonl").read_text().splitlines()[0])
    assert rec["verdict"] in ("passed", "slower-than-baseline"), rec["reasons"]
    assert rec["timings"]["torch_compile"]["median_ms"] > 0, rec["notes"]
    assert any(n.startswith("CUTLASS baseline skipped: a TritonBench task") for n in rec["notes"])


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUPTI kernel times need a GPU")
def test_task_calls_kernels_are_timed_apart_from_input_creation():
    """A Triton kernel launched inside the task-call range counts; the test's torch.randn kernels do not."""
    from kernlint.eval.worker import load_module

    tb_add = load_module(FIXTURES / "problems" / "tb_add.py", "tb_add_fixture")
    ranged = timing.in_range(tb_add.add, "kl::call", marks=True)

    def test():
        x, y = torch.randn(1 << 22, device="cuda"), torch.randn(1 << 22, device="cuda")
        return ranged(x, y), ranged(y, x)

    t = timing.time_cuda_kernels(lambda: test(), [[]], iters=5, within="kl::call")
    assert "error" not in t and "error" not in t["within"], t
    assert t["within"]["ranges_per_call"] == 2
    assert 0 < t["within"]["median_ms"] < t["median_ms"]
    # two randn and two add kernels per call: neither the marks nor the ranges' device annotations
    assert t["kernels_per_call"] == 4
    # CUDA events enclose the kernels they time (the judge calls the opposite a forged clock)
    events = timing.time_cuda(lambda: test(), [[]], iters=5)
    assert t["median_ms"] <= events["median_ms"] * 1.1 + 1e-3, (t, events)


def test_a_test_that_imports_the_task_from_its_file_runs(tmp_path):
    """TritonBench-T tests may import the task's function from a module named after the task's file
    (``from add import add``): reference and candidate load under that name too."""
    from click.testing import CliRunner

    from kernlint.eval.cli import eval_command

    (tmp_path / "T").mkdir()
    (tmp_path / "T" / "add.py").write_text(REFERENCE.replace("def test_add():", "from add import add\n\n\ndef test_add():"))
    (tmp_path / "T.jsonl").write_text(json.dumps([{"name": "add", "description": "Adds two tensors element by "
                                                   "element.", "file": "add.py", "difficulty": "1"}]))
    candidate = (FIXTURES / "problems" / "tb_add.py").read_text().split("#" * 50, 1)[0]
    (tmp_path / "output_m.jsonl").write_text(json.dumps({"predict": candidate}) + "\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(eval_command, [str(tmp_path / "T.jsonl"), str(tmp_path / "output_m.jsonl"), "-o", str(out),
                                            "--seeds", "0", "--no-timing", "--no-progress"])
    assert res.exit_code == 0, res.output
    rec = json.loads((out / "records.jsonl").read_text().splitlines()[0])
    assert rec["verdict"] == "passed", (rec["error"], rec["reasons"])
