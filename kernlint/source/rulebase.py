"""Base class of source rules: they read the events of one interpreted kernel."""

from __future__ import annotations

from typing import ClassVar, Iterable

import libcst as cst

from kernlint.model import Finding, Frontend, Phase, Span
from kernlint.rule import Rule


class SourceRule(Rule):
    phase = Phase.SOURCE
    frontends: ClassVar[tuple[Frontend, ...]] = (Frontend.TRITON,)
    #: reads the padding facts of masked loads: a kernel it reports on is interpreted again with
    #: the bounds engine saying which axes a load's mask cannot pad (:func:`kernlint.source.phase.lint_module`, kernel by kernel)
    reads_padding: ClassVar[bool] = False

    def check(self, state) -> Iterable[Finding]:  # state: KernelState or TileLangState
        raise NotImplementedError

    def finding(self, state, node: cst.CSTNode, message: str, **evidence) -> Finding:
        # a node of a helper the kernel inlines (a product in ``_row_offset``) is placed in the helper
        owner = state.info.owner(node)
        if owner is not None and owner is not state.kernel:
            finding = self.finding_at(state, owner.locator.span(node), message, **evidence)
            finding.kernel = owner.kernel.name
            return finding
        return self.finding_at(state, state.kernel.locator.span(node, state.anchor(node)), message, **evidence)

    def finding_at(self, state, span: Span, message: str, **evidence) -> Finding:
        """A finding at ``span`` of the kernel's module (a launch's, outside the kernel's body)."""
        kernel = state.kernel
        return Finding(
            rule=self.code,
            path=kernel.kernel.path,
            span=span,
            message=message,
            level=self.level,
            phase=Phase.SOURCE,
            kernel=kernel.kernel.name,
            evidence={k: v for k, v in evidence.items() if v is not None},
        )
