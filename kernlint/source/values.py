"""Abstract values the kernel interpreter computes for every expression.

A value records where it comes from (program ids, loop counters, loaded data, runtime sizes), its
rank, and for each axis that varies across the lanes of a block (``tl.arange``) what drives it. A
boolean value built by comparing lane offsets with a bound records which axes it bounds: that is
what a mask is. What produced a value (the padding of a masked load, an int32 product, a count of
blocks...) is a set of typed facts (:class:`Fact` and the small records after it) the interpreter
attaches and the rules read.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import TypeVar

import libcst as cst


@dataclass(frozen=True)
class ProgramAxis:
    """An index source: ``tl.program_id(axis)`` moves the block."""

    axis: int

    def __str__(self) -> str:
        return f"program_id axis {self.axis}"


@dataclass(frozen=True)
class LoopCounter:
    """An index source: the counter of the ``for`` loop over ``name`` (None: a tuple target) moves
    the block. ``exact``: the loop stops at the last whole block, so it never moves it past the
    tensor."""

    name: str | None
    exact: bool = False

    def __str__(self) -> str:
        return f"loop counter {self.name}"


#: what moves a block along an axis, or what a scalar index derives from
IndexSource = ProgramAxis | LoopCounter


@dataclass(frozen=True)
class Lane:
    """How one axis of a block varies."""

    #: extents of the ``tl.arange`` calls that make the axis vary (source text, e.g. "BLOCK_M")
    families: frozenset[str] = frozenset()
    #: the axis has an ``arange`` component that is neither wrapped (``%``) nor clamped
    arange: bool = False
    #: what moves the block along the axis (empty: it starts at 0 in every program)
    shift: frozenset[IndexSource] = frozenset()
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


class Fact(enum.Enum):
    """What produced a value, as far as the rules care (a value carries a set of facts)."""

    # members are singletons compared by identity: hash them so too (Enum's own hash is a Python
    # call, and the sets of facts are joined for every expression)
    __hash__ = object.__hash__

    #: lanes a mask switched off hold nothing defined (a masked ``tl.load`` without ``other``)
    PAD_UNDEFINED = enum.auto()
    #: lanes a mask switched off hold 0 (``other=0``)
    PAD_ZERO = enum.auto()
    #: the padding lanes stopped being 0 (``x - mean``, ``exp(x)``, ``1 / x``)
    PAD_NONZERO = enum.auto()
    #: the padding lanes are infinite (``log(0)``, ``1 / 0``): not even a zero factor makes them 0
    PAD_INF = enum.auto()
    #: the padding lanes hold -inf (or a huge negative): the identity of a max
    PAD_NEG_INF = enum.auto()
    #: ``tl.zeros``/``tl.full``: a constant block
    FILL = enum.auto()
    #: a tensor descriptor (``make_tensor_descriptor``): checked by the hardware, not a block pointer
    DESCRIPTOR = enum.auto()
    #: a number of blocks or programs (``N // B``, ``cdiv``), not a size
    COUNT = enum.auto()
    #: rounded up (``cdiv``): a count that includes a partial last block
    CEIL = enum.auto()
    #: ``x % n``: bounded by the modulus
    WRAPPED = enum.auto()
    #: ``pid * BLOCK``: a block walking its dimension
    BLOCK_OFFSET = enum.auto()
    #: the result of a reduction (``tl.sum``, ``tl.max``...)
    REDUCED = enum.auto()


#: padding lanes of a masked load that hold 0 or nothing (what a sum assumes)
ZERO_PADDED = frozenset({Fact.PAD_UNDEFINED, Fact.PAD_ZERO})


@dataclass(frozen=True)
class PaddedAxis:
    """A mask switched lanes off along this axis (negative: counted from the last)."""

    axis: int


@dataclass(frozen=True)
class PaddingSide:
    """Where a mask's padding lies along an axis: after every real lane (``lanes < n``: a prefix is
    kept) or anywhere."""

    axis: int
    trailing: bool


@dataclass(frozen=True)
class ScalarLoad:
    """A value read by one scalar ``tl.load``: is it an index?"""

    node: cst.Call


@dataclass(frozen=True)
class BlockShape:
    """A name in the ``block_shape`` of the ``make_block_ptr`` a pointer comes from."""

    name: str


@dataclass(frozen=True)
class Elected:
    """``ticket == c`` with ``ticket`` drawn from a shared atomic counter: at most one program along
    each of these program-id axes passes."""

    axes: frozenset[int]


AnyFact = Fact | PaddedAxis | PaddingSide | ScalarLoad | BlockShape | Elected
F = TypeVar("F")


def without_padding(facts: frozenset[AnyFact], also: frozenset[AnyFact] | set[AnyFact] = frozenset()) -> frozenset[AnyFact]:
    """``facts`` less the zero padding of masked loads, their padded axes, and ``also``."""
    return frozenset(f for f in facts if f not in ZERO_PADDED and f not in also and not isinstance(f, PaddedAxis))


@dataclass(frozen=True)
class Val:
    rank: int = 0
    lanes: tuple[tuple[int, Lane], ...] = ()
    pid: frozenset[int] = frozenset()
    loops: frozenset[str] = frozenset()
    #: shift sources of a scalar not yet scaled by a runtime factor (pid * BLOCK keeps them)
    index: frozenset[IndexSource] = frozenset()
    data: bool = False
    runtime: bool = False
    constexpr: bool = False
    const: float | int | None = None
    bounds: tuple[tuple[int, Bound], ...] = ()
    int64: bool = False
    block_ptr: bool = False
    params: frozenset[str] = frozenset()
    #: what produced this value (padding of masked loads, products, counts...)
    facts: frozenset[AnyFact] = field(default=frozenset())

    def facts_of(self, kind: type[F]) -> list[F]:
        """The facts of one kind (``val.facts_of(PaddedAxis)``)."""
        return [f for f in self.facts if isinstance(f, kind)]

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
#: every field of a value at its default (what ``join`` starts a value from)
_DEFAULTS = dict(TOP.__dict__)


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
    rank = 0
    for v in known:
        if v.rank > rank:
            rank = v.rank
    lanes: dict[int, Lane] = {}
    bounds: dict[int, Bound] = {}
    empty = frozenset()
    pid = loops = index = params = facts = empty
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
        if v.facts:
            facts = facts | v.facts if facts else v.facts
        data = data or v.data
        runtime = runtime or v.runtime
        int64 = int64 or v.int64
        block_ptr = block_ptr or v.block_ptr
        constexpr = constexpr and v.constexpr
    # built as ``with_`` builds: the dataclass constructor checks every field, and this runs for
    # most expressions
    new = object.__new__(Val)
    new.__dict__.update(_DEFAULTS, rank=rank, lanes=tuple(sorted(lanes.items())) if lanes else (), pid=pid,
                        loops=loops, index=index, data=data, runtime=runtime, constexpr=constexpr,
                        bounds=tuple(sorted(bounds.items())) if bounds else (), int64=int64,
                        block_ptr=block_ptr, params=params, facts=facts)
    return new


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
