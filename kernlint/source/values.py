"""Abstract values the kernel interpreter computes for every expression.

A value records where it comes from (program ids, loop counters, loaded data, runtime sizes), its
rank, and for each axis that varies across the lanes of a block (``tl.arange``) what drives it. A
boolean value built by comparing lane offsets with a bound records which axes it bounds: that is
what a mask is.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst


@dataclass(frozen=True)
class Lane:
    """How one axis of a block varies."""

    #: extents of the ``tl.arange`` calls that make the axis vary (source text, e.g. "BLOCK_M")
    families: frozenset[str] = frozenset()
    #: the axis has an ``arange`` component that is neither wrapped (``%``) nor clamped
    arange: bool = False
    #: what moves the block along the axis: "pid0", "loop:k" (empty: starts at 0 in every program)
    shift: frozenset[str] = frozenset()
    #: the axis varies through loaded data (a gather)
    data: bool = False
    #: every arange extent is a constexpr (so the block is a compile-time size)
    constexpr_extent: bool = True

    def merge(self, other: "Lane") -> "Lane":
        # what moves a clamped (or wrapped) component cannot take it out of range: only the shifts
        # of components that are still plain aranges count
        if self.arange or other.arange:
            shift = (self.shift if self.arange else frozenset()) | (other.shift if other.arange else frozenset())
        else:
            shift = self.shift | other.shift
        return Lane(
            self.families | other.families,
            self.arange or other.arange,
            shift,
            self.data or other.data,
            self.constexpr_extent and other.constexpr_extent,
        )


@dataclass(frozen=True)
class Bound:
    """``lanes < bound`` on one axis of a mask."""

    families: frozenset[str]
    op: str  # "<" or "<="
    bound: str  # the bound's source text
    inclusive_ok: bool  # "<=" against something like ``n - 1`` is fine
    node: cst.CSTNode | None = None
    #: ``tl.arange(0, B) < B``: true in every lane, it switches nothing off
    vacuous: bool = False


@dataclass(frozen=True)
class Val:
    rank: int = 0
    lanes: tuple[tuple[int, Lane], ...] = ()
    pid: frozenset[int] = frozenset()
    loops: frozenset[str] = frozenset()
    #: shift sources of a scalar not yet scaled by a runtime factor (pid * BLOCK keeps them)
    index: frozenset[str] = frozenset()
    data: bool = False
    runtime: bool = False
    constexpr: bool = False
    const: float | int | None = None
    bounds: tuple[tuple[int, Bound], ...] = ()
    int64: bool = False
    block_ptr: bool = False
    params: frozenset[str] = frozenset()
    #: what produced this value: "load", "other-zero", "reduction:max"...
    tags: frozenset[str] = field(default=frozenset())

    @property
    def lane_map(self) -> dict[int, Lane]:
        return dict(self.lanes)

    @property
    def bound_map(self) -> dict[int, Bound]:
        return dict(self.bounds)

    def with_(self, **changes) -> "Val":
        # dataclasses.replace re-validates every field; this runs for most expressions, so copy the
        # instance dict directly (the fields are immutable values)
        new = object.__new__(Val)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new


TOP = Val()


def _align(val: Val, rank: int) -> tuple[dict[int, Lane], dict[int, Bound]]:
    shift = rank - val.rank
    return ({d + shift: l for d, l in val.lanes}, {d + shift: b for d, b in val.bounds})


def join(*vals: Val, keep_bounds: bool = False) -> Val:
    """Everything any of the values depends on (broadcasting ranks numpy-style)."""
    known = []
    unknown = False
    for v in vals:
        if v is TOP:
            unknown = True
        elif v is not None:
            known.append(v)
    if not known:
        return TOP
    if len(known) == 1 and not unknown and not (known[0].bounds and not keep_bounds):
        return known[0]
    rank = max(v.rank for v in known)
    lanes: dict[int, Lane] = {}
    bounds: dict[int, Bound] = {}
    empty = frozenset()
    pid = loops = index = params = tags = empty
    data = runtime = int64 = block_ptr = False
    constexpr = not unknown
    for v in known:
        if v.lanes:
            shift = rank - v.rank
            for d, lane in v.lanes:
                d += shift
                lanes[d] = lanes[d].merge(lane) if d in lanes else lane
        if keep_bounds and v.bounds:
            shift = rank - v.rank
            for d, b in v.bounds:
                bounds[d + shift] = b
        # unions only where there is something to add (this runs for every expression)
        if v.pid:
            pid = pid | v.pid if pid else v.pid
        if v.loops:
            loops = loops | v.loops if loops else v.loops
        if v.index:
            index = index | v.index if index else v.index
        if v.params:
            params = params | v.params if params else v.params
        if v.tags:
            tags = tags | v.tags if tags else v.tags
        data = data or v.data
        runtime = runtime or v.runtime
        int64 = int64 or v.int64
        block_ptr = block_ptr or v.block_ptr
        constexpr = constexpr and v.constexpr
    return Val(
        rank=rank,
        lanes=tuple(sorted(lanes.items())) if lanes else (),
        pid=pid,
        loops=loops,
        index=index,
        data=data,
        runtime=runtime,
        constexpr=constexpr,
        bounds=tuple(sorted(bounds.items())) if bounds else (),
        int64=int64,
        block_ptr=block_ptr,
        params=params,
        tags=tags,
    )


def add(a: Val, b: Val) -> Val:
    """``a + b``: a scalar added to a block shifts the block's axes by the scalar's index sources."""
    out = join(a, b)
    scalar_index = (a.index if a.rank == 0 else frozenset()) | (b.index if b.rank == 0 else frozenset())
    if scalar_index and out.lanes:
        out = out.with_(lanes=tuple((d, replace(l, shift=l.shift | scalar_index)) for d, l in out.lanes))
    if a.const is not None and b.const is not None:
        out = out.with_(const=a.const + b.const)
    return out


def mul(a: Val, b: Val) -> Val:
    out = join(a, b)
    # A factor that is a runtime size (stride, n_cols) turns an index into a base offset.
    runtime_factor = (a.rank == 0 and a.runtime and not a.index) or (b.rank == 0 and b.runtime and not b.index)
    if runtime_factor:
        out = out.with_(index=frozenset())
    if a.const is not None and b.const is not None:
        out = out.with_(const=a.const * b.const)
    return out


def wrap(a: Val, b: Val) -> Val:
    """``a % b`` or ``minimum(a, b)``: a runtime/constexpr scalar bound keeps every lane in range."""
    out = join(a, b)
    if b.rank == 0 and not b.data:
        # a wrapped scalar (`pid % n`) still tells programs apart; wrapped lanes stay in range
        out = out.with_(lanes=tuple((d, replace(l, arange=False)) for d, l in out.lanes),
                        index=a.index if a.rank == 0 else frozenset())
    return out


def subscript(val: Val, pattern: list[str]) -> Val:
    """``x[:, None]`` / ``x[None, :]``: ``pattern`` lists ":" and "None" entries."""
    lanes = val.lane_map
    bounds = val.bound_map
    new_lanes, new_bounds = {}, {}
    src = 0
    for i, p in enumerate(pattern):
        if p == ":":
            if src in lanes:
                new_lanes[i] = lanes[src]
            if src in bounds:
                new_bounds[i] = bounds[src]
            src += 1
    return val.with_(
        rank=len(pattern) if val.rank else 0,
        lanes=tuple(sorted(new_lanes.items())),
        bounds=tuple(sorted(new_bounds.items())),
    )


def combine_masks(a: Val, b: Val, conj: bool) -> Val:
    """``a & b`` bounds every axis either bounds; ``a | b`` only those both bound."""
    rank = max(a.rank, b.rank)
    _, ab = _align(a, rank)
    _, bb = _align(b, rank)
    if conj:
        bounds = {**bb, **ab}
    else:
        bounds = {d: ab[d] for d in ab.keys() & bb.keys()}
    return join(a, b).with_(bounds=tuple(sorted(bounds.items())))
