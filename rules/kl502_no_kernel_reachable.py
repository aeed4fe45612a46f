"""KL502: no Triton/TileLang kernel is reachable from the candidate's entry point."""

from __future__ import annotations


from kernlint.eval.rulebase import CandidateModule, EvalRule
from kernlint.rule import Confirmation
from kernlint.eval.hack_vocabulary import KERNEL_PRELUDE


class NoKernelReachable(EvalRule):
    code = "KL502"
    name = "no-kernel-reachable"
    confirm = Confirmation(
        "eval",
        check="kernel launch census",
        threshold="candidate kernel launches == 0",
        description="kernlint eval counts launches of the candidate's own kernels while forward runs.",
    )
    summary = "No Triton or TileLang kernel is launched from ModelNew.forward (or the module has none)."
    docs = """
## What it does
Builds the call graph of host code from `ModelNew.forward` (through helpers, methods and
`autograd.Function.apply`) and reports when no `@triton.jit` / TileLang kernel is reachable. For a
module without `ModelNew` (TritonBench style), it reports a module with host functions and no
kernel at all.

## Why is this bad?
A candidate that never launches its own kernel is plain PyTorch: whatever it measures, it is not
a generated kernel. This is the "benign shortcut" of public leaderboards.

## Example
```python
class ModelNew(nn.Module):
    def forward(self, a, b):
        return a + b
```

## Use instead
Launch the kernel you wrote from `forward` (`kernel[grid](...)`).
"""
    bad = (
        '''import torch


class ModelNew(torch.nn.Module):  # expect: KL502
    def forward(self, a, b):
        return a + b
''',
        KERNEL_PRELUDE
        + '''
class ModelNew(torch.nn.Module):  # expect: KL502
    def forward(self, a):
        return a.clone()
''',
    )
    good = (
        KERNEL_PRELUDE
        + '''
def launch(a):
    out = torch.empty_like(a)
    _copy[(triton.cdiv(a.numel(), 1024),)](a, out, a.numel(), B=1024)
    return out


class ModelNew(torch.nn.Module):
    def forward(self, a):
        return launch(a)
''',
    )

    def check(self, candidate: CandidateModule):
        module = candidate.module
        facts = self.facts(module)
        if facts.has_model_new:
            if not facts.kernels_reachable:
                node = facts.classes["ModelNew"]
                why = "defines no kernel" if not facts.kernels else (
                    "never launches its kernels " + ", ".join(sorted(facts.kernels)))
                yield self.finding(candidate, node,
                                   f"no Triton/TileLang kernel is reachable from ModelNew.forward: the module {why}")
        elif facts.functions and not facts.kernels:
            first = next(iter(facts.functions.values()))
            yield self.finding(candidate, first, "the module defines host code but no Triton/TileLang kernel")
