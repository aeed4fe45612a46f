"""Base class of the IR rules (``rules/kl3*.py``): fed one :class:`CompiledKernel` at a time."""

from __future__ import annotations

from typing import Any, ClassVar, Iterable, Sequence

from kernlint.ir.artifacts import CompiledKernel
from kernlint.model import Finding, Phase
from kernlint.rule import Rule

#: at most this many IR lines are copied into a finding's evidence
MAX_EXCERPT_LINES = 12


class IRRule(Rule):
    phase: ClassVar[Phase] = Phase.IR
    #: rule options and their defaults (``run_ir_phase(options={"KL304": {"threshold": 0.5}})``)
    options: ClassVar[dict[str, Any]] = {}

    def __init__(self, **overrides: Any):
        self.opts = {**self.options, **overrides}

    def check(self, compiled: CompiledKernel) -> Iterable[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- helpers ------------------------------------------------------------------------------
    def finding(self, compiled: CompiledKernel, line: int, col: int, message: str, *,
                ir: str, excerpt: Sequence[str], chain: Sequence[str] = (),
                measurements: dict[str, Any] | None = None, **evidence: Any) -> Finding:
        ev = {
            "specialization": compiled.spec.to_dict(),
            "specialization_label": compiled.spec.label,
            "target": f"sm_{compiled.capability}",
            "ir": ir,
            "excerpt": list(excerpt)[:MAX_EXCERPT_LINES],
        }
        if chain:
            ev["inlined_chain"] = list(chain)
        symbol = compiled.metadata.get("name")
        if symbol and symbol != compiled.kernel:
            ev["device_symbol"] = symbol
        if compiled.metadata.get("launch"):  # grid and block fixed at compile time (TileLang)
            ev["launch_config"] = compiled.metadata["launch"]
        ev.update(evidence)
        return Finding(
            rule=self.code,
            path=compiled.path,
            span=compiled.span(line, col),
            message=message,
            level=self.level,
            phase=Phase.IR,
            kernel=compiled.kernel,
            evidence=ev,
            measurements=dict(measurements or {}),
        )
