"""The symbolic bounds engine: witnesses a reader can check, no finding without a known extent,
unknown constructs degrade to silence (never an exception)."""

from pathlib import Path

from kernlint import catalogue
from kernlint.source.phase import lint_text

ROOT = Path(__file__).resolve().parents[1]
RULES = [catalogue.all_rules()[c]() for c in ("KL101", "KL102")]


def _findings(text: str):
    result, _ = lint_text("k.py", text, RULES)
    assert result.errors == []
    return result.findings


def test_witness_checks_by_hand():
    path = ROOT / "fixtures" / "bounds" / "literal_grid_bad.py"
    (finding,) = _findings(path.read_text())
    w = finding.evidence["witness"]
    # y = torch.empty(1000), grid (4,), BLOCK=256: program 3's lane must reach element >= 1000
    address = w["program_id(0)"] * w["BLOCK"] + w["`tl.arange(0, BLOCK)`"]
    assert w["BLOCK"] == 256 and w["program_id(0)"] < 4
    assert address == finding.evidence["address"] >= finding.evidence["bound"] == 1000


NO_EXTENT = '''
import triton
import triton.language as tl

@triton.jit
def copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))
'''


def test_no_extent_no_finding():
    # nothing launches the kernel and no mask states a bound: the engine does not invent one
    assert _findings(NO_EXTENT) == []


GATHER_AND_UNMODELLED = '''
import torch
import triton
import triton.language as tl

@triton.jit
def gather(x_ptr, idx_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    v = tl.load(x_ptr + idx)
    m2 = tl.reshape(mask, (BLOCK // 2, 2))
    w = tl.join(v, v)
    tl.store(y_ptr + tl.reshape(offs, (BLOCK // 2, 2)), tl.reshape(v, (BLOCK // 2, 2)), mask=m2)

def run(x, idx):
    y = torch.empty_like(idx, dtype=x.dtype)
    n = idx.numel()
    gather[(triton.cdiv(n, 128),)](x, idx, y, n, BLOCK=128)
'''


def test_gathers_and_unmodelled_shapes_are_not_judged():
    assert _findings(GATHER_AND_UNMODELLED) == []



def test_findings_do_not_depend_on_what_was_linted_before():
    # the solver answers within a work budget; what it answers (and the witness) must follow from
    # the query alone, not from the terms earlier files left in the process
    import z3

    path = ROOT / "fixtures" / "triton" / "matmul_bad.py"
    def lint():
        result, _ = lint_text(str(path), path.read_text(), RULES)
        return sorted((f.span.line, f.rule, f.message) for f in result.findings)
    first = lint()
    assert [(line, rule) for line, rule, _ in first] == [(22, "KL101"), (28, "KL102")]
    kept = []
    for n in (7, 333, 1000):
        kept += [z3.Int(f"unrelated{n}_{i}") * i for i in range(n)]
        assert lint() == first


FLATTENED_TILE = '''
import torch
import triton
import triton.language as tl

@triton.jit
def flat_copy(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    offs = tl.reshape(rm[:, None] * N + rn[None, :], (BM * BN,))
    mask = tl.reshape((rm[:, None] < M) & (rn[None, :] < COLS), (BM * BN,))
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)

def run(x):
    M, N = x.shape
    y = torch.empty_like(x)
    flat_copy[(triton.cdiv(M, 16),)](x, y, M, N, BM=16, BN=triton.next_power_of_2(N))
'''


def test_reshape_merges_axes_row_major():
    # a (BM, BN) tile flattened with its mask: lane q is row q // BN, column q % BN
    assert _findings(FLATTENED_TILE.replace("COLS", "N")) == []
    found = _findings(FLATTENED_TILE.replace("COLS", "N + 1"))
    assert [f.rule for f in found] == ["KL101", "KL102"]
    w = found[0].evidence["witness"]
    q = next(v for k, v in w.items() if "tl.reshape" in k)
    row, col = w["program_id(0)"] * w["BM"] + q // w["BN"], q % w["BN"]
    assert row * w["N"] + col == found[0].evidence["address"] >= found[0].evidence["bound"] == w["M"] * w["N"]


def test_block_pointer_shape_is_checked_against_the_tensor():
    # boundary_check masks by the block pointer's shape: a shape one longer than the row is not a guard
    path = ROOT / "fixtures" / "bounds" / "block_ptr_base_good.py"
    text = path.read_text().replace("](x, y, cols, x.stride(0)", "](x, y, cols + 1, x.stride(0)")
    found = _findings(text)
    assert [f.rule for f in found] == ["KL101", "KL102"]
    w = found[0].evidence["witness"]
    lane = next(v for k, v in w.items() if "block axis 0" in k)
    assert lane < w["n_cols"] == w["x.shape[1]"] + 1
    assert w["program_id(0)"] * w["stride"] + lane == found[0].evidence["address"] >= found[0].evidence["bound"]


ASSERTED_EXTENT = '''
import torch
import triton
import triton.language as tl

@triton.jit
def tile_scale(x_ptr, s_ptr, y_ptr, n, BLOCK: tl.constexpr):
    for t in range(0, TRIPS):
        offs = t * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(y_ptr + offs, x * tl.load(s_ptr + t), mask=offs < n)

def run(x, s):
    n = x.numel()
    y = torch.empty_like(x)
    assert s.numel() == triton.cdiv(n, 128), "one scale per tile"
    tile_scale[(1,)](x, s, y, n, BLOCK=128)
'''


def test_an_asserted_equation_gives_an_input_its_extent():
    # the assert (a comma inside its call, then a message) ties s's size to n: one scale per tile
    assert _findings(ASSERTED_EXTENT.replace("TRIPS", "(n + BLOCK - 1) // BLOCK")) == []
    (found,) = _findings(ASSERTED_EXTENT.replace("TRIPS", "n // BLOCK + 1"))
    w = found.evidence["witness"]
    assert w["t"] == found.evidence["address"] >= found.evidence["bound"] == w["s.numel()"]
    assert w["s.numel()"] == -(-w["x.numel()"] // 128)


def test_modules_checked_in_threads_at_once_get_their_serial_findings():
    # eval judges candidates in threads; the engine's solver context is process-wide
    import threading

    texts = [p.read_text() for p in sorted((ROOT / "fixtures" / "bounds").glob("*.py"))]
    serial = [[(f.rule, f.span.line, f.message) for f in _findings(t)] for t in texts]
    got: dict[int, list] = {}

    def worker(k: int) -> None:
        for i, t in enumerate(texts):
            if i % 4 == k:
                got[i] = [(f.rule, f.span.line, f.message) for f in _findings(t)]

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert [got[i] for i in range(len(texts))] == serial
    assert any(serial)


DIVIDES = '''
import triton
import triton.language as tl


@triton.jit
def group_fill(y_ptr, G, H, USE, BLOCK: tl.constexpr):
    g = tl.program_id(0) // (G // 256)
    if USE > 0:
        g += H % 7 + tl.program_id(0) // H
    offs = g * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 1.0)
'''


def test_witnesses_never_divide_by_zero_on_the_path_that_divides():
    # z3 lets `x / 0` be anything: a witness must be a run that does not divide by zero
    import libcst as cst
    import z3

    from kernlint.engine.evaluate import evaluate
    from kernlint.source.discover import discover

    info = discover("k.py", DIVIDES, cst.parse_module(DIVIDES))
    model = evaluate(info, info.kernels[0])
    G, H, USE = (model.params[n] for n in ("G", "H", "USE"))

    def possible(*facts) -> bool:
        s = z3.Solver()
        s.add(*model.symbols.domain, *facts)
        return s.check() == z3.sat

    assert not possible(G / 256 == 0)
    assert possible(G / 256 == 1)
    # the division by H happens only when USE > 0
    assert not possible(H == 0, USE > 0)
    assert possible(H == 0, USE <= 0)


BLOCK_PTR_LOOP = '''
import torch
import triton
import triton.language as tl


@triton.jit
def row_sum(X, Out, n, pad, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    blk = tl.make_block_ptr(X + row * stride, (n + pad,), (1,), (0,), (BLOCK,), (0,))
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _ in range(0, n + pad, BLOCK):
        acc += tl.load(blk)
        blk = tl.advance(blk, (BLOCK,))
    tl.store(Out + row, tl.sum(acc, axis=0))


def run(x, y, block):
    pad = 0 if x.shape[1] == y.shape[1] else y.shape[1] - x.shape[1]
    assert pad == 0
    out = torch.empty(x.shape[0], device=x.device)
    row_sum[(x.shape[0],)](x, out, x.shape[1], pad, x.stride(0), BLOCK=block)
    return out
'''


def test_block_pointer_witness_honours_the_wrappers_asserts():
    """KL109: the witness's sizes satisfy what the wrapper asserts, also of a value it computes
    with a conditional expression; a size in a declared shape may be 0 (``pad``)."""
    result, _ = lint_text("k.py", BLOCK_PTR_LOOP, [catalogue.all_rules()["KL109"]()])
    (finding,) = result.findings
    w = finding.evidence["witness"]
    assert w["pad"] == 0 and w["n"] % w["BLOCK"] != 0
    assert finding.evidence["address"] >= finding.evidence["bound"] == w["n"]


SPLIT_PLANES = '''
import torch
import triton
import triton.language as tl

@triton.jit
def swap_pairs(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    half = tl.arange(0, BLOCK // 2)
    even = tl.program_id(0) * BLOCK + 2 * half
    odd = even + 1
    tl.store(out_ptr + even, tl.load(x_ptr + odd, mask=odd < n), mask=even < n)
    tl.store(out_ptr + odd, tl.load(x_ptr + even, mask=even < n), mask=odd < n)

def swap(x):
    out = torch.empty_like(x)
    n = x.numel()
    swap_pairs[(GRID,)](x, out, n, BLOCK=64)
    return out
'''


def test_grid_shortfall_witness_checks_by_hand():
    """KL108: the witness's sizes give a grid whose last program stops short of the mask's bound."""
    path = ROOT / "fixtures" / "bounds" / "grid_divisible_bad.py"
    result, _ = lint_text("k.py", path.read_text(), [catalogue.all_rules()["KL108"]()])
    (finding,) = result.findings
    w = finding.evidence["witness"]
    assert w["n"] % 2 == 0 and w["programs on axis 0"] == w["n"] // 64
    assert finding.evidence["reached"] == w["programs on axis 0"] * 64 - 1 < finding.evidence["missed"] == w["n"] - 1


def test_indices_that_split_one_bound_cover_it_together():
    """KL108: even and odd lanes under one bound reach its last element between them (neither alone
    does); a grid of floor division still misses the tail."""
    rule = [catalogue.all_rules()["KL108"]()]
    covered, _ = lint_text("k.py", SPLIT_PLANES.replace("GRID", "triton.cdiv(n, 64)"), rule)
    short, _ = lint_text("k.py", SPLIT_PLANES.replace("GRID", "n // 64"), rule)
    assert covered.findings == [] and [f.rule for f in short.findings] == ["KL108"]


def test_a_read_write_race_names_the_line_of_the_store_not_of_its_branch():
    result, _ = lint_text("k.py", '''
import torch
import triton
import triton.language as tl


@triton.jit
def handoff(flag_ptr, out_ptr):
    pid = tl.program_id(0)
    if pid == 0:
        tl.store(out_ptr, tl.load(flag_ptr))
    else:
        tl.store(flag_ptr, 1)


def run():
    handoff[(2,)](torch.zeros(1, dtype=torch.int32), torch.zeros(1, dtype=torch.int32))
''', [catalogue.all_rules()["KL103"]()])
    (finding,) = result.findings
    assert finding.rule == "KL103" and finding.span.line == 11
    assert finding.evidence["store_line"] == 13 and "stores on line 13" in finding.message


SPLIT_NORMALIZER = '''
import torch
import triton
import triton.language as tl


@triton.jit
def normalizer(q_ptr, z_ptr, T, BT: tl.constexpr):
    i_v = tl.program_id(0)  # the programs of axis 0 split the value columns
    i_t = tl.program_id(1)
    offs = i_t * BT + tl.arange(0, BT)
    acc = tl.zeros((BT,), dtype=tl.float32)
    for s in range(0, T, BT):
        acc += tl.load(READ, mask=offs < T, other=0.0)
    tl.store(z_ptr + offs, acc, mask=offs < T)


def run(q, z, NV):
    T = z.numel()
    normalizer[(NV, triton.cdiv(T, 64))](q, z, T, BT=64)
'''


def test_a_value_a_loop_accumulates_is_compared_through_what_it_loads():
    """Programs that split an axis the accumulated value does not depend on store the same value
    (a warning); loads that differ between them, or a read of the stored tensor, may not (an error)."""
    rule = [catalogue.all_rules()["KL103"]()]

    def found(read):
        result, _ = lint_text("k.py", SPLIT_NORMALIZER.replace("READ", read), rule)
        return [(f.level.value, "same value" in f.message) for f in result.findings]

    assert found("q_ptr + s + offs") == [("warning", True)]
    assert found("q_ptr + i_v * T + s + offs") == [("error", False)]
    assert set(found("z_ptr + offs")) == {("error", False)}  # what one program reads, the other may have written


def test_an_answer_first_asked_without_a_small_witness_gets_the_same_witness_when_one_is_asked():
    import z3

    from kernlint.engine.query import Solving

    n, i = z3.Ints("n i")
    facts = [n >= 1, i >= 0, i < 10 * n]
    goal = n * i > 10 ** 9  # z3's first model has i = 99991, past every limit but the last
    alone = Solving().solve(facts, goal)[1]
    solving = Solving()
    loose = solving.solve(facts, goal, tighten=False)
    tightened = solving.solve(facts, goal)
    assert loose[0] == tightened[0] == z3.sat
    assert {d.name(): tightened[1][d].as_long() for d in tightened[1].decls()} == \
        {d.name(): alone[d].as_long() for d in alone.decls()}
    assert any(abs(loose[1][d].as_long()) > 1 << 16 for d in loose[1].decls())
    assert all(abs(tightened[1][d].as_long()) <= 1 << 16 for d in tightened[1].decls())


def test_a_trip_count_computed_through_element_wise_math_of_loaded_values_is_data_dependent():
    template = '''
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def k(x_ptr, chunks_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    last = {last}
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, last, BLOCK):
        acc += tl.load(x_ptr + i + tl.arange(0, BLOCK))
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)
'''
    rule = [catalogue.all_rules()["KL106"]()]
    for last in ("tl.floor(tl.load(chunks_ptr + pid)).to(tl.int32)",
                 "libdevice.ceil(tl.load(chunks_ptr + pid)).to(tl.int32)"):
        result, _ = lint_text("k.py", template.format(last=last), rule)
        assert [f.rule for f in result.findings] == ["KL106"], last
    result, _ = lint_text("k.py", template.format(last="tl.floor(n * 1).to(tl.int32)"), rule)
    assert result.findings == []


#: the kernel of fixtures/triton/list_grid_race (its second grid axis picks the output) under a
#: wrapper whose grid counts a slice of the outputs
SLICED_GRID = (ROOT / "fixtures" / "triton" / "list_grid_race_good.py").read_text().split("\n\ndef copy_rows")[0] + '''


def copy_rows(src, outs, i, cols):
    batch = outs[i:i + WIDTH]
    copy_rows_kernel[(triton.cdiv(cols, 128), len(batch))](src, batch[0], batch[-1], cols, BLOCK=128)
'''


def test_a_grid_axis_of_a_slices_length_is_at_most_the_slices_width():
    """``len(outs[i:i + 2])`` programs on the second axis: at most two, so the second output has one
    writer; ``[i:i + 3]`` lets two programs write it."""
    def races(width):
        result, _ = lint_text("k.py", SLICED_GRID.replace("WIDTH", width), [catalogue.all_rules()["KL103"]()])
        return result.findings

    assert races("2") == []
    assert [f.span.line for f in races("3")] == [18]  # the store of the second output


TWO_BLOCKS = '''
import torch
import triton
import triton.language as tl


@triton.jit
def scale_rows(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], x * 2, mask=mask)


def block(n):
    return triton.next_power_of_2(n)


def scale(x):
    M, N = x.shape
    y = torch.empty_like(x)
    scale_rows[(triton.cdiv(M, block(M)),)](x, y, M, N, BLOCK_M=block(M), BLOCK_N=block(N))
    return y
'''


def test_a_helper_called_twice_gives_each_call_its_own_sizes():
    """``block(M)`` and ``block(N)`` of ``def block(n): return triton.next_power_of_2(n)`` are two
    sizes, each named by what it rounds: one stand-in named after the helper's parameter ``n`` would
    tie the row block to the column block."""
    import libcst as cst

    from kernlint.engine.run import _engine
    from kernlint.source.discover import discover
    from kernlint.source.interpret import interpret

    text = TWO_BLOCKS
    info = discover("k.py", text, cst.parse_module(text))
    _, prover = _engine(interpret(info, info.kernels[0]))
    values = prover.launches[0].values
    assert (str(values["BLOCK_M"]), str(values["BLOCK_N"])) == ("next_power_of_2(x.shape[0])",
                                                                "next_power_of_2(x.shape[1])")


def test_a_name_a_while_loop_updates_is_a_size_its_exit_test_relates():
    """``g = 16; while kb % g: g //= 2`` then ``G=g`` and a grid of ``kb // g``: after the loop ``g`` is
    a size of its own (not the value before the loop, nor ``g // 2`` of itself), and the loop's exit
    test holds: ``g`` divides ``kb``."""
    import libcst as cst

    from kernlint.engine.run import _engine
    from kernlint.source.discover import discover
    from kernlint.source.interpret import interpret

    text = (ROOT / "fixtures" / "triton" / "loop_divisor_race_good.py").read_text()
    info = discover("k.py", text, cst.parse_module(text))
    _, prover = _engine(interpret(info, info.kernels[0]))
    facts = prover.launches[0]
    assert str(facts.values["G"]) == "g after its loop"
    assert str(facts.grid[1]) == "x.shape[1]/g after its loop"
    assert "0 == x.shape[1]%g after its loop" in [str(a) for a in facts.assumptions]


DEFAULTED_FLAG = '''
import torch
import triton
import triton.language as tl


@triton.jit
def rows_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    if WIDE:
        x = tl.load(x_ptr + row * n_cols + cols)
    else:
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, x, mask=cols < n_cols)


def rows(x, wide=DEFAULT):
    y = torch.empty_like(x)
    rows_kernel[(x.shape[0],)](x, y, x.shape[0], x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]), WIDE=wide)
    return y
'''


def test_a_forwarded_flag_is_judged_at_the_wrappers_default_and_only_there():
    """``WIDE=wide`` with ``wide=True``: a call that leaves ``wide`` out reads whole blocks unmasked,
    so the unmasked branch is judged and the message names the default; with ``wide=False`` the
    default's branch is masked and the other branch is the caller's choice, not judged. The
    witness shows the flag as the wrapper writes it."""
    (found,) = _findings(DEFAULTED_FLAG.replace("DEFAULT", "True"))
    assert found.span.line == 12 and "at the wrapper's default `wide=True`" in found.message
    assert found.evidence["witness"]["WIDE"] == 1
    assert _findings(DEFAULTED_FLAG.replace("DEFAULT", "False")) == []
    moded = DEFAULTED_FLAG.replace("DEFAULT", '"wide"').replace("if WIDE:", 'if WIDE == "wide":')
    (found,) = _findings(moded)
    assert "WIDE='wide'" in found.message


MEMBERSHIP_ASSERT = '''
import torch
import triton
import triton.language as tl


@triton.jit
def head_copy(x_ptr, y_ptr, D: tl.constexpr):
    d = tl.arange(0, 64)
    tl.store(y_ptr + tl.program_id(0) * D + d, tl.load(x_ptr + tl.program_id(0) * D + d))


def copy_heads(x):
    D = x.shape[-1]
    assert D in {16, 32, 48}
    y = torch.empty_like(x)
    head_copy[(x.numel() // D,)](x, y, D=D)
    return y
'''


def test_a_membership_assert_bounds_the_witness():
    """``assert D in {16, 32, 48}`` in the wrapper: the witness takes one of those head sizes (a block
    of 64 lanes runs past the row for each of them); ``not in`` states the complement."""
    found = _findings(MEMBERSHIP_ASSERT)
    assert found and all(f.evidence["witness"]["D"] in (16, 32, 48) for f in found)
    excluded = _findings(MEMBERSHIP_ASSERT.replace("assert D in {16, 32, 48}", "assert D not in [1, 2, 3]"))
    assert excluded and all(f.evidence["witness"]["D"] not in (1, 2, 3) for f in excluded)


def test_a_kernels_own_count_of_blocks_states_a_partial_last_block_unless_a_launcher_has_it():
    """With no launch in the module, ``pid % tl.cdiv(seq_len, BLOCK_M)`` is the kernel's own
    statement that the last block of a head may end past ``seq_len`` (KL109); where the module
    hands the kernel to a launcher the engine does not read, that launcher may launch whole blocks
    only, and the count alone convicts nothing."""
    rule = [catalogue.all_rules()["KL109"]()]
    text = (ROOT / "fixtures" / "triton" / "counted_blocks_bad.py").read_text()
    result, _ = lint_text("k.py", text, rule)
    assert sorted(f.span.line for f in result.findings) == [20, 20]
    handed = text + "\n\ndef scale(x, out, launcher):\n    launcher(scale_heads_kernel, x, out)\n"
    result, _ = lint_text("k.py", handed, rule)
    assert result.findings == []


GUARDED = '''
import torch
import triton
import triton.language as tl


@triton.jit
def double(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)


def run(x, scale=None):
    n = x.numel()
    GUARD
    y = torch.empty_like(x)
    double[(triton.cdiv(n, 128),)](x, y, BLOCK=128)
    return y
'''


def test_a_guard_passed_gives_each_part_of_its_or():
    """``if scale is not None or n % 128 != 0: raise``: past the guard ``n % 128 == 0`` holds although
    the other part is no number, so the whole blocks stay inside; ``assert not (...)`` says the same;
    without the guard the last block runs past ``n``."""
    guard = "if scale is not None or n % 128 != 0:\n        raise ValueError(n)"
    assert _findings(GUARDED.replace("GUARD", guard)) == []
    assert _findings(GUARDED.replace("GUARD", "assert not (scale is not None or n % 128 != 0)")) == []
    assert len(_findings(GUARDED.replace("GUARD", "pass"))) == 2


FLAG_AND_COUNT = '''
import torch
import triton
import triton.language as tl

@triton.jit
def tail(x_ptr, first, BLOCK: tl.constexpr):
    offs = (tl.program_id(0) + first) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)

def run(x, waves: int, two: bool):
    tiles = x.numel() // 64
    early = tiles % waves
    if two and tiles - early > waves:
        early += waves
    tail[(tiles - early,)](x, early, BLOCK=64)
'''


def test_a_count_a_flag_and_a_test_bump_under_an_if_is_the_launchs_grid():
    """``two and tiles - early > waves`` (a flag the caller passes beside a comparison) is read as a
    test, and ``early += waves`` under it as the chain of both values: the grid is ``tiles - early``
    of either branch, so the programs stay inside the tensor (whole blocks of 64 of ``numel // 64``)."""
    assert _findings(FLAG_AND_COUNT) == []
    shifted = FLAG_AND_COUNT.replace("tail[(tiles - early,)]", "tail[(tiles - early + 1,)]")
    (load, store) = sorted(_findings(shifted), key=lambda f: f.rule)
    w = load.evidence["witness"]
    assert load.rule == "KL101" and store.rule == "KL102"
    assert w["program_id(0)"] + w["first"] == w["x.numel()"] // 64  # the block past the whole ones


DEFAULT_FLAG_GRID = '''
import torch
import triton
import triton.language as tl

@triton.jit
def zero(x_ptr, SPLIT: tl.constexpr):
    pid = tl.program_id(0)
    if SPLIT:
        tl.store(x_ptr + pid * 32 + tl.arange(0, 32), 0.0)  # four programs of 32
    else:
        tl.store(x_ptr + pid * 128 + tl.arange(0, 128), 0.0)  # one program of 128

def run(split=False):
    x = torch.empty(128)
    zero[(4 if split else 1,)](x, SPLIT=split)
    return x
'''


def test_a_flag_judged_at_its_default_holds_that_default_wherever_the_launch_reads_it():
    """The kernel's ``SPLIT`` is judged at the wrapper's default ``split=False``, and in that call the
    grid the wrapper computes from ``split`` is one program: the unsplit store covers the 128 elements
    exactly. A witness that takes ``split`` on in the grid (four programs) while the kernel has it off
    is no call anyone makes."""
    assert _findings(DEFAULT_FLAG_GRID) == []
    wrong = DEFAULT_FLAG_GRID.replace("(4 if split else 1,)", "(4 if split else 2,)")
    (finding,) = _findings(wrong)
    w = finding.evidence["witness"]
    assert w["SPLIT"] == 0 and w["program_id(0)"] == 1


def test_a_witness_names_the_side_of_a_host_test_kernlint_cannot_follow():
    """``64 if is_hip() else 128``: either block may run; the witness says which side it took."""
    src = (ROOT / "fixtures" / "bounds" / "host_choice_bad.py").read_text()
    (f, *_) = [f for f in _findings(src) if f.rule == "KL102"]
    assert "witness: `is_hip()`=true, BLOCK=64," in f.message


ARGMAX_INDEX = '''
import torch
import triton
import triton.language as tl

@triton.jit
def pick(x_ptr, table_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    best = tl.argmax(x, axis=0)
    tl.store(out_ptr, tl.load(table_ptr + tl.minimum(best, n - 1){shift}))

def run(x, table):
    n = x.numel()
    assert n > 0 and table.numel() == n
    out = torch.empty(1, device=x.device, dtype=table.dtype)
    pick[(1,)](x, table, out, n, BLOCK=triton.next_power_of_2(n))
    return out
'''


def test_a_position_in_a_block_is_never_negative():
    # `tl.argmax` is a lane's position: capped at n - 1, it stays in [0, n)
    assert _findings(ARGMAX_INDEX.replace("{shift}", "")) == []
    # one before it can be -1 (argmax 0), which the witness shows
    (finding,) = _findings(ARGMAX_INDEX.replace("{shift}", " - 1"))
    assert finding.rule == "KL101" and finding.evidence["address"] == -1


def test_a_grid_counted_with_another_axis_of_the_same_tensor_misses_the_tail():
    """KL108: ``cdiv(M, 32)`` column blocks for a mask ``rn < N`` of ``M, N = x.shape``: the axes of one
    tensor are independent, so a wider matrix leaves columns unstarted (no call with sizes in the file)."""
    fixture = (Path(__file__).parents[1] / "fixtures" / "bounds" / "grid_other_axis_bad.py").read_text()
    module = fixture[:fixture.index("def run(")]
    rule = [catalogue.all_rules()["KL108"]()]
    short, _ = lint_text("k.py", module, rule)
    covered, _ = lint_text("k.py", module.replace("triton.cdiv(M, 32))", "triton.cdiv(N, 32))"), rule)
    assert [f.rule for f in short.findings] == ["KL108"] and covered.findings == []
    # sizes of two tensors may be tied by a contract the wrapper does not state: not convicted
    apart = module.replace("M, N = x.shape", "M, N = x.shape[0], y_cols.shape[0]").replace("(x: torch.Tensor)", "(x, y_cols)")
    assert lint_text("k.py", apart, rule)[0].findings == []


def test_sizes_read_from_the_front_multiply_into_the_element_count():
    """``indx.shape[0]`` programs of ``indx.shape[1]`` elements each stay inside ``indx.numel()``: a
    tensor holds a whole number of blocks of the product of its leading sizes, whatever its rank."""
    source = '''
import torch
import triton
import triton.language as tl


@triton.jit
def first_valid(indx_ptr, out_ptr, K: tl.constexpr):
    pid = tl.program_id(0)
    best = tl.load(indx_ptr + pid * K + SHIFT)
    for i in tl.static_range(1, K):
        v = tl.load(indx_ptr + pid * K + i)
        best = tl.where(best == -1, v, best)
    tl.store(out_ptr + pid, best)


def run(x, indx):
    assert x.shape[0] == indx.numel()
    out = torch.empty((indx.shape[0],), dtype=torch.int32, device=indx.device)
    first_valid[(indx.shape[0],)](indx, out, K=indx.shape[1])
    return out
'''
    rule = [catalogue.all_rules()["KL101"]()]
    assert lint_text("k.py", source.replace("SHIFT", "0"), rule)[0].findings == []
    # one block further is past the end where the rank is known (``B, K = indx.shape``: B * K elements)
    ranked = source.replace("SHIFT", "K").replace("def run(x, indx):", "def run(x, indx):\n    B, K = indx.shape")
    assert [f.span.line for f in lint_text("k.py", ranked, rule)[0].findings] == [10]


def test_a_size_the_launch_passes_and_the_access_does_not_read_is_received():
    """``M`` of ``M, N = a.shape`` passed to the kernel, never read: ``a.numel() = M * N`` is a known
    extent, so rows counted with ``N`` past ``M`` are convicted (no call with sizes in the file)."""
    fixture = (Path(__file__).parents[1] / "fixtures" / "bounds" / "received_size_bad.py").read_text()
    module = fixture[:fixture.index("def run(")]
    rule = [catalogue.all_rules()["KL101"]()]
    assert [f.span.line for f in lint_text("k.py", module, rule)[0].findings] == [15, 16]
    assert lint_text("k.py", module.replace("[(N, triton", "[(M, triton"), rule)[0].findings == []


def test_the_rest_of_a_trip_runs_where_break_and_continue_did_not():
    """``if t >= T: break`` (or ``continue``) before a load: the load runs only where ``t < T``."""
    source = '''
import torch
import triton
import triton.language as tl


@triton.jit
def rows_of_chunk(x_ptr, y_ptr, T, C, BT, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BT
    offs = tl.arange(0, BLOCK)
    for t in range(start, start + BT):
        if t >= T:
            EXIT
        v = tl.load(x_ptr + t * C + offs, mask=offs < C)
        tl.store(y_ptr + t * C + offs, v, mask=offs < C)


def run(x, bt):
    T, C = x.shape
    y = torch.empty_like(x)
    rows_of_chunk[(triton.cdiv(T, bt),)](x, y, T, C, bt, BLOCK=triton.next_power_of_2(C))
    return y
'''
    rules = [catalogue.all_rules()[c]() for c in ("KL101", "KL102")]
    for exit in ("break", "continue"):
        assert lint_text("k.py", source.replace("EXIT", exit), rules)[0].findings == []
    assert len(lint_text("k.py", source.replace("EXIT", "pass"), rules)[0].findings) == 2


CHAINED_ASSERT = '''
import torch
import triton
import triton.language as tl

@triton.jit
def head_copy(x_ptr, out_ptr, stride_row, WIDTH: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    live = cols < WIDTH
    tl.store(out_ptr + row * WIDTH + cols, tl.load(x_ptr + row * stride_row + cols, mask=live), mask=live)

def head(x, width):
    R, D = x.shape
    assert {check}
    out = torch.empty((x.shape[0], width), device=x.device, dtype=x.dtype)
    head_copy[(x.shape[0],)](x, out, x.stride(0), WIDTH=width, BLOCK=triton.next_power_of_2(width))
    return out
'''


def test_a_chained_comparison_in_the_wrapper_holds_link_by_link():
    """``0 < width <= D`` (of ``R, D = x.shape``) states both links: the first ``width`` columns of a row are inside
    it. Without the second link, a width past the row reads the next row's (and, on the last row,
    past the tensor), which the witness shows."""
    assert _findings(CHAINED_ASSERT.replace("{check}", "0 < width <= D")) == []
    (finding,) = _findings(CHAINED_ASSERT.replace("{check}", "0 < width"))
    w = finding.evidence["witness"]
    assert finding.rule == "KL101" and w["WIDTH"] > w["x.shape[1]"]


UNPACKED_CHOICE = '''
import torch
import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr, WARPS_HINT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs{mask}) * 2{mask})

def run(x):
    n = x.numel()
    BLOCK, hint = (1024, 8) if n > 65536 else (128, 4)
    y = torch.empty_like(x)
    scale[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, WARPS_HINT=hint)
    return y
'''


def test_names_unpacked_from_a_choice_of_tuples_take_the_tests_side():
    """``BLOCK, hint = (1024, 8) if n > 65536 else (128, 4)``: each name is the test's choice of its
    part, so the launch's block is known on both sides and the unmasked tail is convicted."""
    assert _findings(UNPACKED_CHOICE.replace("{mask}", ", mask=offs < n")) == []
    found = _findings(UNPACKED_CHOICE.replace("{mask}", ""))
    assert {f.rule for f in found} == {"KL101", "KL102"}
    assert all(f.evidence["witness"]["BLOCK"] in (128, 1024) for f in found)


def test_a_sentinel_the_caller_leaves_free_is_not_a_witness():
    """``lab != pad_id`` says the kernel expects the pad label: where the wrapper passes a pad of its
    own (``pad_id=-1``) the unmasked read at it is convicted; where the caller chooses any pad, one
    past the table is among the choices, which is no input the kernel is written for."""
    src = (ROOT / "fixtures" / "bounds" / "sentinel_label_bad.py").read_text()
    (found,) = [f for f in _findings(src) if f.rule == "KL101"]
    assert found.evidence["witness"]["pad_id"] == -1
    free = src.replace("pad_id: int = -1)", "pad_id: int)")
    assert free != src and [f for f in _findings(free) if f.rule == "KL101"] == []
