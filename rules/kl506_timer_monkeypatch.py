"""KL506: the candidate replaces attributes of torch, time or triton (timers, synchronize)."""

from __future__ import annotations

import libcst as cst

from kernlint.eval.hack_vocabulary import KERNEL_PRELUDE
from kernlint.eval.rulebase import CandidateModule, EvalRule, nodes_of
from kernlint.rule import Confirmation

PATCHABLE = ("torch.", "time.", "triton.", "timeit.")
#: handled by KL509 (global precision flags)
FLAG_PREFIXES = ("torch.backends.",)


class TimerMonkeypatch(EvalRule):
    code = "KL506"
    name = "timer-monkeypatch"
    confirm = Confirmation(
        "eval",
        check="identity of timing functions after import and forward",
        threshold="changed",
        description="kernlint eval compares time.perf_counter, torch.cuda.synchronize, "
        "torch.cuda.Event and friends with the originals after the candidate ran.",
    )
    summary = "The candidate assigns to an attribute of torch, time or triton (e.g. a timer), by any name."
    docs = """
## What it does
Flags assignments and `setattr` calls whose target is an attribute of `torch`, `time`, `timeit`
or `triton` (other than `torch.backends` flags, see KL509), also when the object is reached through
`getattr` with a constant or assembled name, `__import__`, `importlib.import_module`,
`sys.modules[...]` or a local alias (`cu = getattr(torch, "cuda")`), when the attribute's name is
assembled from pieces (`"elapsed" + "_time"`), and writes into such an object's `__dict__`.

## Why is this bad?
Replacing `torch.cuda.synchronize`, `torch.cuda.Event.elapsed_time` or `time.perf_counter`
rewrites the stopwatch itself: the harness reads whatever the candidate wants it to read.

## Example
```python
torch.cuda.synchronize = lambda *a, **k: None
setattr(getattr(torch, "cuda").Event, "elapsed" + "_time", lambda self, end: 0.001)
```

## Use instead
Never modify library or timing functions from a kernel module.
"""
    bad = (
        '''import torch
import time

torch.cuda.synchronize = lambda *args, **kwargs: None  # expect: KL506
setattr(time, "perf_counter", lambda: 0.0)  # expect: KL506
''',
        '''import torch

torch.cuda.Event.elapsed_time = lambda self, end: 0.001  # expect: KL506
''',
        '''import importlib
import torch


def shrink(self, end):
    return 0.001


def install():
    cu = getattr(torch, "cuda")
    event = getattr(cu, "Ev" + "ent")
    name = "elapsed" + "_time"
    setattr(event, name, shrink)  # expect: KL506
    setattr(getattr(torch, "cuda").Event, f"{name}", shrink)  # expect: KL506
    cu.synchronize = lambda: None  # expect: KL506
    importlib.import_module("time").perf_counter = lambda: 0.0  # expect: KL506
    vars(cu)["".join(["synchro", "nize"])] = lambda: None  # expect: KL506
    globals()["torch"].cuda.Event.__dict__["record"] = None  # expect: KL506
''',
    )
    good = (
        '''import torch
import time

start = time.perf_counter()
torch.cuda.synchronize
''',
        KERNEL_PRELUDE + '''
def timed(fn):
    cu = getattr(torch, "cuda")
    dtype = getattr(torch, "float" + "32")
    start, end = cu.Event(enable_timing=True), cu.Event(enable_timing=True)
    start.record()
    out = fn().to(dtype)
    end.record()
    cu.synchronize()
    stats = {}
    stats["ms"] = start.elapsed_time(end)
    setattr(out, "meta", stats)
    return out
''',
    )

    def _patchable(self, name: str) -> bool:
        return name.startswith(PATCHABLE) and not name.startswith(FLAG_PREFIXES)

    def _dict_owner(self, facts, node: cst.BaseExpression) -> str:
        """The object whose namespace ``node`` is (``X.__dict__``, ``vars(X)``), or ""."""
        if isinstance(node, cst.Attribute) and node.attr.value == "__dict__":
            return facts.target_of(node.value)
        if (isinstance(node, cst.Call) and facts.name_of(node.func) in ("vars", "builtins.vars")
                and len(node.args) == 1):
            return facts.target_of(node.args[0].value)
        return ""

    def _written(self, facts, tgt: cst.BaseExpression) -> str:
        """The dotted name an assignment target rebinds, or ""."""
        if isinstance(tgt, cst.Attribute):
            return facts.target_of(tgt) or facts.name_of(tgt)
        if isinstance(tgt, cst.Subscript) and len(tgt.slice) == 1 and isinstance(tgt.slice[0].slice, cst.Index):
            owner = self._dict_owner(facts, tgt.value)
            if owner:
                return f"{owner}.{facts.const_str(tgt.slice[0].slice.value) or '<computed name>'}"
        return ""

    def check(self, candidate: CandidateModule):
        module = candidate.module
        facts = self.facts(module)
        for node in nodes_of(module, cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Call):
            if isinstance(node, cst.Call):
                args = [a.value for a in node.args if a.keyword is None]
                if facts.name_of(node.func) in ("setattr", "builtins.setattr") and args:
                    obj = facts.target_of(args[0])
                    attr = facts.const_str(args[1]) if len(args) > 1 else None
                    name = f"{obj}.{attr or '<computed name>'}"
                    if obj and self._patchable(obj + ".") and (attr is None or self._patchable(name)):
                        yield self.finding(candidate, node, f"setattr rebinds {name}, a library function",
                                           target=name)
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for tgt in targets:
                name = self._written(facts, tgt)
                if self._patchable(name):
                    yield self.finding(candidate, node, f"assignment to {name} patches a library function",
                                       target=name)
