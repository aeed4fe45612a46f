"""Kernels for the IR phase when it is given plain paths, and which jit functions are helpers
rather than kernels: both read from the module's facts (the core's discovery). Nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

from kernlint.facts import facts_for_source
from kernlint.model import Frontend, Kernel, ModuleFacts


def kernels_in_source(source: str, path: str) -> list[Kernel]:
    """Every kernel the core's discovery finds in ``source``: Triton, Gluon and TileLang."""
    return list(facts_for_source(path, source).kernels)


def triton_kernels_in_source(source: str, path: str) -> list[Kernel]:
    """The Triton (and Gluon) kernels the core's discovery finds in ``source``."""
    return [k for k in kernels_in_source(source, path) if k.frontend is Frontend.TRITON]


def helper_functions(source: str, facts: ModuleFacts | None = None, tree: ast.AST | None = None) -> set[str]:
    """``@triton.jit`` functions that are helpers, not kernels: called from another jit function
    (and never launched with ``name[grid](...)``) or returning a value."""
    facts = facts if facts is not None else facts_for_source("<module>", source)
    jitted = {k.name for k in facts.kernels if k.frontend is Frontend.TRITON}
    if not jitted:
        return set()
    launched = {launch.kernel for launch in facts.launches}
    tree = tree if tree is not None else ast.parse(source)
    helpers = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name not in jitted:
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Return) and n.value is not None:
                helpers.add(fn.name)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in jitted:
                helpers.add(n.func.id)
    return helpers - launched


def triton_kernels_in_file(path: str | Path) -> list[Kernel]:
    source = Path(path).read_text(encoding="utf-8", errors="replace")
    return triton_kernels_in_source(source, str(path))
