"""Exact-bounds and write-overlap instrumentation of Triton's interpreter (``TRITON_INTERPRET=1``).

This module runs *inside* the process that executes the user's kernels. It replaces the
``_interpreter`` extension object that ``triton/runtime/interpreter.py`` calls for every memory
access (``load``, ``store``, ``atomic_rmw``, ``atomic_cas``: the same four entry points in Triton
3.6 and 3.9, whatever builder method leads there: ``create_load``, ``create_masked_store``,
block-pointer and tensor-descriptor accesses, atomics) with a proxy that

- checks every active lane's byte range ``[addr, addr + itemsize)`` against the exact byte ranges
  of the tensors passed to the launch (``data_ptr .. data_ptr + extent``, no allocator
  granularity) and masks off the lanes that fall outside (so the run goes on instead of reading
  or corrupting host memory);
- records, per launch, which program (pid x, y, z) wrote which byte non-atomically and which
  program read it, to find writes of one address by two programs and reads of an address that
  another program of the same launch writes.

Results are appended as JSON lines to ``$KERNLINT_INTERP_OUT_DIR/interp-<pid>.jsonl`` after each
launch, so a crash later in the run loses nothing already checked.

Limits: only accesses through pointers derived from tensor arguments are judged (a pointer built
from an integer is checked like any other and reported as out of bounds when it hits no tensor);
the interpreter runs programs one after another, so a spin lock never spins, and accesses made
while a program holds a lock taken with ``atomic_cas`` (until it releases it with ``atomic_xchg``)
are treated as synchronised; race tracking stops for a launch past ``MAX_TRACKED_BYTES``.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

OUT_DIR_ENV = "KERNLINT_INTERP_OUT_DIR"
TARGET_MODULE = "triton.runtime.interpreter"
#: per launch, bytes of writes and reads kept for race detection
MAX_TRACKED_BYTES = 64 * 1024 * 1024
#: programs listed per record (the count is always exact)
MAX_PROGRAMS_LISTED = 16
#: a program that repeats the same accesses with the same results this many times, for this many
#: seconds, without touching anything new, waits for another program (which the sequential
#: interpreter never runs): the launch is stopped
SPIN_ACCESSES = 2000
SPIN_SECONDS = float(os.environ.get("KERNLINT_SPIN_SECONDS", "2"))
WAIT_MESSAGE = "programs wait on each other"


class ProgramsWaitOnEachOther(RuntimeError):
    """A program spins on memory only another program of the launch would change."""

_THIS_FILE = os.path.abspath(__file__)
#: kernlint's own frames between the user's code and the interpreter (the block-pointer emulation)
_OWN_FILES = {_THIS_FILE, os.path.join(os.path.dirname(_THIS_FILE), "block_ptr.py")}


@dataclass
class Allocation:
    name: str
    start: int
    nbytes: int
    dtype: str
    shape: list[int]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "start": self.start, "nbytes": self.nbytes, "dtype": self.dtype,
                "shape": self.shape}


@dataclass
class SiteStats:
    path: str
    line: int
    op: str
    stack: list[str]
    count: int = 0


@dataclass
class OOBStats:
    kind: str
    site: int
    lanes: int = 0
    programs: set = field(default_factory=set)
    first_address: int | None = None
    by_tensor: dict = field(default_factory=dict)  # name -> [lanes, max_past_end, max_before_start]


@dataclass
class Launch:
    index: int
    kernel: str
    kernel_path: str
    kernel_line: int
    grid: tuple[int, int, int]
    launch_site: str
    allocations: list[Allocation] = field(default_factory=list)
    sites: dict = field(default_factory=dict)  # site id -> executions in this launch
    oob: dict = field(default_factory=dict)  # (kind, site) -> OOBStats
    writes: list = field(default_factory=list)  # (element addresses, itemsize, program, site)
    reads: list = field(default_factory=list)
    atomics: list = field(default_factory=list)  # atomic_rmw updates, as writes
    #: atomics that order memory (not relaxed): (element addresses, program, clock, semantic name)
    syncs: list = field(default_factory=list)
    #: the order of the accesses the launch made (the interpreter runs one program after another)
    clock: int = 0
    tracked_bytes: int = 0
    race_tracking_truncated: bool = False
    held_locks: dict = field(default_factory=dict)  # program -> set of lock addresses
    fresh: list = field(default_factory=list)  # per allocation: its poisoned fresh buffer, or None
    started: float = field(default_factory=time.perf_counter)
    #: watchdog: the program being watched, what it touched, accesses and time since it last made progress
    watch_pid: int = -1
    watch_seen: set = field(default_factory=set)
    watch_idle: int = 0
    watch_since: float = 0.0
    completed: bool = False


def _is_grid_loop(code) -> bool:
    """The interpreter's ``GridExecutor.__call__`` (not ``InterpretedFunction.__call__``)."""
    return code.co_name == "__call__" and "args_dev" in code.co_varnames and \
        code.co_filename.endswith("interpreter.py")


def _user_frames(start_frame, skip_prefixes: tuple[str, ...]) -> tuple[list[str], Any]:
    """User frames (``path:line``, innermost first) below the interpreter's grid loop, and that
    loop's frame (None when not found)."""
    frames = []
    f = start_frame
    while f is not None:
        code = f.f_code
        if _is_grid_loop(code):
            return frames, f
        fn = code.co_filename
        if not (fn.startswith(skip_prefixes) or fn in _OWN_FILES or fn.startswith("<")):
            frames.append(f"{os.path.abspath(fn)}:{f.f_lineno}")
        f = f.f_back
    return frames, None


class Recorder:
    """Collects sites, out-of-bounds lanes and per-program accesses of each launch."""

    def __init__(self, interp_module, out_path: str | None, fresh=None):
        self.interp = interp_module
        self.out_path = out_path
        self.fresh = fresh  # unwritten.Registry, or None
        self.last_site = -1
        import triton
        import numpy

        self.skip_prefixes = (
            os.path.dirname(os.path.abspath(triton.__file__)) + os.sep,
            os.path.dirname(os.path.abspath(numpy.__file__)) + os.sep,
            os.path.dirname(os.path.abspath(importlib.__file__)) + os.sep,
        )
        self.sites: list[SiteStats] = []
        self._site_ids: dict[tuple[str, int, str], int] = {}
        self.launch: Launch | None = None
        self.launch_count = 0
        self.records: list[dict] = []
        #: the launch that ended last, and the config runs of the autotuner call under way
        self.last_launch: Launch | None = None
        self.config_runs: list[dict] = []

    # -- bookkeeping ---------------------------------------------------------------------------

    def _site(self, op: str) -> int:
        stack, _ = _user_frames(sys._getframe(2), self.skip_prefixes)
        if stack:
            path, _, line = stack[0].rpartition(":")
            key = (os.path.abspath(path), int(line), op)
        else:
            key = ("<unknown>", 0, op)
        sid = self._site_ids.get(key)
        if sid is None:
            sid = len(self.sites)
            self._site_ids[key] = sid
            self.sites.append(SiteStats(key[0], key[1], op, stack[:8]))
        self.sites[sid].count += 1
        if self.launch is not None:
            self.launch.sites[sid] = self.launch.sites.get(sid, 0) + 1
        return sid

    def _program(self) -> tuple[int, tuple[int, int, int]]:
        b = self.interp.interpreter_builder
        x, y, z = b.grid_idx
        gx, gy, _ = b.grid_dim
        return x + gx * (y + gy * z), (int(x), int(y), int(z))

    def begin_launch(self, executor, args_hst, kwargs_hst) -> None:
        fn = executor.fn
        code = getattr(fn, "__code__", None)
        _, caller = _user_frames(sys._getframe(1), self.skip_prefixes)
        site = ""
        f = caller.f_back if caller is not None else None
        while f is not None:
            fname = f.f_code.co_filename
            if not (fname.startswith(self.skip_prefixes) or fname in _OWN_FILES or fname.startswith("<")):
                site = f"{fname}:{f.f_lineno}"
                break
            f = f.f_back
        self.launch = Launch(
            index=self.launch_count,
            kernel=getattr(fn, "__name__", "?"),
            kernel_path=code.co_filename if code else "",
            kernel_line=code.co_firstlineno if code else 0,
            grid=(1, 1, 1),
            launch_site=site,
        )
        self.launch_count += 1
        names = list(getattr(executor, "arg_names", []))
        pairs = list(zip(names, args_hst)) + list(kwargs_hst.items())
        for name, arg in pairs:
            self._add_allocations(name, arg)
        if self.fresh is not None:
            self.launch.fresh = [self.fresh.find(a.start) for a in self.launch.allocations]
            for a, fresh in zip(self.launch.allocations, self.launch.fresh):
                if fresh is not None:
                    self.fresh.passed(fresh, a.start, a.nbytes)

    def _add_allocations(self, name: str, arg) -> None:
        if isinstance(arg, (tuple, list)):
            for i, a in enumerate(arg):
                self._add_allocations(f"{name}[{i}]", a)
            return
        base = getattr(arg, "base", None)
        if base is not None and hasattr(base, "data_ptr") and not hasattr(arg, "data_ptr"):
            self._add_allocations(f"{name}.base", base)  # TensorDescriptor
            return
        if not hasattr(arg, "data_ptr"):
            return
        t = getattr(arg, "base", arg) if type(arg).__name__ == "TensorWrapper" else arg
        try:
            esize = t.element_size()
            if t.numel() == 0:
                extent = 0
            else:
                extent = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()) if s > 0)
            dtype = str(getattr(arg, "dtype", t.dtype))
            self.launch.allocations.append(
                Allocation(name, int(t.data_ptr()), int(extent * esize), dtype, list(t.shape)))
        except Exception:  # an odd tensor-like: not an allocation we can bound
            pass

    def end_launch(self, completed: bool, error: str | None) -> None:
        launch = self.launch
        self.launch = None
        if launch is None:
            return
        b = self.interp.interpreter_builder
        launch.grid = tuple(int(g) for g in getattr(b, "grid_dim", (1, 1, 1)))
        launch.completed = completed
        self.last_launch = launch
        records = [self._oob_record(launch, st) for st in launch.oob.values()]
        records += self._race_records(launch)
        records += self._atomic_records(launch)
        line = {
            "type": "launch",
            "index": launch.index,
            "kernel": launch.kernel,
            "kernel_path": launch.kernel_path,
            "kernel_line": launch.kernel_line,
            "grid": list(launch.grid),
            "launch_site": launch.launch_site,
            "completed": completed,
            "error": error,
            "seconds": round(time.perf_counter() - launch.started, 6),
            "allocations": [a.to_dict() for a in launch.allocations],
            "sites": [
                {"path": self.sites[s].path, "line": self.sites[s].line, "op": self.sites[s].op,
                 "count": n, "stack": self.sites[s].stack}
                for s, n in sorted(launch.sites.items())
            ],
            "race_tracking_truncated": launch.race_tracking_truncated,
            "records": records,
        }
        self._emit(line)

    def _emit(self, obj: dict) -> None:
        if not self.out_path:
            return
        with open(self.out_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj) + "\n")

    # -- the checks ------------------------------------------------------------------------------

    def check(self, op: str, ptrs, mask, itemsize: int, *, write: bool, atomic: bool, value=None, sem=None):
        """Judge one access; returns the mask with out-of-bounds lanes switched off (``sem``: an
        atomic's memory semantic)."""
        launch = self.launch
        if launch is None:
            return mask
        sid = self.last_site = self._site(op)
        ptrs = np.asarray(ptrs)
        if mask is None:
            mask_b = np.ones(ptrs.shape, dtype=bool)
        else:
            # a scalar condition (``mask=pid == 0``) reaches here as a broadcast int32 array, which
            # Triton's own load rejects ("mask has unsupported dtype"): hand on a boolean copy
            mask_b = np.ascontiguousarray(np.broadcast_to(np.asarray(mask).astype(bool), ptrs.shape))
            mask = mask_b
        flat_ptr = ptrs.astype(np.uint64, copy=False).reshape(-1)
        active = np.nonzero(mask_b.reshape(-1))[0]
        if active.size == 0:
            return mask
        addrs = flat_ptr[active]
        # One access indexes one tensor: lanes that land in a neighbouring allocation crossed out of
        # their own (on the CPU, allocations often sit back to back). The tensor is the one the
        # lowest active lane hits (the block's start), else the one most lanes hit.
        inside = np.zeros(addrs.shape, dtype=bool)
        home, home_lanes, home_first = None, 0, False
        for i, a in enumerate(launch.allocations):
            if a.nbytes < itemsize:
                continue
            start = np.uint64(a.start)
            last = np.uint64(a.start + a.nbytes - itemsize)
            hit = (addrs >= start) & (addrs <= last)
            n_hit = int(np.count_nonzero(hit))
            first = bool(hit[0])
            if (first and not home_first) or (first == home_first and n_hit > home_lanes):
                home, home_lanes, home_first, inside = i, n_hit, first, hit
        pid, pid3 = self._program()
        if not inside.all():
            bad = ~inside
            self._note_oob(launch, "oob-write" if write else "oob-read", sid, addrs[bad], itemsize, pid3, home)
            new_mask = np.array(mask_b, dtype=bool, copy=True)
            new_mask.reshape(-1)[active[bad]] = False
            addrs = addrs[inside]
            mask = new_mask
        if write and home is not None and addrs.size and launch.fresh and launch.fresh[home] is not None:
            self.fresh.mark(launch.fresh[home], addrs, itemsize,
                            (launch.kernel, launch.index, self._grid(), launch.allocations[home].name), sid)
        seq = launch.clock
        launch.clock += 1
        if atomic and addrs.size and getattr(sem, "name", "RELAXED") != "RELAXED":
            launch.syncs.append((addrs.copy(), pid, seq, sem.name))
        if addrs.size == 0 or launch.race_tracking_truncated or (atomic and op != "atomic_rmw"):
            return mask
        if not atomic and launch.held_locks.get(pid):
            return mask  # inside a critical section taken with atomic_cas
        nbytes = addrs.size * itemsize
        if launch.tracked_bytes + nbytes > MAX_TRACKED_BYTES:
            launch.race_tracking_truncated = True
            launch.writes.clear()
            launch.reads.clear()
            launch.atomics.clear()
            launch.syncs.clear()
            return mask
        launch.tracked_bytes += nbytes
        sink = launch.atomics if atomic else launch.writes if write else launch.reads
        sink.append((addrs.copy(), itemsize, pid, sid, seq))
        return mask

    def _grid(self) -> tuple[int, int, int]:
        return tuple(int(g) for g in getattr(self.interp.interpreter_builder, "grid_dim", (1, 1, 1)))

    def watch(self, ptrs, result) -> None:
        """The watchdog: raise when the running program has only repeated itself for a while."""
        launch = self.launch
        if launch is None:
            return
        pid, pid3 = self._program()
        now = time.perf_counter()
        if pid != launch.watch_pid:
            launch.watch_pid, launch.watch_seen, launch.watch_idle, launch.watch_since = pid, set(), 0, now
        flat = np.asarray(ptrs).reshape(-1)
        value = np.asarray(result).reshape(-1)
        key = (self.last_site, int(flat[0]) if flat.size else 0, flat.size,
               hash(value[:64].tobytes()) if value.size else 0)
        if key not in launch.watch_seen:
            if len(launch.watch_seen) < 100_000:
                launch.watch_seen.add(key)
            launch.watch_idle, launch.watch_since = 0, now
            return
        launch.watch_idle += 1
        if launch.watch_idle >= SPIN_ACCESSES and now - launch.watch_since >= SPIN_SECONDS:
            site = self.sites[self.last_site]
            raise ProgramsWaitOnEachOther(
                f"{WAIT_MESSAGE}: program {list(pid3)} repeated the same accesses {launch.watch_idle} times in "
                f"{now - launch.watch_since:.1f} s at {site.path}:{site.line}, waiting for a program the "
                "interpreter runs after it")

    def finish(self) -> None:
        """At exit: the outputs left unwritten, one line per allocation."""
        if self.fresh is None:
            return
        for rec in self.fresh.finish():
            sid = rec.pop("site")
            self._emit({"type": "unwritten", **rec, **self._site_fields(sid)})

    def note_lock(self, ptrs, cmp, old) -> None:
        """After ``atomic_cas``: lanes that swapped took a lock."""
        launch = self.launch
        if launch is None:
            return
        pid, _ = self._program()
        ptrs = np.asarray(ptrs).astype(np.uint64).reshape(-1)
        ok = (np.asarray(old) == np.asarray(cmp)).reshape(-1)
        if ok.shape != ptrs.shape:
            ok = np.broadcast_to(ok, ptrs.shape)
        held = launch.held_locks.setdefault(pid, set())
        held.update(int(p) for p in ptrs[ok])

    def note_release(self, ptrs, mask) -> None:
        """After ``atomic_xchg``: a lock this program held is released."""
        launch = self.launch
        if launch is None:
            return
        pid, _ = self._program()
        held = launch.held_locks.get(pid)
        if not held:
            return
        ptrs = np.asarray(ptrs).astype(np.uint64).reshape(-1)
        for p in ptrs:
            held.discard(int(p))

    def _note_oob(self, launch: Launch, kind: str, sid: int, addrs, itemsize: int, pid3, home=None) -> None:
        """Attribute out-of-bounds lanes to the tensor the same access's in-bounds lanes hit (the
        tensor being indexed), else to the nearest tensor by byte distance."""
        st = launch.oob.get((kind, sid))
        if st is None:
            st = launch.oob[(kind, sid)] = OOBStats(kind, sid)
        st.lanes += int(addrs.size)
        if len(st.programs) < 4096:
            st.programs.add(pid3)
        if st.first_address is None:
            st.first_address = int(addrs[0])
        if not launch.allocations:
            st.by_tensor.setdefault(None, [0, 0, 0])[0] += int(addrs.size)
            return
        # nearest allocation per lane, by signed byte distance (wrap-around safe)
        best_dist = None
        best_idx = None
        past_all = []
        before_all = []
        for i, a in enumerate(launch.allocations):
            if home is not None and i != home:
                past_all.append(None)
                before_all.append(None)
                continue
            off = (addrs - np.uint64(a.start)).view(np.int64)
            past = off + itemsize - a.nbytes  # > 0: bytes past the end
            before = -off  # > 0: bytes before the start
            dist = np.where(off < 0, before, past)
            past_all.append(past)
            before_all.append(before)
            if best_dist is None:
                best_dist = dist.copy()
                best_idx = np.full(addrs.shape, i, dtype=np.int64)
            else:
                closer = dist < best_dist
                best_dist[closer] = dist[closer]
                best_idx[closer] = i
        for i in np.unique(best_idx):
            sel = best_idx == i
            name = launch.allocations[int(i)].name
            entry = st.by_tensor.setdefault(name, [0, 0, 0])
            entry[0] += int(sel.sum())
            p = past_all[int(i)][sel]
            b = before_all[int(i)][sel]
            if (p > 0).any():
                entry[1] = max(entry[1], int(p[p > 0].max()))
            if (b > 0).any():
                entry[2] = max(entry[2], int(b[b > 0].max()))

    def _site_fields(self, sid: int) -> dict:
        s = self.sites[sid]
        return {"path": s.path, "line": s.line, "op": s.op, "stack": s.stack}

    def _oob_record(self, launch: Launch, st: OOBStats) -> dict:
        tensor, (lanes, past, before) = max(st.by_tensor.items(), key=lambda kv: kv[1][0])
        alloc = next((a for a in launch.allocations if a.name == tensor), None)
        progs = sorted(st.programs)
        return {
            "kind": st.kind,
            "kernel": launch.kernel,
            **self._site_fields(st.site),
            "launch": launch.index,
            "grid": list(launch.grid) if launch.grid else None,
            "lanes": st.lanes,
            "programs": [list(p) for p in progs[:MAX_PROGRAMS_LISTED]],
            "program_count": len(progs),
            "address": st.first_address,
            "tensor": tensor,
            "tensor_start": alloc.start if alloc else None,
            "tensor_bytes": alloc.nbytes if alloc else None,
            "bytes_past_end": past,
            "bytes_before_start": before,
        }

    def _race_records(self, launch: Launch) -> list[dict]:
        if launch.race_tracking_truncated or not launch.writes:
            return []
        w_addr, w_prog, w_site, w_seq = _expand(launch.writes)
        # an address with two programs is a write-write race
        uaddr, counts, minp, maxp = _program_range(w_addr, w_prog)
        racing_addr = uaddr[counts > 1]
        out = []
        if racing_addr.size:
            hit = np.isin(w_addr, racing_addr)
            out += self._group_races(launch, "race-write", w_addr[hit], w_prog[hit], w_site[hit])
        if launch.reads:
            r_addr, r_prog, r_site, r_seq = _expand(launch.reads)
            other = _by_another(r_addr, r_prog, uaddr, minp, maxp)
            if other.any() and launch.syncs:
                other &= ~_ordered_by_atomics((r_addr, r_prog, r_seq), (w_addr, w_prog, w_seq), other, launch.syncs)
            if other.any():
                out += self._group_races(launch, "race-read", r_addr[other], r_prog[other], r_site[other],
                                         writers=(uaddr, minp, maxp))
        if launch.atomics:
            # a plain write of an address another program updates atomically: the atomic does not
            # order it, and which lands last decides the value
            a_addr, a_prog, _, _ = _expand(launch.atomics)
            a_uaddr, _, a_min, a_max = _program_range(a_addr, a_prog)
            other = _by_another(w_addr, w_prog, a_uaddr, a_min, a_max)
            if other.any():
                out += self._group_races(launch, "race-write", w_addr[other], w_prog[other], w_site[other],
                                         writers=(a_uaddr, a_min, a_max))
        return out

    def _atomic_records(self, launch: Launch) -> list[dict]:
        """Per atomic_rmw site: ``atomic-exclusive`` when only one program updated each of its
        addresses (a plain store would do), else ``atomic-shared`` (the atomic is needed)."""
        if launch.race_tracking_truncated or not launch.atomics:
            return []
        a_addr, a_prog, a_site, _ = _expand(launch.atomics)
        out = []
        for sid in np.unique(a_site):
            sel = a_site == sid
            _, uaddr, _, counts = _programs_per_address(a_addr[sel], a_prog[sel])
            shared = uaddr[counts > 1]
            kind = "atomic-shared" if shared.size else "atomic-exclusive"
            rec = self._group_races(launch, kind, a_addr[sel], a_prog[sel], a_site[sel])[0]
            rec["shared_bytes"] = int(shared.size)
            out.append(rec)
        return out

    def _group_races(self, launch, kind, addr, prog, site, writers=None) -> list[dict]:
        out = []
        gx, gy, _ = launch.grid
        for sid in np.unique(site):
            sel = site == sid
            a = addr[sel]
            progs = np.unique(prog[sel])
            if writers is not None:
                uaddr, minp, maxp = writers
                i = np.searchsorted(uaddr, a)
                progs = np.unique(np.concatenate([progs, minp[i], maxp[i]]))
            ua = np.unique(a)
            first = int(ua[0])
            alloc = next((al for al in launch.allocations if al.start <= first < al.start + al.nbytes), None)
            out.append({
                "kind": kind,
                "kernel": launch.kernel,
                **self._site_fields(int(sid)),
                "launch": launch.index,
                "grid": list(launch.grid),
                "bytes": int(ua.size),
                "programs": [_unlinear(int(p), gx, gy) for p in progs[:MAX_PROGRAMS_LISTED]],
                "program_count": int(progs.size),
                "address": first,
                "tensor": alloc.name if alloc else None,
                "tensor_start": alloc.start if alloc else None,
                "tensor_bytes": alloc.nbytes if alloc else None,
                "offset_bytes": first - alloc.start if alloc else None,
            })
        return out


def _programs_per_address(addr: np.ndarray, prog: np.ndarray):
    """The distinct (address, program) pairs, sorted, and per distinct address: the address, the
    index of its first pair and how many programs accessed it."""
    pairs = np.unique(np.stack([addr, prog.astype(np.uint64)], axis=1), axis=0)
    uaddr, first, counts = np.unique(pairs[:, 0], return_index=True, return_counts=True)
    return pairs, uaddr, first, counts


def _program_range(addr: np.ndarray, prog: np.ndarray):
    """Per distinct address (sorted): the address, how many programs accessed it, the least and the
    greatest of them."""
    pairs, uaddr, first, counts = _programs_per_address(addr, prog)
    return uaddr, counts, pairs[first, 1].astype(np.int64), pairs[first + counts - 1, 1].astype(np.int64)


def _by_another(addr: np.ndarray, prog: np.ndarray, uaddr: np.ndarray, minp: np.ndarray, maxp: np.ndarray):
    """Which of the accesses (``addr``, ``prog``) touch an address that a program other than their own
    accesses in the other set (its distinct addresses ``uaddr``, sorted, with the least and the
    greatest program at each)."""
    idx = np.searchsorted(uaddr, addr)
    idx_c = np.minimum(idx, uaddr.size - 1)
    found = (idx < uaddr.size) & (uaddr[idx_c] == addr)
    return found & ((minp[idx_c] != prog) | (maxp[idx_c] != prog))


def _expand(accesses) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(byte address, program, site, clock) for every byte each access touched."""
    addrs, progs, sites, clocks = [], [], [], []
    for a, itemsize, pid, sid, seq in accesses:
        b = (a[:, None] + np.arange(itemsize, dtype=np.uint64)[None, :]).reshape(-1)
        addrs.append(b)
        progs.append(np.full(b.shape, pid, dtype=np.int64))
        sites.append(np.full(b.shape, sid, dtype=np.int64))
        clocks.append(np.full(b.shape, seq, dtype=np.int64))
    return np.concatenate(addrs), np.concatenate(progs), np.concatenate(sites), np.concatenate(clocks)


#: the most read bytes of another program's writes whose ordering through atomics is looked at
#: (past it, every such read is reported, as before)
MAX_ORDERING_CHECKED = 1 << 18
_RELEASES, _ACQUIRES = {"RELEASE", "ACQUIRE_RELEASE"}, {"ACQUIRE", "ACQUIRE_RELEASE"}


def _ordered_by_atomics(reads, writes, candidates: np.ndarray, syncs: list) -> np.ndarray:
    """Which of the ``candidates`` reads are ordered with every other program's write of their
    address in this run, as a dynamic race detector orders them: the first access's program makes
    a releasing atomic after it, and the second's an acquiring atomic on the same element before
    its access, later than that release (the ticket of a last-arriver reduction: each program
    stores its part, then adds to a counter; the one that adds last reads every part). Orders
    through a third program are not followed (those reads stay races)."""
    r_addr, r_prog, r_seq = reads
    w_addr, w_prog, w_seq = writes
    out = np.zeros(r_addr.shape, dtype=bool)
    picked = np.nonzero(candidates)[0]
    if picked.size > MAX_ORDERING_CHECKED:
        return out
    writers: dict[int, set] = {}
    hot = np.isin(w_addr, r_addr[picked])
    for a, p, t in zip(w_addr[hot].tolist(), w_prog[hot].tolist(), w_seq[hot].tolist()):
        writers.setdefault(a, set()).add((p, t))
    by_program: dict[int, list] = {}
    for addrs, pid, seq, sem in syncs:
        by_program.setdefault(pid, []).append((seq, set(addrs.tolist()), sem))

    def before(p1: int, t1: int, p2: int, t2: int) -> bool:
        """Whether program p1's access at t1 happens before program p2's at t2."""
        for s1, x1, sem1 in by_program.get(p1, ()):
            if s1 <= t1 or sem1 not in _RELEASES:
                continue
            for s2, x2, sem2 in by_program.get(p2, ()):
                if s1 < s2 < t2 and sem2 in _ACQUIRES and not x1.isdisjoint(x2):
                    return True
        return False

    judged: dict[tuple, bool] = {}
    for i in picked.tolist():
        a, p, t = int(r_addr[i]), int(r_prog[i]), int(r_seq[i])
        ordered = True
        for wp, wt in writers.get(a, ()):
            if wp == p:
                continue
            key = (p, t, wp, wt)
            if key not in judged:
                judged[key] = before(wp, wt, p, t) if wt < t else before(p, t, wp, wt)
            if not judged[key]:
                ordered = False
                break
        out[i] = ordered
    return out


def _unlinear(p: int, gx: int, gy: int) -> list[int]:
    return [p % gx, (p // gx) % gy, p // (gx * gy)]


class _InterpreterProxy:
    """Stands in for triton's ``_interpreter`` extension: checks each access, then delegates."""

    def __init__(self, real, recorder: Recorder):
        self._real = real
        self._rec = recorder
        self._xchg = getattr(getattr(real, "RMW_OP", None), "XCHG", None)

    def __getattr__(self, name):
        return getattr(self._real, name)

    def load(self, ptrs, mask, other, dtype, *rest):
        mask = self._rec.check("load", ptrs, mask, np.dtype(dtype).itemsize, write=False, atomic=False)
        out = self._real.load(ptrs, mask, other, dtype, *rest)
        self._rec.watch(ptrs, out)
        return out

    def store(self, ptrs, value, mask, *rest):
        itemsize = np.asarray(value).dtype.itemsize
        mask = self._rec.check("store", ptrs, mask, itemsize, write=True, atomic=False)
        return self._real.store(ptrs, value, mask, *rest)

    def atomic_rmw(self, op, ptrs, value, mask, *rest):
        itemsize = np.asarray(value).dtype.itemsize
        mask = self._rec.check("atomic_rmw", ptrs, mask, itemsize, write=True, atomic=True, sem=rest[0] if rest else None)
        out = self._real.atomic_rmw(op, ptrs, value, mask, *rest)
        if self._xchg is not None and op == self._xchg:
            self._rec.note_release(ptrs, mask)
        self._rec.watch(ptrs, out)
        return out

    def atomic_cas(self, ptrs, cmp, value, *rest):
        itemsize = np.asarray(value).dtype.itemsize
        mask = self._rec.check("atomic_cas", ptrs, None, itemsize, write=True, atomic=True, sem=rest[0] if rest else None)
        if mask is not None and not np.asarray(mask).all():
            # the C entry point has no mask: out-of-bounds lanes are pointed at an in-bounds lane
            ptrs = np.array(ptrs, copy=True)
            m = np.broadcast_to(np.asarray(mask, dtype=bool), ptrs.shape)
            if m.any():
                ptrs[~m] = ptrs[m].reshape(-1)[0]
            else:
                return np.asarray(cmp).copy()
        old = self._real.atomic_cas(ptrs, cmp, value, *rest)
        try:
            self._rec.note_lock(ptrs, cmp, old)
        except Exception:
            pass
        self._rec.watch(ptrs, old)
        return old


_RECORDER: Recorder | None = None


def install(interp_module=None) -> Recorder:
    """Patch ``triton.runtime.interpreter`` (imported with ``TRITON_INTERPRET=1``) in place."""
    global _RECORDER
    if interp_module is None:
        import triton.runtime.interpreter as interp_module
    if getattr(interp_module, "_kernlint_recorder", None) is not None:
        return interp_module._kernlint_recorder
    out_dir = os.environ.get(OUT_DIR_ENV)
    out_path = os.path.join(out_dir, f"interp-{os.getpid()}.jsonl") if out_dir else None
    from kernlint.dynamic import block_ptr, unwritten

    fresh = unwritten.Registry()
    unwritten.install(fresh)
    rec = Recorder(interp_module, out_path, fresh)
    import atexit

    atexit.register(rec.finish)
    import triton.language as tl

    if block_ptr.removed(tl):
        block_ptr.install(tl, interp_module)
    _bench_each_config_once()
    interp_module._interpreter = _InterpreterProxy(interp_module._interpreter, rec)
    executor = interp_module.GridExecutor
    orig_call = executor.__call__
    orig_init = getattr(executor, "_init_args_hst", None)

    def __call__(self, *args_dev, **kwargs):
        completed, error = False, None
        try:
            out = orig_call(self, *args_dev, **kwargs)
            completed = True
            return out
        except BaseException as e:  # noqa: BLE001 - recorded, then re-raised
            error = repr(e)[:500]
            raise
        finally:
            if rec.launch is None:  # _init_args_hst never ran (another Triton version)
                rec.begin_launch(self, args_dev, kwargs)
            rec.end_launch(completed, error)

    def _init_args_hst(self, args_dev, kwargs):
        args_hst, kwargs_hst = orig_init(self, args_dev, kwargs)
        try:
            rec.begin_launch(self, args_hst, kwargs_hst)
        except Exception as e:  # never break the user's run
            print(f"kernlint: could not register the launch's tensors: {e!r}", file=sys.stderr)
        return args_hst, kwargs_hst

    executor.__call__ = __call__
    if orig_init is not None:
        executor._init_args_hst = _init_args_hst
    _backport_scalar_index(interp_module)
    interp_module._kernlint_recorder = rec
    _RECORDER = rec
    return rec


def _bench_each_config_once() -> None:
    """``triton.autotune`` times its configs with the GPU driver's benchmarker, which the
    interpreter lacks: run each config once instead (so every config is checked) and call them
    equally fast (the first one is kept). The launches of one call's configs are compared for the
    outputs each writes (:meth:`~kernlint.dynamic.unwritten.Registry.compare_configs`)."""
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:
        return

    def once(kernel_call, quantiles=(0.5,), **_):
        kernel_call()
        return [0.0] * len(quantiles or (0.5,))

    # a setter that ignores what Tritons assigning ``self.do_bench`` in ``__init__`` give it
    Autotuner.do_bench = property(lambda self: once, lambda self, value: None)
    orig_run, orig_bench = Autotuner.run, Autotuner._bench

    def run(self, *args, **kwargs):
        rec = _RECORDER
        if rec is None or rec.fresh is None or rec.fresh.tuning:
            return orig_run(self, *args, **kwargs)
        rec.fresh.tuning, rec.config_runs = True, []
        try:
            return orig_run(self, *args, **kwargs)
        finally:
            rec.fresh.tuning = False
            runs, rec.config_runs = rec.config_runs, []
            if len(runs) > 1:
                rec.fresh.compare_configs(runs)

    def _bench(self, *args, config, **meta):
        rec = _RECORDER
        first = rec.launch_count if rec is not None else 0
        timing = orig_bench(self, *args, config=config, **meta)
        if rec is not None and rec.launch_count == first + 1 and rec.last_launch is not None \
                and rec.last_launch.completed and all(t != float("inf") for t in timing):
            # (a config that failed to compile or run, or ran several launches, is not compared)
            launch = rec.last_launch
            shown = " ".join(f"{k}={v}" for k, v in config.kwargs.items())
            rec.config_runs.append({"launch": launch.index, "kernel": launch.kernel, "grid": launch.grid,
                                    "config": shown or str(config)})
        return timing

    Autotuner.run, Autotuner._bench = run, _bench


def _backport_scalar_index(interp_module) -> None:
    """Triton <= 3.6 turns a scalar into an index with ``int(array)`` on a one-element array, an
    error since NumPy 2.4 (``range(tl.cdiv(K, BLOCK))`` fails); newer Tritons squeeze first."""
    orig = getattr(interp_module, "_patch_lang_tensor", None)
    if orig is None:
        return

    def _patch_lang_tensor(tensor, scope, *rest):
        orig(tensor, scope, *rest)
        scope.set_attr(tensor, "__index__", lambda self: int(np.asarray(self.handle.data).squeeze()))

    interp_module._patch_lang_tensor = _patch_lang_tensor


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Installs the instrumentation right after Triton imports its interpreter module."""

    def find_spec(self, name, path, target=None):
        if name != TARGET_MODULE:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            pass
        if spec is None or spec.loader is None:
            return None
        real_loader = spec.loader

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return real_loader.create_module(spec)

            def exec_module(self, module):
                real_loader.exec_module(module)
                install(module)

        spec.loader = _Loader()
        return spec


def install_on_import() -> None:
    """Instrument Triton's interpreter now if imported, else as soon as it is imported."""
    os.environ.setdefault("TRITON_INTERPRET", "1")
    if TARGET_MODULE in sys.modules:
        install(sys.modules[TARGET_MODULE])
    elif not any(isinstance(f, _PatchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport())
