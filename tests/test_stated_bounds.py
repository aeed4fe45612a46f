"""A bound one access's mask states for an index is taken as that index's extent for the kernel's
other tensors (no launch gives theirs), unless the kernel gives the lanes past it values of their own
through ``tl.where``: then the bound splits the axis (the rotary part of a head), it is no extent."""

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
