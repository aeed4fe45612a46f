"""The study document is what benchmarks/study/report.py makes of the committed JSONL, nothing else."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _report():
    spec = importlib.util.spec_from_file_location("study_report", ROOT / "benchmarks" / "study" / "report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_document_and_figures_are_regenerated_exactly():
    folder = ROOT / "docs" / "study"
    text, svgs = _report().render(folder)
    assert text == (ROOT / "docs" / "study-tritonbench.md").read_text(), "run: python benchmarks/study/report.py"
    for name, svg in svgs.items():
        assert svg == (folder / name).read_text(), name


def test_candidates_of_a_task_whose_reference_fails_its_own_test_are_not_judged(tmp_path):
    report = _report()
    folder = ROOT / "docs" / "study"
    for name in ("records.jsonl", "confirmations.jsonl", "static_findings.jsonl"):
        (tmp_path / name).write_text((folder / name).read_text())
    (tmp_path / "reference_checks.jsonl").write_text(
        '{"task": "sin_kernel", "ok": false, "verdict": "wrong", "reasons": ["wrong: seed 0"], "error": "",'
        ' "null_models_passing": null, "device": "test"}\n')
    text, _ = report.render(tmp_path)
    row = next(line for line in text.splitlines() if line.startswith("| excluded:"))
    assert row.split("|")[2].strip() == "2"  # both models' answers to sin_kernel
    assert "`sin_kernel`: wrong: seed 0" in text
