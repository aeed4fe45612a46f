"""The interpreter tells the rules what produced a value through typed facts (no strings to parse)."""

import libcst as cst

from kernlint.source.discover import discover
from kernlint.source.interpret import interpret
from kernlint.source.values import (
    Elected, Fact, LoopCounter, PaddedAxis, PaddingSide, ProgramAxis, ScalarLoad,
)


def _state(text: str):
    module = cst.parse_module(text)
    info = discover("example.py", text, module)
    (kernel,) = info.kernels
    return interpret(info, kernel)


KERNEL = '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, idx_ptr, out_ptr, counter_ptr, n, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * stride + cols, mask=cols < n, other=0.0)
    row = tl.load(idx_ptr + pid)
    m = tl.max(x[None, :], axis=1)
    ticket = tl.atomic_add(counter_ptr, 1)
    if ticket == 0:
        tl.store(out_ptr + row * stride, m)
'''


def test_masked_load_and_reduction_facts():
    state = _state(KERNEL)
    (red,) = state.reductions
    # `x[None, :]` moves the padded axis from -1 of a vector to -1 of a matrix (still the last)
    assert red.arg.facts_of(PaddedAxis) == [PaddedAxis(-1)]
    assert Fact.PAD_ZERO in red.arg.facts and Fact.PAD_UNDEFINED not in red.arg.facts
    value = next(a for a in state.accesses if a.kind == "store").value
    assert Fact.REDUCED in value.facts and not value.facts_of(PaddedAxis)


def test_scalar_load_and_elected_facts():
    state = _state(KERNEL)
    index_load = state.accesses[1]
    assert state.index_loads[index_load.node] == {"stride"}
    store = next(a for a in state.accesses if a.kind == "store")
    assert ScalarLoad(index_load.node) in store.ptr.facts
    (guard,) = store.guards
    assert guard.facts_of(Elected) == [Elected(frozenset({0, 1, 2}))]  # one counter for every program


def test_padding_side_of_a_prefix_mask():
    x = _state(KERNEL).env["x"]  # `cols < n` keeps a prefix: the padding trails the real lanes
    assert PaddingSide(-1, trailing=True) in x.facts and PaddingSide(-1, trailing=False) not in x.facts


MOVING = '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, out_ptr, n, K, BLOCK: tl.constexpr):
    pid = tl.program_id(1)
    rows = pid * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        acc += tl.load(x_ptr + rows + k, mask=rows < n)
    for j in range(K // BLOCK):
        acc += tl.load(x_ptr + rows + j * BLOCK)
    tl.store(out_ptr + rows, acc, mask=rows < n)
'''


def test_index_sources_are_typed():
    state = _state(MOVING)
    first, second, store = state.accesses
    assert state.env["pid"].index == {ProgramAxis(1)}
    ((_, lane),) = first.ptr.lanes
    assert lane.shift == {ProgramAxis(1), LoopCounter("k")}
    # a loop that stops at the last whole block moves the block but never past the tensor
    ((_, lane),) = second.ptr.lanes
    assert lane.shift == {ProgramAxis(1), LoopCounter("j", exact=True)}
    ((_, lane),) = store.ptr.lanes
    assert lane.shift == {ProgramAxis(1)}
    assert str(ProgramAxis(1)) == "program_id axis 1" and str(LoopCounter("k")) == "loop counter k"


def test_no_string_facts_on_the_fixtures(root):
    seen = moved = 0
    for path in sorted((root / "fixtures" / "triton").glob("*.py")):
        text = path.read_text()
        module = cst.parse_module(text)
        info = discover(str(path), text, module)
        for kernel in info.kernels:
            state = interpret(info, kernel)
            vals = [a.ptr for a in state.accesses] + [r.arg for r in state.reductions] + [b.cond for b in state.branches]
            for val in vals:
                assert not any(isinstance(f, str) for f in val.facts), (path, val.facts)
                sources = [*val.index, *(s for _, lane in val.lanes for s in lane.shift)]
                assert all(isinstance(s, (ProgramAxis, LoopCounter)) for s in sources), (path, sources)
                moved += bool(sources)
                seen += bool(val.facts)
    assert seen > 50 and moved > 50


HELPERS = '''
import triton
import triton.language as tl

@triton.jit
def _peak(v):
    return tl.max(v, axis=0)

@triton.jit
def _own_peak(p, n, BLOCK: tl.constexpr):
    c = tl.arange(0, BLOCK)
    return tl.max(tl.load(p + c, mask=c < n, other=0.0), axis=0)

@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + c, mask=c < n, other=0.0)
    tl.store(out_ptr, _peak(x) + _peak(x) + _own_peak(x_ptr, n, BLOCK))
'''


def test_helper_reductions_follow_the_callers_values_and_are_reported_once():
    from kernlint import catalogue
    from kernlint.model import Phase
    from kernlint.source.phase import lint_text

    module = cst.parse_module(HELPERS)
    info = discover("example.py", HELPERS, module)
    state = interpret(info, info.discovered("k"))
    peaks = [r for r in state.reductions if r.helper == "_peak"]
    assert len(peaks) == 2 and all(PaddedAxis(-1) in r.arg.facts for r in peaks)
    # (a helper's own reduction judged as its own kernel is not reported again from the caller)
    rules = [r() for r in catalogue.all_rules().values() if r.phase is Phase.SOURCE and r.code == "KL105"]
    result, _ = lint_text("example.py", HELPERS, rules)
    found = sorted((f.span.line, "inlined from `k`" in f.message) for f in result.findings)
    assert found == [(7, True), (12, False)]
