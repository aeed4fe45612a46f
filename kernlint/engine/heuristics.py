"""What ``@triton.heuristics`` says of a kernel's compile-time values, as relations between its parameters.

``@triton.heuristics({"EVEN_M": lambda args: args["M"] % args["BLOCK_M"] == 0})`` sets ``EVEN_M`` at
every launch from the launch's own arguments (and the config's): ``EVEN_M == (M % BLOCK_M == 0)``
holds in every run of the kernel, whatever launches it. A flag so defined is not a choice the caller
makes under a contract the engine cannot see; it says what the sizes are.

Read: a dict literal of lambdas of one parameter whose body the kernel's evaluator follows once each
``args["name"]`` is the kernel's parameter ``name``. Left out (the name stays a free compile-time
value): a body that reads anything else through its parameter, a pointer parameter, or ``None`` (a
pointer's presence, ``args["bias"] is not None``, is the caller's to say).
"""

from __future__ import annotations

import libcst as cst

from kernlint.source.names import heuristics_values


def definitions(node: cst.FunctionDef, resolve) -> dict[str, tuple[str, cst.BaseExpression]]:
    """Each name a heuristics decorator of the kernel computes with a lambda of one parameter -> that
    parameter and the lambda's body (``resolve``: the module's dotted name of a decorator's callee)."""
    out: dict = {}
    for name, fn in heuristics_values(node, resolve).items():
        if isinstance(fn, cst.Lambda) and len(fn.params.params) == 1 \
                and fn.params.star_arg in (None, cst.MaybeSentinel.DEFAULT):
            out[name] = (fn.params.params[0].name.value, fn.body)
    return out


class _Arguments(cst.CSTTransformer):
    """``args["name"]`` -> ``name`` for the kernel's parameters; anything else read through ``args``,
    a pointer, or ``None`` marks the body unreadable."""

    def __init__(self, parameter: str, params: set[str], pointers: set[str]):
        self.parameter, self.params, self.pointers = parameter, params, pointers
        self.unreadable = False

    def visit_Subscript(self, node) -> bool:
        return not (isinstance(node.value, cst.Name) and node.value.value == self.parameter)

    def leave_Subscript(self, original, updated):
        if isinstance(updated.value, cst.Name) and updated.value.value == self.parameter:
            index = updated.slice[0].slice if len(updated.slice) == 1 else None
            key = index.value if isinstance(index, cst.Index) else None
            if isinstance(key, cst.SimpleString) and key.evaluated_value in self.params \
                    and key.evaluated_value not in self.pointers:
                return cst.Name(key.evaluated_value)
            self.unreadable = True
        return updated

    def leave_Name(self, original, updated):
        if updated.value in (self.parameter, "None"):
            self.unreadable = True
        return updated


def readable_body(parameter: str, body: cst.BaseExpression, params: set[str], pointers: set[str]):
    """The lambda's body with each ``args["name"]`` made the parameter ``name``; None where it reads
    anything the engine cannot relate to the kernel's own parameters."""
    reader = _Arguments(parameter, params, pointers)
    out = body.visit(reader)
    return None if reader.unreadable else out
