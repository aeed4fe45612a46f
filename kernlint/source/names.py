"""Resolve the dotted names a module uses (``tl.load``, ``jit``, ``T.Kernel``) to canonical ones.

``import triton.language as tl`` makes ``tl.load`` -> ``triton.language.load``;
``from triton import jit`` makes ``jit`` -> ``triton.jit``. Only imports are read: nothing runs.
"""

from __future__ import annotations

import libcst as cst


def dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` as a string, or None for anything that is not a plain dotted name."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _module_name(node: cst.BaseExpression) -> str:
    return dotted(node) or ""


class ImportMap:
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}

    @classmethod
    def from_module(cls, module: cst.Module) -> "ImportMap":
        imports = cls()
        for stmt in module.body:
            imports._collect(stmt)
        # Defaults so code written against the usual aliases still resolves in fragments.
        imports.aliases.setdefault("tl", "triton.language")
        imports.aliases.setdefault("triton", "triton")
        return imports

    def _collect(self, stmt: cst.CSTNode) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        full = _module_name(alias.name)
                        if alias.asname is not None:
                            self.aliases[alias.asname.name.value] = full  # type: ignore[union-attr]
                        else:
                            top = full.split(".")[0]
                            self.aliases[top] = top
                elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                    base = _module_name(small.module)
                    if isinstance(small.names, cst.ImportStar):
                        continue
                    for alias in small.names:
                        name = _module_name(alias.name)
                        local = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
                        self.aliases[local] = f"{base}.{name}"
        elif isinstance(stmt, (cst.If, cst.Try)):
            # imports under `if TYPE_CHECKING:` / `try: ... except ImportError:`
            for inner in stmt.body.body:
                self._collect(inner)

    def resolve(self, node: cst.BaseExpression) -> str | None:
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head in self.aliases:
            full = self.aliases[head]
            return f"{full}.{rest}" if rest else full
        return name


TRITON_JIT = {"triton.jit", "triton.runtime.jit.jit", "triton.runtime.jit", "triton.experimental.gluon.jit"}
TRITON_AUTOTUNE = {"triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune"}
TRITON_HEURISTICS = {"triton.heuristics", "triton.runtime.heuristics", "triton.runtime.autotuner.heuristics"}
TILELANG_PRIM_FUNC = {"tilelang.language.prim_func", "tvm.script.tir.prim_func", "tvm.tir.prim_func"}
TILELANG_JIT = {"tilelang.jit", "tilelang.jit.jit"}
TILELANG_KERNEL = {"tilelang.language.Kernel"}
