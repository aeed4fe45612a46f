"""KL501: the operation under test is computed by a torch/library call instead of a kernel."""

from __future__ import annotations

import libcst as cst

from kernlint.eval.rulebase import CandidateModule, EvalRule
from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.eval.hack_vocabulary import KERNEL_PRELUDE, METHOD_COMPUTE, NN_NOT_COMPUTE, is_torch_compute


class LibraryFallback(EvalRule):
    code = "KL501"
    name = "library-fallback"
    level = Level.WARNING
    precision = "medium"
    confirm = Confirmation(
        "eval",
        check="torch.profiler kernel census",
        threshold="library kernel time share > 0.5",
        description="The census of launched kernels shows library (cuBLAS/cuDNN/aten) kernels "
        "doing most of the work.",
    )
    summary = "A torch or library op computes (part of) the result on the path from forward."
    docs = """
## What it does
Flags calls to torch compute ops (`torch.matmul`, `torch.nn.functional.*`, `x.softmax()`, the `@`
operator, `nn.Linear`/`nn.Conv2d` submodules...) in host code reachable from `ModelNew.forward`.

## Why is this bad?
The task is to write the kernel. A candidate that hands the operation to cuBLAS or aten is timed as
"the candidate" while the library does the work: the speedup measures the library, not the
kernel. Small glue (allocation, views) is fine; computation is not.

## Example
```python
def forward(self, a, b):
    return torch.matmul(a, b)
```

## Use instead
Launch a Triton/TileLang kernel that computes the result; keep torch for allocation and views.
"""
    bad = (
        KERNEL_PRELUDE
        + '''
class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        _copy[(1,)](a, out, a.numel(), B=1024)
        return torch.matmul(out, b)  # expect: KL501
''',
        KERNEL_PRELUDE
        + '''
class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, a):
        out = torch.empty_like(a)
        _copy[(1,)](a, out, a.numel(), B=1024)
        return self.proj(out) @ out  # expect: KL501
''',
    )
    good = (
        KERNEL_PRELUDE
        + '''
class ModelNew(torch.nn.Module):
    def forward(self, a):
        out = torch.empty_like(a)
        _copy[(triton.cdiv(a.numel(), 1024),)](a, out, a.numel(), B=1024)
        return out.view(a.shape)
''',
    )

    def check(self, candidate: CandidateModule):
        module = candidate.module
        facts = self.facts(module)
        flagged = set()
        for qual, node in self.reachable_nodes(module, cst.Call, cst.BinaryOperation):
            owner = qual.split(".")[0] if "." in qual else None
            if isinstance(node, cst.BinaryOperation):
                if isinstance(node.operator, cst.MatrixMultiply):
                    yield self.finding(candidate, node, "`@` computes with the torch library")
                continue
            name = self.name_of(module, node.func)
            what = None
            if is_torch_compute(name):
                what = name
            elif isinstance(node.func, cst.Attribute) and node.func.attr.value in METHOD_COMPUTE:
                what = f".{node.func.attr.value}()"
            elif (
                owner
                and isinstance(node.func, cst.Attribute)
                and isinstance(node.func.value, cst.Name)
                and node.func.value.value == "self"
            ):
                ctor = facts.submodules.get(owner, {}).get(node.func.attr.value)
                if ctor and ctor not in NN_NOT_COMPUTE:
                    what = f"self.{node.func.attr.value} ({ctor})"
            if what and id(node) not in flagged:
                flagged.add(id(node))
                yield self.finding(
                    candidate, node,
                    f"{what} computes with the torch library on the path from forward",
                    call=what,
                )
