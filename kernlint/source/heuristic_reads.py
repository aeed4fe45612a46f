"""What each function of a ``@triton.heuristics({...})`` decorator reads of the mapping it is given.

Triton calls each function with the launch's positional arguments (by name) and keywords, and the
values the decorators above it added; not with the parameters' defaults, nor with what a decorator
below it (an ``@triton.autotune`` under it) adds later. A read of anything else (``args["BLOCK"]``)
raises ``KeyError`` at the launch.
"""

from __future__ import annotations

import ast
from functools import lru_cache


@lru_cache(maxsize=4096)
def heuristic_reads(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """(name set, names its function reads with ``args["..."]``) for each entry of the decorator's
    dict literal, in order; a function that is not a lambda written there reads nothing known."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return ()
    if not isinstance(node, ast.Dict):
        return ()
    out = []
    for key, value in zip(node.keys, node.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        reads: set[str] = set()
        if isinstance(value, ast.Lambda) and value.args.args:
            mapping = value.args.args[0].arg
            reads = {sub.slice.value for sub in ast.walk(value.body)
                     if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and sub.value.id == mapping
                     and isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, str)}
        out.append((key.value, frozenset(reads)))
    return tuple(out)
