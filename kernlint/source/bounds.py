"""What the wrapper code around a launch says about grids, block sizes and extents (text level),
for the race, overflow and block-size rules (KL103, KL104, KL107)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from kernlint.source.discover import split_top_level
from kernlint.source.interpret import KernelState


_GRIDS: dict[str, cst.BaseExpression | None] = {}


def _parsed_grid(text: str) -> cst.BaseExpression | None:
    """``text`` parsed once (every rule and every kernel launched there asks for the same grid)."""
    if text not in _GRIDS:
        if len(_GRIDS) > 10000:
            _GRIDS.clear()
        try:
            _GRIDS[text] = cst.parse_expression(text)
        except Exception:  # noqa: BLE001 - a multi-line or unusual grid: unknown
            _GRIDS[text] = None
    return _GRIDS[text]


def grid_expression(state: KernelState, launch) -> cst.BaseExpression | None:
    """The launch's grid, through ``grid = ...`` / ``grid = lambda meta: ...`` assigned before it."""
    grid = launch.grid
    if isinstance(grid, cst.Name):
        source = state.info.source
        found = None
        for m in re.finditer(rf"^[ \t]*{re.escape(grid.value)}[ \t]*=[ \t]*(.+)$", source[:launch.start], re.M):
            found = m
        if found is None:
            return None
        found = _balanced(source, found.start(1), launch.start) or found.group(1)
        grid = _parsed_grid(found.split("#", 1)[0].strip())
        if grid is None:
            return None
    if isinstance(grid, cst.Lambda):
        grid = grid.body
    return grid


def _balanced(source: str, start: int, limit: int) -> str | None:
    """The expression starting at ``start``, continued over lines while brackets are open (comments
    dropped)."""
    depth, out, i, end = 0, [], start, min(limit, start + 4000)
    while i < end:
        ch = source[i]
        if ch == "#":
            i = source.find("\n", i, end)
            if i < 0:
                return None
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "\n" and depth <= 0:
            return "".join(out)
        out.append(ch)
        i += 1
    return None


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
    for i, config in enumerate(state.kernel.kernel.autotune_configs):
        for m in re.finditer(rf"['\"]{re.escape(name)}['\"]\s*:\s*(\d+)", config):
            out.append((int(m.group(1)), ValueSource("autotune", i + 1)))
    for launch in state.info.facts.launches_of(state.name):
        arg = launch.args.get(name)
        if arg is not None and arg.text.isdigit() and launch.value(name) is not None:
            out.append((int(arg.text), ValueSource("launch", launch.span.line)))
    return out












