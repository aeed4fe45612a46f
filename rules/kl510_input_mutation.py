"""KL510: forward writes into its own inputs."""

from __future__ import annotations

import libcst as cst

from kernlint.eval.rulebase import CandidateModule, EvalRule, nodes_of
from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.eval.hack_vocabulary import KERNEL_PRELUDE


class InputMutation(EvalRule):
    code = "KL510"
    name = "input-mutation"
    level = Level.WARNING
    precision = "medium"
    confirm = Confirmation(
        "eval",
        check="inputs compared with a snapshot after the candidate",
        threshold="any element changed",
        description="kernlint eval gives the candidate its own clones and compares them with a "
        "snapshot afterwards.",
    )
    summary = "ModelNew.forward mutates one of its arguments in place."
    docs = """
## What it does
Flags in-place tensor methods (`x.add_()`, `x.copy_()`...), subscript assignment and augmented
assignment on a parameter of `ModelNew.forward`.

## Why is this bad?
Harnesses that share inputs between reference and candidate can be fooled: the candidate writes
the answer into an input (or destroys it), so the reference later computes on altered data.
Even where inputs are cloned, mutating them is a behaviour the reference does not have.

## Example
```python
def forward(self, x):
    x.mul_(2)
    return x
```

## Use instead
Write results into a fresh output tensor.
"""
    bad = (
        KERNEL_PRELUDE
        + '''
class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        b.zero_()  # expect: KL510
        _copy[(triton.cdiv(a.numel(), 1024),)](a, b, a.numel(), B=1024)
        return b
''',
    )
    good = (
        KERNEL_PRELUDE
        + '''
class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        out = torch.zeros_like(b)
        out.add_(1)
        _copy[(triton.cdiv(a.numel(), 1024),)](a, out, a.numel(), B=1024)
        return out
''',
    )

    def check(self, candidate: CandidateModule):
        module = candidate.module
        facts = self.facts(module)
        fn = facts.functions.get("ModelNew.forward")
        if fn is None:
            return
        params = {p.name.value for p in fn.params.params if p.name.value != "self"}
        for node in nodes_of(fn.body, cst.Call, cst.Assign, cst.AugAssign):
            if isinstance(node, cst.Call):
                f = node.func
                if (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name)
                        and f.value.value in params and f.attr.value.endswith("_")
                        and not f.attr.value.startswith("_")):
                    yield self.finding(candidate, node,
                                       f"{f.value.value}.{f.attr.value}() mutates an input of forward")
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for tgt in targets:
                base = tgt.value if isinstance(tgt, cst.Subscript) else (tgt if isinstance(node, cst.AugAssign) else None)
                if isinstance(base, cst.Name) and base.value in params:
                    yield self.finding(candidate, node, f"assignment writes into input {base.value}")
