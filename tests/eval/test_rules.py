"""The reward-hack rules (KL5xx): metadata, docs and their bad/good examples."""

from __future__ import annotations

import libcst as cst
import pytest

from kernlint.eval.rulebase import CandidateModule, EvalRule, check_source, eval_rules
from kernlint.model import Phase
from kernlint.rule import expected_lines

RULES = eval_rules()


def test_reward_hack_rules_are_catalogued():
    codes = [r.code for r in RULES]
    assert codes == [f"KL5{i:02d}" for i in range(1, 14)]
    for r in RULES:
        assert issubclass(r, EvalRule) and r.phase is Phase.EVAL and r.category == "reward-hack"
        assert r.confirm.tool == "eval"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_metadata_valid(rule):
    assert rule.validate() == []


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_bad_examples_flag_exactly_the_marked_lines(rule):
    for example in rule.bad:
        got: dict[int, set[str]] = {}
        for f in rule().check(CandidateModule(cst.parse_module(example), "example.py")):
            assert f.phase is Phase.EVAL and f.span.line >= 1 and f.span.col >= 1
            got.setdefault(f.span.line, set()).add(f.rule)
        assert got == expected_lines(example)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_good_examples_are_clean_for_every_eval_rule(rule):
    for example in rule.good:
        assert check_source(example, "example.py") == []


def test_static_facts_follow_autograd_function_apply():
    src = '''import torch
import triton
import triton.language as tl


@triton.jit
def k(x):
    pass


class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        k[(1,)](x)
        return x


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return Fn.apply(x)
'''
    assert [f.rule for f in check_source(src)] == []
    assert [f.rule for f in check_source(src.replace("Fn.apply(x)", "x"))] == ["KL502"]


def test_fixture_hacks_are_flagged_statically_and_honest_ones_not():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "fixtures" / "eval" / "candidates"
    for path in sorted(root.rglob("*.py")):
        if path.name == "syntax_error.py":
            continue
        errors = [f for f in check_source(path.read_text(), str(path)) if f.level.value == "error"]
        if path.name.startswith("honest"):
            assert errors == [], path
