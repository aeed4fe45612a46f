"""KL300: the kernel does not compile for the target (reported at the line the compiler names)."""

from __future__ import annotations

import importlib.util
import re
from typing import Iterable

from kernlint.ir.artifacts import CompiledKernel
from kernlint.ir.rulebase import IRRule
from kernlint.model import Finding, Level
from kernlint.rule import Confirmation


_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
_MISSING_NAME = re.compile(r"ImportError: cannot import name '\w+' from '[\w.]+'")
#: a name the kernel uses that no branch taken for the compiled constexpr values defined
_UNDEFINED = re.compile(r"NameError\('\w+ is not defined'\)")
#: compile errors that a wrong guess of an argument's type produces
_TYPE_ERROR = re.compile(r"invalid operands of type|Unsupported ptr type|unexpected type|bounds and step must all be "
                         r"ints|Expected dtype|is not a pointer|has no attribute 'is_int'|operands must be same dtype|"
                         r"Loop-carried variable \w+ has initial type|unsupported tensor index")


class CompileError(IRRule):
    code = "KL300"
    name = "compile-error"
    category = "api-misuse"
    level = Level.ERROR
    precision = "very-high"
    confirm = Confirmation("none", description="The compiler's own error; no GPU run is needed.")
    summary = "The kernel fails to compile for the target architecture with the specialization shown."
    docs = """
## What it does
Compiles the kernel ahead of time (no GPU needed) with Triton's own compiler for the target
architecture (``--arch``, default sm_90) and reports any compile error at the source line the
compiler names, through inlined helper functions.

## Why is this bad?
The kernel would fail the first time it is launched with these arguments, often only in
production, on a code path a test never ran (another dtype, another autotune config).

## Example
```python
@triton.jit
def fill(x_ptr):
    offs = tl.arange(0, 100)  # not a power of two
    tl.store(x_ptr + offs, 1.0)
```

## Use instead
```python
@triton.jit
def fill(x_ptr, n):
    offs = tl.arange(0, 128)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)
```
If the error comes from kernlint's guessed specialization rather than from a real launch, state
the real one with ``# kernlint: specialize(NAME=VALUE, ...)`` above the kernel. An error is reported
at level ``note``, not ``error``, where it may be kernlint's rather than the kernel's: under the
guessed (fallback) specialization, for an error that a guessed argument type produces, for a name
only some constexpr branches define under constexpr values none of the launches, configs or
defaults gave (the message names the guessed values), and where the module could not be loaded to
compile the kernel at all (a package the environment lacks, a GPU driver queried at import, a
kernel defined inside a function). A module that imports what an installed package no longer has
(`triton.ops`) is an error: it fails wherever that version is installed.
"""
    bad = (
        '''import triton
import triton.language as tl


@triton.jit
def fill(x_ptr):
    offs = tl.arange(0, 100)  # expect: KL300
    tl.store(x_ptr + offs, 1.0)
''',
    )
    good = (
        '''import triton
import triton.language as tl


@triton.jit
def fill(x_ptr, n):
    offs = tl.arange(0, 128)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)
''',
    )

    def check(self, compiled: CompiledKernel) -> Iterable[Finding]:
        if compiled.ok:
            return
        line = compiled.error_line or compiled.kernel_line
        col = compiled.error_col or 1
        stage = compiled.error_stage or "compile"
        what = {"import": "loading the module failed", "timeout": "compilation timed out",
                "crash": "the compiler crashed"}.get(stage, "compilation failed")
        finding = self.finding(
            compiled, line, col,
            f"{what} for {compiled.spec.label} on sm_{compiled.capability}: {compiled.error}",
            ir="compiler", excerpt=[compiled.error], stage=stage,
        )
        if stage == "import":
            if not _incompatible(compiled.error or ""):
                # the module does not load here (a package this environment lacks, a GPU driver
                # queried at import, a kernel defined inside a function): nothing was compiled
                finding.level = Level.NOTE
                finding.message += " (the kernel was not compiled: this says nothing of it)"
        # type errors are notes too under launch and autotune specializations: those give constexpr
        # values, but the argument types (pointer or integer, element types, tuples) are still
        # kernlint's guess
        elif compiled.spec.origin == "fallback" or (
                compiled.spec.origin != "comment" and _TYPE_ERROR.search(compiled.error or "")):
            # kernlint guessed the argument types: the error may be the guess's, not the kernel's
            finding.level = Level.NOTE
            finding.message += " (with kernlint's guessed argument types: state the real ones with " \
                               "'# kernlint: specialize(...)')"
        elif compiled.spec.origin != "comment" and compiled.spec.guessed and _UNDEFINED.search(compiled.error or ""):
            # a name only some constexpr branches define, under values kernlint guessed for them
            finding.level = Level.NOTE
        yield finding


def _incompatible(error: str) -> bool:
    """Whether an import failure says the module does not work with what is installed (a module
    or name an installed package no longer has: ``triton.ops``, ``torch._C._cuda_getCurrentRawStream``)
    rather than that this environment lacks a package altogether."""
    if _MISSING_NAME.search(error):
        return True
    missing = _MISSING_MODULE.search(error)
    if missing is None:
        return False
    top = missing.group(1).split(".")[0]
    return top != missing.group(1) and importlib.util.find_spec(top) is not None
