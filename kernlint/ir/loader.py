"""Load a user's Triton kernel function in a worker process, with as few side effects as possible.

The module is first executed *stripped*: only imports, function and class definitions and
assignments of cheap values (literals, names, ``tl.*``/``triton.*`` expressions) are kept; every
other top-level statement (model set-up, benchmarks, ``torch.randn``...) is blanked out, keeping
line numbers, so Triton sees the real file and its ``loc`` debug info points at the real lines. If
the stripped module lacks the kernel (or fails), the file is imported normally under a module name
other than ``__main__`` (so ``if __name__ == "__main__":`` blocks never run). Either way this only
happens in a worker process with a timeout.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
import types
from pathlib import Path

_CHEAP_CALL_ROOTS = ("tl", "triton", "language", "gl", "ttgl", "T", "os", "math", "functools",
                     "dataclasses", "typing", "collections", "enum", "itertools")


def _root(node: ast.AST) -> str:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def _cheap(expr: ast.AST) -> bool:
    for node in ast.walk(expr):
        if isinstance(node, ast.Call):
            root = _root(node.func)
            if root not in _CHEAP_CALL_ROOTS and root not in ("int", "float", "str", "tuple", "list", "dict",
                                                                "range", "getattr", "hasattr", "len", "set"):
                return False
        if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
            return False
    return True


def _is_main_guard(node: ast.If) -> bool:
    t = ast.unparse(node.test).replace("'", '"')
    return "__name__" in t and "__main__" in t


def _keep(node: ast.stmt) -> bool:
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return node.value is None or _cheap(node.value)
    if isinstance(node, ast.If):
        return not _is_main_guard(node) and _cheap(node.test)
    if isinstance(node, ast.Try):
        return True
    return False


def strip_side_effects(source: str) -> str:
    """``source`` with costly top-level statements blanked out (line numbers preserved)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    blank: set[int] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if not _keep(node):
                for ln in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                    blank.add(ln)
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)

    visit(tree.body)
    out = []
    for i, line in enumerate(lines, start=1):
        if i in blank:
            out.append("\n" if line.endswith("\n") else "")
        else:
            out.append(line)
    text = "".join(out)
    # a compound statement whose whole body was blanked needs a body again
    try:
        ast.parse(text)
        return text
    except SyntaxError:
        return _patch_empty_bodies(text, tree, blank)


def _patch_empty_bodies(text: str, tree: ast.Module, blank: set[int]) -> str:
    lines = text.splitlines(keepends=True)
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and all(
                    isinstance(s, ast.stmt) and s.lineno in blank for s in body):
                first = body[0]
                idx = first.lineno - 1
                lines[idx] = " " * first.col_offset + "pass\n"
        if isinstance(node, ast.Try):
            for h in node.handlers:
                if h.body and all(s.lineno in blank for s in h.body):
                    lines[h.body[0].lineno - 1] = " " * h.body[0].col_offset + "pass\n"
    return "".join(lines)


def _module_name(path: Path) -> str:
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    return f"_kernlint_user_{path.stem}_{digest}"


_LOADED: dict[tuple[str, bool], types.ModuleType] = {}


def load_module(path: str | Path, stripped: bool = True) -> types.ModuleType:
    path = Path(path).resolve()
    key = (str(path), stripped)
    if key in _LOADED:
        return _LOADED[key]
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    name = _module_name(path) + ("_s" if stripped else "")
    if stripped:
        source = path.read_text(encoding="utf-8")
        # dont_inherit: the user's code must not inherit this module's `from __future__ import annotations`
        code = compile(strip_side_effects(source), str(path), "exec", dont_inherit=True)
        module = types.ModuleType(name)
        module.__file__ = str(path)
        sys.modules[name] = module
        try:
            exec(code, module.__dict__)
        except BaseException:
            sys.modules.pop(name, None)
            raise
    else:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
    _LOADED[key] = module
    return module


def unwrap_jit(obj):
    """The ``JITFunction`` under ``@triton.autotune``/``@triton.heuristics`` wrappers."""
    from triton.runtime.jit import JITFunction

    seen = 0
    while not isinstance(obj, JITFunction) and hasattr(obj, "fn") and seen < 8:
        obj = obj.fn
        seen += 1
    if not isinstance(obj, JITFunction):
        raise TypeError(f"{obj!r} is not a @triton.jit function")
    return obj


def load_kernel(path: str | Path, name: str):
    """The JITFunction ``name`` of the file at ``path``: stripped module first, full import second."""
    error: BaseException | None = None
    try:
        module = load_module(path, stripped=True)
        obj = getattr(module, name, None)
        if obj is not None:
            return unwrap_jit(obj)
    except Exception as e:  # noqa: BLE001 - fall back to a real import
        error = e
    module = load_module(path, stripped=False)
    obj = getattr(module, name, None)
    if obj is None:
        raise LookupError(f"{name} is not a module-level name of {path}") from error
    return unwrap_jit(obj)
