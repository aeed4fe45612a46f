"""``kernlint check``: collect files, run the phases, apply selection and suppressions."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from kernlint import catalogue
from kernlint.config import Config
from kernlint.model import FileError, Phase, RunResult
from kernlint.source.phase import lint_text
from kernlint.source.suppress import Suppressions


@dataclass
class Options:
    select: list[str] | None = None
    ignore: list[str] | None = None
    force_exclude: bool = False
    stdin_filename: str | None = None
    respect_gitignore: bool = True


def collect_files(paths: list[Path], config: Config, force_exclude: bool) -> tuple[list[Path], list[FileError]]:
    files: list[Path] = []
    errors: list[FileError] = []
    seen: set[Path] = set()
    for path in paths:
        if not path.exists():
            errors.append(FileError(str(path), "no such file or directory"))
            continue
        if path.is_file():
            if force_exclude and config.is_excluded(path):
                continue
            candidates = [path]
        else:
            candidates = []
            for sub in sorted(path.rglob("*.py")):
                if sub.is_file() and not config.is_excluded(sub):
                    candidates.append(sub)
        for c in candidates:
            key = c.resolve()
            if key not in seen:
                seen.add(key)
                files.append(c)
    return files, errors


def input_files(paths: list[Path], config: Config, options: Options) -> tuple[list[Path], list[FileError]]:
    """The files a run lints: :func:`collect_files`, less what .gitignore ignores unless told not to."""
    files, errors = collect_files(paths, config, options.force_exclude)
    if options.respect_gitignore:
        from kernlint.gitignore import drop_ignored

        files = drop_ignored(files, named=paths)
    return files, errors


def enabled_rules(config: Config, options: Options) -> set[str]:
    select = options.select or config.select or None
    ignore = [*(config.ignore or []), *(options.ignore or [])]
    return catalogue.select_codes(select, ignore)


def source_rules(codes: set[str]):
    return [rule() for code, rule in catalogue.all_rules().items() if code in codes and rule.phase is Phase.SOURCE]


def run_check(paths: list[Path], config: Config, options: Options, stdin: bytes | None = None) -> RunResult:
    codes = enabled_rules(config, options)
    rules = source_rules(codes)
    result = RunResult()
    if stdin is not None:
        name = options.stdin_filename or "-"
        inputs = [(name, Path(name), stdin)]
    else:
        files, errors = input_files(paths, config, options)
        result.errors.extend(errors)
        inputs = [(config.relpath(f), f, None) for f in files]
    for display, path, data in inputs:
        if data is None:
            try:
                data = path.read_bytes()
            except OSError as exc:
                result.errors.append(FileError(display, f"cannot read file: {exc.strerror or exc}"))
                result.files += 1
                continue
        file_result, info = lint_text(display, data, rules)
        if file_result.findings:
            # suppressions are read from the text the parser decoded, only where there is something to silence
            per_file = config.ignored_for(display)
            sup = Suppressions.parse(info.source)
            file_result.findings = [
                f for f in file_result.findings if f.rule in codes and f.rule not in per_file and not sup.suppressed(f)
            ]
        result.extend(file_result)
    return result
