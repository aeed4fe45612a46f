"""z3 checks capped by the CPU time of the thread that runs them, not by the wall clock.

The budget (``rlimit``) bounds most of a check's work, but not all of it: z3 4.15's nonlinear
procedure (nlsat) counts its work apart, and ran 14 to 20 s on questions that spent half the budget
(benchmarks/results/z3_versions_2026-12-06.md). A cap ends those. Under z3's own ``timeout``, a wall
clock, the same question was answered on an idle machine and cut short beside a CI job, so
findings followed the machine's load. The thread's CPU clock does not advance while other work
holds the cores, so a cap on it gives one answer however loaded the machine is.

A watchdog thread reads the CPU clock of each thread in a check (z3 releases the GIL while it
solves) and interrupts the check's context once its share is spent. ``Z3_interrupt`` reaches only a
check in progress: one that arrives after the check has returned does nothing.
"""

from __future__ import annotations

import os
import threading
import time

import z3

#: how often the watchdog reads the clocks while a check runs (a cap overshoots by at most this)
POLL_S = 0.005

_lock = threading.Lock()
#: thread ident -> (the context its check runs in, its CPU clock, the clock's reading to stop at)
_checks: dict[int, tuple] = {}
_running = threading.Event()
_watchdog: threading.Thread | None = None


def cpu_seconds(clock: int) -> float:
    return time.clock_gettime(clock)


def thread_clock() -> int | None:
    """The calling thread's CPU-time clock, or None where the platform has none (macOS, Windows)."""
    try:
        clock = time.pthread_getcpuclockid(threading.get_ident())
        time.clock_gettime(clock)
    except (AttributeError, OSError):
        return None
    return clock


def available() -> bool:
    return thread_clock() is not None


def check(solver: z3.Solver, ctx: z3.Context, limit_s: float) -> z3.CheckSatResult:
    """``solver.check()``, interrupted (``unknown``, reason ``canceled``) once the calling thread
    has spent ``limit_s`` CPU seconds in it. Where no CPU clock can be read, z3's wall-clock
    ``timeout`` stays the cap (set by the caller)."""
    clock = thread_clock()
    if clock is None:
        return solver.check()
    ident = threading.get_ident()
    with _lock:
        _checks[ident] = (ctx, clock, cpu_seconds(clock) + limit_s)
        _start()
        _running.set()
    try:
        return solver.check()
    finally:
        with _lock:
            del _checks[ident]
            if not _checks:
                _running.clear()


def _start() -> None:
    global _watchdog
    if _watchdog is None or not _watchdog.is_alive():
        _watchdog = threading.Thread(target=_watch, name="kernlint-z3-cpu-cap", daemon=True)
        _watchdog.start()


def _after_fork_in_child() -> None:
    """A forked child has no watchdog thread, and the parent's may have held the lock when it forked."""
    global _lock, _running, _watchdog
    _lock, _running, _watchdog = threading.Lock(), threading.Event(), None
    _checks.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _watch() -> None:
    while True:
        _running.wait()
        time.sleep(POLL_S)
        with _lock:  # (under the lock: a check's context lives while it is listed)
            for ctx, clock, stop in _checks.values():
                if cpu_seconds(clock) >= stop:
                    ctx.interrupt()
