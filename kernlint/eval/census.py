"""Which kernels a candidate launches: a launch counter on its own Triton kernels (works under
``TRITON_INTERPRET=1``; it also notes the dtypes they receive), the aten operators on CPU (the
device census on CUDA is :mod:`kernlint.eval.device_trace`'s), the dtypes torch operators produce
(a dispatch mode), register/spill/occupancy numbers of compiled Triton kernels (the roofline is
:mod:`kernlint.eval.roofline`)."""

from __future__ import annotations

import contextlib
import types
from collections import Counter
from typing import Any, Callable

def _kernel_objects(namespace: dict) -> dict[str, Any]:
    try:
        from triton.runtime.jit import KernelInterface
    except Exception:  # pragma: no cover
        return {}
    found = {}
    for name, obj in list(namespace.items()):
        if isinstance(obj, KernelInterface):
            found[name] = obj
    return found


def _fn_chain(obj: Any):
    """A kernel object and what it wraps (autotuner -> heuristics -> JITFunction -> function: ``.fn``)."""
    for _ in range(9):
        yield obj
        if not hasattr(obj, "fn"):
            return
        obj = obj.fn


def _inner_fn(obj: Any) -> Any:
    """The JITFunction of a kernel object (the first of its chain that holds compiled kernels)."""
    for obj in _fn_chain(obj):
        if hasattr(obj, "device_caches") or hasattr(obj, "cache"):
            break
    return obj


class LaunchCounter:
    """Counts launches of the Triton kernels defined in a candidate module."""

    def __init__(self, namespace: dict) -> None:
        self.kernels = _kernel_objects(namespace)
        self.counts: Counter[str] = Counter()
        #: dtypes of the floating tensors passed to each kernel (``"kernel: float16"`` -> launches)
        self.arg_dtypes: Counter[str] = Counter()
        #: CUDA streams (other than the harness's current one) that kernels were launched on
        self.foreign_streams: list[int] = []
        self._harness_stream = None
        self._own_streams = 0
        try:
            import torch

            if torch.cuda.is_available():
                self._harness_stream = torch.cuda.current_stream().cuda_stream
        except Exception:
            pass
        for name, obj in self.kernels.items():
            self._wrap(name, obj)

    def _wrap(self, name: str, obj: Any) -> None:
        original = obj.run
        counter = self.counts

        owner = self

        def run(self_, *args, **kwargs):
            counter[name] += 1
            for a in (*args, *kwargs.values()):
                if getattr(a, "is_floating_point", None) is not None and hasattr(a, "dtype") and a.is_floating_point():
                    owner.arg_dtypes[f"{name}: {str(a.dtype).removeprefix('torch.')}"] += 1
            if owner._harness_stream is not None and not owner._own_streams:
                import torch

                cur = torch.cuda.current_stream().cuda_stream
                if cur != owner._harness_stream and cur not in owner.foreign_streams:
                    owner.foreign_streams.append(cur)
            return original(*args, **kwargs)

        try:
            obj.run = types.MethodType(run, obj)
        except (AttributeError, TypeError):
            pass

    @contextlib.contextmanager
    def harness_streams(self):
        """While the harness itself runs the calls on streams of its own (a CUDA-graph capture),
        launches there are not the candidate's side streams."""
        self._own_streams += 1
        try:
            yield
        finally:
            self._own_streams -= 1

    def total(self) -> int:
        return sum(self.counts.values())

    def names(self) -> list[str]:
        return sorted(self.kernels)

    def autotuned(self) -> bool:
        """Whether a kernel benchmarks its configurations at its first launch for a shape
        (``@triton.autotune``): that launch times kernels, so the judge gives it the GPU alone."""
        try:
            from triton.runtime.autotuner import Autotuner
        except Exception:  # pragma: no cover
            return False
        return any(isinstance(o, Autotuner) for obj in self.kernels.values() for o in _fn_chain(obj))

    def symbols(self) -> list[str]:
        """The names the device knows the kernels by (their functions'), beside the module's names."""
        inner = {getattr(_inner_fn(obj), "__name__", "") for obj in self.kernels.values()}
        return sorted(set(self.kernels) | {n for n in inner if n})


def aten_census(fn: Callable[[], Any]) -> dict:
    """CPU: the aten operators ``fn`` runs, by self time (on CUDA the device census is
    :func:`kernlint.eval.device_trace.library_share`, from the profiler's kernels)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    ops = {e.key: float(e.self_cpu_time_total) for e in prof.key_averages() if e.key.startswith("aten::")}
    return {"aten_ops": len(ops), "top_aten_ops": sorted(ops, key=ops.get, reverse=True)[:5]}


def dtype_census(fn: Callable[[], Any]) -> dict:
    """The floating dtypes of the tensors every torch operator produced while ``fn`` ran (through
    a dispatch mode, so it works on any device), and the conversions among them: operators whose
    floating inputs are of one dtype and whose output is of another (``float32->float16``).
    What a kernel does to its values inside is not seen here (the launch counter's argument
    dtypes and, on CUDA, the profiler's conversion kernels are the other evidence)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    produced: Counter[str] = Counter()
    conversions: Counter[str] = Counter()

    def floats(x) -> set:
        return {str(t.dtype).removeprefix("torch.") for t in tree_leaves(x)
                if isinstance(t, torch.Tensor) and t.is_floating_point()}

    class Seen(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            ins, outs = floats((args, kwargs)), floats(out)
            for d in outs:
                produced[d] += 1
            if len(ins) == 1 and outs and outs != ins:
                conversions[f"{next(iter(ins))}->{','.join(sorted(outs))} ({func.overloadpacket.__name__})"] += 1
            return out

    with Seen():
        fn()
    return {"produced": dict(produced), "conversions": dict(conversions)}



def compiled_kernels(namespace: dict):
    """``(kernel name, compiled kernel)`` for every compiled specialization (GPU only)."""
    for name, obj in _kernel_objects(namespace).items():
        fn = _inner_fn(obj)
        caches = []
        dc = getattr(fn, "device_caches", None)
        if isinstance(dc, dict):
            for entry in dc.values():
                caches.append(entry[0] if isinstance(entry, tuple) else entry)
        elif isinstance(getattr(fn, "cache", None), dict):
            caches.extend(fn.cache.values())
        for cache in caches:
            if isinstance(cache, dict):
                for compiled in cache.values():
                    yield name, compiled


def compiled_kernel_metrics(namespace: dict) -> list[dict]:
    """Registers, spills, warps and shared memory of every compiled specialization (GPU only)."""
    out = []
    for name, compiled in compiled_kernels(namespace):
        md = getattr(compiled, "metadata", None)
        try:
            compiled._init_handles()
        except Exception:
            pass
        out.append({
            "kernel": name,
            "n_regs": getattr(compiled, "n_regs", None),
            "n_spills": getattr(compiled, "n_spills", None),
            "num_warps": getattr(md, "num_warps", None),
            "shared": getattr(md, "shared", None),
        })
    return out


def occupancy(n_regs: int | None, num_warps: int | None, shared: int | None, props: Any = None) -> float | None:
    """Theoretical occupancy (active warps / max warps per SM) from registers, warps and smem."""
    if not n_regs or not num_warps:
        return None
    max_threads = getattr(props, "max_threads_per_multi_processor", 2048) or 2048
    regs_sm = getattr(props, "regs_per_multiprocessor", 65536) or 65536
    smem_sm = getattr(props, "shared_memory_per_multiprocessor", 233472) or 233472
    max_warps = max_threads // 32
    regs_per_warp = ((n_regs * 32 + 255) // 256) * 256
    by_regs = regs_sm // (regs_per_warp * num_warps)
    by_smem = (smem_sm // shared) if shared else 32
    by_warps = max_warps // num_warps
    blocks = max(0, min(by_regs, by_smem, by_warps, 32))
    return blocks * num_warps / max_warps


def tensor_bytes(x: Any) -> int:
    import torch

    if isinstance(x, torch.Tensor):
        return x.numel() * x.element_size()
    if isinstance(x, (list, tuple)):
        return sum(tensor_bytes(v) for v in x)
    if isinstance(x, dict):
        return sum(tensor_bytes(v) for v in x.values())
    return 0
