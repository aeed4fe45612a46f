"""Output elements no launch wrote: poisoned fresh allocations, judged when the run ends.

Runs inside the interpreted process (see :mod:`kernlint.dynamic.interp_hook`). Every CPU tensor
made by ``torch.empty``/``empty_like``/``empty_strided``/``new_empty`` is *poisoned* (floats with
NaN, integers with a byte pattern) and remembered. Kernel stores into it are marked byte by byte.
When the process ends, an allocation that some launch stored to is judged: its elements that no
kernel wrote and that still hold the poison (so the host did not fill them either) were never
written. They are reported at the store that wrote most of the allocation, with the launch's
grid: the signature of a grid that is too small, a ``//`` where a ceiling division was needed, or
a store guarded by one program id.

An autotuned launch is also judged config by config: ``triton.autotune`` runs every config on the
same arguments while it times them, and each must write the whole output on its own (whichever
the tuner picks on a given machine is what the caller gets). Elements one config's run leaves
unwritten that another config's run writes are reported for that config, even where the runs
together (or the config the tuner kept) wrote everything.
"""

from __future__ import annotations

import bisect
import ctypes
import weakref
from dataclasses import dataclass, field

import numpy as np

#: fresh allocations kept alive until the end of the run (beyond this, judged at once)
MAX_RETAINED_BYTES = 1 << 30
_INT_POISON = 0xA5


@dataclass
class Fresh:
    start: int
    nbytes: int
    itemsize: int
    #: a weak reference until a kernel writes into it, then the tensor itself (kept alive so its
    #: bytes can be read back when the run ends)
    tensor: object
    written: np.ndarray | None = None  # per byte, set by kernel stores
    #: per byte: inside a tensor a launch was given (a view of a bigger buffer covers its part only)
    passed: np.ndarray | None = None
    #: (kernel, launch index, grid, argument name) -> site -> bytes stored
    writers: dict = field(default_factory=dict)
    #: launch index -> per byte, set by that launch's stores (only for the runs of an autotuner's configs)
    by_launch: dict = field(default_factory=dict)


class Registry:
    def __init__(self):
        self.by_start: dict[int, Fresh] = {}
        self._starts: list[int] = []
        self.retained = 0
        self.records: list[dict] = []
        #: while an autotuner runs its configs: each launch's stores are kept apart (:meth:`compare_configs`)
        self.tuning = False
        self.tuned_bytes = 0

    def add(self, tensor) -> None:
        try:
            if tensor.device.type != "cpu" or tensor.numel() == 0 or tensor.dtype.is_complex:
                return
            if not _poison(tensor):
                return
            start, nbytes = int(tensor.data_ptr()), int(tensor.untyped_storage().nbytes())
        except Exception:
            return
        old = self.by_start.pop(start, None)
        if old is not None:  # the allocator handed the same bytes out again: judge the old owner now
            self._starts.remove(start)
            self._judge(old)
        self.by_start[start] = Fresh(start, nbytes, tensor.element_size(), weakref.ref(tensor))
        bisect.insort(self._starts, start)

    def find(self, address: int) -> Fresh | None:
        i = bisect.bisect_right(self._starts, address) - 1
        if i < 0:
            return None
        fresh = self.by_start[self._starts[i]]
        return fresh if address < fresh.start + fresh.nbytes else None

    def passed(self, fresh: Fresh, start: int, nbytes: int) -> None:
        """A launch was given the bytes ``[start, start + nbytes)`` of ``fresh``."""
        if fresh.passed is None:
            fresh.passed = np.zeros(fresh.nbytes, dtype=bool)
        lo = max(0, start - fresh.start)
        fresh.passed[lo:lo + nbytes] = True

    def mark(self, fresh: Fresh, addrs: np.ndarray, itemsize: int, writer: tuple, site: int) -> None:
        if isinstance(fresh.tensor, weakref.ref):
            fresh.tensor = fresh.tensor()
            if fresh.tensor is None:  # freed before any kernel wrote it: its bytes now belong to another tensor
                self._forget(fresh)
                return
        if fresh.written is None:
            fresh.written = np.zeros(fresh.nbytes, dtype=bool)
            self.retained += fresh.nbytes
        off = (addrs.astype(np.int64) - fresh.start)[:, None] + np.arange(itemsize)[None, :]
        off = off[(off >= 0) & (off < fresh.nbytes)]
        fresh.written[off] = True
        if self.tuning:
            own = fresh.by_launch.get(writer[1])
            if own is None and self.tuned_bytes + fresh.nbytes <= MAX_RETAINED_BYTES:
                own = fresh.by_launch[writer[1]] = np.zeros(fresh.nbytes, dtype=bool)
                self.tuned_bytes += fresh.nbytes
            if own is not None:
                own[off] = True
        sites = fresh.writers.setdefault(writer, {})
        sites[site] = sites.get(site, 0) + int(off.size)
        if self.retained > MAX_RETAINED_BYTES:
            self._judge(fresh)
            self._forget(fresh)

    def compare_configs(self, runs: list[dict]) -> None:
        """``runs``: the launch (index, kernel, grid) of each config an autotuner ran on one call's
        arguments, with the config. Every allocation some run wrote: the elements a run left
        unwritten that another run wrote, reported at the store of that run that wrote most of it (of
        the other runs, where it wrote none of it). An allocation whose runs' stores were not all kept
        (past MAX_RETAINED_BYTES) is not compared."""
        self.tuned_bytes = 0
        launches = {r["launch"] for r in runs}
        for fresh in list(self.by_start.values()):
            own = {r["launch"]: fresh.by_launch[r["launch"]] for r in runs if r["launch"] in fresh.by_launch}
            complete = set(fresh.by_launch) >= {w[1] for w in fresh.writers if w[1] in launches}
            fresh.by_launch = {}
            if not own or not complete:
                continue
            n = fresh.nbytes // fresh.itemsize
            per_element = {i: w[: n * fresh.itemsize].reshape(n, fresh.itemsize).any(axis=1) for i, w in own.items()}
            union = np.logical_or.reduce(list(per_element.values()))
            for run in runs:
                wrote = per_element.get(run["launch"])
                missed = union & ~wrote if wrote is not None else union
                count = int(missed.sum())
                if count:
                    name, site = _main_store(fresh, {run["launch"]} if wrote is not None else set(own))
                    self.records.append({"kind": "unwritten-output", "kernel": run["kernel"], "site": site,
                                         "launch": run["launch"], "grid": list(run["grid"]), "tensor": name,
                                         "elements": count, "total_elements": n,
                                         "first_element": int(np.argmax(missed)), "config": run["config"]})

    def _forget(self, fresh: Fresh) -> None:
        if self.by_start.get(fresh.start) is fresh:
            del self.by_start[fresh.start]
            self._starts.remove(fresh.start)

    def finish(self) -> list[dict]:
        for fresh in list(self.by_start.values()):
            self._judge(fresh)
        self.by_start.clear()
        self._starts.clear()
        return self.records

    def _judge(self, fresh: Fresh) -> None:
        if fresh.written is None or isinstance(fresh.tensor, weakref.ref) or fresh.tensor is None:
            return
        self.retained -= fresh.nbytes
        raw = np.ctypeslib.as_array((ctypes.c_uint8 * fresh.nbytes).from_address(fresh.start)).copy()
        poison = _poison_bytes(fresh.tensor.dtype)
        n = fresh.nbytes // fresh.itemsize
        still = (raw[: n * fresh.itemsize].reshape(n, fresh.itemsize) == poison[None, :]).all(axis=1)
        untouched = ~fresh.written[: n * fresh.itemsize].reshape(n, fresh.itemsize).any(axis=1)
        passed = fresh.passed if fresh.passed is not None else np.ones(fresh.nbytes, dtype=bool)
        unwritten = still & untouched & passed[: n * fresh.itemsize].reshape(n, fresh.itemsize).all(axis=1)
        count = int(unwritten.sum())
        fresh.tensor = None
        if not count:
            return
        (kernel, launch, grid, name), sites = next(iter(fresh.writers.items()))
        site = max(sites, key=sites.get)
        first = int(np.argmax(unwritten))
        self.records.append({"kind": "unwritten-output", "kernel": kernel, "site": site, "launch": launch,
                             "grid": list(grid), "tensor": name, "elements": count, "total_elements": n,
                             "first_element": first})


def _main_store(fresh: Fresh, launches: set) -> tuple:
    """(argument name, site) of the store that wrote most of ``fresh`` in these launches."""
    stores: dict = {}
    for (_, launch, _, name), sites in fresh.writers.items():
        if launch in launches:
            for site, count in sites.items():
                stores[(name, site)] = stores.get((name, site), 0) + count
    return max(stores, key=stores.get)


def _poison(tensor) -> bool:
    """Fill with NaN (floats) or an unlikely integer; False for what cannot be poisoned (bool)."""
    import torch

    if tensor.dtype == torch.bool:
        return False
    with torch.no_grad():
        if tensor.dtype.is_floating_point:
            tensor.fill_(float("nan"))
        else:
            tensor.fill_(torch.iinfo(tensor.dtype).min + _INT_POISON)
    return True


def _poison_bytes(dtype) -> np.ndarray:
    import torch

    sample = torch.zeros(1, dtype=dtype)
    _poison(sample)
    return sample.view(torch.uint8).numpy().copy()


def install(registry: Registry) -> None:
    """Poison and remember every fresh CPU allocation made through torch's ``empty`` family."""
    try:
        import torch
    except ImportError:
        return

    def wrap(fn):
        def fresh(*args, **kwargs):
            t = fn(*args, **kwargs)
            registry.add(t)
            return t

        fresh.__wrapped__ = fn
        return fresh

    for name in ("empty", "empty_like", "empty_strided"):
        setattr(torch, name, wrap(getattr(torch, name)))
    torch.Tensor.new_empty = wrap(torch.Tensor.new_empty)
