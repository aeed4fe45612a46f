"""KL504: the candidate creates or switches CUDA streams."""

from __future__ import annotations

import libcst as cst

from kernlint.eval.rulebase import CandidateModule, EvalRule, nodes_of
from kernlint.rule import Confirmation
from kernlint.eval.hack_vocabulary import KERNEL_PRELUDE

STREAM_CALLS = {
    "torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.set_stream", "torch.cuda.ExternalStream",
    "torch.cuda.streams.Stream", "torch.Stream", "torch.cuda.StreamContext", "torch.stream",
    "torch.cuda.graphs.graph", "torch.cuda.graph",
}


class SideStream(EvalRule):
    code = "KL504"
    name = "side-stream"
    confirm = Confirmation(
        "eval",
        check="host wall clock vs CUDA events",
        threshold="wall/event > 1.5",
        description="kernlint eval times forward with events on the current stream and with a "
        "device-wide synchronize; work hidden on another stream shows as a gap.",
    )
    summary = "The candidate creates or switches to another CUDA stream."
    docs = """
## What it does
Flags `torch.cuda.Stream(...)`, `with torch.cuda.stream(...)`, `torch.cuda.set_stream` and
similar calls anywhere in the candidate module.

## Why is this bad?
Harnesses record CUDA events on the current stream. Work launched on a side stream is not ordered
with those events, so the timer stops before the kernel finishes: a fake speedup of 10-100x.

## Example
```python
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    kernel[grid](x, out)
```

## Use instead
Launch on the current stream (the default); the harness owns stream management.
"""
    bad = (
        '''import torch

side = torch.cuda.Stream()  # expect: KL504
''',
        KERNEL_PRELUDE
        + '''import torch as t


def launch(x, side):
    with t.cuda.stream(side):  # expect: KL504
        return x * 2
''',
    )
    good = (
        '''import torch

current = torch.cuda.current_stream
''',
    )

    def check(self, candidate: CandidateModule):
        module = candidate.module
        for call in nodes_of(module, cst.Call):
            name = self.name_of(module, call.func)
            if name in STREAM_CALLS:
                yield self.finding(candidate, call, f"{name} moves work off the timed stream", call=name)
