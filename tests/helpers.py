"""Shared test helpers: lint a text through the pipeline with the source rules; read a fixture's
expected findings."""

import os
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


def _snapshot_rows(path: Path) -> list[tuple[int, int | None, str, Phase | None]]:
    rules = catalogue.all_rules()
    rows = []
    for line in path.with_suffix(".expected").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        pos, code = line.split()
        ln, _, col = pos.partition(":")
        rows.append((int(ln), int(col) if col else None, code, rules[code].phase if code in rules else None))
    return rows


def expected_findings(path: Path, phase: Phase | None = None) -> set[tuple[int, int | None, str]]:
    """The snapshot ``NAME.expected`` beside fixture ``NAME.py``: one ``LINE:COL CODE`` per expected
    finding, of every phase (``LINE CODE`` where the column is the compiler's, not the source's:
    IR-phase findings); ``#`` starts a comment. ``phase``: only the codes of that phase's rules."""
    return {(ln, col, code) for ln, col, code, of in _snapshot_rows(path) if phase is None or of is phase}


#: ``KERNLINT_UPDATE_SNAPSHOTS=1 pytest tests/test_fixtures.py tests/ir/test_ir_fixtures.py`` rewrites the
#: fixtures' ``.expected`` files from what the phases report (review the diff), instead of failing
UPDATE_SNAPSHOTS = os.environ.get("KERNLINT_UPDATE_SNAPSHOTS") == "1"


def write_expected(path: Path, phase: Phase, found: set[tuple[int, int | None, str]]) -> None:
    """Replace ``phase``'s lines of the fixture's snapshot with ``found``; the other phases' lines stay
    (lines of codes no rule has are dropped)."""
    kept = {(ln, col, code) for ln, col, code, of in _snapshot_rows(path) if of is not None and of is not phase}
    rows = sorted(kept | found, key=lambda r: (r[0], 10**9 if r[1] is None else r[1], r[2]))
    text = "".join(f"{line}{'' if col is None else f':{col}'} {code}\n" for line, col, code in rows)
    path.with_suffix(".expected").write_text(text)
