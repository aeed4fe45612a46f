"""One libcst pass over a candidate module collecting what the anti-cheat rules need.

The facts: import aliases (``F`` -> ``torch.nn.functional``), the GPU kernels the module defines
(``@triton.jit`` and friends, ``@T.prim_func``/``@tilelang.jit``), the host functions and methods,
and which of them are reachable from the entry point (``ModelNew.forward``; for modules without a
``ModelNew`` every top-level host function and class counts as an entry point).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

KERNEL_DECORATORS = {
    "triton.jit",
    "triton.autotune",
    "triton.heuristics",
    "triton.runtime.jit",
    "triton.language.jit",
    "triton.experimental.gluon.jit",
    "tilelang.jit",
    "tilelang.language.prim_func",
    "tvm.script.tir.prim_func",
}


def dotted(node: cst.BaseExpression, aliases: dict[str, str] | None = None) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, the first part resolved through ``aliases``."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Call):  # e.g. torch.cuda.Stream().wait_stream -> treat callee
        inner = dotted(node.func, aliases)
        if inner is None:
            return None
        parts.append(inner + "()")
        return ".".join(reversed(parts))
    if not isinstance(node, cst.Name):
        return None
    head = node.value
    if aliases and head in aliases:
        head = aliases[head]
    parts.append(head)
    return ".".join(reversed(parts))


def _decorator_name(dec: cst.Decorator, aliases: dict[str, str]) -> str | None:
    expr = dec.decorator
    if isinstance(expr, cst.Call):
        expr = expr.func
    return dotted(expr, aliases)


@dataclass
class ModuleFacts:
    aliases: dict[str, str] = field(default_factory=dict)
    kernels: set[str] = field(default_factory=set)
    #: qualified name ("f" or "Class.method") -> definition, host code only
    functions: dict[str, cst.FunctionDef] = field(default_factory=dict)
    classes: dict[str, cst.ClassDef] = field(default_factory=dict)
    #: class name -> {attribute: dotted constructor} for ``self.attr = torch.nn.X(...)`` in __init__
    submodules: dict[str, dict[str, str]] = field(default_factory=dict)
    has_model_new: bool = False
    reachable: set[str] = field(default_factory=set)
    kernels_reachable: set[str] = field(default_factory=set)

    def reachable_functions(self) -> list[tuple[str, cst.FunctionDef]]:
        return [(q, f) for q, f in self.functions.items() if q in self.reachable]


def _is_kernel(fn: cst.FunctionDef, aliases: dict[str, str]) -> bool:
    for dec in fn.decorators:
        name = _decorator_name(dec, aliases) or ""
        if name in KERNEL_DECORATORS or name.endswith(".prim_func") or name.endswith("triton.jit"):
            return True
        if name in ("jit",) and aliases.get("jit", "").startswith(("triton", "tilelang")):
            return True
    return False


class _Collector(cst.CSTVisitor):
    def __init__(self, facts: ModuleFacts) -> None:
        self.f = facts
        self.stack: list[str] = []

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.f.aliases[alias.asname.name.value] = full
            else:
                head = full.split(".")[0]
                self.f.aliases.setdefault(head, head)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.module is None or isinstance(node.names, cst.ImportStar):
            return
        base = dotted(node.module) or ""
        for alias in node.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.f.aliases[local] = f"{base}.{name}"

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not self.stack:
            self.f.classes[node.name.value] = node
            if node.name.value == "ModelNew":
                self.f.has_model_new = True
        self.stack.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        qual = ".".join(self.stack + [node.name.value])
        if len(self.stack) <= 1:
            # kernels are recognised by decorator; assignments `k = triton.jit(f)` handled below
            if _is_kernel(node, self.f.aliases):
                self.f.kernels.add(node.name.value)
            else:
                self.f.functions[qual] = node
        self.stack.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        # k = triton.jit(f)
        if isinstance(node.value, cst.Call):
            callee = dotted(node.value.func, self.f.aliases) or ""
            if callee in KERNEL_DECORATORS:
                for t in node.targets:
                    if isinstance(t.target, cst.Name):
                        self.f.kernels.add(t.target.value)
            # self.x = nn.Linear(...) inside Class.__init__
            if len(self.stack) == 2 and self.stack[1] == "__init__" and callee.startswith("torch.nn."):
                for t in node.targets:
                    tgt = t.target
                    if (
                        isinstance(tgt, cst.Attribute)
                        and isinstance(tgt.value, cst.Name)
                        and tgt.value.value == "self"
                    ):
                        self.f.submodules.setdefault(self.stack[0], {})[tgt.attr.value] = callee


class _Refs(cst.CSTVisitor):
    """Names and ``self.x``/``Cls.x`` references inside one function body."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.self_attrs: set[str] = set()
        self.cls_attrs: set[tuple[str, str]] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name):
            if node.value.value == "self":
                self.self_attrs.add(node.attr.value)
            else:
                self.cls_attrs.add((node.value.value, node.attr.value))


def _reach(facts: ModuleFacts) -> None:
    if facts.has_model_new:
        roots = [q for q in facts.functions if q == "ModelNew.forward"] or [
            q for q in facts.functions if q.startswith("ModelNew.")
        ]
    else:
        roots = [q for q in facts.functions]
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        q = todo.pop()
        if q in seen or q not in facts.functions:
            continue
        seen.add(q)
        refs = _Refs()
        facts.functions[q].visit(refs)
        owner = q.split(".")[0] if "." in q else None
        for n in refs.names:
            if n in facts.kernels:
                facts.kernels_reachable.add(n)
            if n in facts.functions:
                todo.append(n)
            if n in facts.classes:
                todo.extend(k for k in facts.functions if k.startswith(n + "."))
        if owner:
            for a in refs.self_attrs:
                if f"{owner}.{a}" in facts.functions:
                    todo.append(f"{owner}.{a}")
        for cls, attr in refs.cls_attrs:
            if cls in facts.classes:
                # Fn.apply(...) reaches Fn.forward; Cls.method reaches it
                todo.extend(k for k in facts.functions if k.startswith(cls + ".") and (
                    attr == "apply" or k == f"{cls}.{attr}"))
    facts.reachable = seen


#: id(module) -> (module, facts); the module is kept so its id stays unique
_CACHE: dict[int, tuple[cst.Module, ModuleFacts]] = {}


def module_facts(module: cst.Module) -> ModuleFacts:
    hit = _CACHE.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    facts = ModuleFacts()
    module.visit(_Collector(facts))
    _reach(facts)
    if len(_CACHE) > 16:
        _CACHE.clear()
    _CACHE[id(module)] = (module, facts)
    return facts
