"""One libcst pass over a candidate module collecting what the anti-cheat rules need.

The facts: import aliases (``F`` -> ``torch.nn.functional``), the GPU kernels the module defines
(``@triton.jit`` and friends, ``@T.prim_func``/``@tilelang.jit``), the host functions and methods,
and which of them are reachable from the entry point (``ModelNew.forward``; for modules without a
``ModelNew`` every top-level host function and class counts as an entry point).

It also sees through the easy disguises of a name: :meth:`ModuleFacts.const_str` folds strings
assembled from constants (``"elapsed" + "_time"``) and :meth:`ModuleFacts.target_of` follows
``getattr`` with such names, ``__import__``/``importlib.import_module``/``sys.modules[...]`` and
local names bound once to one of these (``cu = getattr(torch, "cuda")``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from kernlint.source.names import KERNEL_WRAPPERS, ImportMap, kernel_frontend


@dataclass
class ModuleFacts:
    imports: ImportMap = field(default_factory=ImportMap)
    kernels: set[str] = field(default_factory=set)
    #: qualified name ("f" or "Class.method") -> definition, host code only
    functions: dict[str, cst.FunctionDef] = field(default_factory=dict)
    classes: dict[str, cst.ClassDef] = field(default_factory=dict)
    #: class name -> {attribute: dotted constructor} for ``self.attr = torch.nn.X(...)`` in __init__
    submodules: dict[str, dict[str, str]] = field(default_factory=dict)
    has_model_new: bool = False
    #: name -> the values assigned to it anywhere in the module (single-name targets only)
    bindings: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    reachable: set[str] = field(default_factory=set)
    kernels_reachable: set[str] = field(default_factory=set)

    @property
    def aliases(self) -> dict[str, str]:
        """Local name -> what the module imported under it."""
        return self.imports.aliases

    def name_of(self, node: cst.BaseExpression) -> str:
        """The resolved dotted name of ``node`` (calls in the chain kept as ``()``), or ""."""
        return self.imports.resolve(node, through_calls=True) or ""

    def reachable_functions(self) -> list[tuple[str, cst.FunctionDef]]:
        return [(q, f) for q, f in self.functions.items() if q in self.reachable]

    def bound_once(self, name: str) -> cst.BaseExpression | None:
        """The value of a name the module assigns exactly once (anywhere), else None."""
        values = self.bindings.get(name, [])
        return values[0] if len(values) == 1 else None

    def const_str(self, node: cst.BaseExpression, depth: int = 0) -> str | None:
        """The string ``node`` evaluates to when it is built from constants only, else None."""
        if depth > 8:
            return None
        if isinstance(node, cst.SimpleString):
            value = node.evaluated_value
            return value if isinstance(value, str) else None
        if isinstance(node, cst.ConcatenatedString):
            parts = [self.const_str(node.left, depth + 1), self.const_str(node.right, depth + 1)]
            return None if None in parts else "".join(parts)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            parts = [self.const_str(node.left, depth + 1), self.const_str(node.right, depth + 1)]
            return None if None in parts else "".join(parts)
        if isinstance(node, cst.FormattedString):
            out = []
            for part in node.parts:
                if isinstance(part, cst.FormattedStringText):
                    out.append(part.value)
                elif part.format_spec is None and part.conversion is None:
                    value = self.const_str(part.expression, depth + 1)
                    if value is None:
                        return None
                    out.append(value)
                else:
                    return None
            return "".join(out)
        if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "join"
                and len(node.args) == 1 and isinstance(node.args[0].value, (cst.List, cst.Tuple))):
            sep = self.const_str(node.func.value, depth + 1)
            parts = [self.const_str(e.value, depth + 1) for e in node.args[0].value.elements]
            return None if sep is None or None in parts else sep.join(parts)
        if isinstance(node, cst.Name) and node.value not in self.aliases:
            value = self.bound_once(node.value)
            return self.const_str(value, depth + 1) if value is not None else None
        return None

    def target_of(self, node: cst.BaseExpression, depth: int = 0) -> str:
        """The dotted name of the object ``node`` denotes, seeing through ``getattr(obj, <constant
        string>)``, ``__import__("m")``, ``importlib.import_module("m")``, ``sys.modules["m"]``,
        ``globals()["name"]`` and names bound once to one of these; "" when unknown."""
        if depth > 8:
            return ""
        if isinstance(node, cst.Name):
            if node.value in self.aliases:
                return self.aliases[node.value]
            value = self.bound_once(node.value)
            if value is not None and not isinstance(value, cst.Name | cst.Attribute | cst.Call | cst.Subscript):
                return ""
            return (self.target_of(value, depth + 1) if value is not None else "") or node.value
        if isinstance(node, cst.Attribute):
            base = self.target_of(node.value, depth + 1)
            return f"{base}.{node.attr.value}" if base else ""
        if isinstance(node, cst.Call):
            callee = self.name_of(node.func)
            args = [a.value for a in node.args if a.keyword is None]
            if callee in ("getattr", "builtins.getattr") and len(args) >= 2:
                base, attr = self.target_of(args[0], depth + 1), self.const_str(args[1])
                return f"{base}.{attr}" if base and attr else ""
            if callee in ("__import__", "builtins.__import__", "importlib.import_module") and args:
                return self.const_str(args[0]) or ""
            return ""
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            key = self.const_str(node.slice[0].slice.value)
            owner = self.name_of(node.value)
            if key and owner == "sys.modules":
                return key
            if key and owner in ("globals()", "builtins.globals()"):
                return self.target_of(cst.Name(key), depth + 1) if key.isidentifier() else ""
        return ""


def _is_kernel(fn: cst.FunctionDef, imports: ImportMap) -> bool:
    names = {imports.resolve(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or ""
             for d in fn.decorators}
    return kernel_frontend(names) is not None


class _Collector(cst.CSTVisitor):
    def __init__(self, facts: ModuleFacts) -> None:
        self.f = facts
        self.stack: list[str] = []

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
            if _is_kernel(node, self.f.imports):
                self.f.kernels.add(node.name.value)
            else:
                self.f.functions[qual] = node
        self.stack.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()

    def _rebound(self, target: cst.BaseExpression) -> None:
        """Names bound to values the facts do not follow (loop targets, augmented assignments)."""
        for n in _names_in(target):
            self.f.bindings.setdefault(n, []).extend([cst.Name("_"), cst.Name("_")])

    def visit_For(self, node: cst.For) -> None:
        self._rebound(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._rebound(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name) and node.value is not None:
            self.f.bindings.setdefault(node.target.value, []).append(node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.f.bindings.setdefault(node.targets[0].target.value, []).append(node.value)
        else:  # a name in a tuple target is bound to a value the facts do not follow
            for t in node.targets:
                self._rebound(t.target)
        # k = triton.jit(f)
        if isinstance(node.value, cst.Call):
            callee = self.f.name_of(node.value.func)
            if callee in KERNEL_WRAPPERS:
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


def _names_in(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names_in(e.value)]
    if isinstance(target, cst.StarredElement):
        return _names_in(target.value)
    return []


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
    facts = ModuleFacts(imports=ImportMap.everywhere(module))
    module.visit(_Collector(facts))
    _reach(facts)
    if len(_CACHE) > 16:
        _CACHE.clear()
    _CACHE[id(module)] = (module, facts)
    return facts
