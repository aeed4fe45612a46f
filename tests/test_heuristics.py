"""What the engine reads of ``@triton.heuristics`` and of bitwise flags: exact where it reads, and
nothing where a heuristic reads what the kernel's parameters do not say."""

import libcst as cst
import pytest
import z3

from kernlint.engine.evaluate import _bitwise
from kernlint.engine.heuristics import definitions, readable_body

SOURCE = '''
@triton.heuristics({
    "EVEN_M": lambda args: args["M"] % args["BLOCK_M"] == 0,
    "HAS_BIAS": lambda args: args["bias"] is not None,
    "WIDE": lambda args: args["num_warps"] > 4,
    "SAME": lambda args: args["D"] == args["BLOCK_D"],
})
@triton.jit
def k(x, bias, M, D, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr, EVEN_M: tl.constexpr,
      HAS_BIAS: tl.constexpr, WIDE: tl.constexpr, SAME: tl.constexpr):
    pass
'''


def _read():
    fn = cst.parse_module(SOURCE).body[0]
    found = definitions(fn, lambda node: "triton.heuristics" if cst.Module([]).code_for_node(node) == "triton.heuristics" else None)
    params = {"x", "bias", "M", "D", "BLOCK_M", "BLOCK_D", "EVEN_M", "HAS_BIAS", "WIDE", "SAME"}
    return {name: readable_body(p, body, params - {name}, {"x", "bias"}) for name, (p, body) in found.items()}


def test_a_heuristic_over_the_kernels_sizes_is_read_with_its_parameters():
    read = _read()
    assert cst.Module([]).code_for_node(read["EVEN_M"]) == "M % BLOCK_M == 0"
    assert cst.Module([]).code_for_node(read["SAME"]) == "D == BLOCK_D"


def test_a_heuristic_on_a_pointer_or_a_launch_option_is_left_free():
    read = _read()
    assert read["HAS_BIAS"] is None  # whether a pointer is None is the caller's to say
    assert read["WIDE"] is None  # num_warps is no parameter of the kernel


@pytest.mark.parametrize("op, fn", [("BitAnd", lambda a, b: a & b), ("BitOr", lambda a, b: a | b),
                                    ("BitXor", lambda a, b: a ^ b)])
def test_bitwise_flags_are_exact(op, fn):
    for a, b in [(1, 0), (1, 1), (6, 3), (-1, 5), (-4, -3), (5, -2), (2 ** 40 + 3, 7)]:
        assert z3.simplify(_bitwise(op, z3.IntVal(a), z3.IntVal(b))).as_long() == fn(a, b)


def test_string_modes_are_distinct_constants_no_flag_or_size_holds():
    from kernlint.engine.symbols import string_code

    codes = {string_code(s) for s in ("none", "sum", "mean", "gelu", "")}
    assert len(codes) == 5
    assert min(codes) >= 1 << 48
