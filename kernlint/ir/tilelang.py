"""TileLang kernels in the IR phase: lower to CUDA on the CPU, compile to PTX with nvcc, lint the PTX.

With the ``tilelang`` extra installed, each TileLang kernel of a checked file is lowered the way
TileLang itself does before building a launcher: the module is loaded in a compile worker (the same
sandboxed, time-limited processes that compile Triton kernels), the kernel factory is called with
the arguments its call sites give (or guesses), and ``tilelang.lower(..., enable_device_compile=
False)`` runs inside a ``tvm.target.Target({"kind": "cuda", "arch": "sm_XX"})`` context, which
needs no GPU. nvcc then compiles the generated CUDA to PTX (``-lineinfo``) and ``ptxas -v`` reports
registers, spills and static shared memory; the PTX rules (bank conflicts, uncoalesced accesses,
divergence, spills, occupancy) run on the result as on a Triton kernel's PTX.

Mapping back to the user's file. TileLang 0.1.15 can emit ``#line`` directives from the TIR spans
(pass option ``tl.emit_line_directives``), so PTX ``.loc`` entries name the Python file:

- statements TileLang lowers in its C++ passes (``T.copy`` to ``cp.async``/loads/stores, ``T.clear``,
  ``T.fill``, ``T.Parallel`` element statements, reductions) keep the span of the user's statement:
  findings land on that exact line;
- code expanded by TileLang's own Python macro generators (``T.gemm`` into ``ldmatrix``/``mma``/
  ``wgmma``) carries spans in TileLang's package files; kernlint moves them to the user's ``T.gemm``
  (or ``T.copy``/``T.reduce_*``...) statement of the same kind that follows the last user line
  emitted before them (:func:`pin_line_directives`);
- code without any span (e.g. the producer half of a warp-specialized kernel) lands on the line
  of the directive before it, which is at worst the kernel's ``def`` line.

``#line N`` also renumbers the lines that follow it (N+1, N+2...), which would scatter unmarked
code over unrelated Python lines; every generated line is therefore pinned to the line of the
directive governing it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from kernlint.ir.specialize import Specialization
from kernlint.source.discover import ModuleInfo

NOTICE_MISSING = "TileLang IR analysis skipped: install kernlint[tilelang]"
NOTICE_NO_NVCC = "TileLang IR analysis skipped: nvcc not found (set CUDA_HOME or put nvcc on PATH)"

#: a factory parameter no call site resolves: sizes get this value, dtypes ``float16``
GUESSED_SIZE = 1024
GUESSED_DTYPE = "float16"

#: tile operations by kind, as written in the kernel (``T.gemm``...), for placing macro-expanded code
_OP_KINDS = {
    "gemm": re.compile(r"^(gemm\w*|wgmma\w*|mma\w*)$"),
    "copy": re.compile(r"^(copy|c2d_im2col|tma_copy|async_copy)$"),
    "reduce": re.compile(r"^(reduce\w*|cumsum|finalize_reducer)$"),
    "atomic": re.compile(r"^atomic\w*$"),
    "fill": re.compile(r"^(fill|clear)$"),
}
#: TileLang's own source files, by the kind of tile operation they expand
_LIBRARY_KINDS = (("gemm", re.compile(r"gemm|mma|mfma|tcgen", re.I)), ("copy", re.compile(r"copy|tma|bulk", re.I)),
                  ("reduce", re.compile(r"reduce|scan|cumsum", re.I)), ("atomic", re.compile(r"atomic", re.I)),
                  ("fill", re.compile(r"fill|clear", re.I)))


def installed_tilelang_root() -> str | None:
    """The folder that holds the installed ``tilelang`` package, found without importing it (that
    takes seconds); a same-named folder elsewhere on ``sys.path`` (a test package) does not count."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        try:
            pkg = distribution("tilelang").locate_file("tilelang")
            if os.path.exists(os.path.join(str(pkg), "__init__.py")):
                return os.path.dirname(str(pkg))
        except PackageNotFoundError:
            pass
    except ImportError:  # pragma: no cover
        pass
    try:
        spec = importlib.util.find_spec("tilelang")
    except (ImportError, ValueError):
        return None
    origin = spec.origin if spec else None
    if origin and os.path.isdir(os.path.join(os.path.dirname(origin), "language")):
        return os.path.dirname(os.path.dirname(origin))
    return None


def tilelang_available() -> bool:
    """Whether TileLang is installed (and its import is not blocked with ``sys.modules``)."""
    import sys

    if "tilelang" in sys.modules and sys.modules["tilelang"] is None:
        return False
    return installed_tilelang_root() is not None


def _import_tilelang():
    """Import the installed TileLang even where a folder named ``tilelang`` (a test package, say)
    comes first on ``sys.path``. Only ever called in a compile worker."""
    import sys

    root = installed_tilelang_root()
    current = sys.modules.get("tilelang")
    spec = None
    try:
        spec = importlib.util.find_spec("tilelang") if current is None else current.__spec__
    except (ImportError, ValueError):
        spec = None
    origin = getattr(spec, "origin", None) or ""
    if root and not os.path.realpath(origin).startswith(os.path.realpath(root) + os.sep):
        for name in [n for n in sys.modules if n == "tilelang" or n.startswith("tilelang.")]:
            del sys.modules[name]
        sys.path.insert(0, root)
    import tilelang

    return tilelang


def nvcc_path() -> str | None:
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home and os.path.exists(os.path.join(home, "bin", "nvcc")):
            return os.path.join(home, "bin", "nvcc")
    found = shutil.which("nvcc")
    if found:
        return found
    default = "/usr/local/cuda/bin/nvcc"
    return default if os.path.exists(default) else None


@lru_cache(maxsize=1)
def toolchain_version() -> str:
    """TileLang's and nvcc's versions: part of the cache key of lowered kernels."""
    try:
        from importlib.metadata import version

        tl = version("tilelang")
    except Exception:  # noqa: BLE001
        tl = "none"
    nvcc = nvcc_path()
    nv = "none"
    if nvcc:
        try:
            out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
            nv = out.strip().splitlines()[-1] if out.strip() else "unknown"
        except (OSError, subprocess.SubprocessError):
            nv = "unknown"
    return f"tilelang={tl};nvcc={nv}"


# --------------------------------------------------------------------------------------------
# what to lower (in the parent, from the source only)


@dataclass
class TileLangEntry:
    """One module-level object that yields a PrimFunc: a ``@tilelang.jit`` or plain factory, or a
    module-level ``@T.prim_func``."""

    path: str
    #: the module-level name called to get the PrimFunc (a factory or the prim_func itself)
    factory: str
    #: the prim_func's ``def`` line: where kernel-wide findings go
    def_line: int
    #: factory parameters in order, and those with a default
    params: list[str] = field(default_factory=list)
    #: line range of the prim_func (first decorator .. last line)
    body: tuple[int, int] = (0, 0)
    #: user lines of tile operations by kind (``{"gemm": [23]}``), inside the prim_func
    op_lines: dict[str, list[int]] = field(default_factory=dict)
    specs: list[Specialization] = field(default_factory=list)
    #: the names discovery knows this entry by (factory and prim_func)
    names: set[str] = field(default_factory=set)


class _Calls(cst.CSTVisitor):
    """Every call inside a function, nested functions included."""

    def __init__(self) -> None:
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.found.append(node)


def _op_lines(fn: cst.FunctionDef, line_of) -> dict[str, list[int]]:
    calls = _Calls()
    fn.visit(calls)
    out: dict[str, list[int]] = {}
    for node in calls.found:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        for kind, pattern in _OP_KINDS.items():
            if pattern.match(name):
                out.setdefault(kind, []).append(line_of(node))
                break
    return {k: sorted(set(v)) for k, v in out.items()}


def _parameters(fn: cst.FunctionDef) -> tuple[list[str], set[str]]:
    """A function's parameter names in order (positional, then keyword-only), and those with a default."""
    ps = fn.params
    ordered = [*ps.posonly_params, *ps.params, *ps.kwonly_params]
    return [p.name.value for p in ordered], {p.name.value for p in ordered if p.default is not None}


def _guess(param: str) -> Any:
    return GUESSED_DTYPE if "dtype" in param.lower() else GUESSED_SIZE


def _specs(factory_params: list[str], defaults: set[str], configs: list, max_configs: int,
           factory: str) -> list[Specialization]:
    out: list[Specialization] = []
    seen: set[str] = set()
    for env in configs:
        values: dict[str, Any] = {}
        guessed = []
        for p in factory_params:
            bound = env.lookup(p)
            v = env.value(bound) if bound is not None else None
            if isinstance(v, float) and v.is_integer() and p not in defaults:
                v = int(v)
            if v is None:
                if p in defaults:
                    continue  # the factory's own default applies
                v = _guess(p)
                guessed.append(p)
            values[p] = v
        label = f"{factory}(" + ", ".join(f"{k}={v!r}" for k, v in values.items()) + ")"
        if guessed:
            label += " guessed " + ",".join(guessed)
        spec = Specialization({}, values, label=label, origin="fallback" if guessed else "launch")
        if spec.key() in seen:
            continue
        seen.add(spec.key())
        out.append(spec)
        if len(out) >= max_configs:
            break
    return out


def tilelang_entries(info: ModuleInfo, max_configs: int = 4, path: str | None = None) -> list[TileLangEntry]:
    """The TileLang kernels of the module the source phase modelled (``info``), each with the factory
    arguments to use; ``path``: the file to lower them from (default: the module's own path)."""
    from kernlint.model import Frontend
    from kernlint.source.tilelang import _enclosing, analyse

    path = path or info.path
    module = info.module
    tl_kernels = [k for k in info.kernels if k.kernel.frontend is Frontend.TILELANG]
    if not tl_kernels:
        return []
    # the lines of the kernels' parts, from one position pass over the module (kernel names repeat:
    # a factory's inner `main` is found by its node, not by its name)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)

    def line_of(node: cst.CSTNode) -> int:
        return positions[node].start.line

    top_level = {n.name.value: n for n in module.body if isinstance(n, cst.FunctionDef)}
    chains = {id(k.node): _enclosing(module, k.node) for k in tl_kernels}
    nested_factories = {chain[0].name.value for chain in chains.values() if chain}
    entries: dict[str, TileLangEntry] = {}
    for k in tl_kernels:
        chain = chains[id(k.node)]
        name = k.kernel.name
        if not chain and name in nested_factories:
            continue  # a factory: lowered through the prim_func it encloses
        factory = chain[0].name.value if chain else name
        if factory not in top_level or factory in entries:
            if factory in entries:
                entries[factory].names.add(name)
            continue
        def_line = line_of(k.node.name)
        first = min([line_of(d) for d in k.node.decorators] + [def_line])
        params, with_default = _parameters(top_level[factory])
        if not chain:
            params = []  # a module-level prim_func (or lazy jit kernel): nothing to pass
        specs = _specs(params, with_default, analyse(info, k).configs, max_configs, factory)
        entries[factory] = TileLangEntry(
            path=path, factory=factory, def_line=def_line, params=params,
            body=(first, positions[k.node.body].end.line), op_lines=_op_lines(k.node, line_of), specs=specs,
            names={factory, name})
    return list(entries.values())


@dataclass
class LowerJob:
    """One TileLang kernel lowered for one set of factory arguments (same shape as CompileJob)."""

    path: str
    kernel: str
    spec: Specialization
    capability: int
    key: str
    entry: TileLangEntry

    def to_wire(self) -> dict[str, Any]:
        return {"frontend": "tilelang", "path": self.path, "kernel": self.kernel, "factory": self.entry.factory,
                "spec": self.spec.to_dict(), "args": dict(self.spec.constexprs), "capability": self.capability,
                "key": self.key, "def_line": self.entry.def_line, "body": list(self.entry.body),
                "op_lines": self.entry.op_lines}


# --------------------------------------------------------------------------------------------
# #line directives


_LINE = re.compile(r'^\s*#line\s+(\d+)\s+"([^"]*)"\s*$')


def _library_kind(file: str) -> str | None:
    base = os.path.basename(file)
    for kind, pattern in _LIBRARY_KINDS:
        if pattern.search(base):
            return kind
    return None


def pin_line_directives(cuda: str, user_path: str, op_lines: dict[str, list[int]], def_line: int,
                        body: tuple[int, int] | None = None) -> tuple[str, dict[str, int]]:
    """Rewrite TileLang's ``#line`` directives so every generated line maps to one user line.

    Returns the new source and counts of generated code lines by how they were mapped: ``direct``
    (the user's own statement), ``op`` (TileLang library code moved to the user's tile operation of
    the same kind), ``def`` (no usable span: the kernel's ``def`` line) and ``unmapped`` (before
    the first directive: the CUDA file itself).
    """
    real = os.path.realpath(user_path)
    lo, hi = body if body else (0, 1 << 30)
    out: list[str] = []
    counts = {"direct": 0, "op": 0, "def": 0, "unmapped": 0}
    current: int | None = None  # user line governing the following code
    how = "unmapped"
    last_user = def_line
    quoted = real.replace("\\", "\\\\").replace('"', '\\"')
    for line in cuda.splitlines():
        m = _LINE.match(line)
        if m:
            n, file = int(m.group(1)), m.group(2)
            same = False
            try:
                same = os.path.realpath(file) == real
            except (OSError, ValueError):
                pass
            if same and lo <= n <= hi:
                current, how = n, ("def" if n == def_line else "direct")
                last_user = n
            elif same:
                current, how = def_line, "def"  # a span outside the kernel (factory code)
            else:
                kind = _library_kind(file)
                lines = op_lines.get(kind or "", [])
                if lines:
                    after = [x for x in lines if x >= last_user]
                    current, how = (after[0] if after else lines[-1]), "op"
                else:
                    current, how = def_line, "def"
            continue
        stripped = line.strip()
        code = bool(stripped) and not stripped.startswith(("#", "//"))
        if current is not None and code:
            out.append(f'#line {current} "{quoted}"')
        if code:
            counts[how] += 1
        out.append(line)
    return "\n".join(out) + "\n", counts


# --------------------------------------------------------------------------------------------
# inside the worker


def _nvcc_arch(capability: int) -> str:
    # wgmma, setmaxnreg and tcgen05 need the architecture-specific targets
    return f"sm_{capability}a" if capability in (90, 100, 101, 103, 110, 120, 121) else f"sm_{capability}"


def _include_flags() -> list[str]:
    try:
        from tilelang.contrib.nvcc import default_compile_options

        return [f for f in default_compile_options() if f != "-std=c++20"]
    except Exception:  # noqa: BLE001 - older TileLang: the package's own folders
        import tilelang

        root = os.path.dirname(tilelang.__file__)
        return [f"-I{os.path.join(root, 'src')}", f"-I{os.path.join(root, '3rdparty', 'cutlass', 'include')}"]


def _prim_func(obj: Any, args: dict[str, Any]):
    from tilelang.jit import JITImpl

    try:
        from tvm.tirx import PrimFunc
    except ImportError:  # older TileLang ships TVM's ``tir``
        from tvm.tir import PrimFunc  # type: ignore[no-redef]

    for _ in range(4):
        if isinstance(obj, PrimFunc):
            return obj
        if isinstance(obj, JITImpl):
            return obj.get_tir(**args)
        inner = getattr(obj, "jit_impl", None) or getattr(obj, "jit", None)
        if inner is not None and inner is not obj:
            obj = inner  # autotuner wrappers
            continue
        if callable(obj):
            obj = obj(**args)
            args = {}
            continue
        break
    raise TypeError(f"{type(obj).__name__} is not a TileLang PrimFunc (the factory must return one)")


@contextlib.contextmanager
def _captured_output(sink: list[str]):
    """Route the process' stdout and stderr (TVM logs from C++) into ``sink`` while lowering."""
    import sys

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        saved = [os.dup(1), os.dup(2)]
        os.dup2(tmp.fileno(), 1)
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            tmp.seek(0)
            sink.append(tmp.read().decode("utf-8", "replace"))


def _location(exc: BaseException, path: str, default: int) -> int:
    real = os.path.realpath(path)
    line = 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.realpath(frame.filename) == real:
            line = frame.lineno or 0
    return line or default


def _extent(extent: Any, axis: str) -> int | None:
    """A launch dimension of the lowered kernel; None when it depends on a runtime size."""
    try:
        return int(extent.get(axis, 1))
    except (TypeError, ValueError):
        return None


def lower_job(job: dict[str, Any]) -> dict[str, Any]:
    """Lower, compile and measure one TileLang kernel; never raises. Returns the artefact record."""
    from kernlint.ir.loader import load_module
    from kernlint.ir.resources import parse_ptxas_log

    path, factory, def_line = job["path"], job["factory"], int(job.get("def_line") or 1)
    t0 = time.perf_counter()
    record: dict[str, Any] = {"ok": False, "kernel": job["kernel"], "path": path, "spec": job["spec"],
                              "capability": job["capability"]}
    try:
        tilelang = _import_tilelang()
        from tilelang import tvm
    except BaseException as e:  # noqa: BLE001
        record.update(stage="import", error=f"tilelang cannot be imported: {type(e).__name__}: {e}",
                      line=def_line, col=1)
        return record
    obj = None
    try:
        try:
            obj = getattr(load_module(path, stripped=True), factory, None)
        except Exception:  # noqa: BLE001 - a real import next
            obj = None
        if obj is None:
            obj = getattr(load_module(path, stripped=False), factory, None)
        if obj is None:
            raise LookupError(f"{factory} is not a module-level name of {path}")
    except BaseException as e:  # noqa: BLE001 - anything the user's module raises
        record.update(stage="import", error=f"{type(e).__name__}: {e}".strip(), line=_location(e, path, def_line),
                      col=1)
        return record
    config: dict[str, Any] = {}
    key = getattr(getattr(tilelang.transform, "PassConfigKey", None), "TL_EMIT_LINE_DIRECTIVES", None)
    if key is not None:
        config[key] = True
    capability = int(job["capability"])
    log: list[str] = []
    t_lower = time.perf_counter()
    try:
        target = tvm.target.Target({"kind": "cuda", "arch": f"sm_{capability}"})
        with _captured_output(log), tilelang.transform.PassContext(opt_level=3, config=config), target:
            prim = _prim_func(obj, dict(job.get("args") or {}))
            artifact = tilelang.lower(prim, target=target, enable_device_compile=False)
        cuda = str(artifact.kernel_source)
        attrs: dict[str, Any] = {}
        for gv, fn in artifact.device_mod.functions.items():
            a = fn.attrs or {}
            if "thread_extent" in a:
                extent = a["thread_extent"]
                attrs = {"name": str(a.get("global_symbol", getattr(gv, "name_hint", ""))),
                         "launch": {"grid": [_extent(extent, f"blockIdx.{d}") for d in "xyz"],
                                    "block": [_extent(extent, f"threadIdx.{d}") for d in "xyz"]},
                         "threads": int(a["thread_extent"].get("threadIdx.x", 128))
                         * int(a["thread_extent"].get("threadIdx.y", 1)) * int(a["thread_extent"].get("threadIdx.z", 1)),
                         "dyn_shared": int(a.get("dyn_shared_memory_buf", 0) or 0)}
                break
    except BaseException as e:  # noqa: BLE001
        text = str(e).strip()
        first = next((ln for ln in reversed(text.splitlines()) if ln.strip()), "") if text else ""
        record.update(stage="compile", error=f"lowering failed: {type(e).__name__}: {first[:400]}",
                      line=_location(e, path, def_line), col=1)
        return record
    lower_s = time.perf_counter() - t_lower
    pinned, mapping = pin_line_directives(cuda, path, job.get("op_lines") or {}, def_line,
                                          tuple(job["body"]) if job.get("body") else None)
    if not attrs:
        m = re.search(r"__launch_bounds__\((\d+)", cuda)
        name = re.search(r'__global__ void (?:__launch_bounds__\([^)]*\) )?(\w+)\(', cuda)
        attrs = {"name": name.group(1) if name else "main_kernel", "threads": int(m.group(1)) if m else 128,
                 "dyn_shared": 0}
    nvcc = nvcc_path()
    if nvcc is None:
        record.update(stage="compile", error="nvcc not found", line=def_line, col=1)
        return record
    arch = _nvcc_arch(capability)
    t_nvcc = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kernlint-tilelang-") as tmp:
        cu = os.path.join(tmp, "kernel.cu")
        ptx_path = os.path.join(tmp, "kernel.ptx")
        with open(cu, "w", encoding="utf-8") as f:
            f.write(pinned)
        cmd = [nvcc, "-ptx", f"-arch={arch}", "-lineinfo", "-std=c++20", "-w", "-Xcudafe", "--diag_suppress=177",
               *_include_flags(), "-o", ptx_path, cu]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.SubprocessError) as e:
            record.update(stage="compile", error=f"nvcc failed to run: {e}", line=def_line, col=1)
            return record
        if proc.returncode != 0 or not os.path.exists(ptx_path):
            err = " ".join((proc.stderr or proc.stdout).split())[:400]
            record.update(stage="compile", error=f"nvcc failed on TileLang's CUDA: {err}", line=def_line, col=1)
            return record
        with open(ptx_path, encoding="utf-8", errors="replace") as f:
            ptx = f.read()
        nvcc_s = time.perf_counter() - t_nvcc
        t_ptxas = time.perf_counter()
        usage = None
        ptxas = os.path.join(os.path.dirname(nvcc), "ptxas")
        ptxas = ptxas if os.path.exists(ptxas) else shutil.which("ptxas")
        if ptxas:
            try:
                out = subprocess.run([ptxas, f"-arch={arch}", "-v", ptx_path, "-o", os.devnull],
                                     capture_output=True, text=True, timeout=300)
                usage = parse_ptxas_log(out.stdout + out.stderr, attrs["name"])
            except (OSError, subprocess.SubprocessError):
                usage = None
        ptxas_s = time.perf_counter() - t_ptxas
    if usage is not None:
        usage.dynamic_shared_bytes = attrs["dyn_shared"]
    try:
        from importlib.metadata import version

        tl_version = version("tilelang")
    except Exception:  # noqa: BLE001
        tl_version = "unknown"
    meta = {"name": attrs["name"], "launch": attrs.get("launch"),
            "num_warps": max(1, attrs["threads"] // 32), "num_stages": 0,
            "shared": attrs["dyn_shared"], "frontend": "tilelang", "tilelang_version": tl_version,
            "line_mapping": mapping, "line_directives": key is not None,
            "tilelang_log": "".join(log).strip()[-2000:],
            "seconds": {"lower": round(lower_s, 3), "nvcc": round(nvcc_s, 3), "ptxas": round(ptxas_s, 3)}}
    record.update(ok=True, asm={"cuda": pinned, "ptx": ptx}, metadata=meta,
                  resources=usage.to_dict() if usage else None, compile_seconds=time.perf_counter() - t0)
    return record
