"""A small stand-in for the core's kernel discovery: ``@triton.jit`` functions, found by parsing.

The IR phase accepts :class:`kernlint.model.Kernel` objects from the core's discovery; this module
is used when it is given plain paths. It never imports the file.
"""

from __future__ import annotations

import ast
from pathlib import Path

from kernlint.model import Decorator, Frontend, Kernel, Param, Span


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
    tree = ast.parse(source)
    kernels = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef) or not _is_triton_kernel(fn):
            continue
        args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
        positional = fn.args.posonlyargs + fn.args.args
        defaults = {a.arg: ast.unparse(d) for a, d in
                    zip(positional[len(positional) - len(fn.args.defaults):], fn.args.defaults)}
        params = [
            Param(a.arg, ast.unparse(a.annotation) if a.annotation else None,
                  a.annotation is not None and "constexpr" in ast.unparse(a.annotation),
                  defaults.get(a.arg))
            for a in args
        ]
        decorators, configs = [], []
        for d in fn.decorator_list:
            name = _dotted(d)
            dec = Decorator(name)
            if isinstance(d, ast.Call):
                dec.args = [ast.unparse(a) for a in d.args]
                dec.kwargs = {k.arg: ast.unparse(k.value) for k in d.keywords if k.arg}
                if name.endswith("autotune"):
                    cfg = next((k.value for k in d.keywords if k.arg == "configs"), None)
                    if isinstance(cfg, (ast.List, ast.Tuple)):
                        configs = [ast.unparse(e) for e in cfg.elts]
            decorators.append(dec)
        span = Span(fn.lineno, fn.col_offset + 1, fn.end_lineno or fn.lineno, (fn.end_col_offset or 0) + 1)
        kernels.append(Kernel(path, fn.name, Frontend.TRITON, span, params, decorators, configs))
    return kernels


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
