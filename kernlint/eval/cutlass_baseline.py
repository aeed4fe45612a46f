"""The CUTLASS baseline of GEMM-family problems, through NVIDIA's ``nvidia-cutlass`` package.

A problem is *GEMM-family* when one trial call of its reference, watched at the ATen level
(:class:`AtenOps`), runs at least one GEMM (``mm``, ``bmm``, ``addmm``) and otherwise only views
and copies: ``torch.matmul``, ``nn.Linear``, ``torch.bmm`` and their transposes, whatever the
problem's source says. The baseline is then the reference's own forward with every GEMM run by a
CUTLASS kernel (:class:`CutlassGemms`, a dispatch mode: views and the rest stay ATen's), timed
like the reference.

The kernels come from ``cutlass_cppgen`` (the CUTLASS Python interface in ``nvidia-cutlass``): it
picks the kernel for the data type, layouts and alignment and emits its CUTLASS C++ declaration;
this module wraps it in a C entry point (:data:`ENTRY_3X`, :data:`ENTRY_2X`), builds it with nvcc
against the package's headers into a shared library (cached under a hash of what decides its
bytes, :func:`cache_key`) and calls it
with ctypes on torch tensors, on torch's current stream. No CUDA Python binding is needed: the
interface is given the target architecture instead of asking a device (:func:`registry`).

Kernels: fp16/bf16 with aligned operands, CUTLASS 3.x SM90 TMA warp-specialized tensor-core GEMMs
(fp32 accumulation, as cuBLAS); fp16/bf16 with unaligned operands, CUTLASS 2.x SM80 tensor-core
GEMMs; fp32, CUTLASS 2.x SIMT GEMMs (fp32 FMA, the precision torch's fp32 matmul has by default;
a TF32 kernel would be a faster but less exact baseline).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import inspect
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable

#: the ATen overloads the baseline runs with CUTLASS
GEMM_OPS = ("mm", "bmm", "addmm")
#: ATen ops that move or reinterpret data and leave the arithmetic to the GEMMs
LAYOUT_OPS = frozenset({"view", "_unsafe_view", "reshape", "t", "transpose", "permute", "expand", "squeeze",
                        "unsqueeze", "contiguous", "clone", "copy_", "_to_copy", "to", "detach", "alias",
                        "as_strided", "empty", "empty_like", "empty_strided", "select", "slice", "lift_fresh"})
DTYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32"}
#: bytes the SM90 TMA kernels need every contiguous dimension and pointer aligned to
TMA_BYTES = 16
EXTRA = "kernlint[cutlass]"


def unavailable(cuda: bool) -> str | None:
    """Why the baseline cannot be built here, or None."""
    try:
        interface()
    except ImportError:
        return f"nvidia-cutlass is not installed (pip install '{EXTRA}')"
    except Exception as exc:  # noqa: BLE001 - a broken install is a note, not a crash
        return f"nvidia-cutlass does not import: {type(exc).__name__}: {exc}"[:300]
    if shutil.which("nvcc") is None:
        return "nvcc is not on PATH (the CUTLASS kernels are compiled with it)"
    if not cuda:
        return "no CUDA device"
    return None


# -- which problems are GEMM-family -----------------------------------------------------------


def _dispatch_mode():
    from torch.utils._python_dispatch import TorchDispatchMode

    return TorchDispatchMode


class AtenOps:
    """Records the ATen ops (overload packet names) of the calls made inside it."""

    def __init__(self):
        base = _dispatch_mode()
        seen: list[str] = []

        class Mode(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(func.overloadpacket.__name__)
                return func(*args, **(kwargs or {}))

        self.names, self.mode = seen, Mode()

    def __enter__(self):
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        return self.mode.__exit__(*exc)


def gemm_family(names: list[str]) -> tuple[bool, str]:
    """(is GEMM-family, why) from the ATen ops of a trial call."""
    gemms = [n for n in names if n in GEMM_OPS]
    other = sorted({n.rstrip("_") for n in names if n not in GEMM_OPS and n not in LAYOUT_OPS})
    if not gemms:
        return False, "the reference runs no GEMM (mm, bmm, addmm)"
    if other:
        return False, f"the reference computes more than GEMMs ({', '.join(other[:6])})"
    return True, f"the reference's ATen ops are {len(gemms)} GEMM(s) ({', '.join(sorted(set(gemms)))}) and views"


# -- one kernel ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GemmConfig:
    """One CUTLASS kernel: D (row-major) = A @ B for ``dtype``, A and B row- or column-major."""
    dtype: str  # a key of DTYPES
    layout_a: str  # "row" | "col"
    layout_b: str
    alignment: int  # elements, for A, B and D
    cc: int = 90
    #: SM90 kernels: a key of SM90_TILES (chosen by the problem's size, :func:`sm90_tile`); else ""
    tile: str = "large"

    @property
    def sm90(self) -> bool:
        return self.cc == 90 and self.dtype != "float32" and self.alignment * 2 >= TMA_BYTES

    @property
    def name(self) -> str:
        tile = f"_{self.tile}" if self.sm90 else ""
        return f"{DTYPES[self.dtype]}_{self.layout_a[0]}{self.layout_b[0]}_a{self.alignment}_sm{self.cc}{tile}"


#: the SM90 kernels' CTA tiles and cluster shapes (the schedules are the collective builders'
#: choice): the interface's first choice (a 128x256 CTA tile) for outputs it fills the GPU with,
#: a 64x128 one for smaller outputs (a 1024x1024 output makes 32 CTAs of the first, 128 of the
#: second, on 132 SMs); there is no autotuning across the interface's other tiles here
SM90_TILES = {"large": ((128, 256, 64), (2, 1, 1)), "small": ((64, 128, 64), (2, 1, 1))}


#: the SM count a dry planning pass on CPU tensors assumes (an H100 or H200 SXM)
PLANNING_SMS = 132


def sm90_tile(m: int, n: int, batch: int, sms: int) -> str:
    (tm, tn, _), _ = SM90_TILES["large"]
    return "large" if -(-m // tm) * -(-n // tn) * batch >= sms else "small"


def layout(t) -> str | None:
    """"row" or "col" for a packed (batched) matrix, None when it must be copied first."""
    m, k = t.shape[-2], t.shape[-1]
    lead = tuple(t.stride()[:-2])
    batch_ok = all(s == m * k for s, n in zip(lead, t.shape[:-2]) if n > 1)
    if batch_ok and t.stride(-1) == 1 and (t.stride(-2) == k or m == 1):
        return "row"
    if batch_ok and t.stride(-2) == 1 and (t.stride(-1) == m or k == 1):
        return "col"
    return None


def alignment(dtype: str, extents: tuple[int, ...], addresses: tuple[int, ...]) -> int:
    """The operands' alignment in elements: the largest of 8, 4, 2 dividing every contiguous
    extent and every address (bytes) for fp16/bf16, else 1; fp32 runs SIMT kernels, which need none."""
    if dtype == "float32":
        return 1
    size = 2
    for a in (TMA_BYTES // size, 4, 2):
        if all(e % a == 0 for e in extents) and all(p % (a * size) == 0 for p in addresses):
            return a
    return 1


def interface():
    """``cutlass_cppgen``, imported in a scratch directory: its import creates the SQLite cache of
    its own JIT path (not used here) in the working directory."""
    if sys.modules.get("cutlass_cppgen") is not None:
        return sys.modules["cutlass_cppgen"]
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        try:
            import cutlass_cppgen
        finally:
            os.chdir(here)
    return cutlass_cppgen


def registry(cc: int):
    """The CUTLASS Python interface's kernel registry for ``cc``, built without querying a device
    (the interface would otherwise ask the CUDA driver through cuda-python)."""
    cutlass_cppgen = interface()
    # cutlass_library imports its generator only when '-m' is not among sys.argv (a pytest run
    # with -m MARKER has it); the registry needs it
    import cutlass_library.generator  # noqa: F401
    from cutlass_cppgen.library_defaults import OptionRegistry

    if getattr(cutlass_cppgen, "_kernlint_cc", None) != cc:
        cutlass_cppgen._nvcc_version = cutlass_cppgen.nvcc_version()
        cutlass_cppgen._option_registry = OptionRegistry(cc)
        cutlass_cppgen._kernlint_cc = cc
    return cutlass_cppgen


INCLUDES = """#include <cuda_runtime.h>
#include "cutlass/cutlass.h"
#include "cutlass/gemm/device/gemm_universal.h"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/util/packed_stride.hpp"
using namespace cute;
"""

#: the C entry points of a CUTLASS 3.x kernel (batched through the problem shape's L)
ENTRY_3X = """
using StrideA = typename DeviceKernel::GemmKernel::StrideA;
using StrideB = typename DeviceKernel::GemmKernel::StrideB;
using StrideC = typename DeviceKernel::GemmKernel::StrideC;
using StrideD = typename DeviceKernel::GemmKernel::StrideD;
using Compute = typename DeviceKernel::EpilogueOutputOp::ElementCompute;

static typename DeviceKernel::Arguments arguments(int M, int N, int K, int L, const void* A, const void* B, void* D) {
  static cutlass::KernelHardwareInfo hw{};
  int device = 0;
  cudaGetDevice(&device);
  if (hw.sm_count == 0 || hw.device_id != device) {
    hw.device_id = device;
    hw.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(device);
  }
  return typename DeviceKernel::Arguments{
      cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K, L},
      {static_cast<const typename DeviceKernel::ElementA*>(A), cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(M, K, L)),
       static_cast<const typename DeviceKernel::ElementB*>(B), cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(N, K, L))},
      {{Compute(1), Compute(0)},
       nullptr, cutlass::make_cute_packed_stride(StrideC{}, cute::make_shape(M, N, L)),
       static_cast<typename DeviceKernel::ElementD*>(D), cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(M, N, L))},
      hw};
}
"""

#: the C entry points of a CUTLASS 2.x kernel (batched through the batch count and strides)
ENTRY_2X = """
using Compute = typename DeviceKernel::EpilogueOutputOp::ElementCompute;

static typename DeviceKernel::Arguments arguments(int M, int N, int K, int L, const void* A, const void* B, void* D) {
  return typename DeviceKernel::Arguments{
      L > 1 ? cutlass::gemm::GemmUniversalMode::kBatched : cutlass::gemm::GemmUniversalMode::kGemm,
      {M, N, K}, L, {Compute(1), Compute(0)},
      A, B, D, D,
      (int64_t)M * K, (int64_t)K * N, (int64_t)M * N, (int64_t)M * N,
      DeviceKernel::LayoutA::packed({M, K}).stride(0), DeviceKernel::LayoutB::packed({K, N}).stride(0),
      DeviceKernel::LayoutC::packed({M, N}).stride(0), DeviceKernel::LayoutC::packed({M, N}).stride(0)};
}
"""

ENTRY_COMMON = """
extern "C" size_t kernlint_gemm_workspace(int M, int N, int K, int L) {
  return DeviceKernel::get_workspace_size(arguments(M, N, K, L, nullptr, nullptr, nullptr));
}

// 0 on success; a cutlass::Status otherwise (the shape or alignment is not supported, the launch failed)
extern "C" int kernlint_gemm(int M, int N, int K, int L, const void* A, const void* B, void* D,
                             void* workspace, void* stream) {
  auto args = arguments(M, N, K, L, A, B, D);
  DeviceKernel op;
  cutlass::Status status = op.can_implement(args);
  if (status != cutlass::Status::kSuccess) return int(status);
  status = op.initialize(args, workspace, static_cast<cudaStream_t>(stream));
  if (status != cutlass::Status::kSuccess) return int(status);
  return int(op.run(static_cast<cudaStream_t>(stream)));
}
"""


def source(cfg: GemmConfig) -> tuple[str, str]:
    """(CUTLASS C++ of the kernel with its C entry points, the kernel's CUTLASS name)."""
    import torch

    cutlass = registry(cfg.cc)
    from cutlass_library import LayoutType

    lay = {"row": LayoutType.RowMajor, "col": LayoutType.ColumnMajor}
    element = getattr(torch, cfg.dtype)
    plan = cutlass.op.Gemm(element=element, layout_A=lay[cfg.layout_a], layout_B=lay[cfg.layout_b],
                           layout_C=LayoutType.RowMajor, element_accumulator=torch.float32, cc=cfg.cc,
                           **({} if cfg.sm90 else {"kernel_cc": 80}))
    if cfg.dtype == "float32":
        plan.opclass = cutlass.OpcodeClass.Simt
    if cfg.sm90:
        from cutlass_library import EpilogueScheduleType, KernelScheduleType

        (tm, tn, tk), cluster = SM90_TILES[cfg.tile]
        # the interface names a tile by the cluster's extent; the schedules are left to CUTLASS's
        # collective builders, as in the interface's own first choice
        chosen = [td for td in plan.tile_descriptions()
                  if tuple(td.threadblock_shape) == (tm * cluster[0], tn * cluster[1], tk)
                  and tuple(td.cluster_shape) == cluster
                  and td.kernel_schedule == KernelScheduleType.ScheduleAuto
                  and td.epilogue_schedule == EpilogueScheduleType.ScheduleAuto]
        if not chosen:
            raise NotImplementedError(f"the CUTLASS interface offers no {tm}x{tn}x{tk} tile for {cfg.name}")
        plan.tile_description = chosen[0]
    try:
        op = plan.construct(**({} if cfg.sm90 else {f"alignment_{x}": cfg.alignment for x in "ABC"}))
    except Exception as exc:  # noqa: BLE001 - the interface raises bare Exceptions for unsupported kinds
        raise NotImplementedError(f"CUTLASS has no kernel for {cfg.name}: {exc}"[:400]) from exc
    device_op = op.device_op()
    entry = ENTRY_3X if cfg.sm90 else ENTRY_2X
    return INCLUDES + device_op.rt_module.emit() + entry + ENTRY_COMMON, device_op.procedural_name()


def nvcc_command(cu: Path, so: Path, cfg: GemmConfig) -> list[str]:
    import cutlass_library

    root = Path(cutlass_library.source_path)
    arch = f"{cfg.cc}a" if cfg.sm90 else str(cfg.cc)  # the SM90 kernels use wgmma and TMA: sm_90a code
    return ["nvcc", "-std=c++17", "-O3", "--expt-relaxed-constexpr", "-DNDEBUG", "-shared", "-Xcompiler", "-fPIC",
            f"-gencode=arch=compute_{arch},code=sm_{arch}", f"-I{root / 'include'}",
            f"-I{root / 'tools' / 'util' / 'include'}", str(cu), "-o", str(so)]


def default_cache() -> Path:
    return Path(os.environ.get("KERNLINT_CUTLASS_CACHE") or Path.home() / ".cache" / "kernlint" / "cutlass")


@functools.lru_cache(maxsize=1)
def nvcc_version() -> str:
    return subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]


def cache_key(cfg: GemmConfig) -> str:
    """What decides the library's bytes: the configuration, the package, nvcc and this module's
    C++ (so a cached kernel is found without building the interface's registry, ~10 s)."""
    from importlib.metadata import version

    parts = [repr(cfg), version("nvidia-cutlass"), nvcc_version(), INCLUDES, ENTRY_3X, ENTRY_2X, ENTRY_COMMON,
             inspect.getsource(source), repr(SM90_TILES), " ".join(nvcc_command(Path("k.cu"), Path("k.so"), cfg))]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def library_path(cfg: GemmConfig, cache: Path) -> Path:
    return cache / f"{cfg.name}-{cache_key(cfg)}.so"


def cached(so: Path) -> dict | None:
    """What a cached library holds (its ``.json`` beside it, written once the library is whole)."""
    meta = so.with_suffix(".json")
    return {**json.loads(meta.read_text()), "cached": True} if so.exists() and meta.exists() else None


def compile_library(cfg: GemmConfig, so: Path, text: str, kernel: str, timeout_s: float = 900.0) -> dict:
    """nvcc ``text`` into ``so`` (through a temporary file, so a concurrent reader never sees half)."""
    info = {"kernel": kernel, "config": asdict(cfg), "library": so.name}
    so.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=so.parent) as tmp:
        cu, out = Path(tmp) / f"{cfg.name}.cu", Path(tmp) / so.name
        cu.write_text(text)
        t0 = time.perf_counter()
        run = subprocess.run(nvcc_command(cu, out, cfg), capture_output=True, text=True, timeout=timeout_s)
        if run.returncode != 0:
            log = (run.stderr or run.stdout).splitlines()
            errors = [line for line in log if "error" in line][:5]
            raise RuntimeError(f"nvcc failed on {kernel}: " + "\n".join(errors or log[-20:])[:1500])
        info["compile_s"] = round(time.perf_counter() - t0, 1)
        os.replace(out, so)
        so.with_suffix(".json").write_text(json.dumps(info))
    return {**info, "cached": False}


def build(cfg: GemmConfig, cache: Path) -> tuple[Path, dict]:
    """The shared library of ``cfg`` (compiled unless the cache holds it) and what it is."""
    so = library_path(cfg, cache)
    return so, cached(so) or compile_library(cfg, so, *source(cfg))


def build_many(cfgs: list[GemmConfig], cache: Path, jobs: int = 4) -> list[dict]:
    """:func:`build` of several kernels, the nvcc runs in parallel (the C++ is emitted serially:
    the interface is not made for threads)."""
    from concurrent.futures import ThreadPoolExecutor

    todo, infos = [], {}
    for cfg in dict.fromkeys(cfgs):
        so = library_path(cfg, cache)
        infos[cfg] = cached(so)
        if infos[cfg] is None:
            todo.append((cfg, so, *source(cfg)))
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        for cfg, info in zip([t[0] for t in todo], pool.map(lambda t: compile_library(*t), todo)):
            infos[cfg] = info
    return list(infos.values())


class Library:
    """A built kernel: ``gemm(a, b)`` on torch tensors of its config's dtype and layouts."""

    def __init__(self, so: Path):
        self.lib = ctypes.CDLL(str(so))
        self.lib.kernlint_gemm.restype = ctypes.c_int
        self.lib.kernlint_gemm.argtypes = [ctypes.c_int] * 4 + [ctypes.c_void_p] * 5
        self.lib.kernlint_gemm_workspace.restype = ctypes.c_size_t
        self.lib.kernlint_gemm_workspace.argtypes = [ctypes.c_int] * 4

    def gemm(self, a, b):
        import torch

        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        batch = a.shape[:-2]
        count = math.prod(batch)
        d = torch.empty(*batch, m, n, dtype=a.dtype, device=a.device)
        ws_bytes = self.lib.kernlint_gemm_workspace(m, n, k, count)
        ws = torch.empty(max(1, ws_bytes), dtype=torch.uint8, device=a.device)
        status = self.lib.kernlint_gemm(m, n, k, count, a.data_ptr(), b.data_ptr(), d.data_ptr(), ws.data_ptr(),
                                        torch.cuda.current_stream(a.device).cuda_stream)
        if status != 0:
            raise RuntimeError(f"the CUTLASS kernel refused or failed (cutlass::Status {status})")
        return d


# -- the baseline -------------------------------------------------------------------------------


class CutlassGemms:
    """A dispatch mode that runs the GEMMs of the calls inside it with CUTLASS kernels (built on
    first use of each configuration; ``calls`` counts the GEMMs it ran). With ``dry``, the GEMMs
    run on ATen and ``configs`` lists the kernels they would need."""

    def __init__(self, cache: Path, cc: int = 90, dry: bool = False):
        self.cache, self.cc, self.dry = cache, cc, dry
        self.libs: dict[GemmConfig, Library] = {}
        self.configs: list[GemmConfig] = []
        self.calls = 0
        outer = self

        class Mode(_dispatch_mode()):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                name = func.overloadpacket.__name__
                if name in GEMM_OPS:
                    return outer.dispatch(name, args, kwargs or {})
                return func(*args, **(kwargs or {}))

        self.mode = Mode()

    def sms(self, t) -> int:
        import torch

        return torch.cuda.get_device_properties(t.device).multi_processor_count if t.is_cuda else PLANNING_SMS

    def library(self, cfg: GemmConfig) -> Library:
        if cfg not in self.libs:
            self.libs[cfg] = Library(build(cfg, self.cache)[0])
        return self.libs[cfg]

    def matmul(self, a, b):
        dtype = str(a.dtype).removeprefix("torch.")
        if dtype not in DTYPES or b.dtype != a.dtype or not (a.is_cuda or self.dry):
            raise NotImplementedError(f"no CUTLASS baseline for {a.dtype} @ {b.dtype} on {a.device}")
        la, lb = layout(a), layout(b)
        if la is None:
            a, la = a.contiguous(), "row"
        if lb is None:
            b, lb = b.contiguous(), "row"
        # the contiguous extents of A, B and D (row-major), which are also their leading dimensions
        extents = (a.shape[-1] if la == "row" else a.shape[-2], b.shape[-1] if lb == "row" else b.shape[-2], b.shape[-1])
        align = alignment(dtype, extents, (a.data_ptr(), b.data_ptr()))
        cfg = GemmConfig(dtype, la, lb, align, self.cc, tile="")
        if cfg.sm90:
            batch = math.prod(a.shape[:-2])
            cfg = replace(cfg, tile=sm90_tile(a.shape[-2], b.shape[-1], batch, self.sms(a)))
        if self.dry:
            self.configs.append(cfg)
            return a @ b
        d = self.library(cfg).gemm(a, b)
        self.calls += 1
        return d

    def dispatch(self, name: str, args, kwargs):
        if name == "addmm":
            bias, a, b = args[:3]
            beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
            out = self.matmul(a, b)
            if alpha != 1:
                out.mul_(alpha)
            return out.add_(bias, alpha=beta) if beta else out
        return self.matmul(args[0], args[1])

    def __enter__(self):
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        return self.mode.__exit__(*exc)


def baseline(forward: Callable[[list], Any], sample: list, cache: Path, cc: int | None = None) -> tuple[Callable | None, dict]:
    """``(timed callable or None, info)`` for the reference ``forward`` on the inputs ``sample``:
    the callable runs the reference with its GEMMs on CUTLASS kernels for compute capability
    ``cc`` (None: the current device's); info says why there is none, or which kernels it uses and
    how far their result is from the reference's (``max_abs_error``, ``relative_error``: to the
    reference output's largest magnitude)."""
    import torch

    with AtenOps() as ops:
        expected = forward(list(sample))
    family, why = gemm_family(ops.names)
    info: dict = {"gemm_family": family, "why": why}
    if not family:
        return None, {**info, "skipped": f"not GEMM-family: {why}"}
    missing = unavailable(torch.cuda.is_available())
    if missing:
        return None, {**info, "skipped": missing}
    if cc is None:
        major, minor = torch.cuda.get_device_capability()
        cc = 10 * major + minor
    gemms = CutlassGemms(cache, cc)
    try:
        planned = CutlassGemms(cache, cc, dry=True)
        with planned:
            forward(list(sample))
        # built in parallel here; the first call then finds them in the cache
        info["kernels"] = build_many(planned.configs, cache, jobs=os.cpu_count() or 1)
        with gemms:
            got = forward(list(sample))
        torch.cuda.synchronize()
    except (NotImplementedError, RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        info["skipped"] = f"{type(exc).__name__}: {exc}"[:500]
        return None, info
    if isinstance(expected, torch.Tensor) and isinstance(got, torch.Tensor):
        if got.shape != expected.shape:
            info["skipped"] = f"the CUTLASS result has shape {tuple(got.shape)}, the reference's {tuple(expected.shape)}"
            return None, info
        err = float((got.float() - expected.float()).abs().max()) if got.numel() else 0.0
        top = float(expected.float().abs().max()) if expected.numel() else 0.0
        info.update(max_abs_error=err, relative_error=err / top if top else err)

    def run(*args):
        with gemms:
            return forward(list(args))

    return run, info


#: the CUTLASS result's largest error relative to the reference output's largest magnitude above
#: which the baseline is not used (different summation orders stay far below; a wrong kernel does not)
MAX_RELATIVE_ERROR = 1e-2


def prepare(forward: Callable[[list], Any], sets: list[list], cache: Path) -> dict:
    """The reference executor's baseline, built and checked on ``sets[0]``: ``{"fn", "info"}``,
    or ``{"skipped": why, "info"}``."""
    fn, info = baseline(forward, sets[0], cache)
    if fn is None:
        return {"skipped": info["skipped"], "info": info}
    if info.get("relative_error", 0.0) > MAX_RELATIVE_ERROR:
        return {"skipped": f"the CUTLASS result differs from the reference (max abs error {info['max_abs_error']:.3g})",
                "info": info}
    return {"fn": fn, "info": info}


def measure(built: dict, sets: list[list], iters: int = 50) -> dict:
    """The baseline :func:`prepare` made, timed: ``{"timing", "info"}``, or its ``{"skipped", "info"}``."""
    from kernlint.eval import timing

    if "fn" not in built:
        return built
    return {"timing": timing.time_cuda(built["fn"], sets, iters=iters), "info": built["info"]}
