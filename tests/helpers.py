"""Shared test helpers: lint a text with every source rule."""

from kernlint import catalogue
from kernlint.model import Phase
from kernlint.source.phase import lint_text


def source_rules(select=None):
    return [
        r() for code, r in catalogue.all_rules().items()
        if r.phase is Phase.SOURCE and (select is None or code in select)
    ]


def lint(text: str, path: str = "example.py", select=None):
    result, _ = lint_text(path, text, source_rules(select))
    return result
