"""SARIF output validates against the official 2.1.0 schema and GitHub code scanning's extra rules."""

import json
from pathlib import Path

import jsonschema
import pytest

from kernlint.check import Options, run_check
from kernlint.config import load
from kernlint.model import FileError
from kernlint.report.sarif import build

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


@pytest.fixture(scope="module")
def log():
    config = load(ROOT)
    result = run_check([ROOT / "fixtures" / "triton"], config, Options())
    result.errors.append(FileError("fixtures/broken.py", "SyntaxError: invalid syntax", 3, 7))
    return build(result, config.root)


def test_validates_against_official_schema(log):
    jsonschema.validate(log, SCHEMA)


def test_github_requirements(log):
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "kernlint" and driver["version"] and driver["informationUri"].startswith("https://")
    ids = [r["id"] for r in driver["rules"]]
    assert len(ids) == len(set(ids))
    for rule in driver["rules"]:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert len(rule["shortDescription"]["text"]) <= 1024 and len(rule["fullDescription"]["text"]) <= 1024
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in ("note", "warning", "error")
        props = rule["properties"]
        assert props["category"] in props["tags"]
        assert props["precision"] in ("very-high", "high", "medium", "low")
        assert props["problem.severity"] in ("error", "warning", "recommendation")
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/")
    assert run["results"], "fixtures must produce results"
    for res in run["results"]:
        assert res["level"] in ("note", "warning", "error")  # explicit even when "warning"
        assert ids[res["ruleIndex"]] == res["ruleId"]
        assert res["message"]["text"]
        loc = res["locations"][0]["physicalLocation"]
        uri = loc["artifactLocation"]["uri"]
        assert not uri.startswith(("/", "file:")) and loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        region = loc["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert (region["endLine"], region["endColumn"]) > (region["startLine"], region["startColumn"])
        assert res["properties"]["phase"] == "source" and res["properties"]["verdict"] == "suspected"
        assert res["partialFingerprints"]["kernlint/v1"]


def test_file_errors_become_notifications(log):
    inv = log["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    note = inv["toolExecutionNotifications"][0]
    assert note["level"] == "error"
    assert note["locations"][0]["physicalLocation"]["region"]["startLine"] == 3


def test_warning_level_is_written_explicitly():
    from kernlint.model import Finding, Level, RunResult, Span

    result = RunResult(findings=[Finding("KL103", "a.py", Span(1, 1, 1, 2), "m", Level.WARNING)])
    res = build(result, ROOT)["runs"][0]["results"][0]
    assert res["level"] == "warning" and res["kind"] == "fail"


def _walk(node, path=""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _walk(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, f"{path}/{i}")
    else:
        yield path, node


def test_no_sarif_om_default_values(log):
    """sarif-om's placeholders (index -1, rank -1.0, language, newline sequences) are not written."""
    for path, value in _walk(log):
        if "/properties/" in path:
            continue  # kernlint's own property bags
        assert value not in (-1, -1.0), path
        assert not path.endswith(("/language", "/newlineSequences/0")), path


def test_full_description_ends_at_a_sentence_and_help_has_the_full_docs(log):
    from kernlint import catalogue

    rules = catalogue.all_rules()
    for rule in log["runs"][0]["tool"]["driver"]["rules"]:
        text = rule["fullDescription"]["text"]
        assert len(text) <= 1024 and text.endswith((".", "!", "?", ")", "`")), (rule["id"], text[-40:])
        assert rule["help"]["markdown"] == rules[rule["id"]].docs.strip()


def _lint_dir(folder: Path, root: Path):
    from kernlint.config import Config

    return run_check([folder], Config(root=root), Options(respect_gitignore=False))


def test_uris_are_percent_encoded_and_outside_files_absolute(tmp_path):
    project = tmp_path / "project"
    (project / "odd dir").mkdir(parents=True)
    bad = (ROOT / "fixtures" / "triton" / "vector_add_bad.py").read_text()
    (project / "odd dir" / "a#b%c.py").write_text(bad)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.py").write_text(bad)
    result = _lint_dir(project, project)
    result.extend(_lint_dir(outside, project))
    log = build(result, project)
    jsonschema.validate(log, SCHEMA)
    locations = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["locations"][0]["physicalLocation"]["artifactLocation"]
                 for r in log["runs"][0]["results"]}
    assert locations["odd%20dir/a%23b%25c.py"]["uriBaseId"] == "%SRCROOT%"
    absolute = (outside / "x.py").resolve().as_uri()
    assert absolute.startswith("file:///") and "uriBaseId" not in locations[absolute]


def test_fingerprints_survive_lines_moving(tmp_path):
    bad = (ROOT / "fixtures" / "triton" / "matmul_bad.py").read_text()
    (tmp_path / "m.py").write_text(bad)
    before = build(_lint_dir(tmp_path, tmp_path), tmp_path)["runs"][0]["results"]
    (tmp_path / "m.py").write_text("# a comment\n\n\n" + bad)
    after = build(_lint_dir(tmp_path, tmp_path), tmp_path)["runs"][0]["results"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in after] == [
        r["locations"][0]["physicalLocation"]["region"]["startLine"] + 3 for r in before]
    prints = [r["partialFingerprints"]["kernlint/v1"] for r in before]
    assert prints == [r["partialFingerprints"]["kernlint/v1"] for r in after]
    assert len(set(prints)) == len(prints)


def test_other_accesses_a_run_saw_are_related_locations():
    from kernlint.model import Finding, Level, RunResult, Span, Verdict

    store = Finding("KL103", "k.py", Span(17, 5, 17, 40), "race", Level.ERROR, verdict=Verdict.CONFIRMED, evidence={
        "dynamic": [{"tool": "interpreter", "kind": "race-write", "line": 17},
                    {"tool": "interpreter", "kind": "race-read", "line": 16, "note": "the other access of the same race"},
                    {"tool": "interpreter", "kind": "race-read", "line": 16},
                    {"tool": "interpreter", "note": "the line ran and the tool saw no violation"}]})
    plain = Finding("KL101", "k.py", Span(9, 1, 9, 2), "oob", Level.ERROR)
    log = build(RunResult(findings=[store, plain]), ROOT)
    jsonschema.validate(log, SCHEMA)
    by_rule = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    related = by_rule["KL103"]["relatedLocations"]
    assert [(r["id"], r["physicalLocation"]["region"]["startLine"]) for r in related] == [(0, 16)]
    assert related[0]["physicalLocation"]["artifactLocation"]["uri"] == "k.py"
    assert related[0]["message"]["text"].startswith("race-read: the other access")
    assert "relatedLocations" not in by_rule["KL101"]
