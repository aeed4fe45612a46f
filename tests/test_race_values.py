"""KL103 on what two overlapping writes store: a value that is a function of the element it is written
to (what the program loaded there, element-wise) is the same whichever program writes it (a warning);
a value of the program, lane, iteration, or of a reduction over the block, may differ (an error). A
store reached through a poll of an atomically updated counter (last-arriver) is not judged."""

import pytest

from kernlint import catalogue
from kernlint.model import Level
from kernlint.source.phase import lint_text

# each program sweeps its share of n in blocks: the last block runs into the next program's share
SWEEP = '''
import torch
import triton
import triton.language as tl


@triton.jit
def sweep_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    share = (n + tl.num_programs(0) - 1) // tl.num_programs(0)
    start = pid * share
    lanes = tl.arange(0, BLOCK)
    for i in range(0, share, BLOCK):
        offs = start + i + lanes
        mask = offs < n
        a = tl.load(a_ptr + offs, mask=mask)
        b = tl.load(b_ptr + offs + 1, mask=mask)
        tl.store(out_ptr + offs, VALUE, mask=mask)


def sweep(a, b):
    out = torch.empty_like(a)
    sweep_kernel[(12,)](a, b, out, a.numel(), BLOCK=256)
    return out
'''


def _races(text: str):
    result, _ = lint_text("k.py", text, [catalogue.all_rules()["KL103"]()])
    return [f for f in result.findings if f.rule == "KL103"]


@pytest.mark.parametrize("value", [
    "(offs > 0) * (a != b)",
    "tl.exp(a) * 2 + b",
    "tl.where(mask, a, b)",
    "tl.where(mask, a, 0.0)",  # a literal arm: the same in every program
])
def test_a_value_of_the_element_is_the_same_for_both_writers(value):
    found = _races(SWEEP.replace("VALUE", value))
    assert [f.level for f in found] == [Level.WARNING]
    assert found[0].evidence["same_value"] is True and "same value" in found[0].message


@pytest.mark.parametrize("value", [
    "a + pid",          # the program's own number
    "a * start",        # where the program's share starts
    "a + i",            # the iteration it writes from
    "tl.load(a_ptr + lanes)",  # the lane, not the element
    "a - tl.sum(a, axis=0)",  # a reduction over the program's block
    "tl.cumsum(a, axis=0)",  # a scan over it
])
def test_a_value_of_the_program_or_its_block_may_differ(value):
    found = _races(SWEEP.replace("VALUE", value))
    assert [f.level for f in found] == [Level.ERROR]
    assert found[0].evidence["same_value"] is False


def test_a_value_read_in_place_may_differ():
    # the kernel writes the tensor it reads: another program may have written the element first
    found = _races(SWEEP.replace("VALUE", "a * 2").replace("out_ptr + offs", "a_ptr + offs"))
    assert found and all(f.level is Level.ERROR for f in found)
    assert [f.evidence["same_value"] for f in found if "same_value" in f.evidence] == [False]


def test_a_value_moved_across_lanes_may_differ():
    text = SWEEP.replace("tl.store(out_ptr + offs, VALUE, mask=mask)",
                         "tl.store(out_ptr + offs, tl.flip(a, 0), mask=mask)")
    assert [f.level for f in _races(text)] == [Level.ERROR]


LAST_ARRIVER = '''
import torch
import triton
import triton.language as tl


@triton.jit
def mean_kernel(x_ptr, out_ptr, count_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x), sem="relaxed")
    tl.atomic_add(count_ptr, 1, sem="release")
    arrived = tl.load(count_ptr)
    if arrived == tl.num_programs(0):
        total = tl.load(out_ptr)
        tl.store(out_ptr + 2, total / n)


def mean(x):
    out = torch.zeros(3, device=x.device)
    counter = torch.zeros(1, device=x.device, dtype=torch.int32)
    mean_kernel[(triton.cdiv(x.numel(), 128),)](x, out, counter, x.numel(), BLOCK=128)
    return out[2]
'''


def test_a_store_behind_a_polled_counter_is_not_judged():
    assert _races(LAST_ARRIVER) == []


def test_a_store_behind_a_plain_flag_is_still_judged():
    # the flag is read but never updated atomically: nothing orders the programs that pass the test
    text = LAST_ARRIVER.replace("    tl.atomic_add(count_ptr, 1, sem=\"release\")\n", "")
    assert [f.level for f in _races(text)] == [Level.ERROR]


PERSISTENT = '''
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, num_warps: tl.constexpr):
    workers = tl.cdiv(64, num_warps)
    for tile in tl.range(tl.program_id(0), tl.cdiv(n, BLOCK), workers):
        offs = tile * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * tile, mask=offs < n)


def scale(x):
    y = torch.empty_like(x)
    grid = lambda META: (min(GRID, triton.cdiv(x.numel(), META["BLOCK"])),)
    scale_kernel[grid](x, y, x.numel())
    return y
'''


def test_the_grid_reads_what_a_config_gives_the_kernel():
    # META["num_warps"] is the kernel's own num_warps: at most cdiv(64, num_warps) programs stride
    # the tiles by that many, and no two meet
    assert _races(PERSISTENT.replace("GRID", 'triton.cdiv(64, META["num_warps"])')) == []


def test_a_grid_wider_than_the_stride_races():
    # twice as many programs as the loop strides by: program p and p + workers take the same tiles
    found = _races(PERSISTENT.replace("GRID", '2 * triton.cdiv(64, META["num_warps"])'))
    assert [f.level for f in found] == [Level.ERROR]


# programs that differ only in a split the address leaves out (the value block ``i_v``) write one
# element of ``z``: what they write is a sum over a loop of what they loaded, times a float literal
SPLIT = '''
import torch
import triton
import triton.language as tl


@triton.jit
def split_kernel(x_ptr, z_ptr, T, V, BT: tl.constexpr, BV: tl.constexpr):
    i_kv, i_c, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    NV = tl.cdiv(V, BV)
    i_k, i_v = i_kv // NV, i_kv % NV
    o_t = i_c * BT + tl.arange(0, BT)
    m_t = o_t < T
    acc = tl.zeros([BT], dtype=tl.float32)
    for s in range(0, T, BT):
        o_s = s + tl.arange(0, BT)
        x = tl.load(x_ptr + i_bh * T + o_s, mask=o_s < T, other=0.0)
        acc += tl.sum(x, axis=0) * 0.5 + EXTRA
    tl.store(z_ptr + (i_bh + tl.num_programs(2) * i_k) * T + o_t, acc, mask=m_t)


def split(x, v):
    bh, t = x.shape
    z = torch.empty(2 * bh * t, device=x.device)
    grid = (2 * triton.cdiv(v, 64), triton.cdiv(t, 128), bh)
    split_kernel[grid](x, z, t, v, BT=128, BV=64)
    return z
'''


def _proofs(monkeypatch):
    from kernlint.engine import races

    proven = []
    proof = races._agree_by_address
    monkeypatch.setattr(races, "_agree_by_address", lambda *a: proven.append(proof(*a)) or proven[-1])
    return proven


@pytest.mark.parametrize("extra", ["0.0", "i_c", "i_k"])
def test_a_value_of_what_the_address_pins_is_the_same(monkeypatch, extra):
    # (the chunk and the key block are read off the address: two programs at one element share them)
    proven = _proofs(monkeypatch)
    found = _races(SPLIT.replace("EXTRA", extra))
    assert [f.level for f in found] == [Level.WARNING] and found[0].evidence["same_value"] is True
    assert proven and proven[-1] is True  # shown without the solver


@pytest.mark.parametrize("extra", ["i_v", "i_kv", "tl.program_id(0)",
                                   "tl.atomic_max(z_ptr, 1.0)"])  # what an atomic returned: the order's
def test_a_value_of_the_split_the_address_leaves_out_may_differ(monkeypatch, extra):
    proven = _proofs(monkeypatch)
    found = _races(SPLIT.replace("EXTRA", extra))
    assert [f.level for f in found] == [Level.ERROR] and found[0].evidence["same_value"] is False
    assert proven and not any(proven)



SEGMENT_UPDATE = '''
import torch
import triton
import triton.language as tl


@triton.jit
def accumulate_kernel(h_ptr, offsets_ptr, x_ptr, D, NT, BLOCK_D: tl.constexpr):
    i_n = tl.program_id(0)
    start = tl.load(offsets_ptr + i_n)
    d = tl.arange(0, BLOCK_D)
    keep = d < D
    for t in range(NT):
        PLACE
        h = tl.load(h_ptr + place * D + d, mask=keep)
        tl.store(h_ptr + place * D + d, h + tl.load(x_ptr + i_n * D + d, mask=keep), mask=keep)


def accumulate(h, offsets, x, nt):
    n, D = x.shape
    accumulate_kernel[(n,)](h, offsets, x, D, nt, BLOCK_D=triton.next_power_of_2(D))
    return h
'''


@pytest.mark.parametrize("place, warned", [
    ("place = start", True),  # the loaded scalar alone places the row: an index, which may repeat
    ("place = start + t", False),  # a segment's start, walked by the loop: each program's own rows
])
def test_an_index_add_through_a_loaded_scalar_is_told_from_a_segment_update(place, warned):
    result, _ = lint_text("k.py", SEGMENT_UPDATE.replace("PLACE", place), [catalogue.all_rules()["KL103"]()])
    assert [f.level for f in result.findings] == ([Level.WARNING] if warned else [])
