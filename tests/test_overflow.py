"""KL104 on the engine: an int32 product is reported when a run the launches allow pushes it past
2**31 - 1, with the witness in its evidence; what bounds the run (Triton's int32 arguments, CUDA's
grid limits, stated grids and trip counts, a load's unknown dtype) keeps the others silent."""

import pytest

from kernlint import catalogue
from kernlint.source.phase import lint_text

KL104 = [catalogue.all_rules()["KL104"]()]
INT32_MAX = 2**31 - 1

HEADER = "import triton\nimport triton.language as tl\n\n"


def _findings(text: str):
    result, _ = lint_text("k.py", HEADER + text, KL104)
    assert result.errors == []
    return result.findings


ROWS = '''
@triton.jit
def rows(x_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(x_ptr + row * stride + cols, 0.0, mask=cols < n)
'''


def test_witness_passes_int32():
    (finding,) = _findings(ROWS)
    w = finding.evidence["witness"]
    assert w["program_id(0)"] * w["stride"] == finding.evidence["value"] > INT32_MAX
    assert w["stride"] <= INT32_MAX  # an argument of 2**31 or more would be int64, and so the product
    assert "no launch in this file gives the sizes" in finding.message


BLOCKS = '''
@triton.jit
def fill(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0, mask=offs < n)

def run(x):
    n = {n}
    fill[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024)
'''


@pytest.mark.parametrize("n, reported", [("x.numel()", False), ("2**30", False), ("2**31 + 4096", True)])
def test_block_offset_needs_a_grid_stated_as_a_number(n, reported):
    found = _findings(BLOCKS.format(n=n))
    assert bool(found) == reported
    if reported:
        assert found[0].evidence["witness"]["program_id(0)"] * 1024 > INT32_MAX


AXIS_1 = '''
@triton.jit
def heads(x_ptr, BLOCK: tl.constexpr):
    h = tl.program_id(1)
    tl.store(x_ptr + h * BLOCK + tl.arange(0, 16), 0)

def run(x):
    heads[(1, 65535)](x, BLOCK={block})
'''


@pytest.mark.parametrize("block, reported", [(4096, False), (65536, True)])
def test_grid_axis_1_holds_at_most_65535_programs(block, reported):
    assert bool(_findings(AXIS_1.format(block=block))) == reported


LOADED = '''
@triton.jit
def gather(x_ptr, starts_ptr, D: tl.constexpr):
    start = tl.load(starts_ptr + tl.program_id(0)){cast}
    d = tl.arange(0, D)
    tl.store(x_ptr + start * D + d, 0.0)
'''


@pytest.mark.parametrize("cast, reported", [("", False), (".to(tl.int64)", False), (".to(tl.int32)", True)])
def test_a_loaded_value_counts_once_cast_to_int32(cast, reported):
    found = _findings(LOADED.format(cast=cast))
    assert bool(found) == reported
    if reported:
        assert "from a loaded value" in found[0].message and "widen `start`" in found[0].message


LATE = '''
@triton.jit
def late(x_ptr, stride_h, D: tl.constexpr):
    h = tl.program_id(0)
    tl.store(x_ptr + {offset} + tl.arange(0, D), 0.0)
'''


def test_a_cast_after_the_product_is_too_late():
    (finding,) = _findings(LATE.format(offset="(h * stride_h).to(tl.int64)"))
    assert "comes too late" in finding.message
    assert not _findings(LATE.format(offset="h.to(tl.int64) * stride_h"))


LOOP = '''
@triton.jit
def chunks(x_ptr, n, D: tl.constexpr):
    for c in {loop}:
        tl.store(x_ptr + c * D + tl.arange(0, D), 0.0)
'''


@pytest.mark.parametrize("loop", ["range(n)", "tl.static_range(4)"])
def test_a_loop_counter_times_constants_needs_a_stated_trip_count(loop):
    assert not _findings(LOOP.format(loop=loop))


def test_a_loop_counter_times_a_size_is_asked():
    (finding,) = _findings(LOOP.format(loop="range(n)").replace("c * D", "c * n"))
    assert "from a loop counter" in finding.message and "widen `c`" in finding.message


BRANCHES = '''
@triton.jit
def pick(x_ptr, stride, VARLEN: tl.constexpr, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    if not VARLEN:
        base = b * stride
    else:
        base = tl.load(x_ptr + b).to(tl.int64)
    tl.store(x_ptr + base + tl.arange(0, BLOCK), 0.0)
'''


def test_the_witness_takes_the_branch_the_product_is_computed_in():
    (finding,) = _findings(BRANCHES)
    assert finding.evidence["witness"]["VARLEN"] == 0


INDEX = '''
@triton.jit
def tokens(x_ptr, T, H: tl.constexpr, K: tl.constexpr):
    i_n = tl.program_id(0)
    bos = {bos}
    tl.store(x_ptr + bos * H * K + tl.arange(0, K), 0.0)
'''


def test_an_index_widened_before_it_is_scaled_is_not_an_offset():
    # `i_n * T` counts tokens: once widened, the offset it is scaled to is int64; it passes 2**31 only
    # with more than 2**31 tokens
    assert not _findings(INDEX.format(bos="(i_n * T).to(tl.int64)"))
    (finding,) = _findings(INDEX.format(bos="i_n * T"))
    assert "`bos * H * K`" in finding.message and "widen `i_n`" in finding.message


SHARED_HELPER = '''
@triton.jit
def row_offset(row, stride):
    return (row * stride).to(tl.int64)


@triton.jit
def copy_rows(x_ptr, y_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row_offset(row, stride) + cols, mask=cols < n)
    tl.store(y_ptr + row_offset(row, stride) + cols, v, mask=cols < n)


@triton.jit
def zero_rows(y_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(y_ptr + row_offset(row, stride) + cols, 0.0, mask=cols < n)
'''


def test_a_product_in_a_helper_is_reported_once_where_it_is_written():
    """The late cast sits in the helper two kernels inline: the finding is at the helper's product
    (line 7 of the module), named after the helper, once, not at each kernel's ``def`` line."""
    found = _findings(SHARED_HELPER)
    assert [(f.span.line, f.kernel) for f in found] == [(7, "row_offset")]


REDUCED = '''
@triton.jit
def pick(x_ptr, idx_ptr, out_ptr, stride, {idx_dtype}BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    ids = tl.load(idx_ptr + lanes){cast}
    i = tl.sum(tl.where(lanes == 3, ids, 0))
    tl.store(out_ptr, tl.load(x_ptr + i * stride))
'''


@pytest.mark.parametrize("cast, reported", [("", False), (".to(tl.int32)", True)])
def test_a_reduction_is_as_wide_as_what_it_reduces(cast, reported):
    # the sum of a block to one value is a scalar of the block's type: int64 where nothing narrows it
    found = _findings(REDUCED.format(idx_dtype="", cast=cast))
    assert bool(found) == reported
    if reported:
        assert "`i * stride`" in found[0].message


ARGMAX = '''
@triton.jit
def best_row(x_ptr, scores_ptr, out_ptr, BLOCK: tl.constexpr):
    pos = tl.argmax(tl.load(scores_ptr + tl.arange(0, BLOCK)), axis=0)
    tl.store(out_ptr, tl.load(x_ptr + pos * {stride}))
'''


@pytest.mark.parametrize("stride, reported", [("2047", False), ("4096", True)])
def test_a_position_in_a_block_is_below_the_largest_block(stride, reported):
    # Triton's blocks hold at most 2**20 elements: an argmax times 2047 stays below 2**31
    assert bool(_findings(ARGMAX.format(stride=stride))) == reported
