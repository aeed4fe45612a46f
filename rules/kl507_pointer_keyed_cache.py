"""KL507: results cached by tensor address (data_ptr) or object identity (id)."""

from __future__ import annotations

import libcst as cst

from kernlint.eval.rulebase import EvalRule, nodes_of
from kernlint.rule import Confirmation
from kernlint.eval.hack_vocabulary import KERNEL_PRELUDE

KEY_METHODS = {"get", "setdefault", "pop", "__contains__", "__getitem__", "__setitem__"}


class PointerKeyedCache(EvalRule):
    code = "KL507"
    name = "pointer-keyed-cache"
    confirm = Confirmation(
        "eval",
        check="same buffer, new values",
        threshold="output matches the old values",
        description="kernlint eval rewrites an input in place (same data_ptr) and checks that the "
        "output follows the new values.",
    )
    summary = "A cache lookup is keyed by data_ptr() or id() of a tensor."
    docs = """
## What it does
Flags `x.data_ptr()` and `id(x)` used as (part of) a key: in a subscript, a dict key, an `in`
test or `.get`/`.setdefault`/`.pop`, directly or through a variable assigned from them.

## Why is this bad?
Harnesses call the candidate repeatedly on the same buffers. A cache keyed by address returns the
first answer forever: timings measure a dictionary lookup, and a buffer refilled with new values
still returns the stale result.

## Example
```python
key = x.data_ptr()
if key in CACHE:
    return CACHE[key]
```

## Use instead
Compute the result on every call. Cache compiled kernels or configurations, not outputs.
"""
    bad = (
        KERNEL_PRELUDE
        + '''CACHE = {}


def forward(x, compute):
    key = (x.data_ptr(), x.shape)
    if key in CACHE:  # expect: KL507
        return CACHE[key]  # expect: KL507
    CACHE[id(x)] = compute(x)  # expect: KL507
    return CACHE[id(x)]  # expect: KL507
''',
    )
    good = (
        KERNEL_PRELUDE
        + '''def aligned(x):
    return x.data_ptr() % 16 == 0
''',
    )

    def _is_ptr_call(self, module, node) -> bool:
        if not isinstance(node, cst.Call):
            return False
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("data_ptr", "_cdata"):
            return True
        return self.name_of(module, node.func) in ("id", "builtins.id")

    def _tainted_names(self, module) -> set[str]:
        names = set()
        for assign in nodes_of(module, cst.Assign):
            if any(self._is_ptr_call(module, c) for c in nodes_of(assign.value, cst.Call)):
                for t in assign.targets:
                    for n in nodes_of(t.target, cst.Name):
                        names.add(n.value)
        return names

    def _keyed(self, module, expr, tainted) -> bool:
        if any(self._is_ptr_call(module, c) for c in nodes_of(expr, cst.Call)):
            return True
        return any(n.value in tainted for n in nodes_of(expr, cst.Name))

    def check(self, module, path):
        tainted = self._tainted_names(module)
        seen = set()
        lines = set()
        candidates: list[tuple[cst.CSTNode, cst.CSTNode]] = []
        for sub in nodes_of(module, cst.Subscript):
            for el in sub.slice:
                candidates.append((sub, el))
        for d in nodes_of(module, cst.DictElement):
            candidates.append((d, d.key))
        for cmp in nodes_of(module, cst.Comparison):
            if any(isinstance(t.operator, (cst.In, cst.NotIn)) for t in cmp.comparisons):
                candidates.append((cmp, cmp.left))
        for call in nodes_of(module, cst.Call):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in KEY_METHODS and call.args:
                candidates.append((call, call.args[0].value))
        pos = None
        for node, key in candidates:
            if id(node) in seen or not self._keyed(module, key, tainted):
                continue
            seen.add(id(node))
            f = self.finding(module, node, path, "a lookup keyed by data_ptr()/id() caches results by address")
            if f.span.line in lines:
                continue
            lines.add(f.span.line)
            yield f
