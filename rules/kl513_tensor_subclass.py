"""KL513: the candidate defines a torch.Tensor subclass or a __torch_function__ override."""

from __future__ import annotations

import libcst as cst

from kernlint.eval.hack_vocabulary import KERNEL_PRELUDE
from kernlint.eval.rulebase import CandidateModule, EvalRule, nodes_of
from kernlint.rule import Confirmation

TENSOR_BASES = {"torch.Tensor", "torch._C.TensorBase", "torch._C._TensorBase",
                "torch.utils._python_dispatch.TorchDispatchMode",
                "torch.overrides.TorchFunctionMode"}
OVERRIDES = {"__torch_function__", "__torch_dispatch__"}
#: calls that turn a plain tensor into an instance of a subclass
SUBCLASS_CALLS = {"torch.Tensor._make_subclass", "torch.Tensor._make_wrapper_subclass",
                  "torch._C._make_subclass"}


class TensorSubclass(EvalRule):
    code = "KL513"
    name = "tensor-subclass"
    confirm = Confirmation(
        "eval",
        check="type of every output",
        threshold="not exactly torch.Tensor",
        description="kernlint eval checks that each output of forward is a plain torch.Tensor before "
        "it is compared or timed.",
    )
    summary = "A torch.Tensor subclass, __torch_function__/__torch_dispatch__ override or dispatch mode."
    docs = """
## What it does
Flags classes deriving from `torch.Tensor` (or `torch._C.TensorBase`, a dispatch or function
mode), classes defining `__torch_function__` or `__torch_dispatch__`, and calls that re-type a
tensor (`x.as_subclass(...)`, `torch.Tensor._make_subclass(...)`).

## Why is this bad?
A forward that returns a tensor subclass can defer the computation: the timed call returns at
once and the work happens when the harness first reads the values (in the comparison, outside the
timer), or an overridden `__eq__`/`allclose` can answer "equal" to anything.

## Example
```python
class Lazy(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        ...
```

## Use instead
Return the plain tensor your kernel wrote.
"""
    bad = (
        KERNEL_PRELUDE
        + '''
from torch import Tensor


class Lazy(Tensor):  # expect: KL513
    pass


class Proxy:  # expect: KL513
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class ModelNew(torch.nn.Module):
    def forward(self, x):
        o = torch.empty_like(x)
        _copy[(1,)](x, o, x.numel(), B=1024)
        return o.as_subclass(Lazy)  # expect: KL513
''',
        '''import torch as t


class Deferred(t.Tensor):  # expect: KL513
    @staticmethod
    def __new__(cls, data):
        return t.Tensor._make_subclass(cls, data)  # expect: KL513
''',
    )
    good = (
        KERNEL_PRELUDE
        + '''

class Launch(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        o = torch.empty_like(x)
        _copy[(1,)](x, o, x.numel(), B=1024)
        return o


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = Launch.apply(x)
        assert isinstance(out, torch.Tensor)
        return out
''',
    )

    def check(self, candidate: CandidateModule):
        module = candidate.module
        facts = self.facts(module)
        for cls in nodes_of(module, cst.ClassDef):
            bases = [facts.target_of(b.value) or facts.name_of(b.value) for b in cls.bases]
            hit = next((b for b in bases if b in TENSOR_BASES), None)
            overrides = sorted({f.name.value for f in cls.body.body if isinstance(f, cst.FunctionDef)} & OVERRIDES)
            if hit:
                yield self.finding(candidate, cls, f"class {cls.name.value} derives from {hit}: an output of it can "
                                   "defer or fake its values", base=hit)
            elif overrides:
                yield self.finding(candidate, cls, f"class {cls.name.value} defines {', '.join(overrides)}: torch "
                                   "operations on it run the candidate's code")
        for call in nodes_of(module, cst.Call):
            name = facts.target_of(call.func) or facts.name_of(call.func)
            if name in SUBCLASS_CALLS or isinstance(call.func, cst.Attribute) and call.func.attr.value == "as_subclass":
                yield self.finding(candidate, call, "re-types a tensor as a subclass")
