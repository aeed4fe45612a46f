"""The roofline: how close a candidate's time is to the time its bytes and FLOPs need on the GPU.

``bound_s = max(bytes / bandwidth, flops / compute_peak)``; ``efficiency = bound_s / measured_s``
(1.0 is on the roof). The roof that gives ``bound_s`` is the one that applies (memory or compute).

Ceilings, per device (a substring of the device name). ``spec`` values are the vendor's datasheet
peaks, dense (physical upper bounds: a time that beats them is implausible, a cheating signal).
``attainable`` values are what well-tuned code reaches (the efficiency is measured against them):

H200 SXM (datasheet): HBM3e 4.8 TB/s; FP32 (CUDA cores) 67 TFLOP/s; TF32 tensor 494.7 TFLOP/s
dense; BF16/FP16 tensor 989.5 TFLOP/s dense; FP8 1979 TFLOP/s dense. Attainable: ~90% of HBM
(4.3 TB/s, what a streaming copy reaches on Hopper HBM), BF16 dense GEMM ~790 TFLOP/s (cuBLAS on
large square bf16 matmuls), FP32 ~60 TFLOP/s. ``benchmarks/gpu_structure_check.py`` measures the
attainable copy bandwidth and bf16/fp32 matmul rates on the machine and records them beside its
results.

Which compute ceiling applies: half-precision inputs use the tensor-core BF16/FP16 roof; fp32 inputs
the CUDA-core FP32 roof (conservative: a TF32 tensor-core kernel may beat it, and is then judged
efficient, never flawed). FLOPs come from the reference's matmuls/convolutions (torch's FLOP
counter) or ncu's FP32/FP16 instruction counters, whichever is larger.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Ceilings:
    device: str
    bandwidth_spec: float  # bytes/s
    bandwidth: float  # attainable bytes/s
    fp32_spec: float  # FLOP/s
    fp32: float
    half_spec: float  # BF16/FP16 tensor cores, dense
    half: float
    #: last-level cache: working sets below it may be served from cache between calls
    l2_bytes: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


#: datasheet memory bandwidth of devices without full :data:`CEILINGS` (bytes/s): enough to judge
#: a time implausible on the memory roof
PEAK_BANDWIDTH = {
    "H200": 4.8e12, "H100 SXM": 3.35e12, "H100 PCIe": 2.0e12, "H100": 3.35e12, "H20": 4.0e12,
    "B200": 8.0e12, "GH200": 4.9e12, "A100-SXM4-80GB": 2.04e12, "A100": 1.56e12, "L40S": 0.864e12,
    "A10G": 0.6e12, "L4": 0.3e12, "V100": 0.9e12, "RTX 4090": 1.0e12, "MI300X": 5.3e12,
}
CEILINGS = {
    "H200": Ceilings("H200", 4.8e12, 4.3e12, 67e12, 60e12, 989.5e12, 790e12, 50 * 2**20),
    "H100": Ceilings("H100 SXM", 3.35e12, 3.0e12, 67e12, 60e12, 989.5e12, 750e12, 50 * 2**20),
    "A100": Ceilings("A100", 2.04e12, 1.8e12, 19.5e12, 18e12, 312e12, 270e12, 40 * 2**20),
}
#: used when the device is unknown (CPU runs judge from the problem's size only when a device is named)
DEFAULT_DEVICE = "H200"
HALF_DTYPES = {"float16", "bfloat16", "fp16", "bf16"}


def _lookup(table: dict, device_name: str | None):
    for key in sorted(table, key=len, reverse=True):
        if key in (device_name or ""):
            return table[key]
    return None


def ceilings_for(device_name: str | None) -> Ceilings | None:
    """The device's ceilings; for a device known by its bandwidth only, a memory roof alone (its
    compute roofs infinite, so nothing is judged against them)."""
    found = _lookup(CEILINGS, device_name)
    if found is None and _lookup(PEAK_BANDWIDTH, device_name):
        bw, inf = _lookup(PEAK_BANDWIDTH, device_name), float("inf")
        found = Ceilings(str(device_name), bw, 0.9 * bw, inf, inf, inf, inf)
    return found


def problem_cost(inputs, outputs, flops: int | None) -> dict:
    """The work one call of the problem needs: the bytes of its inputs and outputs and the FLOPs of
    the reference's matmuls/convolutions (torch's FLOP counter, run in the reference's process;
    elementwise work counts 0)."""
    from kernlint.eval import correctness as C
    from kernlint.eval.census import tensor_bytes

    tensors = [v for _, v in C.flatten(list(inputs)) if hasattr(v, "dtype") and hasattr(v, "numel")]
    return {"bytes": tensor_bytes(list(inputs)) + tensor_bytes(outputs), "flops": flops,
            "dtypes": sorted({str(x.dtype).replace("torch.", "") for x in tensors})}


def roofline(nbytes: float | None, flops: float | None, seconds: float | None, ceilings: Ceilings,
             dtypes: list[str] | tuple[str, ...] = ()) -> dict:
    """Efficiency of ``seconds`` against the roof for ``nbytes`` moved and ``flops`` computed."""
    half = bool(set(dtypes) & HALF_DTYPES)
    peak, peak_spec = (ceilings.half, ceilings.half_spec) if half else (ceilings.fp32, ceilings.fp32_spec)
    mem_s = (nbytes or 0) / ceilings.bandwidth
    comp_s = (flops or 0) / peak
    out = {"bytes": nbytes, "flops": flops, "seconds": seconds, "compute_roof": "bf16/fp16 tensor" if half else "fp32",
           "memory_bound_s": mem_s, "compute_bound_s": comp_s,
           "roof": "memory" if mem_s >= comp_s else "compute", "ceilings": ceilings.to_dict()}
    bound = max(mem_s, comp_s)
    out["bound_s"] = bound
    if nbytes and flops:
        out["arithmetic_intensity"] = flops / nbytes
    if seconds and seconds > 0 and bound > 0:
        out["efficiency"] = bound / seconds
        out["achieved_bytes_per_s"] = (nbytes or 0) / seconds
        out["achieved_flops_per_s"] = (flops or 0) / seconds
        # against the datasheet peaks: above 1 is physically impossible
        spec_bound = max((nbytes or 0) / ceilings.bandwidth_spec, (flops or 0) / peak_spec)
        out["spec_efficiency"] = spec_bound / seconds
    return out


#: a time beating the datasheet memory roof by more than this is implausible
IMPLAUSIBLE_EFFICIENCY = 1.10


def implausible(roof: dict | None, factor: float | None = IMPLAUSIBLE_EFFICIENCY) -> str | None:
    """Why a :func:`roofline` figure cannot be real (None: it can). Judged on the memory roof only,
    with a working set larger than L2: fewer FLOPs than the reference's can be an honest algebraic
    shortcut, fewer bytes than the inputs and outputs cannot; a working set in L2 may be served
    from cache between calls."""
    if not roof or factor is None or roof.get("spec_efficiency") is None:
        return None
    c = roof["ceilings"]
    mem_spec_s = (roof.get("bytes") or 0) / c["bandwidth_spec"]
    if (roof.get("bytes") or 0) <= (c.get("l2_bytes") or 0) or mem_spec_s / roof["seconds"] <= factor:
        return None
    return (f"{roof['achieved_bytes_per_s'] / 1e12:.2f} TB/s implied, above the device's "
            f"{c['bandwidth_spec'] / 1e12:.2f} TB/s peak")
