"""Base class of the anti-cheat (reward-hack) rules that ``kernlint eval`` runs on candidates.

An :class:`EvalRule` is a catalogue rule (``rules/kl5*.py``) with ``phase = Phase.EVAL``; its
``check`` takes a :class:`CandidateModule` (the candidate's libcst module and its path) and yields
findings with 1-based spans taken from libcst's ``PositionProvider``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterable, Iterator

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from kernlint.eval.static_facts import ModuleFacts, module_facts
from kernlint.model import Finding, Level, Phase, Span
from kernlint.rule import Confirmation, Rule

#: id(module) -> (module, positions); the module is kept so its id stays unique
_POS: dict[int, tuple[cst.Module, dict]] = {}


def positions(module: cst.Module) -> dict:
    hit = _POS.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    pos = wrapper.resolve(PositionProvider)
    if len(_POS) > 16:
        _POS.clear()
    _POS[id(module)] = (module, pos)
    return pos


class _Gather(cst.CSTVisitor):
    def __init__(self, types: tuple[type, ...]) -> None:
        self.types = types
        self.found: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, self.types):
            self.found.append(node)
        return True


def nodes_of(root: cst.CSTNode, *types: type) -> list[cst.CSTNode]:
    g = _Gather(types)
    root.visit(g)
    return g.found


@dataclass(frozen=True)
class CandidateModule:
    """What an eval rule reads: a candidate's parsed module and the path its findings name."""

    module: cst.Module
    path: str = "<candidate>"


class EvalRule(Rule):
    phase: ClassVar[Phase] = Phase.EVAL
    category: ClassVar[str] = "reward-hack"
    level: ClassVar[Level] = Level.ERROR
    confirm: ClassVar[Confirmation] = Confirmation(
        "eval", description="kernlint eval's runtime checks on the candidate"
    )

    def check(self, candidate: CandidateModule) -> Iterable[Finding]:  # pragma: no cover
        raise NotImplementedError

    # helpers -------------------------------------------------------------------------------
    @staticmethod
    def facts(module: cst.Module) -> ModuleFacts:
        return module_facts(module)

    @staticmethod
    def name_of(module: cst.Module, node: cst.BaseExpression) -> str:
        return module_facts(module).name_of(node)

    def reachable_nodes(self, module: cst.Module, *types: type) -> Iterator[tuple[str, cst.CSTNode]]:
        for qual, fn in self.facts(module).reachable_functions():
            for node in nodes_of(fn, *types):
                yield qual, node

    def finding(self, candidate: CandidateModule, node: cst.CSTNode, message: str, **evidence) -> Finding:
        r = positions(candidate.module)[node]
        return Finding(
            rule=self.code,
            path=candidate.path,
            span=Span(r.start.line, r.start.column + 1, r.end.line, r.end.column + 1),
            message=message,
            level=self.level,
            phase=Phase.EVAL,
            evidence=dict(evidence),
        )


def eval_rules() -> list[type[EvalRule]]:
    from kernlint.catalogue import all_rules

    return [r for r in all_rules().values() if issubclass(r, EvalRule)]


def check_source(source: str, path: str = "<candidate>", select: set[str] | None = None) -> list[Finding]:
    """Run every eval rule on ``source``; raises ``libcst.ParserSyntaxError`` on bad syntax."""
    candidate = CandidateModule(cst.parse_module(source), path)
    out: list[Finding] = []
    for rule in eval_rules():
        if select is not None and rule.code not in select:
            continue
        out.extend(rule().check(candidate))
    return sorted(out, key=lambda f: f.sort_key)
