"""Every rule's metadata is complete and its examples do what they say."""

import json

import libcst as cst
import pytest

from kernlint import catalogue
from kernlint.model import CATEGORIES, Phase
from kernlint.eval.rulebase import CandidateModule
from kernlint.rule import expected_lines
from tests.helpers import lint

RULES = catalogue.all_rules()
SOURCE = {c: r for c, r in RULES.items() if r.phase is Phase.SOURCE}
EVAL = {c: r for c, r in RULES.items() if r.phase is Phase.EVAL}


def test_catalogue_is_not_empty_and_codes_are_stable():
    assert {"KL101", "KL102", "KL103"} <= set(RULES)
    assert list(RULES) == sorted(RULES)


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_metadata(code):
    rule = RULES[code]
    assert rule.validate() == []
    assert rule.category in CATEGORIES
    meta = rule.metadata()
    json.dumps(meta)
    assert meta["confirm"]["tool"]


def _examples(rules, kind):
    return [(code, i) for code, r in sorted(rules.items()) for i in range(len(getattr(r, kind)))]


@pytest.mark.parametrize("code,index", _examples(SOURCE, "bad"))
def test_source_bad_example_yields_exactly_the_rule(code, index):
    example = SOURCE[code].bad[index]
    expected = {line for line, codes in expected_lines(example).items() if code in codes}
    found = lint(example, select={code}).findings
    assert {f.span.line for f in found} == expected
    assert {f.rule for f in found} == {code}


@pytest.mark.parametrize("code,index", _examples(SOURCE, "good"))
def test_source_good_example_is_clean_under_every_rule(code, index):
    result = lint(SOURCE[code].good[index])
    assert result.errors == []
    assert [(f.rule, f.span.line, f.message) for f in result.findings] == []


@pytest.mark.parametrize("code,index", _examples(EVAL, "bad"))
def test_eval_bad_example_yields_the_rule(code, index):
    rule = EVAL[code]
    example = rule.bad[index]
    expected = {line for line, codes in expected_lines(example).items() if code in codes}
    found = list(rule().check(CandidateModule(cst.parse_module(example), "candidate.py")))
    assert {f.span.line for f in found} == expected
    assert {f.rule for f in found} == {code}


@pytest.mark.parametrize("code,index", _examples(EVAL, "good"))
def test_eval_good_example_is_clean(code, index):
    rule = RULES[code]
    assert list(rule().check(CandidateModule(cst.parse_module(rule.good[index]), "candidate.py"))) == []


def test_rules_ship_inside_the_package():
    import kernlint.rules

    assert kernlint.rules.__name__ == "kernlint.rules"
    assert len(catalogue.all_rules()) == len(RULES)


def test_rules_readme_is_generated_from_the_catalogue():
    from pathlib import Path

    readme = Path(__file__).resolve().parents[1] / "rules" / "README.md"
    assert readme.read_text() == catalogue.markdown(), "run: kernlint rules --output-format markdown > rules/README.md"


@pytest.mark.parametrize("code", sorted(c for c, r in RULES.items() if r.confirm and r.confirm.tool == "ncu"))
def test_ncu_checks_name_only_metrics(code):
    # ncu rejects the whole profiling pass for one unknown name: a check is a comma-separated metric list
    from kernlint.dynamic.ncu import METRIC_NAME, metrics_for

    names = [m.strip() for m in RULES[code].confirm.check.split(",")]
    assert names and all(METRIC_NAME.match(m) for m in names), names
    assert set(names) <= set(metrics_for(checks=[RULES[code].confirm.check]))
