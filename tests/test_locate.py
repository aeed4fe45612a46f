"""Finding spans computed from the text agree with libcst's PositionProvider on real kernels."""

import json

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from kernlint.engine.run import int32_products
from kernlint.source.discover import discover
from kernlint.source.interpret import interpret
from tests.helpers import source_rules


def _truth(module):
    return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


def _check_file(path, text, rules):
    module = cst.parse_module(text)
    info = discover(path, text, module)
    positions = None
    checked = 0
    for kernel in info.kernels:
        state = interpret(info, kernel)
        products = [p.node for p in int32_products(state)]  # where KL104 reports
        nodes = [a.node for a in state.accesses] + [r.node for r in state.reductions] + products
        for node in nodes:
            # (a node of a helper the kernel inlines is placed in the helper, as SourceRule.finding does)
            owner = info.owner(node)
            span = (owner.locator.span(node) if owner is not None and owner is not kernel
                    else kernel.locator.span(node, state.anchors.get(id(node))))
            positions = positions or _truth(module)
            pos = positions[node]
            assert (span.line, span.col, span.end_line, span.end_col) == (
                pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1), (path, module.code_for_node(node))
            checked += 1
    return checked


def test_fixture_spans(root):
    rules = source_rules()
    checked = sum(_check_file(str(p), p.read_text(), rules) for p in sorted((root / "fixtures" / "triton").glob("*.py")))
    assert checked > 20


def test_corpus_spans(corpus):
    tasks = json.loads((corpus / "TritonBench_G_v1.json").read_text())
    rules = source_rules()
    checked = sum(_check_file(f"tb{i}.py", t["output"], rules) for i, t in enumerate(tasks[::4]))
    assert checked > 200


def test_a_repeated_expression_is_located_in_a_kernel_holding_a_with_statement():
    text = '''
import triton
import triton.language as tl


@triton.jit
def rows(X, Y, W, lock, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + cols, mask=cols < N)
    with tl.static_range(1):
        pass
    tl.store(Y + row * stride + cols, x, mask=cols < N)
    x = tl.load(X + row * stride + cols, mask=cols < N)
    tl.store(Y + row * stride + cols, x, mask=cols < N)
'''
    assert _check_file("with.py", text, source_rules()) >= 4
