"""A bound one access's mask states for an index is taken as that index's extent for the kernel's
other tensors (no launch gives theirs), unless the kernel gives the lanes past it values of their own
through ``tl.where``: then the bound splits the axis (the rotary part of a head), it is no extent. A
bound the kernel loads from memory is a contract with the host: proven against, never convicted."""

from kernlint import catalogue
from kernlint.source.phase import lint_text

ROTARY = '''
import triton
import triton.language as tl


@triton.jit
def rotary_kernel(x_ptr, w_ptr, cos_ptr, out_ptr, D: tl.constexpr, ROT: tl.constexpr):
    row = tl.program_id(0)
    d = tl.arange(0, D)
    rot = d < ROT
    x = tl.load(x_ptr + row * D + d)
    w = tl.load(w_ptr + d)
    c = tl.load(cos_ptr + d, mask=rot, other=1.0)
    y = tl.where(rot, x * c, PAST)
    tl.store(out_ptr + row * D + d, y * w)
'''


def _bounds(text: str):
    rules = [catalogue.all_rules()[code]() for code in ("KL101", "KL102")]
    result, _ = lint_text("k.py", text, rules)
    return sorted((f.span.line, f.rule) for f in result.findings)


def test_lanes_given_values_of_their_own_past_a_bound_are_live():
    # past ROT the head keeps x: the load of w at every lane of D is what the author meant
    assert _bounds(ROTARY.replace("PAST", "x")) == []


def test_a_bound_whose_lanes_past_it_get_a_constant_is_an_extent():
    # past ROT everything is zero: the unmasked loads of x and w read past what the mask states
    assert _bounds(ROTARY.replace("PAST", "0.0")) == [(11, "KL101"), (12, "KL101"), (15, "KL102")]


SEGMENT_SUM = '''
import torch
import triton
import triton.language as tl


@triton.jit
def segment_sum(x_ptr, starts_ptr, y_ptr, C, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    LENGTH
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + pid * C + offs, mask=offs < length, other=0.0)
    tl.store(y_ptr + pid, tl.sum(v))


def run(x, starts):
    rows, C = x.shape
    y = torch.empty(rows, device=x.device)
    segment_sum[(rows,)](x, starts, y, C, C + 1, BLOCK=triton.next_power_of_2(C + 1))
    return y
'''


def test_a_length_the_kernel_loads_is_a_contract_not_convicted():
    # lanes pass up to a length read from memory: only metadata longer than a row could run past it
    loaded = "length = tl.load(starts_ptr + pid + 1) - tl.load(starts_ptr + pid)"
    assert _bounds(SEGMENT_SUM.replace("LENGTH", loaded)) == []


def test_a_length_the_wrapper_passes_is_judged():
    # the same bound passed by the wrapper, one past the row: the last lane reads the next row's first
    # element, and the last row's reads past the tensor
    assert _bounds(SEGMENT_SUM.replace("LENGTH", "length = n")) == [(12, "KL101")]


def test_a_view_with_an_inferred_size_has_the_element_count_over_the_others():
    # ``x.view(-1, D)``: the view's x.shape[0] is a size of its own, the grid's: rows of D elements stay inside
    source = '''
import torch
import triton
import triton.language as tl


@triton.jit
def copy_rows(x_ptr, y_ptr, n, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * D + offs, mask=offs < D)
    tl.store(y_ptr + row * D + offs, v, mask=offs < D)


def run(x):
    D = x.shape[-1]
    x = x.view(-1, D)
    y = torch.empty_like(x)
    copy_rows[(x.shape[0],)](x, y, x.numel(), D, BLOCK=triton.next_power_of_2(D))
    return y
'''
    assert _bounds(source) == []
    assert _bounds(source.replace("row * D + offs, v", "row * D + offs + 1, v")) == [(12, "KL102")]


LOOP_BOUND = '''
import triton
import triton.language as tl


@triton.jit
def row_sum(x_ptr, starts_ptr, out_ptr, N, B: tl.constexpr):
    r = tl.program_id(0)
    start = tl.load(starts_ptr + r)
    stop = {stop}
    acc = tl.zeros([B], dtype=tl.float32)
    for i in range(0, stop, B):
        acc += tl.load(x_ptr + start + i + tl.arange(0, B))
    tl.store(out_ptr + r, tl.sum(acc, axis=0))
'''


def test_a_loop_from_a_loaded_start_walks_a_loaded_extent_not_an_unknown_one():
    # a length loaded from memory is the extent the loop walks: blocks past it are read unmasked
    assert _bounds(LOOP_BOUND.format(stop="tl.load(starts_ptr + r + 1) - start")) == [(13, "KL101")]
    # a value the engine does not compute (a rounding to the block it cannot follow) states no extent
    assert _bounds(LOOP_BOUND.format(stop="tl.math.prev_multiple_of(N, B)")) == []
