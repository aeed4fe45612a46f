"""The profiler's record (CUPTI, through torch.profiler) of the device work of a candidate's calls,
and what it shows: work on another stream, launched from another thread or after the call
returned, device time that the call's CUDA events do not enclose, and the library's share.

The executor (:func:`record_calls`) runs the calls under the profiler, each between two spin
kernels the harness launches on its own stream (the marks name the harness's stream in the trace)
and inside a ``record_function`` range (the call's host window), with CUDA events around it; a
grace period after the last call lets work launched late show up. It reduces the exported trace
to a list of device activities (:func:`summarize`): each with its stream, device time and where
its launch came from (the call it was made in, another thread, or the main thread outside every
call). The judge reads that list (:func:`findings`, :func:`library_share`); nothing in it is a
claim the executor makes about itself, and an activity whose launch is not in the trace is not
evidence of anything.

No host clock is used: an honest kernel of a few microseconds launched from the call, on the
harness's stream, is enclosed by its events whatever the host's synchronize costs.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any, Callable

from kernlint.eval.timing import SPIN_KERNEL

CALL_RANGE = "kernlint-call-"
#: the ``function`` of a wall-clock request that calls nothing: its synchronize alone
EMPTY_CALL = "<empty call>"
#: a reported event median below this fraction of the device time of the profiled calls (less
#: the events' resolution) is not the candidate's real timing: events enclose the kernels they time.
#: Not the events around the profiled calls: the profiler slows the host's launches, and a call of
#: many small kernels then waits on its host there, not in the timed loop.
REPORTED_AGREEMENT = 0.5
EVENT_RESOLUTION_US = 0.5
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
LAUNCH_CATS = ("cuda_runtime", "cuda_driver")
#: device time a call's events may miss before it counts (event resolution, the events' own gaps)
EVENT_SLACK_US = 2.0
EVENT_SLACK = 0.1
#: seconds the executor waits after the last call for work launched late
GRACE_S = 0.05
#: the activities a record keeps (a forward of thousands of kernels is summarized, not shipped whole)
MAX_ACTIVITIES = 20000
#: device kernels of the library that convert between dtypes (aten's copy kernels, casts)
CONVERSION_MARKERS = ("copy_kernel", "_to_copy", "convert", "cast")


def start_profiler_once() -> None:
    """Start and stop the profiler on nothing: its first start in a process loads and initializes
    CUPTI (seconds), which :func:`record_calls` then finds done."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        torch.cuda._sleep(1)
        torch.cuda.synchronize()


def record_calls(fn: Callable[[], Any], calls: int = 5, grace_s: float = GRACE_S) -> dict:
    """Executor side (CUDA): ``calls`` calls of ``fn`` under the profiler, reduced by :func:`summarize`."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    fn()
    torch.cuda.synchronize()
    events = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(calls):
            torch.cuda._sleep(20_000)  # the mark: its stream is the harness's
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            with record_function(f"{CALL_RANGE}{i}"):
                a.record()
                fn()
                b.record()
            events.append((a, b))
        time.sleep(grace_s)
        torch.cuda._sleep(20_000)
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json", dir=os.getcwd())
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    finally:
        os.unlink(path)
    out = summarize(trace.get("traceEvents", []) if isinstance(trace, dict) else trace)
    out["event_ms"] = [a.elapsed_time(b) for a, b in events]
    return out


def _num(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return 0.0


def summarize(events: list[dict]) -> dict:
    """A chrome trace's events to ``{"activities", "harness_streams", "calls", "aligned"}``: each
    device activity (kernel, copy, memset) but the harness's marks, with ``launch`` one of
    ``"call"`` (made by the harness's thread inside call ``call``), ``"thread"`` (another thread),
    ``"outside"`` (the harness's thread outside every call) or ``"unknown"`` (no launch record).

    The harness's thread is the one that launched the marks, as the launch records number it;
    the call ranges are placed among the launches only when every mark's launch falls between
    them (``aligned``: the host clock of the ranges and of the launch records agree), otherwise
    a launch of that thread outside a range is ``"unknown"``, not late."""
    windows, launches, device, marks = [], {}, [], []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") not in (None, "X"):
            continue
        cat, name, args = str(e.get("cat", "")).lower(), str(e.get("name", "")), e.get("args") or {}
        corr = args.get("correlation", args.get("correlationId"))
        if cat == "user_annotation" and name.startswith(CALL_RANGE):
            start = _num(e.get("ts"))
            windows.append((int(name[len(CALL_RANGE):] or 0), start, start + _num(e.get("dur"))))
        elif cat in LAUNCH_CATS and corr is not None:
            launches[corr] = (e.get("tid"), _num(e.get("ts")))
        elif cat in DEVICE_CATS:
            act = {"name": name[:200], "stream": args.get("stream"), "dur_us": _num(e.get("dur")),
                   "start_us": _num(e.get("ts")), "corr": corr}
            (marks if SPIN_KERNEL in name else device).append(act)
    mark_launches = [launches[m["corr"]] for m in marks if m["corr"] in launches]
    harness_tids = {tid for tid, _ in mark_launches}
    aligned = (len(mark_launches) == len(windows) + 1 and bool(windows)
               and not any(w[1] <= ts <= w[2] for _, ts in mark_launches for w in windows))
    acts = []
    for d in device:
        tid, ts = launches.get(d.pop("corr"), (None, None))
        call = next((w[0] for w in windows if w[1] <= ts <= w[2]), None) if tid in harness_tids else None
        d["launch"] = ("unknown" if tid is None or not harness_tids else "thread" if tid not in harness_tids
                       else "call" if call is not None else "outside" if aligned else "unknown")
        d["call"] = call
        acts.append(d)
    return {"activities": acts[:MAX_ACTIVITIES], "dropped": max(0, len(acts) - MAX_ACTIVITIES),
            "harness_streams": sorted({m["stream"] for m in marks}, key=str), "calls": len(windows), "aligned": aligned}


def _names(acts: list[dict], n: int = 3) -> str:
    seen = []
    for a in acts:
        short = a["name"][:80]
        if short not in seen:
            seen.append(short)
    return ", ".join(seen[:n]) + (f" (+{len(seen) - n})" if len(seen) > n else "")


def device_us_per_call(summary: dict) -> list[float]:
    per = [0.0] * int(summary.get("calls", 0))
    for a in summary.get("activities", []):
        if a.get("launch") == "call" and isinstance(a.get("call"), int) and 0 <= a["call"] < len(per):
            per[a["call"]] += a["dur_us"]
    return per


def findings(summary: dict, reported_ms: float | None = None) -> list[tuple[str, str]]:
    """``(reason, detail)`` for what the record shows: a stream other than the harness's, a launch
    from another thread or after the call returned, more device time in a call than its events
    enclose, a ``reported_ms`` (the candidate's timing) far below the events recorded around the
    profiled calls. Empty for work launched by the call on the harness's stream, however short."""
    every = summary.get("activities", [])
    acts = [a for a in every if a.get("launch") != "unknown"]
    out = []
    harness = summary.get("harness_streams") or []
    if harness:  # nothing but the calls runs on the device while the profiler records them
        side = [a for a in every if a.get("stream") not in harness]
        if side:
            out.append(("side-stream-launch", f"{len(side)} device activities on stream(s) "
                        f"{sorted({str(a.get('stream')) for a in side})[:3]}, the harness's is {harness[:2]}: {_names(side)}"))
    thread = [a for a in acts if a["launch"] == "thread"]
    if thread:
        out.append(("background-thread", f"{len(thread)} device activities launched from another thread: {_names(thread)}"))
    late = [a for a in acts if a["launch"] == "outside"]
    if late:
        out.append(("deferred-launch", f"{len(late)} device activities launched after the call returned: {_names(late)}"))
    events = summary.get("event_ms") or []
    for i, (dev, ev) in enumerate(zip(device_us_per_call(summary), events)):
        ev_us = float(ev) * 1e3
        if dev > ev_us * (1 + EVENT_SLACK) + EVENT_SLACK_US:
            out.append(("events-miss-device-work", f"call {i}: {dev:.1f} us of device work, its CUDA events "
                        f"enclose {ev_us:.1f} us"))
            break
    dev = sorted(device_us_per_call(summary))
    if dev and isinstance(reported_ms, (int, float)):
        med = dev[len(dev) // 2]
        if reported_ms * 1e3 < REPORTED_AGREEMENT * med - EVENT_RESOLUTION_US / 2:
            out.append(("timing-disagrees", f"its timing reported {reported_ms * 1e3:.2f} us per call, the device "
                        f"work of a profiled call lasts {med:.2f} us"))
    return out


#: names of library device work (lower case): aten's kernels, cuBLAS/cuBLASLt (nvjet, xmma,
#: CUTLASS-built GEMMs), cuDNN, CUB, kernels torch.compile generates, copies and memsets
LIBRARY_MARKERS = ("at::", "at_cuda_detail", "cublas", "cudnn", "cutlass", "xmma", "nvjet", "gemm", "gemv",
                   "cub::", "triton_poi_", "triton_red_", "triton_per_", "triton_tem_", "memcpy", "memset",
                   "elementwise_kernel", "reduce_kernel", "splitkreduce")


def library_share(summary: dict, candidate_kernels: list[str]) -> dict:
    """The device time of the calls split into the candidate's own kernels (by the names of the
    Triton kernels its module defines), the library's (:data:`LIBRARY_MARKERS`: aten, cuBLAS,
    cuDNN) and other work (a TileLang or inline-CUDA kernel of the candidate is neither: it is never
    counted as the library's), with the library's kernels and shares, largest first."""
    parts: dict[str, dict[str, float]] = {"own": {}, "library": {}, "other": {}}
    for a in summary.get("activities", []):
        if a.get("launch") not in ("call", "unknown"):
            continue
        name = a["name"]
        kind = ("own" if any(k and k in name for k in candidate_kernels)
                else "library" if any(m in name.lower() for m in LIBRARY_MARKERS) else "other")
        parts[kind][name] = parts[kind].get(name, 0.0) + a["dur_us"]
    own, lib = parts["own"], parts["library"]
    total = sum(sum(v.values()) for v in parts.values())
    top = sorted(lib.items(), key=lambda kv: kv[1], reverse=True)[:5]
    return {"candidate_kernels": len(own), "library_kernels": len(lib), "other_kernels": len(parts["other"]),
            "library_time_share": sum(lib.values()) / total if total else 0.0,
            "device_us": total, "candidate_kernel_names": sorted(own),
            "top_library_kernels": [{"kernel": k[:160], "share": v / total} for k, v in top] if total else []}


def conversion_kernels(summary: dict) -> list[dict]:
    """The library's dtype-conversion kernels of the calls, with their share of the device time."""
    acts = [a for a in summary.get("activities", []) if a.get("launch") in ("call", "unknown")]
    total = sum(a["dur_us"] for a in acts)
    conv: dict[str, float] = {}
    for a in acts:
        if any(m in a["name"].lower() for m in CONVERSION_MARKERS):
            conv[a["name"]] = conv.get(a["name"], 0.0) + a["dur_us"]
    return [{"kernel": k[:160], "share": v / total} for k, v in sorted(conv.items(), key=lambda kv: -kv[1])][:5] if total else []
