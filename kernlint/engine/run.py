"""The engine's entry for source rules: evaluate a kernel once, judge every access once."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kernlint.engine.evaluate import Access, evaluate
from kernlint.engine.facts import launch_facts
from kernlint.engine.query import Prover, Violation


@dataclass
class BoundsReport:
    accesses: list[Access]
    violations: list[Violation]


_VAR = re.compile(r"lane!(\d+)|pid!(\d+)|grid!(\d+)|(\w+)!\d+")


def _describer(model, state):
    code = state.info.module.code_for_node
    def describe(term) -> str:
        if isinstance(term, Access):
            text = " ".join(code(term.mask_node).split()) if term.mask_node is not None else "?"
            text = text if len(text) <= 80 else text[:77] + "..."
            line = state.kernel.locator.span(term.node, state.anchors.get(id(term.node))).line
            return f"`{text}` on line {line}" if term.helper is None else f"`{text}` in `{term.helper}`"
        def name(m):
            if m.group(1):
                return f"lane[axis -{int(m.group(1)) + 1}]"
            if m.group(2):
                return f"program_id({m.group(2)})"
            if m.group(3):
                return f"num_programs({m.group(3)})"
            return m.group(4)
        return _VAR.sub(name, str(term))

    return describe


def bounds_report(state) -> BoundsReport:
    """Every access of the kernel and those that can leave their tensor (computed once per state)."""
    cached = getattr(state, "_bounds_report", None)
    if cached is not None:
        return cached
    model = evaluate(state.info, state.kernel)
    prover = Prover(model, launch_facts(state, model), _describer(model, state))
    violations = []
    seen = set()
    for access in model.accesses:
        key = (id(access.node), id(access.site))
        if key in seen:
            continue
        found = prover.judge(access)
        if found is not None:
            seen.add(key)
            violations.append(found)
    report = BoundsReport(model.accesses, violations)
    state._bounds_report = report
    return report
