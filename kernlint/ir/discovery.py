"""Kernels for the IR phase when it is given plain paths, and which jit functions are helpers
rather than kernels: both read from the source phase's model of the module. Nothing is imported."""

from __future__ import annotations

import libcst as cst

from kernlint.ir.param_use import walk
from kernlint.model import Frontend, Kernel
from kernlint.source.discover import ModuleInfo


def kernels_in_source(source: str, path: str) -> list[Kernel]:
    """Every kernel the source phase's discovery finds in ``source``: Triton, Gluon and TileLang."""
    from kernlint.source.phase import read_module

    info = read_module(path, source)
    return [k.kernel for k in info.kernels] if info is not None else []


def helper_functions(info: ModuleInfo) -> set[str]:
    """``@triton.jit`` functions that are helpers, not kernels: called from another jit function
    (and never launched with ``name[grid](...)``) or returning a value."""
    jitted = [k for k in info.kernels if k.kernel.frontend is Frontend.TRITON]
    if not jitted:
        return set()
    names = {k.kernel.name for k in jitted}
    launched = {launch.kernel for launch in info.facts.launches}
    helpers = set()
    for k in jitted:
        for n in walk(k.node):
            if isinstance(n, cst.Return) and n.value is not None:
                helpers.add(k.kernel.name)
            elif isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value in names:
                helpers.add(n.func.value)
    return helpers - launched

