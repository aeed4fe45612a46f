"""Values about a problem, not about a candidate, measured once per problem and device and reused.

The reference's timings, its torch.compile baseline, its FLOP count and the null-model audit depend
on the problem, the device and the options, never on the candidate. A batch keeps one
:class:`ProblemCache` per GPU, shared by the worker slots on it, in the trusted processes; an executor never sees it.
Everything that checks the candidate stays per candidate: the reference's outputs for the judge's
secret inputs are computed afresh for every candidate.

A time (the reference's, the baseline's) is stored only from a run whose candidate passed every
correctness trial, with no error and no cheat flagged at run time: a candidate that left work
running on the device could slow the reference timed after it, and that must not carry over to the
candidates after it. What no candidate can change (the FLOP count, the null-model audit: the
reference executor's and the judge's own computations) is stored from any run that computed it. A reused value names the candidate whose run
measured it (``reused`` in the record: name -> candidate id).
"""

from __future__ import annotations

import copy
import hashlib
import threading
from typing import Any, Callable


class ProblemCache:
    """``store`` and ``lock``: a dict and a lock the slots of one GPU share (a multiprocessing
    manager's, when the slots are processes); by default this process's own."""

    def __init__(self, store: Any = None, lock: Any = None) -> None:
        self._values: dict[tuple, tuple[Any, str]] = {} if store is None else store
        self._lock = threading.Lock() if lock is None else lock

    def get(self, key: tuple) -> tuple[Any, str] | None:
        """(a copy of the value, the candidate whose run measured it), or None."""
        with self._lock:
            hit = self._values.get(key)
        return None if hit is None else (copy.deepcopy(hit[0]), hit[1])

    def put(self, key: tuple, value: Any, source: str) -> None:
        with self._lock:
            self._values.setdefault(key, (copy.deepcopy(value), source))

    def __len__(self) -> int:
        return len(self._values)


class Reuse:
    """One judge's view of the cache: what it reused and what it measured (stored by :meth:`commit`)."""

    def __init__(self, cache: ProblemCache | None, job: dict) -> None:
        self.cache, self.job = cache, job
        self.reused: dict[str, str] = {}
        self.measured: dict[tuple, tuple[Any, bool]] = {}

    def key(self, name: str, device: Any, parts: tuple) -> tuple:
        prob = self.job["problem"]
        source = hashlib.sha256((prob.get("source", "") + "\0" + prob.get("test_code", "")).encode()).hexdigest()
        return (str(prob.get("id", "")), prob.get("kind"), source, str(device), name, repr(parts))

    def value(self, name: str, device: Any, compute: Callable[[], Any], *parts: Any, timed: bool = True) -> Any:
        """``compute()``, or the value an earlier run of this problem measured on ``device`` with the
        same ``parts`` (the request and input shapes it depends on). ``timed``: a time on the device,
        kept only from a clean run."""
        if self.cache is None:
            return compute()
        key = self.key(name, device, parts)
        hit = self.cache.get(key)
        if hit is not None:
            self.reused[name] = hit[1]
            return hit[0]
        got = compute()
        self.measured[key] = (got, timed)
        return got

    def commit(self, result: dict) -> None:
        if self.reused:
            result["reused"] = dict(self.reused)
        clean = (result.get("status") == "ok" and not result.get("cheats")
                 and (result.get("correctness") or {}).get("passed_all") is True)
        if self.cache is None:
            return
        source = str(self.job["candidate"].get("id") or "")
        for key, (value, timed) in self.measured.items():
            if clean or not timed:
                self.cache.put(key, value, source)
