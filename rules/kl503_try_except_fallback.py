"""KL503: a try/except on the forward path falls back to another implementation."""

from __future__ import annotations

import libcst as cst

from kernlint.eval.rulebase import CandidateModule, EvalRule, nodes_of
from kernlint.eval.hack_vocabulary import KERNEL_PRELUDE


class TryExceptFallback(EvalRule):
    code = "KL503"
    name = "try-except-fallback"
    summary = "An exception handler on the forward path computes the result another way."
    docs = """
## What it does
Flags `except` handlers in host code reachable from `ModelNew.forward` whose body calls torch or
returns a value.

## Why is this bad?
When the kernel fails to compile or crashes, the handler quietly returns the reference answer (or
a torch computation): the candidate "passes" while its kernel never ran, and the timing is the
fallback's.

## Example
```python
try:
    return my_kernel_launch(x)
except Exception:
    return torch.softmax(x, -1)
```

## Use instead
Let errors propagate; a kernel that fails must fail the evaluation.
"""
    bad = (
        KERNEL_PRELUDE
        + '''
class ModelNew(torch.nn.Module):
    def forward(self, a):
        out = torch.empty_like(a)
        try:
            _copy[(1,)](a, out, a.numel(), B=1024)
        except Exception:  # expect: KL503
            out = a.clone()
        return out
''',
    )
    good = (
        KERNEL_PRELUDE
        + '''
class ModelNew(torch.nn.Module):
    def forward(self, a):
        out = torch.empty_like(a)
        _copy[(triton.cdiv(a.numel(), 1024),)](a, out, a.numel(), B=1024)
        return out
''',
    )

    def check(self, candidate: CandidateModule):
        module = candidate.module
        for _qual, handler in self.reachable_nodes(module, cst.ExceptHandler):
            calls = nodes_of(handler.body, cst.Call)
            torch_calls = [c for c in calls if self.name_of(module, c.func).startswith("torch")]
            method_calls = [c for c in calls if isinstance(c.func, cst.Attribute)]
            returns = nodes_of(handler.body, cst.Return)
            raises = nodes_of(handler.body, cst.Raise)
            if raises and not returns:
                continue
            if torch_calls or returns or method_calls:
                yield self.finding(candidate, handler,
                                   "this except handler computes a fallback result instead of failing")
