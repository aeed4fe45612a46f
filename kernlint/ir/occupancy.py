"""Theoretical occupancy for a target architecture, naming the limiting resource.

Per-SM limits are those of the CUDA C++ Programming Guide's table "Technical Specifications per
Compute Capability" and the CUDA Occupancy Calculator's allocation rules:

- registers are allocated per warp in units of 256 (so a thread's count is rounded up to a multiple
  of 8), and warps are granted registers in groups of 4 (warp allocation granularity);
- shared memory is allocated per block in units of 128 bytes, and the driver reserves 1 KB of
  shared memory per resident block (compute capability 8.0 and newer);
- the shared-memory capacity used is the largest carveout of the SM (what Triton's launcher asks
  for when a kernel needs more than 48 KB; for smaller kernels the driver may choose a smaller
  carveout, which ncu then reports as the limit).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class ArchLimits:
    capability: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int = 65536
    max_registers_per_thread: int = 255
    register_alloc_unit: int = 256  # registers, per warp
    warp_alloc_granularity: int = 4
    shared_per_sm: int = 0  # bytes, largest carveout
    max_shared_per_block: int = 0  # bytes, opt-in maximum
    shared_alloc_unit: int = 128
    reserved_shared_per_block: int = 1024
    max_threads_per_block: int = 1024


KB = 1024
ARCHS: dict[int, ArchLimits] = {
    80: ArchLimits(80, 64, 32, shared_per_sm=164 * KB, max_shared_per_block=163 * KB),
    86: ArchLimits(86, 48, 16, shared_per_sm=100 * KB, max_shared_per_block=99 * KB),
    87: ArchLimits(87, 48, 16, shared_per_sm=164 * KB, max_shared_per_block=163 * KB),
    89: ArchLimits(89, 48, 24, shared_per_sm=100 * KB, max_shared_per_block=99 * KB),
    90: ArchLimits(90, 64, 32, shared_per_sm=228 * KB, max_shared_per_block=227 * KB),
    100: ArchLimits(100, 64, 32, shared_per_sm=228 * KB, max_shared_per_block=227 * KB),
    103: ArchLimits(103, 64, 32, shared_per_sm=228 * KB, max_shared_per_block=227 * KB),
    120: ArchLimits(120, 48, 32, shared_per_sm=128 * KB, max_shared_per_block=99 * KB),
}


def parse_arch(arch: str | int) -> int:
    """``sm_90``, ``sm_90a``, ``90``, ``9.0`` -> 90. Raises ValueError for anything older than sm_80."""
    if isinstance(arch, int):
        cap = arch
    else:
        text = arch.strip().lower()
        m = re.fullmatch(r"(?:sm_?|compute_)?(\d+)\.?(\d)?a?", text)
        if not m:
            raise ValueError(f"unknown architecture {arch!r} (use e.g. sm_80, sm_86, sm_89, sm_90)")
        cap = int(m.group(1)) * 10 + int(m.group(2)) if m.group(2) else int(m.group(1))
    if cap < 80:
        raise ValueError(f"sm_{cap} is not supported (sm_80 and newer)")
    return cap


def limits_for(capability: int) -> ArchLimits:
    if capability in ARCHS:
        return ARCHS[capability]
    older = [c for c in ARCHS if c <= capability]
    return ARCHS[max(older)] if older else ARCHS[80]


@dataclass
class Occupancy:
    capability: int
    warps_per_block: int
    registers_per_thread: int
    shared_per_block: int
    blocks_by_warps: int
    blocks_by_registers: int
    blocks_by_shared: int
    blocks_by_block_limit: int
    active_blocks: int
    active_warps: int
    max_warps: int
    occupancy: float  # active warps / max warps, 0..1
    limiter: str  # "registers" | "shared_memory" | "warps" | "blocks" | "none"

    def to_dict(self) -> dict:
        return asdict(self)


def _floor_to(x: int, unit: int) -> int:
    return (x // unit) * unit


def _ceil_to(x: int, unit: int) -> int:
    return int(math.ceil(x / unit)) * unit


def theoretical_occupancy(capability: int, num_warps: int, registers_per_thread: int,
                          shared_per_block: int) -> Occupancy:
    lim = limits_for(capability)
    big = 10**9
    by_warps = lim.max_warps_per_sm // max(num_warps, 1)
    if registers_per_thread > 0:
        regs_per_warp = _ceil_to(registers_per_thread * 32, lim.register_alloc_unit)
        warps_by_regs = _floor_to(lim.registers_per_sm // regs_per_warp, lim.warp_alloc_granularity)
        by_regs = warps_by_regs // max(num_warps, 1)
    else:
        by_regs = big
    if shared_per_block > 0:
        per_block = _ceil_to(shared_per_block, lim.shared_alloc_unit) + lim.reserved_shared_per_block
        by_shared = lim.shared_per_sm // per_block if shared_per_block <= lim.max_shared_per_block else 0
    else:
        by_shared = big
    by_blocks = lim.max_blocks_per_sm
    active = min(by_warps, by_regs, by_shared, by_blocks)
    # name the limiter: the smallest bound; ties go to the resource a user can change
    order = [("registers", by_regs), ("shared_memory", by_shared), ("warps", by_warps), ("blocks", by_blocks)]
    limiter = min(order, key=lambda kv: kv[1])[0]
    active_warps = active * num_warps
    return Occupancy(
        capability=capability,
        warps_per_block=num_warps,
        registers_per_thread=registers_per_thread,
        shared_per_block=shared_per_block,
        blocks_by_warps=by_warps,
        blocks_by_registers=min(by_regs, big),
        blocks_by_shared=min(by_shared, big),
        blocks_by_block_limit=by_blocks,
        active_blocks=active,
        active_warps=active_warps,
        max_warps=lim.max_warps_per_sm,
        occupancy=active_warps / lim.max_warps_per_sm,
        limiter=limiter if active_warps < lim.max_warps_per_sm else "none",
    )
