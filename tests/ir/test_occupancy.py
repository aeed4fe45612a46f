"""Occupancy arithmetic against the CUDA occupancy calculator's rules."""

from __future__ import annotations

import pytest

from kernlint.ir.occupancy import parse_arch, theoretical_occupancy


def test_parse_arch():
    assert parse_arch("sm_90") == 90 and parse_arch("sm_90a") == 90 and parse_arch("86") == 86
    assert parse_arch("8.9") == 89
    with pytest.raises(ValueError):
        parse_arch("sm_75")


def test_register_limited():
    # 255 regs -> 256/thread -> 8192 per warp -> 8 warps fit in 64K registers
    occ = theoretical_occupancy(90, 1, 255, 0)
    assert occ.active_warps == 8 and occ.limiter == "registers" and occ.occupancy == 8 / 64


def test_shared_limited_includes_reserved_kilobyte():
    occ = theoretical_occupancy(90, 4, 64, 114 * 1024)  # 2 x (114 KB + 1 KB) > 228 KB
    assert occ.blocks_by_shared == 1 and occ.limiter == "shared_memory"
    occ = theoretical_occupancy(90, 4, 64, 113 * 1024)
    assert occ.blocks_by_shared == 2


def test_full_occupancy_and_arch_differences():
    assert theoretical_occupancy(90, 4, 32, 0).limiter == "none"
    # sm_86 holds 48 warps and 16 blocks
    occ = theoretical_occupancy(86, 1, 16, 0)
    assert occ.active_blocks == 16 and occ.limiter == "blocks"


def test_too_much_shared_memory_is_zero():
    assert theoretical_occupancy(86, 4, 32, 120 * 1024).active_blocks == 0
