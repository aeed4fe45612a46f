"""KL508: inputs or results cast to a lower precision on the forward path."""

from __future__ import annotations

import libcst as cst

from kernlint.eval.rulebase import CandidateModule, EvalRule
from kernlint.model import Level
from kernlint.eval.hack_vocabulary import KERNEL_PRELUDE

LOW = {"float16", "half", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
       "float8_e5m2fnuz", "int8"}
AUTOCAST = {"torch.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast",
            "torch.cpu.amp.autocast"}


class PrecisionDowngrade(EvalRule):
    code = "KL508"
    name = "precision-downgrade"
    level = Level.WARNING
    precision = "medium"
    summary = "Host code on the forward path casts to float16/bfloat16/float8 or enables autocast."
    docs = """
## What it does
Flags `.half()`, `.bfloat16()`, `.to(torch.float16)` (and bfloat16/float8/int8) and autocast
contexts in host code reachable from `ModelNew.forward`.

## Why is this bad?
Computing an fp32 problem in half precision halves the bytes moved and uses faster tensor-core
paths: the speedup comes from answering a different, less accurate question, and a loose
tolerance lets it pass.

## Example
```python
return kernel_launch(x.half()).float()
```

## Use instead
Compute in the problem's dtype (accumulate in fp32); lower precision only where the task allows it.
"""
    bad = (
        KERNEL_PRELUDE
        + '''
class ModelNew(torch.nn.Module):
    def forward(self, a):
        a16 = a.half()  # expect: KL508
        out = torch.empty_like(a16)
        _copy[(triton.cdiv(a.numel(), 1024),)](a16, out, a.numel(), B=1024)
        return out.to(torch.float32)
''',
    )
    good = (
        KERNEL_PRELUDE
        + '''
class ModelNew(torch.nn.Module):
    def forward(self, a):
        out = torch.empty_like(a, dtype=torch.float32)
        _copy[(triton.cdiv(a.numel(), 1024),)](a, out, a.numel(), B=1024)
        return out
''',
    )

    def check(self, candidate: CandidateModule):
        module = candidate.module
        for _qual, call in self.reachable_nodes(module, cst.Call):
            name = self.name_of(module, call.func)
            hit = None
            if name in AUTOCAST:
                hit = name
            elif isinstance(call.func, cst.Attribute):
                meth = call.func.attr.value
                if meth in ("half", "bfloat16") and not call.args:
                    hit = f".{meth}()"
                elif meth in ("to", "type"):
                    for arg in call.args:
                        dt = self.name_of(module, arg.value)
                        if dt.startswith("torch.") and dt.split(".", 1)[1] in LOW:
                            hit = f".{meth}({dt})"
            if hit:
                yield self.finding(candidate, call, f"{hit} lowers the precision of the computation", call=hit)
