"""What the wrapper code around a launch says about assignments and block sizes (text level), for
the overflow and block-size rules (KL104, KL107)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kernlint.source.configs import config_values, int_values
from kernlint.source.discover import split_top_level
from kernlint.source.interpret import KernelState


def _assignment(state: KernelState, name: str, before: int) -> tuple[list[str], str] | None:
    """(targets, right-hand side) of the last ``name = ...`` or ``a, name = ...`` before ``before``."""
    return state.info.text_index.last_assignment(name, before)


assignment = _assignment


def assigned_value(state: KernelState, name: str, before: int) -> str | None:
    """What ``name`` was last assigned before ``before``: ``q.shape[1]`` for ``head`` in
    ``batch, head = b.shape[0], q.shape[1]``; None when that cannot be told element by element."""
    found = _assignment(state, name, before)
    if found is None or name not in found[0]:
        return None
    targets, rhs = found
    values = split_top_level(rhs)
    return values[targets.index(name)] if len(values) == len(targets) else None


@dataclass(frozen=True)
class ValueSource:
    """Where a constexpr's value comes from: the parameter's default, autotune config ``number``,
    or the launch on line ``number``."""

    kind: str  # "default", "autotune" or "launch"
    number: int = 0

    def __str__(self) -> str:
        if self.kind == "default":
            return "its default"
        if self.kind == "autotune":
            return f"autotune config {self.number}"
        return f"the launch on line {self.number}"


def block_values(state: KernelState, name: str) -> list[tuple[int, ValueSource]]:
    """Values a constexpr parameter takes: its default, autotune configs, launch keywords."""
    out = []
    for p in state.kernel.kernel.params:
        if p.name == name and p.default is not None and re.fullmatch(r"\d+", p.default.strip()):
            out.append((int(p.default), ValueSource("default")))
    for i, values in enumerate(config_values(state.kernel.kernel)):
        if values is not None and name in int_values(values):
            out.append((values[name], ValueSource("autotune", i + 1)))
    for launch in state.info.facts.launches_of(state.name):
        arg = launch.args.get(name)
        if arg is not None and arg.text.isdigit() and launch.value(name) is not None:
            out.append((int(arg.text), ValueSource("launch", launch.span.line)))
    return out
