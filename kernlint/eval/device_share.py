"""One GPU shared by the worker slots of a batch (processes): work on it shares it, a measurement
has it alone.

A slot holds its GPU *shared* for every request that runs device work (a correctness call, an
input set), so slots overlap what dominates a candidate's evaluation: interpreters starting,
compiles, transfers, comparisons. A request that compiles for seconds and ends with a few launches
(a baseline's build, the profiler's start, a warm-up call) holds nothing: a measurement waiting for
it would stop every other slot's shared requests for as long. A slot holds it *exclusive* while it measures: the
candidate's and the reference's timings and the judge's clock around them, the baselines' timed
calls, the profiler's record of the candidate's calls and the ncu pass. Without MPS, kernels of
other processes time-slice with the measured ones and would stretch their events.

The lock is writer-preferring, so a measurement never waits behind an endless stream of shared
requests: two ``flock(2)``-ed files, a turnstile and the device. A reader passes the turnstile (takes
and drops it) and holds the device shared; a writer holds the turnstile, so no new reader passes,
and takes the device exclusively once the readers in flight are done. Locks of a process that dies
are released by the kernel.

What a candidate's process does between requests is outside the lock: only a background thread
could use the GPU then, and a candidate that starts one is flagged (``background-thread``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from pathlib import Path
from typing import Iterator

#: worker slots per GPU by default: slots overlap what dominates a candidate's evaluation (starting
#: interpreters, compiling, moving and comparing tensors) and take their GPU in turn to measure
SLOTS_PER_GPU = 4


class DeviceShare:
    def __init__(self, folder: str | Path, device: str, slots: int) -> None:
        self.slots = slots
        self.paths = (str(Path(folder) / f"gpu-{device}.turnstile"), str(Path(folder) / f"gpu-{device}.device"))
        for p in self.paths:
            Path(p).touch()
        self._fds: tuple[int, int] | None = None
        self._pid = 0
        self._held = threading.local()
        #: seconds this process waited for the GPU, shared and exclusive (a record's ``gpu_wait_s``)
        self.waited = {"shared": 0.0, "exclusive": 0.0}

    def __getstate__(self) -> dict:
        return {"paths": self.paths, "slots": self.slots}

    def __setstate__(self, state: dict) -> None:
        self.slots = state["slots"]
        self.paths, self._fds, self._pid, self._held = state["paths"], None, 0, threading.local()
        self.waited = {"shared": 0.0, "exclusive": 0.0}

    def _open(self) -> tuple[int, int]:
        # a lock belongs to an open file description: each process opens its own
        if self._fds is None or self._pid != os.getpid():
            self._fds = tuple(os.open(p, os.O_RDWR) for p in self.paths)  # type: ignore[assignment]
            self._pid = os.getpid()
        return self._fds  # type: ignore[return-value]

    def mode(self) -> str | None:
        return getattr(self._held, "mode", None)

    @contextlib.contextmanager
    def _holding(self, mode: str) -> Iterator[None]:
        self._held.mode = mode
        try:
            yield
        finally:
            self._held.mode = None

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        if self.mode() is not None:  # held already, either way
            yield
            return
        turn, dev = self._open()
        t0 = time.monotonic()
        fcntl.flock(turn, fcntl.LOCK_EX)
        try:
            fcntl.flock(dev, fcntl.LOCK_SH)
        finally:
            fcntl.flock(turn, fcntl.LOCK_UN)
        self.waited["shared"] += time.monotonic() - t0
        try:
            with self._holding("shared"):
                yield
        finally:
            fcntl.flock(dev, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        held = self.mode()
        if held == "exclusive":
            yield
            return
        if held == "shared":
            raise RuntimeError("a slot holding its GPU shared cannot take it exclusively (it would wait for itself)")
        turn, dev = self._open()
        t0 = time.monotonic()
        fcntl.flock(turn, fcntl.LOCK_EX)
        try:
            fcntl.flock(dev, fcntl.LOCK_EX)
            self.waited["exclusive"] += time.monotonic() - t0
            try:
                with self._holding("exclusive"):
                    yield
            finally:
                fcntl.flock(dev, fcntl.LOCK_UN)
        finally:
            fcntl.flock(turn, fcntl.LOCK_UN)


class Unshared:
    """A device no other slot uses (one slot, or the CPU): nothing to wait for."""

    slots = 1
    waited = {"shared": 0.0, "exclusive": 0.0}

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        yield

    exclusive = shared

    def mode(self) -> None:
        return None
