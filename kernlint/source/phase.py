"""The source phase: parse once with libcst, discover kernels, interpret each, feed every rule."""

from __future__ import annotations

import re
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


def might_hold_kernels(text: str) -> bool:
    return any(marker in text for marker in MARKERS)


def lint_module(info: ModuleInfo, rules: list[SourceRule]) -> list[Finding]:
    findings: list[Finding] = []
    triton_rules = [r for r in rules if Frontend.TRITON in r.frontends]
    tilelang_rules = [r for r in rules if Frontend.TILELANG in r.frontends]
    for kernel in info.kernels:
        if kernel.kernel.frontend is Frontend.TRITON and triton_rules:
            state = interpret(info, kernel)
            for rule in triton_rules:
                findings.extend(rule.check(state))
        elif kernel.kernel.frontend is Frontend.TILELANG and tilelang_rules:
            from kernlint.source.tilelang import analyse

            state = analyse(info, kernel)
            for rule in tilelang_rules:
                findings.extend(rule.check(state))
    return findings


def lint_text(path: str, data: bytes | str, rules: list[SourceRule], always_parse: bool = False
              ) -> tuple[RunResult, ModuleInfo | None]:
    """Lint one file's bytes or text. A file that mentions no kernel framework is not parsed unless
    ``always_parse`` (a file named on the command line: a binary or broken one is an error)."""
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
    info = discover(path, text, module)
    result.kernels = [k.kernel for k in info.kernels]
    result.findings = lint_module(info, rules)
    return result, info
