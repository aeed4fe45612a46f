"""Autotune configs are read by one parser: values where a config is written out, nothing invented
where configs are built by code."""

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


def test_written_configs_are_read_and_built_ones_are_not():
    kernels = _kernels()
    assert config_values(kernels["k"]) == [{"BLOCK": 128}, None]
    assert config_values(kernels["j"]) == [None]
    assert unread_keys(kernels["j"]) == {"TILE"}


def test_a_helper_call_is_not_read_as_a_config():
    with pytest.raises(ValueError):
        parse_config("more_configs()")
    assert parse_config("triton.Config({'B': 64}, num_warps=8, num_stages=2)") == ({"B": 64}, 8, 2)


def test_kl107_judges_only_values_it_can_read():
    """The helper's 96 and the comprehension's 48 are not known here: no finding on either."""
    result, _ = lint_text("m.py", SOURCE, [catalogue.all_rules()["KL107"]()])
    assert result.findings == []
