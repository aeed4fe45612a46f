"""``python -m kernlint.dynamic.interp_runner [--entry NAME] TARGET [ARGS...]``

Runs TARGET with Triton's interpreter instrumented (see :mod:`kernlint.dynamic.interp_hook`).
TARGET is a Python file (its ``run()``, or its ``__main__`` block when it defines no entry
function) or ``package.module:function``. Records go to ``$KERNLINT_INTERP_OUT_DIR``.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import runpy
import sys


def defines_function(path: str, name: str) -> bool:
    with open(path, "rb") as fh:
        tree = ast.parse(fh.read(), filename=path)
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name for n in tree.body)


def has_entry_point(path: str, entry: str = "run") -> bool:
    """The file defines ``entry`` or has an ``if __name__ == "__main__":`` block."""
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry:
            return True
        if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and "__main__" in ast.unparse(node.test):
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kernlint.dynamic.interp_runner")
    parser.add_argument("--entry", default="run", help="function to call in a file (default: run)")
    parser.add_argument("--no-interpret", action="store_true",
                        help="run natively (on the GPU, under a sanitizer or ncu) without the interpreter")
    parser.add_argument("--gsan", action="store_true",
                        help="run natively with Triton's global-memory race sanitizer (Tritons that ship it)")
    parser.add_argument("target")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)

    if ns.gsan:
        return _under_gsan(ns)
    if not ns.no_interpret:
        os.environ["TRITON_INTERPRET"] = "1"  # before anything imports triton
        from kernlint.dynamic.interp_hook import install_on_import

        install_on_import()
    target = ns.target
    if target.endswith(".py") or os.path.isfile(target):
        path = os.path.abspath(target)
        sys.argv = [path, *ns.args]
        sys.path.insert(0, os.path.dirname(path))
        if ns.entry and defines_function(path, ns.entry):
            namespace = runpy.run_path(path, run_name="__kernlint_target__")
            result = _call_entry(namespace[ns.entry], interpreted=not ns.no_interpret)
        else:
            runpy.run_path(path, run_name="__main__")
            result = None
    else:
        module_name, _, func = target.partition(":")
        sys.argv = [target, *ns.args]
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(module_name)
        result = _call_entry(getattr(module, func or ns.entry), interpreted=not ns.no_interpret)
    return result if isinstance(result, int) else 0


def _under_gsan(ns) -> int:
    import contextlib

    import torch
    import triton
    from triton.experimental.gsan._allocator import create_mem_pool

    triton.knobs.compilation.instrumentation_mode = "gsan"
    ns.gsan, ns.no_interpret = False, True
    with torch.cuda.use_mem_pool(create_mem_pool()) if torch.cuda.is_available() else contextlib.nullcontext():
        return main([*(["--entry", ns.entry] if ns.entry else []), "--no-interpret", ns.target, *ns.args])


def _call_entry(fn, interpreted: bool):
    """Under the interpreter, an entry point that takes a ``device`` parameter is told to use the CPU."""
    import inspect

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = {}
    return fn(device="cpu") if interpreted and "device" in params else fn()


if __name__ == "__main__":
    sys.exit(main())
