"""The source phase over many files: answers kept on disk per file, files linted on worker processes.

A file's source findings depend on its bytes, its path as reported, the rules enabled and kernlint's
own code (with the versions of libcst and z3, whose answers the engine reads) and on nothing else:
so they are kept under a key of all of these (``.kernlint_cache/source``, as ruff keeps its cache),
and a file whose key is there is not parsed again. Files are independent, so a run over many of
them lints them on one process per core; the results come back in the files' order.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from kernlint.cache import DiskCache
from kernlint.model import FileError, Finding, Kernel, Phase, RunResult
from kernlint.source.discover import ModuleInfo
from kernlint.source.phase import lint_text
from kernlint.source.suppress import Suppressions

#: fewer files than this per worker are linted in the calling process (a worker's start costs more)
FILES_PER_WORKER = 4
#: bump when the layout of a cached entry changes
_FORMAT = 1


@dataclass
class FileInput:
    display: str
    path: Path
    data: bytes | None
    #: named on the command line: read even when it mentions no kernel framework
    named: bool


@dataclass
class Linted:
    display: str
    result: RunResult
    suppressions: Suppressions | None
    #: the module model, kept only where the caller asked for it (the IR phase compiles from it)
    info: ModuleInfo | None


def lint_files(inputs: list[FileInput], rules: list, codes: set[str], jobs: int = 0,
               cache_dir: Path | None = None, keep_models: bool = False) -> Iterator[Linted]:
    """Each input's source-phase result, in the inputs' order. ``jobs``: worker processes (0: one per
    core, fewer for a small run; 1: none). ``cache_dir``: where answers are kept (None: nowhere).
    ``keep_models``: the module models are wanted (the IR phase): files are linted here, uncached."""
    if keep_models:
        for item in inputs:
            yield _lint(item, rules, keep_model=True)
        return
    cache = _Cache(cache_dir, codes) if cache_dir is not None else None
    pending: list[FileInput] = []
    done: dict[int, Linted] = {}
    for i, item in enumerate(inputs):
        hit = cache.get(item) if cache is not None else None
        if hit is not None:
            done[i] = hit
        else:
            pending.append(item)
    workers = _workers(jobs, len(pending))
    fresh = _in_workers(pending, rules, codes, workers) if workers > 1 else (_lint(item, rules) for item in pending)
    missed = iter(fresh)
    for i, item in enumerate(inputs):
        linted = done.get(i)
        if linted is None:
            linted = next(missed)
            if cache is not None:
                cache.put(item, linted)
        yield linted


def _workers(jobs: int, files: int) -> int:
    if jobs == 1 or files < 2 * FILES_PER_WORKER:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(jobs or cores, files // FILES_PER_WORKER))


def _read(item: FileInput) -> tuple[bytes | None, FileError | None]:
    if item.data is not None:
        return item.data, None
    try:
        return item.path.read_bytes(), None
    except OSError as exc:
        return None, FileError(item.display, f"cannot read file: {exc.strerror or exc}")


def _lint(item: FileInput, rules: list, keep_model: bool = False) -> Linted:
    data, error = _read(item)
    if error is not None:
        return Linted(item.display, RunResult(errors=[error], files=1), None, None)
    result, info = lint_text(item.display, data, rules, always_parse=item.named)
    suppressions = None
    if info is not None:
        sup = Suppressions.parse(info.source)
        suppressions = sup if sup.file_codes or sup.lines else None
    return Linted(item.display, result, suppressions, info if keep_model else None)


_worker_rules: list = []


def _start_worker(codes: set[str]) -> None:
    from kernlint.pipeline import source_rules

    _worker_rules[:] = source_rules(codes)


def _lint_in_worker(item: FileInput) -> Linted:
    return _lint(item, _worker_rules)


def _in_workers(items: list[FileInput], rules: list, codes: set[str], workers: int) -> Iterator[Linted]:
    """``items`` linted on ``workers`` processes (each builds the rules of ``codes``), in order. Should
    the pool break (a worker killed), what it had not returned is linted here, with ``rules``."""
    # fork: the workers inherit the loaded modules (and a test's settings); the parent holds no
    # solver state a child could trip on (the CPU cap's watchdog starts afresh in a child)
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    returned = 0
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method),
                                 initializer=_start_worker, initargs=(codes,)) as pool:
            for linted in pool.map(_lint_in_worker, items, chunksize=1):
                returned += 1
                yield linted
    except BrokenProcessPool:
        for item in items[returned:]:
            yield _lint(item, rules)


class _Cache:
    def __init__(self, directory: Path, codes: set[str]):
        self.store = DiskCache(directory)
        self.salt = f"{_FORMAT}\n{_code_fingerprint()}\n{','.join(sorted(codes))}\n".encode()

    def _key(self, item: FileInput, data: bytes) -> str:
        h = hashlib.sha256(self.salt)
        h.update(f"{item.display}\n{item.named}\n".encode())
        h.update(data)
        return h.hexdigest()

    def get(self, item: FileInput) -> Linted | None:
        data, error = _read(item)
        if error is not None:
            return None
        item.data = data  # read once: a miss lints these very bytes
        entry = self.store.get(self._key(item, data), kind="source")
        if entry is None:
            return None
        try:
            return _from_entry(item.display, entry, data)
        except (KeyError, TypeError, ValueError):
            return None  # an entry of another layout: lint again

    def put(self, item: FileInput, linted: Linted) -> None:
        if item.data is None or linted.result.errors:
            return  # a file that could not be read or linted is tried again next time
        try:
            item.data.decode("utf-8")
        except UnicodeDecodeError:
            return  # its suppressions are read from the decoded text, which only the parser recovers
        try:
            self.store.put(self._key(item, item.data), _entry(linted), kind="source")
        except (TypeError, ValueError):
            pass  # evidence JSON cannot hold: the file is linted again next time


def _entry(linted: Linted) -> dict:
    r = linted.result
    return {
        "findings": [f.to_dict() for f in r.findings],
        "kernels": [k.to_dict() for k in r.kernels],
        "notices": list(r.notices),
        "suppressed": linted.suppressions is not None,
    }


def _from_entry(display: str, entry: dict, data: bytes) -> Linted:
    result = RunResult(files=1, notices=list(entry["notices"]))
    result.findings = [Finding.from_dict(d) for d in entry["findings"]]
    result.kernels = [Kernel.from_dict(d) for d in entry["kernels"]]
    sup = Suppressions.parse(data.decode("utf-8-sig")) if entry["suppressed"] else None
    return Linted(display, result, sup, None)


@lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """kernlint's own code (every module: the source phase reads the model, the engine, the rules)
    and the versions of the libraries whose answers it keeps."""
    import libcst
    import z3

    from kernlint.registry import rule_files

    package = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(f"{getattr(libcst, '__version__', '')}\n{z3.get_version_string()}\n".encode())
    for f in [*sorted(package.rglob("*.py")), *rule_files(Phase.SOURCE)]:
        try:
            h.update(f.read_bytes())
        except OSError:
            pass
    return h.hexdigest()[:16]
