"""Shared test helpers: lint a text through the pipeline with the source rules."""

from kernlint import catalogue
from kernlint.config import Config
from kernlint.model import Phase, RunResult
from kernlint.pipeline import apply_filters
from kernlint.source.phase import lint_text
from kernlint.source.suppress import Suppressions


def source_rules(select=None):
    return [
        r() for code, r in catalogue.all_rules().items()
        if r.phase is Phase.SOURCE and (select is None or code in select)
    ]


def lint(text: str, path: str = "example.py", select=None) -> RunResult:
    """The source phase and the pipeline's one filter: ``select`` (a set of codes) or the defaults."""
    codes = set(select) if select is not None else catalogue.select_codes(None, None)
    result, info = lint_text(path, text, source_rules(codes))
    suppressions = {path: Suppressions.parse(info.source)} if info is not None else {}
    apply_filters(result, Config(), codes, suppressions, {Phase.SOURCE})
    return result
