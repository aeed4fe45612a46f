"""KL506: the candidate replaces attributes of torch, time or triton (timers, synchronize)."""

from __future__ import annotations

import libcst as cst

from kernlint.eval.rulebase import EvalRule, nodes_of
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
    summary = "The candidate assigns to an attribute of torch, time or triton (e.g. a timer)."
    docs = """
## What it does
Flags assignments and `setattr` calls whose target is an attribute of `torch`, `time`, `timeit`
or `triton` (other than `torch.backends` flags, see KL509).

## Why is this bad?
Replacing `torch.cuda.synchronize`, `torch.cuda.Event.elapsed_time` or `time.perf_counter`
rewrites the stopwatch itself: the harness reads whatever the candidate wants it to read.

## Example
```python
torch.cuda.synchronize = lambda *a, **k: None
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
    )
    good = (
        '''import torch
import time

start = time.perf_counter()
torch.cuda.synchronize
''',
    )

    def _target(self, module, name):
        return name.startswith(PATCHABLE) and not name.startswith(FLAG_PREFIXES)

    def check(self, module, path):
        for node in nodes_of(module, cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Call):
            if isinstance(node, cst.Call):
                if self.name_of(module, node.func) in ("setattr", "builtins.setattr") and node.args:
                    obj = self.name_of(module, node.args[0].value)
                    if obj and self._target(module, obj + "."):
                        yield self.finding(module, node, path, f"setattr on {obj} patches a library function")
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for tgt in targets:
                if isinstance(tgt, cst.Attribute):
                    name = self.name_of(module, tgt)
                    if self._target(module, name):
                        yield self.finding(module, node, path, f"assignment to {name} patches a library function",
                                           target=name)
