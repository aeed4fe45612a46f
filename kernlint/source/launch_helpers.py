"""Launches through a function that receives the kernel.

``def _launch(kernel, grid, args, constexprs, **options): kernel[grid](*args, **constexprs, **options)``
called as ``_launch(my_kernel, (n,), (x, y), dict(BLOCK=64), num_warps=4)`` launches ``my_kernel``:
the call is read as the helper's launch with each parameter replaced by what the call passes
(``my_kernel[(n,)](x, y, BLOCK=64, num_warps=4)``), a tuple or list passed for ``*args`` spread into
positional arguments and a ``dict(...)`` or ``{...}`` passed for ``**kwargs`` into keywords.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from kernlint.source import names as N


@dataclass(frozen=True)
class LaunchHelper:
    fn: cst.FunctionDef
    #: the parameter the kernel is passed in
    kernel_param: str
    #: the helper's own ``kernel[grid](...)``
    launch: cst.Call
    #: the names the helper assigns (its own variables)
    local_names: frozenset[str]


def find_helpers(functions: dict[str, cst.FunctionDef], subscripted: set[str]) -> dict[str, LaunchHelper]:
    """The module's functions that launch a kernel they receive (``subscripted``: the names the
    text shows as ``name[...](...)``, of which a helper's kernel parameter must be one)."""
    out = {}
    for name, fn in functions.items():
        params = {p.name.value for p in _positional(fn) + list(fn.params.kwonly_params)}
        wanted = params & subscripted
        if not wanted:
            continue
        calls = _subscript_calls(fn.body, wanted)
        if len(calls) == 1:  # several launches in one helper: which one a call makes is not known
            param, call = calls[0]
            out[name] = LaunchHelper(fn, param, call, frozenset(N.assigned_names(fn.body)))
    return out


def launch_through(helper: LaunchHelper, call: cst.Call, kernels: set[str]) -> tuple[str, cst.Call] | None:
    """(kernel name, the launch the helper makes) for a call of ``helper``, or None where the call
    does not pass one of ``kernels`` or cannot be bound to the helper's parameters."""
    bound = _bind(helper.fn, call)
    if bound is None:
        return None
    kernel = N.dotted(bound.get(helper.kernel_param, cst.Name("_")))
    kernel = kernel.rsplit(".", 1)[-1] if kernel else None
    if kernel not in kernels:
        return None
    # the helper's own variables mean nothing where it is called: names no caller binds
    unbound = {name: cst.Name(f"{name}__of_{helper.fn.name.value}") for name in helper.local_names}
    launch = helper.launch.visit(_Substitute({**unbound, **bound}))
    if not isinstance(launch, cst.Call) or not isinstance(launch.func, cst.Subscript):
        return None
    args = []
    for arg in launch.args:
        args.extend(_spread(arg))
    return kernel, launch.with_changes(func=launch.func.with_changes(value=cst.Name(kernel)), args=args)


def _positional(fn: cst.FunctionDef) -> list[cst.Param]:
    return [*fn.params.posonly_params, *fn.params.params]


def _bind(fn: cst.FunctionDef, call: cst.Call) -> dict[str, cst.BaseExpression] | None:
    """Each parameter's expression at the call (a default where the call passes none); the extra
    keywords, as a ``dict(...)``, for a ``**kwargs`` parameter. None where the call spreads its own
    arguments or misses a parameter."""
    found = N.call_arguments(fn, call)
    if found is None:
        return None
    bound, extra = found
    positional = _positional(fn)
    for p in positional + list(fn.params.kwonly_params):
        if p.name.value not in bound:
            if p.default is None:
                return None
            bound[p.name.value] = p.default
    star_kwarg = fn.params.star_kwarg
    if isinstance(star_kwarg, cst.Param):
        bound[star_kwarg.name.value] = cst.Call(cst.Name("dict"), [a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                                                                   for a in extra])
    elif extra:
        return None
    return bound


def _spread(arg: cst.Arg) -> list[cst.Arg]:
    """``*(a, b)`` as ``a, b``; ``**dict(k=v)`` and ``**{"k": v}`` as ``k=v``; any other argument as it is."""
    plain = cst.MaybeSentinel.DEFAULT
    value = arg.value
    if arg.star == "*" and isinstance(value, (cst.Tuple, cst.List)) and not any(
            isinstance(e, cst.StarredElement) for e in value.elements):
        return [cst.Arg(e.value, comma=plain) for e in value.elements]
    if arg.star == "**":
        if (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict"
                and all(a.keyword is not None and not a.star for a in value.args)):
            return [cst.Arg(a.value, keyword=a.keyword, equal=a.equal, comma=plain) for a in value.args]
        if isinstance(value, cst.Dict) and all(
                isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                and e.key.evaluated_value.isidentifier() for e in value.elements):
            return [cst.Arg(e.value, keyword=cst.Name(e.key.evaluated_value), comma=plain) for e in value.elements]
    return [arg.with_changes(comma=plain)]


def _subscript_calls(body: cst.BaseSuite, names: set[str]) -> list[tuple[str, cst.Call]]:
    """``name[...](...)`` calls of the given names that are the whole value of a statement
    (``kernel[grid](...)``, ``return kernel[grid](...)``), in the statements of ``body`` and of the
    blocks nested in it (not in nested functions or classes)."""
    found = []
    for line in N.statement_lines(body):
        for small in line.body if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ():
            value = getattr(small, "value", None)
            if (isinstance(value, cst.Call) and isinstance(value.func, cst.Subscript)
                    and isinstance(value.func.value, cst.Name) and value.func.value.value in names):
                found.append((value.func.value.value, value))
    return found


class _Substitute(cst.CSTTransformer):
    """Each parameter's name (where it is read, not a keyword's or an attribute's name) replaced
    by its expression at the call."""

    def __init__(self, bound: dict[str, cst.BaseExpression]) -> None:
        self.bound = bound

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # its own parameters may shadow the helper's

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.bound.get(original.value, updated)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)
