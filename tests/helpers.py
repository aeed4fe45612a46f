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


def _snapshot_lines(path: Path) -> list[str]:
    """The rows of the snapshot ``NAME.expected`` beside ``NAME.py`` (``#`` starts a comment)."""
    rows = (line.split("#", 1)[0].strip() for line in path.with_suffix(".expected").read_text().splitlines())
    return [row for row in rows if row]


def _snapshot_rows(path: Path) -> list[tuple[int, int | None, str, Phase | None, str | None]]:
    """(line, column, code, the code's phase, verdict) per row of the fixture's snapshot."""
    rules = catalogue.all_rules()
    rows = []
    for line in _snapshot_lines(path):
        pos, code, *verdict = line.split()
        ln, _, col = pos.partition(":")
        rows.append((int(ln), int(col) if col else None, code, rules[code].phase if code in rules else None,
                     verdict[0] if verdict else None))
    return rows


def expected_findings(path: Path, phase: Phase | None = None) -> set[tuple[int, int | None, str]]:
    """The snapshot ``NAME.expected`` beside fixture ``NAME.py``: one ``LINE:COL CODE [VERDICT]`` per
    expected finding, of every phase (``LINE CODE`` where the column is the compiler's, not the
    source's: IR-phase findings; the verdict a ``--confirm`` run gives it, for the fixtures the dynamic
    phase runs); ``#`` starts a comment. ``phase``: only the codes of that phase's rules."""
    return {(ln, col, code) for ln, col, code, of, _ in _snapshot_rows(path) if phase is None or of is phase}


def expected_verdicts(path: Path, phases: set[Phase]) -> dict[tuple[int, int | None, str], str | None]:
    """The snapshot's rows of ``phases`` with their verdicts (None where a row has none)."""
    return {(ln, col, code): verdict for ln, col, code, of, verdict in _snapshot_rows(path) if of in phases}


#: ``KERNLINT_UPDATE_SNAPSHOTS=1 pytest tests/test_fixtures.py tests/ir/test_ir_fixtures.py
#: tests/dynamic/test_dynamic_fixtures.py`` rewrites the fixtures' ``.expected`` files from what the
#: phases report (review the diff), instead of failing
UPDATE_SNAPSHOTS = os.environ.get("KERNLINT_UPDATE_SNAPSHOTS") == "1"


def write_expected(path: Path, phase: Phase, found: set[tuple[int, int | None, str]],
                   verdicts: dict | None = None) -> None:
    """Replace ``phase``'s lines of the fixture's snapshot with ``found`` (with their ``verdicts``; without
    them a row keeps the verdict it had); the other phases' lines stay (lines of codes no rule has are
    dropped)."""
    rows = _snapshot_rows(path)
    old = {(ln, col, code): verdict for ln, col, code, _, verdict in rows}
    kept = {(ln, col, code) for ln, col, code, of, _ in rows if of is not None and of is not phase}
    verdict_of = old if verdicts is None else {**{k: old[k] for k in kept}, **verdicts}
    text = ""
    for line, col, code in sorted(kept | found, key=lambda r: (r[0], 10**9 if r[1] is None else r[1], r[2])):
        verdict = verdict_of.get((line, col, code))
        text += f"{line}{'' if col is None else f':{col}'} {code}{'' if verdict is None else f' {verdict}'}\n"
    path.with_suffix(".expected").write_text(text)


def expected_records(folder: Path) -> dict[str, dict]:
    """The eval fixtures' snapshots under ``folder`` (``TASK/NAME.expected`` beside each candidate
    ``TASK/NAME.py``), by candidate id ``TASK/NAME``: one ``FIELD VALUE`` row per expectation of its
    record, ``gpu FIELD VALUE`` where it holds only with a CUDA device. Fields: ``verdict``; ``reason``
    (each must begin one of the record's reasons); ``rule`` (IR rules its static structure must hold);
    ``error-kind`` (the record's is one of them); ``error`` (words its error holds); ``task-degenerate``;
    ``pattern`` (the cheat it plants, for the reader). ``exp["gpu"]`` is what a GPU run must show: its
    own verdict where it has one, and every reason."""
    out = {}
    for path in sorted(folder.glob("*/*.expected")):
        exp: dict = {"reasons": [], "rules": [], "error_kind": [], "gpu": {"reasons": []}}
        for line in _snapshot_lines(path):
            target = exp
            if line.startswith("gpu "):
                target, line = exp["gpu"], line[4:]
            field, _, value = line.partition(" ")
            if field in ("reason", "rule", "error-kind"):
                target[{"reason": "reasons", "rule": "rules", "error-kind": "error_kind"}[field]].append(value)
            elif field in ("verdict", "error", "pattern"):
                target[field] = value
            elif field == "task-degenerate":
                target["task_degenerate"] = value == "true"
            else:
                raise ValueError(f"{path}: unknown field {field!r}")
        exp["gpu"].setdefault("verdict", exp.get("verdict"))
        exp["gpu"]["reasons"] = list(dict.fromkeys(exp["reasons"] + exp["gpu"]["reasons"]))
        out[f"{path.parent.name}/{path.stem}"] = exp
    return out


#: every fixture the source rules read (the eval candidates aside)
FIXTURE_FILES = sorted(p for p in (Path(__file__).resolve().parents[1] / "fixtures").rglob("*.py") if "eval" not in p.parts)


def race_findings(path: Path) -> list[tuple]:
    """KL103's findings on a fixture: (span, message)."""
    result, _ = lint_text(path.name, path.read_text(errors="replace"), [catalogue.all_rules()["KL103"]()])
    return [(f.span, f.message) for f in result.findings]


def assert_shortcut_changes_no_race(monkeypatch, module, name: str) -> None:
    """A solver-free proof ``module.name`` answers only what the solver answers: on every fixture,
    KL103's findings are the same with the proof and with every question left to the solver (and the
    proof proves at least one fixture question: otherwise the check checks nothing)."""
    proven = []
    proof = getattr(module, name)

    def counted(*args):
        out = proof(*args)
        proven.append(out)
        return out

    monkeypatch.setattr(module, name, counted)
    with_proof = {p: race_findings(p) for p in FIXTURE_FILES}
    monkeypatch.setattr(module, name, lambda *args: False)
    without = {p: race_findings(p) for p in FIXTURE_FILES}
    assert any(proven), "no fixture question was proven without the solver: the test checks nothing"
    assert any(without.values())
    assert with_proof == without
