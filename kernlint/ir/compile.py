"""Compile Triton kernels ahead of time, without a GPU, in worker processes with a per-job timeout.

``triton.compile(ASTSource(...), target=GPUTarget("cuda", capability, 32))`` runs the whole
pipeline (TTIR -> TTGIR -> LLVM IR -> PTX -> cubin through ptxas) on a CPU-only machine. Each job
runs in a worker process, because loading a user's module executes its code (see
:mod:`kernlint.ir.loader`) and because a compiler hang must be killable. Results are stored in the
content-addressed :class:`kernlint.cache.DiskCache`.

Works with Triton 3.2 and newer (signature with ``constexpr`` entries, ``attrs`` keyed by
argument-index tuples, ``knobs`` when present).
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import multiprocessing.connection
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from kernlint.ir.specialize import Specialization

#: the artefacts kept (cubin is only used for resource usage, and not stored)
KEPT_ASM = ("ttir", "ttgir", "ptx")
DEFAULT_TIMEOUT_S = 120.0


@dataclass
class CompileJob:
    path: str
    kernel: str
    spec: Specialization
    capability: int
    key: str

    def to_wire(self) -> dict[str, Any]:
        return {"path": self.path, "kernel": self.kernel, "spec": self.spec.to_dict(),
                "constexprs": self.spec.constexprs, "capability": self.capability, "key": self.key}


# --------------------------------------------------------------------------------------------
# inside the worker


def _locate_def(lines: list[str], src: str) -> int | None:
    """1-based line of the ``def`` that ``src`` (a JIT function's source) starts with."""
    first = src.lstrip().splitlines()[0].strip() if src and src.strip() else ""
    head = first.split("(")[0]
    if not head:
        return None
    for i, line in enumerate(lines, start=1):
        if line.strip().startswith(head + "(") or line.strip() == first:
            return i
    return None


def _compilation_error_location(exc: BaseException, path: str) -> tuple[int, int, str]:
    """(line, col, message) of the innermost CompilationError in the chain that maps into ``path``."""
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError:
        lines = []
    chain = []
    e: BaseException | None = exc
    while e is not None and len(chain) < 32:
        chain.append(e)
        e = e.__cause__ or e.__context__
    best = None
    message = ""
    for err in chain:
        node = getattr(err, "node", None)
        src = getattr(err, "src", None)
        if getattr(err, "error_message", None):
            message = err.error_message
        if node is None or src is None or not hasattr(node, "lineno"):
            continue
        def_line = _locate_def(lines, src)
        if def_line is None:
            continue
        line = def_line + node.lineno - 1
        indent = 0
        if 0 < def_line <= len(lines):
            indent = len(lines[def_line - 1]) - len(lines[def_line - 1].lstrip())
        best = (line, indent + getattr(node, "col_offset", 0) + 1)
    if not message:
        message = str(chain[-1]).strip().splitlines()[-1] if str(chain[-1]).strip() else type(chain[-1]).__name__
    if best is None:
        return 0, 0, message
    return best[0], best[1], message


def _traceback_location(exc: BaseException, path: str) -> tuple[int, int]:
    real = os.path.realpath(path)
    line = 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.realpath(frame.filename) == real:
            line = frame.lineno or 0
    if isinstance(exc, SyntaxError) and exc.lineno and os.path.realpath(exc.filename or "") == real:
        return exc.lineno, exc.offset or 1
    return line, 1


def _constexpr_value(v: Any) -> Any:
    """``"tl.float16"`` (how specializations write a dtype) -> ``tl.float16``; anything else as is."""
    if isinstance(v, str) and v.startswith(("tl.", "triton.language.")):
        import triton.language as tl

        dt = getattr(tl, v.rsplit(".", 1)[1], None)
        if isinstance(dt, tl.dtype):
            return dt
    return v


def _triton_compile(fn, spec: dict, constexpr_values: dict, capability: int):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    names = list(fn.arg_names)
    signature = {p: spec["signature"].get(p, "i32") for p in names}
    constexprs = {}
    for k, v in constexpr_values.items():
        if k in names:
            signature[k] = "constexpr"
            constexprs[(names.index(k),)] = _constexpr_value(v)
    for p, t in signature.items():
        if t == "constexpr" and (names.index(p),) not in constexprs:
            constexprs[(names.index(p),)] = None
    attrs = {(names.index(p),): [["tt.divisibility", 16]] for p in spec.get("divisible", ())
             if p in names and signature[p] != "constexpr"}
    source_cls = ASTSource
    if type(fn).__name__ == "GluonJITFunction":  # Gluon kernels have their own front end
        try:
            from triton.experimental.gluon import GluonASTSource as source_cls  # type: ignore[no-redef]
        except ImportError:  # Triton 3.6 keeps it in the runtime module
            from triton.experimental.gluon._runtime import GluonASTSource as source_cls  # type: ignore[no-redef]
    src = source_cls(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    options = {"num_warps": spec["num_warps"], "num_stages": spec["num_stages"]}
    return triton.compile(src, target=GPUTarget("cuda", capability, 32), options=options)


def compile_job(job: dict[str, Any]) -> dict[str, Any]:
    """Compile one job; never raises. Returns the artefact record stored in the cache."""
    from kernlint.ir.loader import load_kernel
    from kernlint.ir.resources import cuobjdump_resource_usage, parse_ptxas_log

    path, name = job["path"], job["kernel"]
    t0 = time.perf_counter()
    record: dict[str, Any] = {"ok": False, "kernel": name, "path": path, "spec": job["spec"],
                              "capability": job["capability"]}
    try:
        fn = load_kernel(path, name)
    except BaseException as e:  # noqa: BLE001 - anything the user's module raises
        line, col = _traceback_location(e, path)
        record.update(stage="import", error=f"{type(e).__name__}: {e}".strip(), line=line, col=col)
        return record
    log = io.StringIO()
    try:
        from triton.compiler.errors import CompilationError
    except ImportError:  # pragma: no cover - very old Triton
        CompilationError = ()  # type: ignore[assignment]
    try:
        with _private_triton_cache(), _ptxas_log_enabled(), contextlib.redirect_stdout(log):
            ck = _triton_compile(fn, job["spec"], job["constexprs"], job["capability"])
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, CompilationError):
            line, col, message = _compilation_error_location(e, path)
        else:
            line, col = _traceback_location(e, path)
            text = str(e).strip()
            message = f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"
            if "ptxas" in text:
                message = f"{type(e).__name__}: " + " ".join(text.split())[:400]
        record.update(stage="compile", error=message, line=line, col=col)
        return record
    asm = {k: ck.asm[k] for k in KEPT_ASM if k in ck.asm}
    md = ck.metadata
    meta = {
        "name": getattr(md, "name", name),
        "num_warps": getattr(md, "num_warps", job["spec"]["num_warps"]),
        "num_stages": getattr(md, "num_stages", job["spec"]["num_stages"]),
        "shared": int(getattr(md, "shared", 0) or 0),
        "triton_version": _triton_version(),
    }
    usage = parse_ptxas_log(log.getvalue(), meta["name"])
    if usage is None and "cubin" in ck.asm:
        usage = cuobjdump_resource_usage(ck.asm["cubin"], meta["name"])
    if usage is not None:
        usage.dynamic_shared_bytes = meta["shared"]
    record.update(ok=True, asm=asm, metadata=meta, resources=usage.to_dict() if usage else None,
                  compile_seconds=time.perf_counter() - t0)
    return record


def _triton_version() -> str:
    import triton

    return getattr(triton, "__version__", "unknown")


@contextlib.contextmanager
def _private_triton_cache():
    """A fresh, empty Triton cache for one compilation.

    Triton's cache key ignores the file a kernel comes from, so a hit could hand back artefacts
    whose debug info names another file, and a hit skips ptxas and its resource log. kernlint
    caches compiled artefacts itself (:mod:`kernlint.ir.cache`).
    """
    import shutil

    directory = tempfile.mkdtemp(prefix="kernlint-triton-")
    knobs = None
    try:
        from triton import knobs as _knobs

        knobs = _knobs if hasattr(_knobs, "cache") and hasattr(_knobs.cache, "dir") else None
    except ImportError:
        pass
    old_env = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = directory
    old_knob = knobs.cache.dir if knobs is not None else None
    if knobs is not None:
        knobs.cache.dir = directory
    try:
        yield
    finally:
        if knobs is not None:
            knobs.cache.dir = old_knob
        if old_env is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = old_env
        shutil.rmtree(directory, ignore_errors=True)


@contextlib.contextmanager
def _ptxas_log_enabled():
    """Ask Triton to print ptxas' ``-v`` log (it runs ptxas with ``-v`` anyway)."""
    knobs = None
    try:
        from triton import knobs as _knobs

        knobs = _knobs
    except ImportError:
        pass
    if knobs is not None and hasattr(knobs, "nvidia") and hasattr(knobs.nvidia, "dump_ptxas_log"):
        old = knobs.nvidia.dump_ptxas_log
        knobs.nvidia.dump_ptxas_log = True
        try:
            yield
        finally:
            knobs.nvidia.dump_ptxas_log = old
    else:
        old_env = os.environ.get("TRITON_DUMP_PTXAS_LOG")
        os.environ["TRITON_DUMP_PTXAS_LOG"] = "1"
        try:
            yield
        finally:
            if old_env is None:
                os.environ.pop("TRITON_DUMP_PTXAS_LOG", None)
            else:
                os.environ["TRITON_DUMP_PTXAS_LOG"] = old_env


def _worker_main(conn) -> None:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    # compiling needs real @triton.jit functions, even when the user's shell runs the interpreter
    os.environ.pop("TRITON_INTERPRET", None)
    import warnings

    warnings.filterwarnings("ignore")
    while True:
        try:
            job = conn.recv()
        except EOFError:
            break
        if job is None:
            break
        try:
            if job.get("frontend") == "tilelang":
                from kernlint.ir.tilelang import lower_job

                result = lower_job(job)
            else:
                result = compile_job(job)
        except BaseException as e:  # noqa: BLE001 - keep the worker alive
            result = {"ok": False, "stage": "internal", "error": f"{type(e).__name__}: {e}", "line": 0, "col": 0}
        result["key"] = job["key"]
        try:
            conn.send(result)
        except (BrokenPipeError, OSError):
            break


# --------------------------------------------------------------------------------------------
# the pool


class _Worker:
    def __init__(self, ctx):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child,), daemon=True)
        self.proc.start()
        child.close()
        self.job: dict | None = None
        self.started = 0.0

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(timeout=5)
        self.conn.close()


def _context():
    methods = multiprocessing.get_all_start_methods()
    # fork is cheap and safe here: the parent never compiles (no MLIR context, no compiler threads)
    if sys.platform.startswith("linux") and "fork" in methods:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def run_jobs(jobs: Iterable[CompileJob], workers: int = 0, timeout_s: float = DEFAULT_TIMEOUT_S,
             on_progress: Callable[[int, int], None] | None = None) -> dict[str, dict[str, Any]]:
    """Compile ``jobs`` on up to ``workers`` processes (0: one per core); key -> record.
    ``on_progress(done, total)`` is called as jobs finish (a progress bar)."""
    pending = [j.to_wire() for j in jobs]
    results: dict[str, dict[str, Any]] = {}
    if not pending:
        return results
    n = workers or os.cpu_count() or 1
    n = max(1, min(n, len(pending)))
    ctx = _context()
    pool: list[_Worker] = []
    try:
        pool = [_Worker(ctx) for _ in range(n)]
        idle = list(pool)
        while pending or any(w.job is not None for w in pool):
            while pending and idle:
                w = idle.pop()
                w.job = pending.pop(0)
                w.started = time.monotonic()
                w.conn.send(w.job)
            busy = [w for w in pool if w.job is not None]
            now = time.monotonic()
            wait_for = max(0.05, min(timeout_s - (now - w.started) for w in busy))
            ready = multiprocessing.connection.wait([w.conn for w in busy] + [w.proc.sentinel for w in busy],
                                                    timeout=wait_for)
            for w in busy:
                done = None
                if w.conn in ready:
                    try:
                        done = w.conn.recv()
                    except (EOFError, OSError):
                        done = None
                if done is not None:
                    results[w.job["key"]] = done
                    w.job = None
                    idle.append(w)
                    continue
                dead = not w.proc.is_alive()
                late = time.monotonic() - w.started > timeout_s
                if dead or late:
                    job = w.job
                    results[job["key"]] = {
                        "ok": False, "key": job["key"], "stage": "timeout" if late else "crash",
                        "error": (f"compilation took longer than {timeout_s:.0f}s" if late
                                  else f"the compiler crashed (exit code {w.proc.exitcode})"),
                        "line": 0, "col": 0,
                    }
                    w.kill()
                    pool.remove(w)
                    fresh = _Worker(ctx)
                    pool.append(fresh)
                    idle.append(fresh)
            if on_progress is not None:
                on_progress(len(results), len(results) + len(pending) + sum(w.job is not None for w in pool))
    finally:
        for w in pool:
            try:
                w.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        for w in pool:
            w.proc.join(timeout=2)
            if w.proc.is_alive():
                w.kill()
    return results
