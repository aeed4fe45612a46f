"""Timing: CUDA events with an L2 flush before every run, fresh inputs per timed iteration,
warm-up and the median of N; CUDA graphs for tiny kernels; a host wall-clock cross-check. On CPU
a ``time.perf_counter`` fallback, labelled as a smoke test (it measures the interpreter, not a GPU).

The L2 flush *reads* a buffer larger than L2 by default. Flushing by writing (``zero_()``, as
many harnesses do) leaves L2 full of dirty lines, and the timed kernel then pays for writing them
back to DRAM: a memory-bound kernel reads slower than under ncu, whose cache control invalidates
L2 before each profiled kernel.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from typing import Any, Callable

L2_FLUSH_BYTES = 256 * 1024 * 1024
CPU_TIMER = "cpu-perf-counter (smoke test only, not a GPU measurement)"
CUDA_TIMER = "cuda-events (L2 flushed, fresh inputs, median)"


def _stats(samples_ms: list[float], timer: str, **extra) -> dict:
    med = statistics.median(samples_ms)
    mean = statistics.fmean(samples_ms)
    std = statistics.pstdev(samples_ms) if len(samples_ms) > 1 else 0.0
    return {"timer": timer, "median_ms": med, "mean_ms": mean, "std_ms": std,
            "min_ms": min(samples_ms), "cv": (std / mean) if mean else 0.0, "n": len(samples_ms), **extra}


FLUSH_MODES = ("read", "write", "none")


def _l2_flusher(flush_l2: bool | str) -> tuple[str, Callable[[], Any] | None]:
    """(mode, flush function or None) for ``flush_l2``: True = "read", False = "none"."""
    import torch

    mode = "read" if flush_l2 is True else "none" if flush_l2 is False else str(flush_l2)
    if mode == "none":
        return mode, None
    buf = torch.ones(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    if mode == "write":
        return mode, buf.zero_
    if mode == "read":
        out = torch.empty((), dtype=torch.int32, device="cuda")
        return mode, lambda: torch.amax(buf, out=out)
    raise ValueError(f"unknown L2 flush mode {mode!r} (one of {', '.join(FLUSH_MODES)})")


def time_cuda(fn: Callable[..., Any], arg_sets: list[list], warmup: int = 5, iters: int = 50,
              flush_l2: bool | str = True, graph_below_ms: float = 0.01, own_streams=contextlib.nullcontext) -> dict:
    """Median event time of ``fn(*args)``; ``arg_sets`` are distinct input copies used round-robin
    (fresh inputs per timed iteration, so nothing is served from L2 or from a result cache).

    ``flush_l2``: True or "read" (default: a read sweep leaves L2 clean), "write" (``zero_()``,
    leaves dirty lines), False or "none". ``own_streams()``: a context entered while the harness
    runs the calls on streams of its own (the CUDA-graph capture for tiny kernels)."""
    import torch

    mode, flush = _l2_flusher(flush_l2)
    host = []
    for i in range(warmup):
        t0 = time.perf_counter()
        fn(*arg_sets[i % len(arg_sets)])
        host.append((time.perf_counter() - t0) * 1e3)
    torch.cuda.synchronize()
    cycles = spin_cycles(statistics.median(host) if host else 0.0)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    host0 = time.perf_counter()
    sleep = getattr(torch.cuda, "_sleep", None)
    for i in range(iters):
        if flush is not None:
            flush()
        if sleep is not None:
            # keep the GPU busy while the host launches, so the events time the kernel and not
            # the Python launch latency
            sleep(cycles)
        args = arg_sets[i % len(arg_sets)]
        starts[i].record()
        fn(*args)
        ends[i].record()
    torch.cuda.synchronize()
    host_total_ms = (time.perf_counter() - host0) * 1e3
    samples = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    # wall-clock cross-check: each call fully synchronized (every stream), no flush
    wall = []
    for i in range(min(iters, 10)):
        args = arg_sets[i % len(arg_sets)]
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn(*args)
        torch.cuda.synchronize()
        wall.append((time.perf_counter() - t0) * 1e3)
    res = _stats(samples, CUDA_TIMER, wall_sync_median_ms=statistics.median(wall),
                 host_loop_ms=host_total_ms, l2_flush=mode, spin_cycles=cycles,
                 host_call_ms=statistics.median(host) if host else None)
    if res["median_ms"] < graph_below_ms:
        with own_streams():
            res["graph"] = time_cuda_graph(fn, arg_sets[0], iters=iters)
    return res


SPIN_KERNEL = "spin_kernel"  # torch.cuda._sleep's kernel: the profiled pass's delimiter
RANGE_MARK_KERNEL = "kernlint_range_mark"  # kernlint.eval.range_mark's kernel: a timed range's bounds
#: GPU clock cycles per millisecond the spin kernel is sized by (an H100/H200 boosts to about 2 GHz)
SPIN_CYCLES_PER_MS = 2_000_000
SPIN_MIN, SPIN_MAX = 200_000, 20_000_000


def spin_cycles(host_call_ms: float) -> int:
    """Cycles of the spin kernel launched before each timed call: long enough to outlast four
    times the host's own launch of the call (a loaded CPU or a neighbour's compile slows it, and a
    spin that ends first lets the host's latency into the events), at least the 0.1 ms that covers
    a bare launch, at most 10 ms."""
    return int(min(SPIN_MAX, max(SPIN_MIN, 4 * host_call_ms * SPIN_CYCLES_PER_MS)))


def time_cuda_kernels(fn: Callable[..., Any], arg_sets: list[list], iters: int = 20,
                      flush_l2: bool | str = True, within: str | None = None) -> dict:
    """Median over iterations of the summed device durations of the kernels ``fn`` launches,
    from CUPTI through torch.profiler: what ncu's ``gpu__time_duration`` measures, without the
    launch gap and event overhead that CUDA events add (about 2 us per call), so short kernels are
    timed as precisely as long ones. Kernels are attributed to an iteration by position between
    two sleep kernels the harness launches (the L2 flush sits between them), never by name.

    ``within``: the name of the ranges that ``fn`` opens, with :func:`in_range` and its marks,
    around the calls that count (a TritonBench test's calls of the task's function, not its input
    creation); the kernels between each range's marks are timed too, as ``within``'s own statistics."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    mode, flush = _l2_flusher(flush_l2)
    sleep = torch.cuda._sleep
    t0 = time.perf_counter()
    fn(*arg_sets[0])
    cycles = spin_cycles((time.perf_counter() - t0) * 1e3)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(iters):
            sleep(20_000)
            if flush is not None:
                flush()
            sleep(cycles)  # covers the host's launch latency, as in time_cuda
            fn(*arg_sets[i % len(arg_sets)])
        sleep(20_000)
        torch.cuda.synchronize()
    kernels = device_kernels(prof.events())
    groups: list[list[float]] = []
    current: list[float] | None = None
    spins = 0
    for e in kernels:
        if SPIN_KERNEL in e.name:
            spins += 1
            # the 2nd, 4th, ... sleep opens an iteration; the 1st, 3rd, ... closes the previous one
            current = [] if spins % 2 == 0 else None
            if current is not None:
                groups.append(current)
            continue
        if current is not None and RANGE_MARK_KERNEL not in e.name:
            current.append((e.time_range.end - e.time_range.start) / 1e3)
    samples = [sum(g) for g in groups if g]
    if len(groups) != iters or not samples:
        return {"timer": "cupti-kernels", "error": f"attributed kernels to {len(groups)} of {iters} iterations "
                f"({len(samples)} with kernels)"}
    out = _stats(samples, "cupti-kernels (sum of the kernels' device durations, L2 flushed, median)",
                 kernels_per_call=statistics.median(len(g) for g in groups), l2_flush=mode)
    if within is not None:
        out["within"] = range_stats(marked_ranges([(e.name, (e.time_range.end - e.time_range.start) / 1e3)
                                                   for e in kernels]), iters, within)
    return out


def device_kernels(events) -> list:
    """The kernels among a profile's events, in the order they started. A ``record_function`` range
    around launches also appears on the device, as a user annotation spanning its first to last
    kernel with the host's gaps between them: it is not a kernel, and counting it made a whole
    test's kernels outlast the CUDA events around them."""
    return sorted((e for e in events if str(getattr(e, "device_type", "")).upper().endswith("CUDA")
                   and not getattr(e, "is_user_annotation", False)
                   and getattr(e, "time_range", None) is not None),
                  key=lambda e: e.time_range.start)


def marked_ranges(kernels: list[tuple[str, float]]) -> list[float]:
    """The summed duration of the kernels between each pair of range marks (``kernels``: name and
    milliseconds in the order they ran); a mark left open counts nothing."""
    ranges: list[float] = []
    current: float | None = None
    for name, ms in kernels:
        if RANGE_MARK_KERNEL in name:
            if current is not None:
                ranges.append(current)
            current = 0.0 if current is None else None
        elif current is not None and SPIN_KERNEL not in name:
            current += ms
    return ranges


def in_range(fn: Callable[..., Any], name: str, marks: bool = False) -> Callable[..., Any]:
    """``fn`` with each outermost call inside a profiler range ``name`` (a call ``fn`` makes of
    itself stays in its caller's range, so no kernel counts twice); with ``marks``, a range-mark
    kernel runs on the stream before and after the call, which is what ``time_cuda_kernels``'s
    ``within`` times by."""
    import functools

    import torch

    mark: Callable[[], None] = lambda: None  # noqa: E731
    if marks:
        from kernlint.eval.range_mark import mark

        mark()  # compiled now, not inside the first timed call
    depth = [0]

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if depth[0]:
            return fn(*args, **kwargs)
        depth[0] += 1
        try:
            with torch.profiler.record_function(name):
                mark()
                try:
                    return fn(*args, **kwargs)
                finally:
                    mark()
        finally:
            depth[0] -= 1

    return call


def range_stats(range_ms: list[float], iters: int, name: str) -> dict:
    """Statistics of the per-iteration sums of ``range_ms`` (the device time of each range, in the
    order they opened; every iteration opens as many): an error where they do not divide evenly
    or hold no kernel time at all (no kernel ran between their marks)."""
    if not range_ms or len(range_ms) % iters:
        return {"timer": "cupti-ranges", "error": f"{len(range_ms)} '{name}' ranges over {iters} iterations"}
    per = len(range_ms) // iters
    samples = [sum(range_ms[i * per:(i + 1) * per]) for i in range(iters)]
    if not any(samples):
        return {"timer": "cupti-ranges", "error": f"no kernel time attributed to the '{name}' ranges"}
    return _stats(samples, f"cupti-kernels inside '{name}' (sum of their device durations, median)",
                  ranges_per_call=per)


def time_cuda_graph(fn: Callable[..., Any], args: list, iters: int = 50, per_replay: int = 20) -> dict:
    """Launch-overhead-free timing for tiny kernels: replay a captured graph of ``per_replay`` calls."""
    import torch

    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                fn(*args)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(per_replay):
                fn(*args)
        samples = []
        for _ in range(iters):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            samples.append(a.elapsed_time(b) / per_replay)
        return _stats(samples, "cuda-graph replay")
    except Exception as exc:  # capture is not possible for every candidate
        return {"timer": "cuda-graph", "error": f"{type(exc).__name__}: {exc}"[:300]}


def time_cpu(fn: Callable[..., Any], arg_sets: list[list], warmup: int = 1, iters: int = 5) -> dict:
    for i in range(warmup):
        fn(*arg_sets[i % len(arg_sets)])
    samples = []
    for i in range(iters):
        args = arg_sets[i % len(arg_sets)]
        t0 = time.perf_counter()
        fn(*args)
        samples.append((time.perf_counter() - t0) * 1e3)
    return _stats(samples, CPU_TIMER)
