"""What the wrapper code around a launch assigns (text level), for the overflow rule (KL104)."""

from __future__ import annotations

from kernlint.source.discover import split_top_level
from kernlint.source.interpret import KernelState


def assignment(state: KernelState, name: str, before: int) -> tuple[list[str], str] | None:
    """(targets, right-hand side) of the last ``name = ...`` or ``a, name = ...`` before ``before``."""
    return state.info.text_index.last_assignment(name, before)


def assigned_value(state: KernelState, name: str, before: int) -> str | None:
    """What ``name`` was last assigned before ``before``: ``q.shape[1]`` for ``head`` in
    ``batch, head = b.shape[0], q.shape[1]``; None when that cannot be told element by element."""
    found = assignment(state, name, before)
    if found is None or name not in found[0]:
        return None
    targets, rhs = found
    values = split_top_level(rhs)
    return values[targets.index(name)] if len(values) == len(targets) else None
