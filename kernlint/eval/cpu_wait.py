"""How long an executor waited for a CPU while the judge's clock ran, as the kernel accounts it.

On a loaded machine the judge's wall clock around an executor's calls also counts the time the
executor was ready to run but another process held every core; its own clock around each call does
not see the gaps between calls, so an honest executor could look like one that hides work. That wait
is read from the kernel (``/proc/PID/schedstat``: the executor's main thread's time runnable but not
running) and taken off the judge's clock, but never more than the time the whole process (every
thread, living or exited) spent off a CPU: threads of the executor's own that keep the cores busy
do not excuse the main thread's wait. Where the kernel does not report either (not Linux, schedstats
off), nothing is taken off.
"""

from __future__ import annotations

import ctypes
import functools
import sys
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Sample:
    wait_ns: int  # the main thread's time runnable but not running
    cpu_ns: int  # the process's time on a CPU, all its threads


def sample(pid: int) -> Sample | None:
    """The executor's counters now, or None where the kernel does not report them."""
    if not _reported():
        return None
    counters = _schedstat(pid)
    cpu = _process_cpu_ns(pid)
    if counters is None or cpu is None:
        return None
    return Sample(counters[1], cpu)


def _schedstat(pid: int | str) -> tuple[int, ...] | None:
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return tuple(int(x) for x in f.read().split()[:3])
    except (OSError, ValueError):
        return None


@functools.cache
def _reported() -> bool:
    """Whether the kernel keeps scheduler statistics (off, every counter reads 0: this process,
    which has run, shows no time on a CPU)."""
    if not sys.platform.startswith("linux"):
        return False
    own = _schedstat("self")
    return own is not None and own[0] > 0


def waited_ms(before: Sample | None, after: Sample | None, wall_ms: float) -> float:
    """Of ``wall_ms`` on the judge's clock between the two samples, the time the executor waited
    for a CPU (0 where either sample is missing)."""
    if before is None or after is None:
        return 0.0
    wait = (after.wait_ns - before.wait_ns) / 1e6
    off_cpu = wall_ms - (after.cpu_ns - before.cpu_ns) / 1e6
    return max(0.0, min(wait, off_cpu))


_clock_getcpuclockid = None


def _process_cpu_ns(pid: int) -> int | None:
    """The process's CPU clock (``clock_getcpuclockid``: it keeps the time of exited threads too)."""
    global _clock_getcpuclockid
    try:
        if _clock_getcpuclockid is None:
            _clock_getcpuclockid = ctypes.CDLL(None, use_errno=True).clock_getcpuclockid
        clock = ctypes.c_int()
        if _clock_getcpuclockid(pid, ctypes.byref(clock)) != 0:
            return None
        return time.clock_gettime_ns(clock.value)
    except (OSError, AttributeError, TypeError):
        return None
