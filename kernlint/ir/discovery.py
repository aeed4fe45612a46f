"""Kernels for the IR phase when it is given plain paths (through the core's discovery), and
which jit functions are helpers rather than kernels. Nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

from kernlint.model import Frontend, Kernel


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""


def _is_triton_kernel(fn: ast.FunctionDef) -> bool:
    names = [_dotted(d) for d in fn.decorator_list]
    return any(n == "jit" or n.endswith("triton.jit") or n.endswith("gluon.jit") for n in names)


def triton_kernels_in_source(source: str, path: str) -> list[Kernel]:
    """The Triton (and Gluon) kernels the core's discovery finds in ``source``."""
    import libcst as cst

    from kernlint.source.discover import discover

    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise SyntaxError(str(exc)) from None
    return [k.kernel for k in discover(path, source, module).kernels if k.kernel.frontend is Frontend.TRITON]


def kernels_in_source(source: str, path: str) -> list[Kernel]:
    """Every kernel the core's discovery finds in ``source``: Triton, Gluon and TileLang."""
    import libcst as cst

    from kernlint.source.discover import discover

    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise SyntaxError(str(exc)) from None
    return [k.kernel for k in discover(path, source, module).kernels]


def helper_functions(source: str) -> set[str]:
    """``@triton.jit`` functions that are helpers, not kernels: called from another jit function
    (and never launched with ``name[grid](...)``) or returning a value."""
    tree = ast.parse(source)
    jitted = {fn.name: fn for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef) and _is_triton_kernel(fn)}
    launched = {_dotted(n.func.value).split(".")[-1] for n in ast.walk(tree)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)}
    helpers = set()
    for name, fn in jitted.items():
        if any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(fn)):
            helpers.add(name)
        for n in ast.walk(fn):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in jitted:
                helpers.add(n.func.id)
    return helpers - launched


def triton_kernels_in_file(path: str | Path) -> list[Kernel]:
    source = Path(path).read_text(encoding="utf-8", errors="replace")
    try:
        return triton_kernels_in_source(source, str(path))
    except SyntaxError:
        return []
