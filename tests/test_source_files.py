"""The source phase over many files: the on-disk cache of each file's findings, and worker processes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from kernlint.check import Options, run_check
from kernlint.config import load
from kernlint.source import files as source_files
from kernlint.source.files import FileInput, lint_files

ROOT = Path(__file__).resolve().parents[1]
BUG = ROOT / "fixtures" / "bounds"


def _project(tmp_path: Path, n: int = 3) -> Path:
    """``n`` fixtures with findings (and one with a noqa) copied into a project of their own."""
    (tmp_path / "pyproject.toml").write_text("[tool.kernlint]\n")
    bugs = sorted(p for p in BUG.glob("*.py") if not p.stem.endswith("_good"))[:n]
    for p in bugs:
        shutil.copy(p, tmp_path / p.name)
    return tmp_path


def _check(root: Path, **kw) -> dict:
    result = run_check([root], load(root), Options(**kw))
    return {
        "findings": sorted((f.path, f.span.line, f.span.col, f.rule, f.message, json.dumps(f.evidence, sort_keys=True))
                           for f in result.findings),
        "kernels": sorted((k.path, k.name, k.span.line, len(k.params)) for k in result.kernels),
        "errors": [(e.path, e.message) for e in result.errors],
    }


@pytest.fixture
def counted(monkeypatch):
    """How many files the source phase parsed."""
    seen: list[str] = []
    real = source_files.lint_text

    def lint_text(path, data, rules, always_parse=False):
        seen.append(path)
        return real(path, data, rules, always_parse)

    monkeypatch.setattr(source_files, "lint_text", lint_text)
    return seen


def test_a_second_run_reads_every_file_from_the_cache_and_reports_the_same(tmp_path, counted):
    root = _project(tmp_path)
    first = _check(root, cache=True, jobs=1)
    assert first["findings"], "the fixtures have findings"
    parsed = len(counted)
    assert parsed == 3
    assert (root / ".kernlint_cache" / ".gitignore").read_text().strip().endswith("*")
    second = _check(root, cache=True, jobs=1)
    assert second == first
    assert len(counted) == parsed, "nothing was parsed again"


def test_a_changed_file_or_selection_is_linted_again(tmp_path, counted):
    root = _project(tmp_path)
    first = _check(root, cache=True, jobs=1)
    edited = sorted(root.glob("*.py"))[0]
    edited.write_text(edited.read_text() + "\n# edited\n")
    again = _check(root, cache=True, jobs=1)
    assert counted[3:] == [edited.name]
    assert again == first
    narrowed = _check(root, cache=True, jobs=1, select=["KL101"])
    assert len(counted) == 7, "another selection is another key"
    assert {f[3] for f in narrowed["findings"]} <= {"KL101"}


def test_noqa_applies_to_findings_read_from_the_cache(tmp_path):
    root = _project(tmp_path, 1)
    target = next(root.glob("*.py"))
    line = _check(root, cache=True)["findings"][0][1]
    lines = target.read_text().splitlines()
    lines[line - 1] += "  # noqa"
    target.write_text("\n".join(lines) + "\n")
    silenced = _check(root, cache=True)
    assert all(f[1] != line for f in silenced["findings"])
    assert _check(root, cache=True) == silenced  # the hit re-reads the suppressions of the same text


def test_no_cache_neither_reads_nor_writes(tmp_path, counted):
    root = _project(tmp_path, 1)
    _check(root, cache=False)
    _check(root, cache=False)
    assert len(counted) == 2
    assert not (root / ".kernlint_cache").exists()


def test_the_cli_keeps_a_cache_unless_told_not_to(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from kernlint.cli import main

    root = _project(tmp_path, 1)
    monkeypatch.chdir(root)
    runner = CliRunner()
    monkeypatch.delenv("KERNLINT_NO_CACHE", raising=False)
    cold = runner.invoke(main, ["check", ".", "--output-format", "json"])
    assert cold.exit_code == 1, cold.output
    assert list((root / ".kernlint_cache" / "source").rglob("*.source.json.gz"))
    warm = runner.invoke(main, ["check", ".", "--output-format", "json"])
    assert warm.output == cold.output
    shutil.rmtree(root / ".kernlint_cache")
    off = runner.invoke(main, ["check", ".", "--no-cache"])
    assert off.exit_code == 1
    assert not (root / ".kernlint_cache").exists()


def test_a_file_that_cannot_be_parsed_is_not_kept(tmp_path, counted):
    (tmp_path / "pyproject.toml").write_text("[tool.kernlint]\n")
    (tmp_path / "broken.py").write_text("import triton\n@triton.jit\ndef k(:\n    pass\n")
    first = _check(tmp_path, cache=True)
    assert first["errors"]
    assert _check(tmp_path, cache=True) == first
    assert len(counted) == 2, "an error is reported again, never read back as a clean file"


def _inputs(paths: list[Path]) -> list[FileInput]:
    return [FileInput(p.name, p, None, True) for p in paths]


def test_workers_return_each_files_result_in_order():
    from kernlint.check import source_rules
    from kernlint.catalogue import select_codes

    codes = select_codes(None, [])
    paths = sorted(BUG.glob("*.py"))[:12]
    here = [(x.display, [f.to_dict() for f in x.result.findings])
            for x in lint_files(_inputs(paths), source_rules(codes), codes, jobs=1)]
    there = [(x.display, [f.to_dict() for f in x.result.findings])
             for x in lint_files(_inputs(paths), source_rules(codes), codes, jobs=2)]
    assert [d for d, _ in here] == [p.name for p in paths]
    assert there == here
    assert any(f for _, f in here)


_VICTIM: list[str] = []


def _dies_on_the_victim(item):
    if item.display in _VICTIM:
        os._exit(1)  # as a worker killed by the system
    return source_files._lint(item, source_files._worker_rules)


def test_a_worker_that_dies_leaves_its_files_to_the_calling_process(monkeypatch):
    from kernlint.check import source_rules
    from kernlint.catalogue import select_codes

    codes = select_codes(None, [])
    paths = sorted(BUG.glob("*.py"))[:8]
    monkeypatch.setattr(source_files, "_lint_in_worker", _dies_on_the_victim)
    here: list[str] = []  # what this process lints (a worker's list is its own copy)
    real = source_files._lint
    monkeypatch.setattr(source_files, "_lint", lambda item, rules, keep_model=False: here.append(item.display)
                        or real(item, rules, keep_model))
    _VICTIM[:] = [paths[3].name]
    try:
        out = list(lint_files(_inputs(paths), source_rules(codes), codes, jobs=2))
    finally:
        _VICTIM.clear()
    assert [x.display for x in out] == [p.name for p in paths]
    victim = next(x for x in out if x.display == paths[3].name).result
    assert victim.files == 1 and not victim.errors
    assert paths[3].name in here
