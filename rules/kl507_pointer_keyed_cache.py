"""KL507: results cached by tensor address (data_ptr) or object identity (id)."""

from __future__ import annotations

import libcst as cst

from kernlint.eval.rulebase import CandidateModule, EvalRule, nodes_of
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
    summary = "A cache lookup is keyed by data_ptr() or id() of a tensor (or by the tensor itself)."
    docs = """
## What it does
Flags `x.data_ptr()` and `id(x)` used as (part of) a key: in a subscript, a dict key, an `in`
test or `.get`/`.setdefault`/`.pop`, directly or through a variable or an attribute
(`self._key = x.data_ptr()`) assigned from them; an equality test of such an address against one
kept on an attribute (`if x.data_ptr() == self._last_ptr:`); and a dictionary kept on the module or
the instance (`self._cache = {}`) indexed by an input tensor of `ModelNew.forward` itself (a
tensor hashes by identity). Only a container whose values the code returns (directly, or through a
name assigned from a lookup), and an address test whose `if` returns, make a cache of results: state
kept per object and not returned, such as an optimizer's momentum buffer per `id(param)`, is not
reported.

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
        KERNEL_PRELUDE
        + '''
class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self._memo = {}
        self._last_ptr = None
        self._last_out = None

    def run(self, x):
        o = torch.empty_like(x)
        _copy[(triton.cdiv(x.numel(), 1024),)](x, o, x.numel(), B=1024)
        return o

    def forward(self, x, y):
        if x.data_ptr() == self._last_ptr:  # expect: KL507
            return self._last_out
        self._last_ptr = x.data_ptr()
        self._last_out = self.run(x)
        if y in self._memo:  # expect: KL507
            return self._memo[y]  # expect: KL507
        self._memo[y] = self.run(y)  # expect: KL507
        return self._last_out + self._memo.get(y)  # expect: KL507
''',
    )
    good = (
        KERNEL_PRELUDE
        + '''def aligned(x):
    return x.data_ptr() % 16 == 0
''',
        KERNEL_PRELUDE
        + '''
class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self._configs = {}
        self.block = 1024

    def forward(self, x, n):
        o = torch.empty_like(x)
        if o.data_ptr() == x.data_ptr():
            raise ValueError("output aliases the input")
        block = self._configs.setdefault(x.shape[-1], self.block)
        _copy[(triton.cdiv(x.numel(), block),)](x[0], o, x.numel(), B=block)
        return o
''',
        KERNEL_PRELUDE
        + '''
class SGD:
    def __init__(self, params, lr, momentum):
        self.params, self.lr, self.momentum, self.state = list(params), lr, momentum, {}

    def step(self):
        for p in self.params:
            if id(p) not in self.state:
                self.state[id(p)] = torch.zeros_like(p)
            buf = self.state[id(p)]
            _copy[(triton.cdiv(p.numel(), 1024),)](p.grad, buf, p.numel(), B=1024)
            p.data.add_(buf, alpha=-self.lr)
        return None
''',
    )

    def _is_ptr_call(self, module, node) -> bool:
        if not isinstance(node, cst.Call):
            return False
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("data_ptr", "_cdata"):
            return True
        return self.name_of(module, node.func) in ("id", "builtins.id")

    @staticmethod
    def _refs(expr) -> set[str]:
        """The bare names and ``self.x``-style attributes ``expr`` reads."""
        attrs = {id(a.attr) for a in nodes_of(expr, cst.Attribute)}
        out = {n.value for n in nodes_of(expr, cst.Name) if id(n) not in attrs}
        out |= {f"{a.value.value}.{a.attr.value}" for a in nodes_of(expr, cst.Attribute) if isinstance(a.value, cst.Name)}
        return out

    @staticmethod
    def _bound(target) -> set[str]:
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            return {f"{target.value.value}.{target.attr.value}"}
        if isinstance(target, cst.Name):
            return {target.value}
        if isinstance(target, (cst.Tuple, cst.List)):
            return {n for e in target.elements for n in PointerKeyedCache._bound(e.value)}
        return set()

    def _assigned(self, module, assigns) -> tuple[set[str], set[str]]:
        """Names and attributes assigned from an address (data_ptr() or id()), and those assigned a
        dictionary (``{}``, ``dict()``, ``WeakKeyDictionary()``...)."""
        tainted, mappings = set(), set()
        for assign in assigns:
            v = assign.value
            bound = {n for t in assign.targets for n in self._bound(t.target)}
            if any(self._is_ptr_call(module, c) for c in nodes_of(v, cst.Call)):
                tainted |= bound
            if isinstance(v, cst.Dict) or isinstance(v, cst.Call) and self.name_of(module, v.func).rsplit(".", 1)[-1] in (
                    "dict", "OrderedDict", "defaultdict", "WeakKeyDictionary", "WeakValueDictionary"):
                mappings |= bound
        return tainted, mappings

    def _keyed(self, module, expr, tainted) -> bool:
        if any(self._is_ptr_call(module, c) for c in nodes_of(expr, cst.Call)):
            return True
        return bool(self._refs(expr) & tainted)

    def _forward_inputs(self, module) -> set[str]:
        fn = self.facts(module).functions.get("ModelNew.forward")
        if fn is None:
            return set()
        return {p.name.value for p in fn.params.params[1:]} | {p.name.value for p in fn.params.kwonly_params}

    @staticmethod
    def _lookups(nodes):
        """(node, container or None, key) for every keyed access among ``nodes``."""
        for node in nodes:
            if isinstance(node, cst.Subscript):
                for el in node.slice:
                    if isinstance(el.slice, cst.Index):
                        yield node, node.value, el.slice.value
            elif isinstance(node, cst.DictElement):
                yield node, None, node.key
            elif isinstance(node, cst.Comparison):
                for t in node.comparisons:
                    if isinstance(t.operator, (cst.In, cst.NotIn)):
                        yield node, t.comparator, node.left
            elif (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                  and node.func.attr.value in KEY_METHODS and node.args):
                yield node, node.func.value, node.args[0].value

    def _remembered_address(self, module, cmp: cst.Comparison, tainted) -> bool:
        """``x.data_ptr() == self._last_ptr``: an address compared with one kept on an attribute."""
        sides = [cmp.left] + [t.comparator for t in cmp.comparisons
                              if isinstance(t.operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot))]
        if len(sides) < 2:
            return False
        kept = [s for s in sides if self._refs(s) & {t for t in tainted if "." in t}]
        return bool(kept) and any(s is not k and self._keyed(module, s, tainted) for s in sides for k in kept)

    def _returned(self, module, assigns) -> set[str]:
        """Names and attributes whose value a ``return`` hands back, directly or through names
        assigned from them (``out = CACHE[key]; return out``)."""
        out = set()
        for ret in nodes_of(module, cst.Return):
            if ret.value is not None:
                out |= self._refs(ret.value)
        for _ in range(3):
            grown = set(out)
            for assign in assigns:
                if {n for t in assign.targets for n in self._bound(t.target)} & out:
                    grown |= self._refs(assign.value)
            if grown == out:
                break
            out = grown
        return out

    @staticmethod
    def _hit_returns(module) -> set[int]:
        """Comparisons in the test of an ``if`` whose body returns (a hit that skips the work)."""
        out = set()
        for node in nodes_of(module, cst.If):
            if nodes_of(node.body, cst.Return):
                out |= {id(c) for c in nodes_of(node.test, cst.Comparison)}
        return out

    def check(self, candidate: CandidateModule):
        module = candidate.module
        nodes = nodes_of(module, cst.Assign, cst.Subscript, cst.DictElement, cst.Comparison, cst.Call)
        assigns = [n for n in nodes if isinstance(n, cst.Assign)]
        tainted, mappings = self._assigned(module, assigns)
        # state kept by address (an optimizer's buffers per parameter) is not a cache of results:
        # only a container whose values a function returns is
        returned = self._returned(module, assigns)
        inputs = self._forward_inputs(module)
        forward = self.facts(module).functions.get("ModelNew.forward")
        in_forward = {id(n) for n in nodes_of(forward, cst.CSTNode)} if forward is not None else set()
        lines = set()
        hits: list[tuple[cst.CSTNode, str]] = []
        for node, container, key in self._lookups(nodes):
            if container is not None and not self._refs(container) & returned:
                continue
            if self._keyed(module, key, tainted):
                hits.append((node, "a lookup keyed by data_ptr()/id() caches results by address"))
            elif (container is not None and id(node) in in_forward and self._refs(container) & mappings
                  and isinstance(key, cst.Name) and key.value in inputs):
                hits.append((node, f"a dictionary keyed by the input tensor {key.value} (hashed by identity) caches results"))
        hit_returns = self._hit_returns(module)
        for cmp in (n for n in nodes if isinstance(n, cst.Comparison)):
            if id(cmp) in hit_returns and self._remembered_address(module, cmp, tainted):
                hits.append((cmp, "an input's address compared with one kept from an earlier call (a one-entry cache)"))
        for node, message in hits:
            f = self.finding(candidate, node, message)
            if f.span.line not in lines:
                lines.add(f.span.line)
                yield f
