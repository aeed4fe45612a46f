"""The rules by phase and code: every phase asks here which of its rules to run."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Iterable

from kernlint.catalogue import all_rules
from kernlint.model import Phase
from kernlint.rule import Rule


def for_phase(phase: Phase, codes: Iterable[str] | None = None) -> list[type[Rule]]:
    """The rule classes of ``phase``, in code order, restricted to ``codes`` when given."""
    wanted = {c.upper() for c in codes} if codes is not None else None
    return [rule for code, rule in all_rules().items()
            if rule.phase is phase and (wanted is None or code in wanted)]


def rule_files(phase: Phase) -> list[Path]:
    """The modules that define the rules of ``phase`` (what a cache of that phase's findings hangs on)."""
    return sorted({Path(inspect.getfile(rule)).resolve() for rule in for_phase(phase)})
