"""Optional parts of kernlint and the pip extra that brings each.

``pip install kernlint`` carries the source phase only (click, libcst, z3-solver, sarif-om); the
IR phase, ``--confirm``, ``eval`` and ``server`` need the packages of an extra. A feature asks for
its extra with :func:`require` before it imports anything heavy, so a missing package is one clear
line naming the extra, not a traceback.
"""

from __future__ import annotations

import importlib.util

# top-level module -> the extra that installs it (the first extra a user would reach for)
EXTRA_OF_MODULE = {
    "triton": "ir",
    "lark": "ir",
    "numpy": "ir",
    "torch": "gpu",
    "tilelang": "tilelang",
    "tvm": "tilelang",
    "ray": "ray",
    "rich": "ir",
    "pygls": "lsp",
    "lsprotocol": "lsp",
}

# feature -> (extra, the modules it imports)
FEATURES = {
    "--ir": ("ir", ("triton", "lark", "numpy")),
    "--confirm": ("gpu", ("torch", "triton", "numpy", "lark")),
    "eval": ("eval", ("torch", "triton", "numpy", "rich")),
    "server": ("lsp", ("pygls", "lsprotocol")),
}


class MissingExtra(Exception):
    def __init__(self, feature: str, extra: str, module: str):
        super().__init__(
            f"{feature} needs the Python package {module!r}, which is not installed: "
            f"install the '{extra}' extra (pip install \"kernlint[{extra}]\", or from a clone: pip install -e \".[{extra}]\")"
        )
        self.feature, self.extra, self.module = feature, extra, module


def missing(modules) -> str | None:
    """The first of ``modules`` that cannot be imported, else None (nothing is imported)."""
    for name in modules:
        try:
            if importlib.util.find_spec(name) is None:
                return name
        except (ImportError, ValueError):
            return name
    return None


def require(feature: str) -> None:
    extra, modules = FEATURES[feature]
    absent = missing(modules)
    if absent is not None:
        raise MissingExtra(feature, extra, absent)


def explain(exc: ModuleNotFoundError) -> str | None:
    """A message naming the extra for an import of an optional package that failed, else None."""
    root = (exc.name or "").split(".")[0]
    extra = EXTRA_OF_MODULE.get(root)
    if extra is None:
        return None
    return (f"the Python package {root!r} is not installed: install the '{extra}' extra "
            f"(pip install \"kernlint[{extra}]\", or from a clone: pip install -e \".[{extra}]\")")
