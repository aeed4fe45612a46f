"""GitHub Actions workflow commands (``::error file=...::message``) for repositories without code scanning."""

from __future__ import annotations

from pathlib import Path

from kernlint.model import Level, RunResult

_COMMAND = {Level.ERROR: "error", Level.WARNING: "warning", Level.NOTE: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(result: RunResult, root: Path) -> str:
    lines = []
    for e in result.errors:
        lines.append(
            f"::error file={escape_property(e.path)},line={e.line},col={e.col},title=kernlint::{escape_data(e.message)}"
        )
    for f in result.sorted_findings():
        props = (
            f"file={escape_property(f.path)},line={f.span.line},endLine={f.span.end_line},"
            f"col={f.span.col},endColumn={f.span.end_col},title={escape_property(f.rule + ' ' + _name(f.rule))}"
        )
        lines.append(f"::{_COMMAND[f.level]} {props}::{escape_data(f.rule + ' ' + f.message)}")
    return "\n".join(lines) + ("\n" if lines else "")


def _name(code: str) -> str:
    from kernlint.catalogue import all_rules

    rule = all_rules().get(code)
    return rule.name if rule else ""
