"""The source phase: parse once with libcst, discover kernels, interpret each, feed every rule."""

from __future__ import annotations

import gc
import os
import re
import sys
from contextlib import contextmanager
from itertools import accumulate

import libcst as cst

from kernlint.model import FileError, Finding, Frontend, RunResult
from kernlint.source.discover import ModuleInfo, discover
from kernlint.source.interpret import interpret
from kernlint.source.rulebase import SourceRule

#: files that mention none of these cannot hold a kernel; they are not parsed at all
MARKERS = ("triton", "tilelang", "tvm")


#: CPython refuses more than 200 nested brackets; libcst's native parser can overflow its stack first
MAX_NESTING = 200
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")


_DEPTH = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def _nesting_error(path: str, text: str) -> FileError | None:
    brackets = _NOT_BRACKETS.sub("", text)
    if len(brackets) <= 2 * MAX_NESTING:
        return None
    # running depth, computed in C (accumulate/map): this runs on every file
    if max(accumulate(map(_DEPTH.__getitem__, brackets)), default=0) > MAX_NESTING:
        return FileError(path, f"SyntaxError: more than {MAX_NESTING} nested brackets")
    return None


def parse(path: str, data: bytes | str) -> tuple[cst.Module | None, str, FileError | None]:
    """Parse bytes or text; a failure becomes a FileError with its location."""
    try:
        text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        nesting = _nesting_error(path, data.decode("latin-1"))
        if nesting is not None:
            return None, "", nesting
        try:
            module = cst.parse_module(data)  # honours a PEP 263 coding declaration
            return module, module.code, None
        except Exception as exc:  # noqa: BLE001 - any parser failure is the file's fault
            return None, "", FileError(path, f"cannot decode file: {exc.__class__.__name__}: {exc}".splitlines()[0])
    nesting = _nesting_error(path, text)
    if nesting is not None:
        return None, text, nesting
    try:
        return cst.parse_module(text), text, None
    except cst.ParserSyntaxError as exc:
        return None, text, _syntax_error(path, text, exc)
    except RecursionError:
        return None, text, FileError(path, "file too deeply nested to parse")
    except Exception as exc:  # noqa: BLE001
        return None, text, FileError(path, f"cannot parse file: {exc.__class__.__name__}: {exc}".splitlines()[0])


def _syntax_error(path: str, text: str, exc: cst.ParserSyntaxError) -> FileError:
    """CPython's parser names the offending token more precisely than libcst: ask it (errors only)."""
    import ast

    try:
        ast.parse(text)
    except SyntaxError as err:
        return FileError(path, f"SyntaxError: {err.msg}", err.lineno or 1, max(err.offset or 1, 1))
    except (ValueError, RecursionError, MemoryError):
        pass
    return FileError(path, f"SyntaxError: {exc.message}", exc.raw_line, exc.raw_column + 1)


def read_module(path: str, data: bytes | str) -> ModuleInfo | None:
    """The module model of one file (parsed once, kernels discovered) for callers outside ``check``
    that hold only its text; None when it does not parse or nests too deeply to follow."""
    module, text, error = parse(path, data)
    if module is None or error is not None:
        return None
    try:
        return discover(path, text, module)
    except RecursionError:
        return None


def might_hold_kernels(text: str) -> bool:
    return any(marker in text for marker in MARKERS)


def too_complex(path: str, what: str) -> str:
    """The notice for code nested deeper than Python's recursion limit lets kernlint follow."""
    return (f"{path}: {what} is too complex to analyse (expressions or branches nested deeper than "
            f"{sys.getrecursionlimit()} levels); its findings are not reported, the rest of the file is linted")


def lint_module(info: ModuleInfo, rules: list[SourceRule], notices: list[str] | None = None) -> list[Finding]:
    """Every rule on every kernel; a kernel too deeply nested to follow is skipped with a notice
    (a depth guard: the other kernels and files are still linted)."""
    findings: list[Finding] = []
    triton_rules = [r for r in rules if Frontend.TRITON in r.frontends]
    tilelang_rules = [r for r in rules if Frontend.TILELANG in r.frontends]
    for kernel in info.kernels:
        try:
            findings.extend(_lint_kernel(info, kernel, triton_rules, tilelang_rules))
        except RecursionError:
            if notices is not None:
                notices.append(too_complex(info.path, f"kernel {kernel.kernel.name}"))
    return findings


def _lint_kernel(info: ModuleInfo, kernel, triton_rules, tilelang_rules) -> list[Finding]:
    if kernel.kernel.frontend is Frontend.TRITON and triton_rules:
        found = _checked(interpret(info, kernel), triton_rules)
        # padding a mask cannot have is asked of the bounds engine only where a rule reading
        # padding reports (its questions cost milliseconds each, on every masked load)
        again = [r for r in triton_rules if r.reads_padding and found[r]]
        if again:
            found.update(_checked(interpret(info, kernel, refine_padding=True), again))
        return [f for rule in triton_rules for f in found[rule]]
    if kernel.kernel.frontend is Frontend.TILELANG and tilelang_rules:
        from kernlint.source.tilelang import analyse

        state = analyse(info, kernel)
        return [f for rule in tilelang_rules for f in rule.check(state)]
    return []


def _checked(state, rules) -> dict:
    from kernlint.engine.run import release

    try:
        return {rule: list(rule.check(state)) for rule in rules}
    finally:
        release(state)


def lint_text(path: str, data: bytes | str, rules: list[SourceRule], always_parse: bool = False
              ) -> tuple[RunResult, ModuleInfo | None]:
    """Lint one file's bytes or text. A file that mentions no kernel framework is not parsed unless
    ``always_parse`` (a file named on the command line: a binary or broken one is an error)."""
    with _collector_paused():
        return _lint_text(path, data, rules, always_parse)


@contextmanager
def _collector_paused():
    """The parser and the passes allocate many small acyclic objects: Python's cycle collector
    would rescan the whole growing tree over and over (its cost grows with the file), so it waits
    until the file is done."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _lint_text(path: str, data: bytes | str, rules: list[SourceRule], always_parse: bool
               ) -> tuple[RunResult, ModuleInfo | None]:
    result = RunResult(files=1)
    if isinstance(data, bytes):
        probe = data.decode("latin-1")
    else:
        probe = data
    if not always_parse and not might_hold_kernels(probe):
        return result, None
    module, text, error = parse(path, data)
    if error is not None:
        result.errors.append(error)
        return result, None
    with contained(path, result.errors):
        try:
            info = discover(path, text, module)
        except RecursionError:
            result.notices.append(too_complex(path, "the module"))
            return result, None
        kernels = [k.kernel for k in info.kernels]
        result.findings = lint_module(info, rules, result.notices)
        result.kernels = kernels
        return result, info
    return result, None


#: let a kernlint bug raise instead of becoming the file's error record (as KERNLINT_DEBUG does): the
#: test suite sets it, so that a bug can never pass for a file without findings
RAISE_INTERNAL_ERRORS = False


@contextmanager
def contained(path: str, errors: list[FileError]):
    """A kernlint bug met while analysing one file becomes that file's error record (the run exits
    2; the other files are still linted and their findings kept). KERNLINT_DEBUG lets it through."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - whatever the bug, it must not take the other files with it
        if RAISE_INTERNAL_ERRORS or os.environ.get("KERNLINT_DEBUG"):
            raise
        errors.append(FileError(path, f"internal error: {exc.__class__.__name__}: {exc} (a kernlint bug, not "
                                      "this file's: its findings are not reported; set KERNLINT_DEBUG=1 for details)"))
