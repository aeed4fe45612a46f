"""Autotune configs are read by one parser: values where a config is written out or built by code
the host evaluator follows (a comprehension, a helper's list, a choice made at run time), nothing
invented where they cannot be read."""

import libcst as cst
import pytest

from kernlint import catalogue
from kernlint.source.configs import config_values, parse_config, unread_keys
from kernlint.source.discover import discover
from kernlint.source.phase import lint_text

SOURCE = '''
import triton
import triton.language as tl

def more_configs():
    return [triton.Config({"BLOCK": 96})]

@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4), *more_configs()], key=["n"])
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)

@triton.autotune(configs=[triton.Config({"TILE": t}) for t in (48, 64)], key=["n"])
@triton.jit
def j(x_ptr, n, TILE: tl.constexpr):
    offs = tl.program_id(0) * TILE + tl.arange(0, TILE)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)
'''


def _kernels():
    info = discover("m.py", SOURCE, cst.parse_module(SOURCE))
    return {d.kernel.name: d.kernel for d in info.kernels}


def test_written_and_built_configs_are_read():
    kernels = _kernels()
    assert config_values(kernels["k"]) == [{"BLOCK": 128}, {"BLOCK": 96}]
    assert config_values(kernels["j"]) == [{"TILE": 48}, {"TILE": 64}]
    assert unread_keys(kernels["j"]) == set()


IMPORTED = '''
import triton
import triton.language as tl
from .tuning import tile_configs

@triton.autotune(configs=[triton.Config({"TILE": t}) for t in tile_configs()], key=["n"])
@triton.jit
def j(x_ptr, n, TILE: tl.constexpr):
    offs = tl.program_id(0) * TILE + tl.arange(0, TILE)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)

@triton.autotune(configs=[triton.Config({"TILE": t}, num_warps=w) for t in (32, 64) for w in WARPS], key=["n"])
@triton.jit
def w(x_ptr, n, TILE: tl.constexpr):
    offs = tl.program_id(0) * TILE + tl.arange(0, TILE)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)

@triton.autotune(configs=[triton.Config({"TILE": t}, num_warps=w) for t in (32, 64) for w in [4] + ([8] if big() else [])],
                 key=["n"])
@triton.jit
def c(x_ptr, n, TILE: tl.constexpr):
    offs = tl.program_id(0) * TILE + tl.arange(0, TILE)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)
'''


def test_configs_built_from_what_is_not_known_are_not_invented():
    info = discover("m.py", IMPORTED, cst.parse_module(IMPORTED))
    kernels = {d.kernel.name: d.kernel for d in info.kernels}
    # a list another module makes: the configs' values are not known
    assert config_values(kernels["j"]) == [None]
    assert unread_keys(kernels["j"]) == {"TILE"}
    # an unknown warp count leaves the block sizes known (the IR phase cannot read that config)
    assert config_values(kernels["w"]) == [{"TILE": 32}, {"TILE": 64}]
    with pytest.raises(ValueError):
        parse_config(kernels["w"].autotune_configs[0])
    # a choice made at run time: every config either branch builds
    assert [parse_config(t) for t in kernels["c"].autotune_configs] == [
        ({"TILE": 32}, 4, None), ({"TILE": 32}, 8, None), ({"TILE": 64}, 4, None), ({"TILE": 64}, 8, None)]


def test_a_helper_call_is_not_read_as_a_config():
    with pytest.raises(ValueError):
        parse_config("more_configs()")
    assert parse_config("triton.Config({'B': 64}, num_warps=8, num_stages=2)") == ({"B": 64}, 8, 2)


def test_kl107_judges_the_values_built_configs_set():
    """The helper's 96 and the comprehension's 48 are read: a block of either cannot compile."""
    result, _ = lint_text("m.py", SOURCE, [catalogue.all_rules()["KL107"]()])
    found = sorted((f.span.line, f.message) for f in result.findings)
    assert len(found) == 2, found
    assert "96" in found[0][1] and "48" in found[1][1]
