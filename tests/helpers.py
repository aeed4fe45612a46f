"""Shared test helpers: lint a text through the pipeline with the source rules; read a fixture's
expected findings."""

from pathlib import Path

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


def expected_findings(path: Path, phase: Phase | None = None) -> set[tuple[int, int | None, str]]:
    """The snapshot ``NAME.expected`` beside fixture ``NAME.py``: one ``LINE:COL CODE`` per expected
    finding, of every phase (``LINE CODE`` where the column is the compiler's, not the source's:
    IR-phase findings); ``#`` starts a comment. ``phase``: only the codes of that phase's rules."""
    rules = catalogue.all_rules()
    out = set()
    for line in path.with_suffix(".expected").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        pos, code = line.split()
        ln, _, col = pos.partition(":")
        if phase is None or rules[code].phase is phase:
            out.add((int(ln), int(col) if col else None, code))
    return out
