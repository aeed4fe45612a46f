"""Which kernels a candidate launches: a launch counter on its own Triton kernels (works under
``TRITON_INTERPRET=1``), a torch.profiler census of device kernels (CUDA), register/spill/
occupancy numbers of compiled Triton kernels (the roofline is :mod:`kernlint.eval.roofline`)."""

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


def _inner_fn(obj: Any) -> Any:
    seen = 0
    while hasattr(obj, "fn") and seen < 8 and not hasattr(obj, "device_caches") and not hasattr(obj, "cache"):
        obj = obj.fn
        seen += 1
    return obj


class LaunchCounter:
    """Counts launches of the Triton kernels defined in a candidate module."""

    def __init__(self, namespace: dict) -> None:
        self.kernels = _kernel_objects(namespace)
        self.counts: Counter[str] = Counter()
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


def profiler_census(fn: Callable[[], Any], candidate_kernel_names: list[str], cuda: bool) -> dict:
    """Device kernels launched by ``fn`` and the share of time spent in kernels that are not the
    candidate's own (cuBLAS, cuDNN, aten). On CPU: the aten operators instead."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=acts) as prof:
        fn()
        if cuda:
            torch.cuda.synchronize()
    events = prof.key_averages()
    own, lib = {}, {}
    if cuda:
        for e in events:
            t = float(getattr(e, "device_time_total", getattr(e, "cuda_time_total", 0.0)) or 0.0)
            dev_type = str(getattr(e, "device_type", ""))
            if t <= 0 or "CUDA" not in dev_type.upper():
                continue
            target = own if any(k in e.key for k in candidate_kernel_names) else lib
            target[e.key] = target.get(e.key, 0.0) + t
        total = sum(own.values()) + sum(lib.values())
        return {
            "candidate_kernels": len(own), "library_kernels": len(lib),
            "library_time_share": (sum(lib.values()) / total) if total else 0.0,
            "top_library_kernels": sorted(lib, key=lib.get, reverse=True)[:5],
            "candidate_kernel_names": sorted(own),
        }
    ops = {e.key: float(e.self_cpu_time_total) for e in events if e.key.startswith("aten::")}
    return {"aten_ops": len(ops), "top_aten_ops": sorted(ops, key=ops.get, reverse=True)[:5]}


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
