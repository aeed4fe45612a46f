"""KL509: the candidate flips global precision flags (allow_tf32, matmul precision)."""

from __future__ import annotations

import libcst as cst

from kernlint.eval.rulebase import CandidateModule, EvalRule, nodes_of
from kernlint.rule import Confirmation

FLAG_CALLS = {"torch.set_float32_matmul_precision", "torch.set_flush_denormal",
              "torch.backends.cuda.matmul.allow_tf32", "torch.set_default_dtype"}


class GlobalPrecisionFlag(EvalRule):
    code = "KL509"
    name = "global-precision-flag"
    confirm = Confirmation(
        "eval",
        check="torch precision flags before and after the candidate",
        threshold="changed",
        description="kernlint eval snapshots allow_tf32, cudnn flags and the float32 matmul "
        "precision and compares them after the candidate ran.",
    )
    summary = "The candidate changes process-wide precision flags (allow_tf32, matmul precision)."
    docs = """
## What it does
Flags assignments to `torch.backends.*` flags (`cuda.matmul.allow_tf32`, `cudnn.allow_tf32`,
`allow_fp16_reduced_precision_reduction`, `fp32_precision`...) and calls such as
`torch.set_float32_matmul_precision`.

## Why is this bad?
The flags are global: flipping them changes the reference's numerics and speed too (the torch
baseline gets slower or looser), and the candidate's own accuracy is judged under a relaxed regime.

## Example
```python
torch.backends.cuda.matmul.allow_tf32 = True
```

## Use instead
Leave global state alone; choose precision inside your kernel (e.g. `tl.dot(..., input_precision=...)`).
"""
    bad = (
        '''import torch

torch.backends.cuda.matmul.allow_tf32 = True  # expect: KL509
torch.set_float32_matmul_precision("medium")  # expect: KL509
''',
    )
    good = (
        '''import torch

uses_tf32 = torch.backends.cuda.matmul.allow_tf32
''',
    )

    def check(self, candidate: CandidateModule):
        module = candidate.module
        for node in nodes_of(module, cst.Assign, cst.AugAssign, cst.Call):
            if isinstance(node, cst.Call):
                name = self.name_of(module, node.func)
                if name in FLAG_CALLS:
                    yield self.finding(candidate, node, f"{name}(...) changes global precision", call=name)
                elif name in ("setattr",) and node.args and self.name_of(module, node.args[0].value).startswith("torch.backends"):
                    yield self.finding(candidate, node, "setattr on torch.backends changes global flags")
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for tgt in targets:
                name = self.name_of(module, tgt) if isinstance(tgt, cst.Attribute) else ""
                if name.startswith("torch.backends.") or name.startswith("torch._C._set"):
                    yield self.finding(candidate, node, f"assignment to {name} changes a global flag", target=name)
