"""Can a masked (or unmasked) access leave its tensor? Shared by the load and store rules."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import libcst as cst

from kernlint.source.discover import split_top_level
from kernlint.source.interpret import Access, KernelState
from kernlint.source.values import Bound, Lane


@dataclass
class BoundsProblem:
    axis: int
    kind: str  # unmasked | other-extent | inclusive | mask-not-passed
    lane: Lane
    bound: Bound | None
    message: str


def _families(lane: Lane) -> str:
    return " / ".join(sorted(lane.families)) or "?"


def _last_token(name: str) -> str:
    return name.lower().rsplit("_", 1)[-1]


def _unused_size_for(state: KernelState, lane: Lane) -> str | None:
    """An unread size parameter named like the block (``N`` for ``BLOCK_N``, ``n_cols`` for ``BLOCK_COLS``)."""
    tokens = {_last_token(f) for f in lane.families}
    return next((n for n in state.unused_sizes if _last_token(n) in tokens), None)


def _padded_at_launch(state: KernelState, lane: Lane) -> str | None:
    """A launch passes the block size as ``triton.next_power_of_2(...)``: the block exceeds the size."""
    if "next_power_of_2" not in state.info.source:
        return None
    for launch in state.info.launches_of(state.name):
        for family in lane.families:
            text = launch_argument_text(state, launch, family)
            if "next_power_of_2" in text:
                return text.strip()
    return None


def _tensor(state: KernelState, access: Access) -> frozenset[str]:
    """The kernel parameters an access's pointer is based on (constexprs, sizes and strides left out)."""
    from kernlint.source.interpret import SIZE_NAME

    constexprs = set(state.kernel.kernel.constexprs)
    return frozenset(p for p in access.ptr.params
                     if p not in constexprs and "stride" not in p.lower() and not SIZE_NAME.match(p))


def _bounded_elsewhere(state: KernelState, lane: Lane, access: Access) -> bool:
    """The kernel bounds this block elsewhere: on the same tensor, in a mask it computed and never
    passed, or on another tensor indexed by the same block moved the same way (the load of a row
    that is stored unmasked)."""
    base = _tensor(state, access)
    for other in state.accesses:
        if other is access or other.mask is None:
            continue
        shift = other.ptr.rank - other.mask.rank
        bounded = {d + shift: b for d, b in other.mask.bounds}
        for d, other_lane in other.ptr.lanes:
            b = bounded.get(d)
            if b is None or not (b.families & lane.families & other_lane.families):
                continue
            other_moves = frozenset(x for x in other_lane.shift if not x.startswith("exact:"))
            if base & _tensor(state, other) or other_moves == lane.shift:
                return True
    return any(any(b.families & lane.families for _, b in mask.bounds) for _, mask in state.unused_masks())


def _full_extent_block(state: KernelState, lane: Lane) -> bool:
    """Every launch passes the block size as a tensor's size (``BLOCK_DMODEL=q.shape[-1]``): one
    block spans the whole dimension."""
    launches = state.info.launches_of(state.name)
    if not launches:
        return False
    for launch in launches:
        texts = [t for t in (launch_argument_text(state, launch, f) for f in lane.families) if t]
        if not texts or not all(_tensor_size(state, t, launch.start) for t in texts):
            return False
    return True


def _tensor_size(state: KernelState, text: str, before: int, depth: int = 0) -> bool:
    text = text.strip()
    if _SIZE_EXPR.search(text) and "next_power_of_2" not in text and not _CEIL.search(text):
        return True
    if depth < 2 and re.fullmatch(r"[A-Za-z_]\w*", text):
        found = _last_assignment(state, text, before)
        return found is not None and _tensor_size(state, found, before, depth + 1)
    return False


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
        try:
            grid = cst.parse_expression(found.split("#", 1)[0].strip())
        except Exception:  # noqa: BLE001 - a multi-line or unusual grid: unknown
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
    cache = state.info.__dict__.setdefault("_assignments", {})
    key = (name, before)
    if key not in cache:
        found = None
        target = re.compile(rf"^[\w\s,]*?(?<![\w.]){re.escape(name)}\b[\w\s,]*$")
        for line in reversed(state.info.source[:before].splitlines()):
            if name not in line or "=" not in line:
                continue
            lhs, sep, rhs = line.partition("=")
            if sep and not rhs.startswith("=") and not lhs.rstrip().endswith(("!", "<", ">", "=")) and target.match(lhs):
                found = ([t.strip() for t in lhs.split(",")], rhs.split("#", 1)[0].strip())
                break
        cache[key] = found
    return cache[key]


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
            defs = list(re.finditer(r"^[ \t]*def[ \t]+\w+[ \t]*\(([^)]*)\)", state.info.source[:before], re.M))
            return bool(defs) and re.search(rf"(?<![\w.]){re.escape(text)}\b", defs[-1].group(1)) is not None
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


def block_values(state: KernelState, name: str) -> list[tuple[int, str]]:
    """Values a constexpr parameter takes: its default, autotune configs, launch keywords."""
    out = []
    for p in state.kernel.kernel.params:
        if p.name == name and p.default is not None and re.fullmatch(r"\d+", p.default.strip()):
            out.append((int(p.default), "its default"))
    for i, config in enumerate(state.kernel.kernel.autotune_configs):
        for m in re.finditer(rf"['\"]{re.escape(name)}['\"]\s*:\s*(\d+)", config):
            out.append((int(m.group(1)), f"autotune config {i + 1}"))
    # parsing launches costs: only when some launch could pass the block as a literal
    squeezed = state.info.__dict__.get("_squeezed")
    if squeezed is None:
        squeezed = state.info.__dict__["_squeezed"] = state.info.source.replace(" ", "")
    literal_launch = re.search(rf"(?<![\w.]){re.escape(name)}=\d", squeezed) is not None
    for launch in state.info.launches_of(state.name) if literal_launch else ():
        m = re.search(rf"(?<![\w.]){re.escape(name)}\s*=\s*(\d+)\b", launch.call_text)
        if m:
            line = state.info.span_of_offsets(launch.start, launch.end).line
            out.append((int(m.group(1)), f"the launch on line {line}"))
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
    values = {v for v, where in block_values(state, family) if not where.startswith("the launch")}
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


def _exact(state: KernelState, lane: Lane, params: frozenset[str] = frozenset()) -> bool:
    """Every source that moves the axis provably stays inside the tensor."""
    if {f.lower() for f in lane.families} & divisible_blocks(state):
        return True
    values = [v for f in lane.families for v, _ in block_values(state, f)]
    if values and set(values) == {1}:
        return True  # a block of one element is never partial
    pid_sources = {s for s in lane.shift if s.startswith("pid")}
    if pid_sources and pid_sources == lane.shift:
        axes = {int(s[3:]) for s in pid_sources} - exact_grid_axes(state)
        return not axes or axes <= rounded_extent_axes(state, lane.families, params)
    return False


def check_access(state: KernelState, access: Access) -> list[BoundsProblem]:
    ptr = access.ptr
    if ptr.block_ptr or not ptr.lanes:
        return []
    mask_bounds: dict[int, Bound] = {}
    if access.mask is not None:
        shift = ptr.rank - access.mask.rank
        mask_bounds = {d + shift: b for d, b in access.mask.bounds}
    problems = []
    for axis, lane in ptr.lanes:
        if not lane.arange:
            continue  # wrapped with %, clamped, or a gather through loaded indices
        moves = frozenset(s for s in lane.shift if not s.startswith("exact:"))
        if lane.shift and not moves:
            continue  # moved only by loops that stop at the last whole block
        lane = replace(lane, shift=moves)
        bound = mask_bounds.get(axis)
        if bound is not None:
            if bound.families & lane.families:
                if bound.op == "<=" and not bound.inclusive_ok:
                    problems.append(BoundsProblem(
                        axis, "inclusive", lane, bound,
                        f"mask `<= {bound.bound}` lets the lane at index {bound.bound} through: use `<`",
                    ))
                continue
            problems.append(BoundsProblem(
                axis, "other-extent", lane, bound,
                f"axis {axis} of the pointer block varies over `arange(..{_families(lane)})` but the mask "
                f"bounds a block of `{' / '.join(sorted(bound.families))}` against `{bound.bound}`",
            ))
            continue
        if access.static_guard:
            continue  # e.g. `if EVEN_K: load without mask` - the designer proved it at compile time
        if lane.shift and not _exact(state, lane, ptr.params):
            movers = ", ".join(sorted(s.replace("loop:", "loop counter ").replace("pid", "program_id axis ") for s in lane.shift))
            problems.append(BoundsProblem(
                axis, "unmasked", lane, None,
                f"axis {axis} (block `{_families(lane)}`, moved by {movers}) is not bounded by any mask: "
                f"the last block runs past the end unless the size is a multiple of the block",
            ))
        elif not lane.shift and _bounded_elsewhere(state, lane, access):
            problems.append(BoundsProblem(
                axis, "mask-not-passed", lane, None,
                f"axis {axis} (block `{_families(lane)}`) is bounded by a mask elsewhere in this kernel "
                f"but not at this access",
            ))
        elif not lane.shift and (padded := _padded_at_launch(state, lane)):
            problems.append(BoundsProblem(
                axis, "unmasked", lane, None,
                f"axis {axis} (block `{_families(lane)}`) is not bounded by any mask, but the launch pads the "
                f"block to a power of two (`{padded}`): the lanes past the size read or write out of bounds",
            ))
        elif not lane.shift and mask_bounds and (unused := _unused_size_for(state, lane)):
            # the mask bounds other axes, so the author meant to bound the block; the size parameter
            # named like this block, which the kernel never reads, is the missing bound
            problems.append(BoundsProblem(
                axis, "unmasked", lane, None,
                f"axis {axis} (block `{_families(lane)}`) is not bounded while the mask bounds the others, "
                f"and the kernel never reads its size parameter `{unused}`",
            ))
    # a block the launches size to a whole dimension never runs past it (checked last: it costs)
    problems = [p for p in problems if p.kind == "inclusive" or not _full_extent_block(state, p.lane)]
    order = {"other-extent": 0, "inclusive": 1, "mask-not-passed": 2, "unmasked": 3}
    return sorted(problems, key=lambda p: order[p.kind])
