"""The profiler's record of a candidate's calls: what it shows (stream, thread, launches after the
call, device time against events, the library's share) on traces shaped as torch.profiler
exports them; on CUDA, a real record of an honest tiny kernel and of a side stream."""

from __future__ import annotations

import json

import pytest

from conftest import cuda_available
from kernlint.eval import device_trace as T
from kernlint.eval.timing import SPIN_KERNEL

MAIN, OTHER, HARNESS, SIDE = 101, 202, 7, 13


class Trace:
    """A chrome trace as torch.profiler writes it: call ranges on the main thread, launch
    records (runtime or driver API) with correlation ids, device activities with stream and
    correlation."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.corr = 0

    def call(self, i: int, start: float, end: float, tid: int = MAIN) -> None:
        self.events.append({"ph": "X", "cat": "user_annotation", "name": f"{T.CALL_RANGE}{i}", "ts": start,
                            "dur": end - start, "tid": tid, "pid": 1})

    def kernel(self, name: str, launch_ts: float, dur: float, stream: int = HARNESS, tid: int = MAIN,
               cat: str = "cuda_driver") -> None:
        self.corr += 1
        self.events.append({"ph": "X", "cat": cat, "name": "cuLaunchKernelEx", "ts": launch_ts, "dur": 2.0,
                            "tid": tid, "pid": 1, "args": {"correlation": self.corr}})
        self.events.append({"ph": "X", "cat": "kernel", "name": name, "ts": launch_ts + 5.0, "dur": dur,
                            "tid": f"stream {stream}", "pid": 0, "args": {"stream": stream, "correlation": self.corr}})

    def mark(self, ts: float) -> None:
        self.kernel(SPIN_KERNEL, ts, 10.0, cat="cuda_runtime")

    def summary(self, event_ms: list[float]) -> dict:
        s = T.summarize(self.events)
        s["event_ms"] = event_ms
        return s


def honest(calls: int = 3, kernel_us: float = 1.0) -> Trace:
    t = Trace()
    for i in range(calls):
        t.mark(100.0 * i)
        t.call(i, 100.0 * i + 20, 100.0 * i + 60)
        t.kernel("add_kernel", 100.0 * i + 30, kernel_us)
    t.mark(100.0 * calls)
    return t


def test_an_honest_microsecond_kernel_shows_nothing_whatever_the_host_clock():
    s = honest().summary([0.0059] * 3)  # 1 us of device work inside 5.9 us of events
    assert s["harness_streams"] == [HARNESS] and s["calls"] == 3
    assert [a["launch"] for a in s["activities"]] == ["call"] * 3
    assert T.findings(s, reported_ms=0.0059) == []
    assert T.device_us_per_call(s) == [1.0, 1.0, 1.0]


def test_a_side_stream_another_thread_and_a_late_launch_are_each_named():
    t = honest()
    t.kernel("add_kernel", 125.0, 1.0, stream=SIDE)
    t.kernel("add_kernel", 130.0, 1.0, tid=OTHER)
    t.kernel("add_kernel", 290.0, 1.0)  # main thread, after the last call returned
    reasons = dict(T.findings(t.summary([0.006] * 3)))
    assert set(reasons) == {"side-stream-launch", "background-thread", "deferred-launch"}
    assert str(SIDE) in reasons["side-stream-launch"]


def test_device_work_the_events_do_not_enclose_and_a_forged_timing():
    s = honest(kernel_us=40.0).summary([0.005, 0.041, 0.041])
    assert [r for r, _ in T.findings(s)] == ["events-miss-device-work"]
    s = honest().summary([0.004] * 3)  # 1 us kernels
    assert [r for r, _ in T.findings(s, reported_ms=0.0001)] == ["timing-disagrees"]
    assert T.findings(s, reported_ms=0.0007) == []  # an event reading within its resolution
    s = honest(kernel_us=0.3).summary([0.004] * 3)
    assert T.findings(s, reported_ms=0.0) == []  # below the resolution nothing is told apart


def test_an_activity_without_a_launch_record_is_no_evidence_of_its_thread_or_time():
    t = honest()
    t.events.append({"ph": "X", "cat": "kernel", "name": "x", "ts": 5.0, "dur": 1.0,
                     "args": {"stream": HARNESS, "correlation": 999}})
    s = t.summary([0.006] * 3)
    assert s["activities"][-1]["launch"] == "unknown" and T.findings(s) == []
    s["activities"][-1]["stream"] = SIDE  # its stream is evidence: only the calls run while recording
    assert [r for r, _ in T.findings(s)] == ["side-stream-launch"]


def test_library_share_names_the_library_kernels_and_never_counts_unknown_kernels_as_library():
    t = honest()
    for i in range(3):
        t.kernel("nvjet_tst_64x8_64x16_2x1_v_bz_TNN", 100.0 * i + 40, 3.0)
        t.kernel("tilelang_main_kernel", 100.0 * i + 45, 2.0)
    share = T.library_share(t.summary([0.01] * 3), ["add_kernel"])
    assert share["candidate_kernels"] == 1 and share["library_kernels"] == 1 and share["other_kernels"] == 1
    assert share["library_time_share"] == pytest.approx(9.0 / 18.0)
    assert share["top_library_kernels"][0]["kernel"].startswith("nvjet")
    conv = T.conversion_kernels({"activities": [
        {"name": "void at::native::direct_copy_kernel_cuda", "dur_us": 3.0, "launch": "call"},
        {"name": "mm", "dur_us": 1.0, "launch": "call"}]})
    assert conv == [{"kernel": "void at::native::direct_copy_kernel_cuda", "share": 0.75}]


def test_call_ranges_as_this_torch_exports_them(tmp_path):
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for i in range(2):
            with record_function(f"{T.CALL_RANGE}{i}"):
                torch.ones(3).add_(1)
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    s = T.summarize(json.loads(path.read_text())["traceEvents"])
    assert s["calls"] == 2 and s["activities"] == []


@pytest.mark.gpu
@pytest.mark.skipif(not cuda_available(), reason="the device trace needs CUDA")
def test_real_records_of_honest_tiny_kernels_a_side_stream_and_a_thread(tmp_path, monkeypatch):
    import threading

    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def _twice(x_ptr, n, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    monkeypatch.chdir(tmp_path)
    x = torch.randn(1024, device="cuda")

    def honest():
        x.add(1.0)  # an aten kernel (runtime API) and a Triton one (driver API), a microsecond each
        _twice[(1,)](x, x.numel(), B=1024)

    s = T.record_calls(honest, calls=4)
    assert s["harness_streams"] and s["calls"] == 4 and s["aligned"], s
    assert {a["launch"] for a in s["activities"]} == {"call"}, s["activities"]
    assert any("_twice" in a["name"] for a in s["activities"])
    assert T.findings(s, reported_ms=0.004) == [], s
    side = torch.cuda.Stream()

    def on_side():
        with torch.cuda.stream(side):
            _twice[(1,)](x, x.numel(), B=1024)

    assert "side-stream-launch" in dict(T.findings(T.record_calls(on_side, calls=4)))

    def from_thread():
        t = threading.Thread(target=lambda: _twice[(1,)](x, x.numel(), B=1024))
        t.start()
        t.join()

    assert "background-thread" in dict(T.findings(T.record_calls(from_thread, calls=4)))


def test_thread_numbering_and_clocks_that_disagree_are_no_evidence():
    t = honest()
    for e in t.events:  # the ranges numbered apart from the launch records
        if e["cat"] == "user_annotation":
            e["tid"] = 999
    s = t.summary([0.006] * 3)
    assert [a["launch"] for a in s["activities"]] == ["call"] * 3 and T.findings(s) == []
    for e in t.events:  # the ranges on a clock of their own: a mark's launch falls inside one
        if e["cat"] == "user_annotation":
            e["ts"] -= 25.0
    t.kernel("add_kernel", 290.0, 1.0)
    s = t.summary([0.006] * 3)
    assert not s["aligned"] and "deferred-launch" not in dict(T.findings(s))
