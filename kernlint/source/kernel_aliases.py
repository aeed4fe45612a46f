"""Names a scope binds once, to a kernel or a choice of kernels, so that ``fn[grid](...)`` launches them.

``fn = _fwd_fp16 if x.dtype == torch.float16 else _fwd_fp32`` and then ``fn[grid](...)`` launches one
of the two kernels, with the same arguments: a launch of each. A name the scope binds more than once
is not an alias: ``fn = a`` in one branch and ``fn = b`` in another usually come with arguments bound
in the same branches (``args = (...)``), which a launch of ``a`` must not take from ``b``'s branch.
Nor is a name the scope also binds any other way (a loop target, a parameter, ``with ... as fn``).
A function that does not bind the name reads the module's binding (Python's lookup; a function
nested in another reads only its own binding or the module's here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from kernlint.source.names import bindings, parameters


@dataclass
class ScopeAliases:
    """One scope's aliases (name -> the kernels it may be) and every name it binds."""

    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    bound: set[str] = field(default_factory=set)


def scope_aliases(body, params: set[str], kernels: set[str]) -> ScopeAliases:
    """The aliases of one scope's statements (not those of the functions and classes it defines)."""
    found: dict[str, list] = {}
    for name, node in bindings(body):
        found.setdefault(name, []).append(node)
    out = ScopeAliases(bound=set(found) | params)
    for name, nodes in found.items():
        if len(nodes) != 1 or name in params or name in kernels:
            continue
        choices = _kernel_binding(nodes[0], kernels)
        if choices is not None:
            out.aliases[name] = tuple(dict.fromkeys(sorted(choices)))
    return out


def _kernel_binding(node, kernels: set[str]) -> list[str] | None:
    """The kernels ``name = <kernel or choice of kernels>`` binds its one target to; None for any
    other binding."""
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        target = node.targets[0].target
    elif isinstance(node, cst.AnnAssign) and node.value is not None:
        target = node.target
    else:
        return None
    return kernel_choices(node.value, kernels) if isinstance(target, cst.Name) else None


def kernel_choices(expr: cst.BaseExpression, kernels: set[str]) -> list[str] | None:
    """The kernels an expression may be (a kernel's name, or a conditional expression of them)."""
    if isinstance(expr, cst.Name):
        return [expr.value] if expr.value in kernels else None
    if isinstance(expr, cst.IfExp):
        body, orelse = kernel_choices(expr.body, kernels), kernel_choices(expr.orelse, kernels)
        return body + orelse if body is not None and orelse is not None else None
    return None


def _params(fn: cst.FunctionDef) -> set[str]:
    p = fn.params
    names = {param.name.value for param in parameters(p)}
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names


class ModuleAliases:
    """The aliases of a module's scopes, read once: by the scan of launch sites (:meth:`names`, every
    scope's) and by each scope's launches (:meth:`of`, that scope's)."""

    def __init__(self) -> None:
        self._by_scope: dict[int, ScopeAliases] = {}
        self.module = ScopeAliases()

    @classmethod
    def read(cls, module: cst.Module, source: str, kernels: set[str]) -> "ModuleAliases":
        out = cls()
        if not kernels or not _assigns_a_kernel(source, kernels):
            return out
        from kernlint.facts import function_nodes

        out.module = scope_aliases(module.body, set(), kernels)
        for fn in function_nodes(module):
            if isinstance(fn.body, cst.IndentedBlock):
                out._by_scope[id(fn)] = scope_aliases(fn.body.body, _params(fn), kernels)
        return out

    def of(self, fn: cst.FunctionDef | None) -> dict[str, tuple[str, ...]]:
        """The aliases a launch in ``fn`` (None: at module level) may read."""
        if fn is None:
            return self.module.aliases
        own = self._by_scope.get(id(fn))
        if own is None:
            return self.module.aliases
        inherited = {n: ks for n, ks in self.module.aliases.items() if n not in own.bound}
        return {**inherited, **own.aliases}

    def names(self) -> dict[str, tuple[str, ...]]:
        """Every scope's aliases together: name -> the kernels it may be in some scope."""
        out: dict[str, list[str]] = {}
        for scope in (self.module, *self._by_scope.values()):
            for name, kernels in scope.aliases.items():
                out.setdefault(name, []).extend(kernels)
        return {name: tuple(dict.fromkeys(ks)) for name, ks in out.items()}


def _assigns_a_kernel(source: str, kernels: set[str]) -> bool:
    """Whether some line assigns to a name a value that names a kernel (a cheap look before reading
    scopes)."""
    pattern = re.compile(r"^[ \t]*\w+[ \t]*=(?!=)[^\n]*\b(?:" + "|".join(map(re.escape, sorted(kernels))) + r")\b", re.M)
    return pattern.search(source) is not None
