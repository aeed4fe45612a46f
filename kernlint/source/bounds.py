"""What the wrapper code around a launch says about grids, block sizes and extents (text level),
for the grid and block-pointer rules (KL108, KL109)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from kernlint.source.discover import split_top_level
from kernlint.source.interpret import KernelState


_DIVISIBLE = re.compile(
    r"^[ \t]*(?:assert[^#\n]*%[ \t]*(?:\w+\.)*(\w+)\)?[ \t]*==[ \t]*0"
    r"|if[^#\n]*%[ \t]*(?:\w+\.)*(\w+)\)?[ \t]*!=[ \t]*0)",
    re.M,
)


def divisible_blocks(state: KernelState) -> set[str]:
    """Block names the module asserts sizes are multiples of (``assert K % BLOCK_K == 0``)."""
    cached = getattr(state.info, "_divisible", None)
    if cached is None:
        cached = {(a or b).lower() for a, b in _DIVISIBLE.findall(state.info.source)}
        state.info._divisible = cached  # type: ignore[attr-defined]
    return cached


_CEIL = re.compile(r"cdiv|ceil|\+[^,]*-\s*1\s*\)\s*//|-\s*\(\s*-")


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


def grid_texts(state: KernelState, grid: cst.BaseExpression | None) -> list[str] | None:
    """A grid's per-axis expressions as text (a single expression is one axis); None when unknown."""
    if isinstance(grid, (cst.Tuple, cst.List)):
        return [state.info.module.code_for_node(e.value) for e in grid.elements]
    return None if grid is None else [state.info.module.code_for_node(grid)]


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


def _last_assignment(state: KernelState, name: str, before: int) -> str | None:
    """The right-hand side of the last ``name = ...`` (or ``a, name = ...``) before ``before``."""
    found = _assignment(state, name, before)
    return found[1] if found else None


def assigned_value(state: KernelState, name: str, before: int) -> str | None:
    """What ``name`` was last assigned before ``before``: ``q.shape[1]`` for ``head`` in
    ``batch, head = b.shape[0], q.shape[1]``; None when that cannot be told element by element."""
    found = _assignment(state, name, before)
    if found is None or name not in found[0]:
        return None
    targets, rhs = found
    values = split_top_level(rhs)
    return values[targets.index(name)] if len(values) == len(targets) else None


_SIZE_EXPR = re.compile(r"\.shape\b|\.size\(|\.numel\(\)|\bnumel\(|\blen\(")


def _exact_count(state: KernelState, text: str, before: int, depth: int = 0) -> bool:
    """A grid extent that counts whole items: a literal, a tensor size, a floor division, a name
    assigned one of those before the launch, or a product of them. Anything else (``cdiv``, a value
    computed elsewhere) may round up to a partial block."""
    text = text.split("#", 1)[0].strip().strip("()").strip()
    if not text or _CEIL.search(text):
        return False
    if re.fullmatch(r"\d+", text) or "//" in text or _SIZE_EXPR.search(text):
        return True
    if depth >= 2:
        return False
    if re.fullmatch(r"[A-Za-z_]\w*", text):
        found = _last_assignment(state, text, before)
        if found is None:
            # a parameter of the function that launches (`def run(rows, ...)`): a count it was given
            params = state.info.text_index.last_def_params(before)
            return params is not None and re.search(rf"(?<![\w.]){re.escape(text)}\b", params) is not None
        return _exact_count(state, found, before, depth + 1)
    parts = re.split(r"\s*\*\s*", text)
    return len(parts) > 1 and all(_exact_count(state, p, before, depth + 1) for p in parts)


def exact_grid_axes(state: KernelState) -> set[int]:
    """Grid axes along which no program starts a partial block: every launch in the module sizes
    them without ceiling division (``n_rows``, ``n // BLOCK``), or leaves them at 1."""
    launches = state.info.launches_of(state.name)
    if not launches:
        return set()
    common: set[int] | None = None
    for launch in launches:
        grid = grid_expression(state, launch)
        # a grid computed elsewhere (a name, call, attribute or item left unresolved): unknown
        opaque = isinstance(grid, (cst.Name, cst.Call, cst.Attribute, cst.Subscript))
        elements = None if opaque else grid_texts(state, grid)
        if elements is None:
            return set()
        axes = {i for i, text in enumerate(elements) if _exact_count(state, text, launch.start)}
        axes |= {1, 2} - set(range(len(elements)))  # axes the grid leaves at 1
        common = axes if common is None else common & axes
    return common or set()


def launch_argument(state: KernelState, launch, name: str) -> cst.BaseExpression | None:
    """The expression a launch passes for the kernel parameter ``name`` (keyword or position)."""
    value = launch.keyword(name)
    if value is not None:
        return value
    positional = [a.value for a in launch.call.args if a.keyword is None and not a.star]
    names = [p.name for p in state.kernel.kernel.params]
    if name in names and names.index(name) < len(positional):
        return positional[names.index(name)]
    return None


def launch_argument_text(state: KernelState, launch, name: str) -> str:
    """:func:`launch_argument` as source text ("" when the launch passes nothing for ``name``)."""
    value = launch_argument(state, launch, name)
    return "" if value is None else state.info.module.code_for_node(value)


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


_CDIV = re.compile(r"^(?:triton\.|tl\.)?cdiv\((.*)\)$", re.S)
_CEIL_DIV = re.compile(r"^\(\s*(.+?)\s*\+\s*(.+?)\s*-\s*1\s*\)\s*//\s*(.+)$", re.S)
_CEIL_DIV_LITERAL = re.compile(r"^\(\s*(.+?)\s*\+\s*(\d+)\s*\)\s*//\s*(\d+)$", re.S)
_META = re.compile(r"""^\w+\[\s*['"](\w+)['"]\s*\]$""")


def _squeeze(text: str) -> str:
    text = re.sub(r"\s+", "", text)
    while text.startswith("(") and text.endswith(")") and _matching_paren(text) == len(text) - 1:
        text = text[1:-1]
    return text


def _matching_paren(text: str) -> int:
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return i
    return -1


def _ceil_division(text: str) -> tuple[str, str] | None:
    """``cdiv(x, b)`` / ``(x + b - 1) // b`` -> (x, b), squeezed."""
    text = _squeeze(text)
    m = _CDIV.match(text)
    if m:
        args = split_top_level(m.group(1))
        return (args[0], args[1]) if len(args) == 2 else None
    m = _CEIL_DIV.match(text) or _CEIL_DIV_LITERAL.match(text)
    if m and (m.re is _CEIL_DIV and _squeeze(m.group(2)) == _squeeze(m.group(3))
              or m.re is _CEIL_DIV_LITERAL and int(m.group(2)) == int(m.group(3)) - 1):
        return _squeeze(m.group(1)), _squeeze(m.group(3))
    m = re.match(r"^math\.ceil\((.+)/(.+)\)$", text)
    if m and "," not in m.group(1):
        return _squeeze(m.group(1)), _squeeze(m.group(2))
    return None


def _rounded_up(text: str) -> tuple[str, str] | None:
    """``ceil(x / b) * b``, ``cdiv(x, b) * b``, ``(x + b - 1) // b * b`` -> (x, b)."""
    text = _squeeze(text)
    i = text.rfind("*")
    if i <= 0 or text[i - 1] == "*":
        return None
    found = _ceil_division(text[:i])
    return found if found is not None and found[1] == _squeeze(text[i + 1:]) else None


def _block_sizes(state: KernelState, launch, family: str) -> set[int] | None:
    """The values a block takes at one launch (a literal, a module constant, its default or autotune
    configs); None when one of them is unknown."""
    text = launch_argument_text(state, launch, family).strip()
    if text:
        if re.fullmatch(r"\d+", text):
            return {int(text)}
        host = state.info.facts.launch_at(launch.start)
        value = host.value(family) if host is not None else None
        if value is not None and isinstance(value.value, int) and not isinstance(value.value, bool):
            return {value.value}
        return None
    values = {v for v, where in block_values(state, family) if where.kind != "launch"}
    return values or None


def rounded_extent_axes(state: KernelState, families: frozenset[str], params: frozenset[str]) -> set[int]:
    """Grid axes whose blocks never leave an extent the wrapper rounded up: every launch runs the axis
    over ``cdiv(x, BLOCK)`` programs and passes a parameter the access is based on as ``x`` rounded
    up to a multiple ``b`` of every value of ``BLOCK`` (``ceil(x / 64) * 64``): the last block ends
    at ``cdiv(x, BLOCK) * BLOCK <= ceil(x / b) * b``, inside a tensor laid out on that extent."""
    launches = state.info.launches_of(state.name)
    if not launches or not families or not params:
        return set()
    common: set[int] | None = None
    for launch in launches:
        elements = grid_texts(state, grid_expression(state, launch))
        if elements is None:
            return set()
        rounded = []  # (x, b) of every parameter passed a rounded-up extent
        for p in params:
            text = launch_argument_text(state, launch, p).strip()
            if not text:
                continue
            if re.fullmatch(r"[A-Za-z_]\w*", text):
                text = _last_assignment(state, text, launch.start) or text
            found = _rounded_up(text)
            if found is not None:
                rounded.append(found)
        axes = set()
        for axis, element in enumerate(elements):
            division = _ceil_division(element)
            if division is None:
                continue
            x, block = division
            meta = _META.match(block)
            block = meta.group(1) if meta else block
            family = next((f for f in families if f == block or _squeeze(launch_argument_text(state, launch, f)) == block),
                          None)
            if family is None:
                continue
            sizes = _block_sizes(state, launch, family)
            for rx, b in rounded:
                if rx != x:
                    continue
                if b == block or (sizes and re.fullmatch(r"\d+", b) and all(int(b) % v == 0 for v in sizes)):
                    axes.add(axis)
        common = axes if common is None else common & axes
    return common or set()


