"""Symbolic values of a Triton kernel.

A block value is one z3 term over *lane* variables: ``tl.arange`` creates a lane variable per call
site, named by the axis it occupies counted from the right, so broadcasting (which aligns shapes on
the right) needs no work and ``x[:, None]`` or ``tl.trans`` rename the lane variables of the axes
they move. Anything the engine does not model is :data:`UNKNOWN`; an access whose address or mask
depends on it is not judged.
"""

from __future__ import annotations

import hashlib

from dataclasses import dataclass, field

import z3

from kernlint.engine import terms
from kernlint.engine.terms import free_vars, int_op


def mentions(term, var) -> bool:
    """Whether ``term`` contains the constant ``var`` (the engine's constants are integers, each
    with a name of its own; the constants of a term are walked once and remembered)."""
    return var.decl().name() in free_vars(term)


#: name -> the integer constant of that name (z3 makes the same term each time, at a cost)
_INTS: dict[str, z3.ArithRef] = {}


def _made_once(table: dict, key, make):
    """``make(key)``, remembered in ``table`` (emptied when it grows past 50,000 terms)."""
    hit = table.get(key)
    if hit is None:
        if len(table) > 50000:
            table.clear()
        hit = table[key] = make(key)
    return hit


#: the prefixes of the variables that belong to one program (its ids, lanes, loop iterations, the data
#: it loads): a second program of a launch gets its own; sizes, strides and the grid are shared
PER_PROGRAM = ("pid!", "lane!", "iter_", "data!", "ticket!", "claim!", "bits!")
#: the scalars that walk with the run: program ids, loop iterations, loaded values (an index, a token offset)
WALKING = ("pid!", "iter_", "data!", "ticket!")
#: the prefixes of the values standing in for what the evaluator could not model
UNMODELLED = ("opaque", "carried")


def int_var(name: str) -> z3.ArithRef:
    """``z3.Int(name)``, made once per name."""
    return _made_once(_INTS, name, z3.Int)


#: value -> the integer literal of that value
_LITERALS: dict[int, z3.IntNumRef] = {}
terms.CACHES.append(_LITERALS)
#: value -> ``z3.BoolVal(value)``
_TRUTHS = {True: z3.BoolVal(True), False: z3.BoolVal(False)}


def int_val(value: int) -> z3.IntNumRef:
    """``z3.IntVal(value)``, made once per value (literals recur in every kernel)."""
    return _made_once(_LITERALS, value, z3.IntVal)


def position(axis: int) -> z3.ArithRef:
    """The position along block axis ``axis`` (from the right): every ``tl.arange`` placed on that
    axis is its start plus this one variable, so two aranges on one axis are the same lanes."""
    return int_var(f"lane!{axis}")


@dataclass(frozen=True)
class Lane:
    """One ``tl.arange(start, end)`` call site; the value at ``axis`` is ``start + position(axis)``."""

    ident: int
    start: z3.ArithRef
    end: z3.ArithRef
    #: its text, or a function that gives it (the text of a call is generated only for a message)
    written: object = field(compare=False, hash=False)
    #: the ``tl.arange`` call
    node: object = field(default=None, compare=False, hash=False)
    #: the ``if`` conditions it is evaluated under (a branch a constexpr prunes is not compiled)
    branches: tuple = field(default=(), compare=False, hash=False)
    #: the inlined helper it is written in (None: the kernel itself)
    helper: str | None = field(default=None, compare=False, hash=False)

    @property
    def text(self) -> str:
        return self.written if isinstance(self.written, str) else self.written()

    def var(self, axis: int) -> z3.ArithRef:
        return position(axis)

    def domain(self, axis: int) -> list:
        key = (axis, self.start.get_id(), self.end.get_id())
        hit = _DOMAINS.get(key)
        if hit is None:
            p, size = position(axis), self.size()
            powers = z3.Or([int_op("==", size, int_val(2 ** k)) for k in range(18)])
            hit = _DOMAINS[key] = (self.start, self.end, [p >= 0, p < size, powers])
            if len(_DOMAINS) > 50000:
                _DOMAINS.clear()
        return hit[2]

    def size(self) -> z3.ArithRef:
        """``end - start``."""
        return self._sizes()[2]

    def extent(self) -> z3.ArithRef:
        """``end - start`` simplified: a literal where the ends are."""
        return self._sizes()[3]

    def extent_text(self) -> str:
        return self._sizes()[4]

    def _sizes(self) -> tuple:
        key = (self.start.get_id(), self.end.get_id())
        hit = _SIZES.get(key)
        if hit is None:
            if len(_SIZES) > 50000:
                _SIZES.clear()
            size = self.end - self.start
            extent = z3.simplify(size)
            hit = _SIZES[key] = (self.start, self.end, size, extent, extent.sexpr())
        return hit


#: (axis, start id, end id) -> (start, end, constraints): the terms are kept so their ids stay theirs
_DOMAINS: dict = {}
#: (start id, end id) -> (start, end, size, size simplified, its text), made once per arange's ends
_SIZES: dict = {}
terms.CACHES.append(_SIZES)
#: (id of a variable, ">=" or "<=", bound) -> (variable, ``variable >= bound`` or ``variable <= bound``)
_BOUNDED: dict = {}
terms.CACHES.append(_BOUNDED)


def at_least(var: z3.ArithRef, bound: int) -> z3.BoolRef:
    """``var >= bound``, made once per variable (every query of a kernel states its parameters' signs)."""
    return _bounded(var, ">=", bound)


def power_of_two(p) -> z3.BoolRef:
    """``p`` is one of 2**0 ... 2**19 (``z3.Or`` of the equations, made through the C API)."""
    return terms.disjunction([int_op("==", p, int_val(2 ** k)) for k in range(20)])


def rounding_up(p, a) -> list:
    """``p`` rounds ``a`` up to a power of two (``triton.next_power_of_2(a)``, with
    :func:`power_of_two`): at least ``a``, below ``2 * a``."""
    return [p >= a, z3.Implies(a >= 1, p < 2 * a)]


def at_most(var: z3.ArithRef, bound: int) -> z3.BoolRef:
    """``var <= bound``, made once per variable."""
    return _bounded(var, "<=", bound)


def _bounded(var: z3.ArithRef, op: str, bound: int) -> z3.BoolRef:
    key = (id(var), op, bound)  # the entry holds ``var``: its id stays its own
    hit = _BOUNDED.get(key)
    if hit is None:
        if len(_BOUNDED) > 50000:
            _BOUNDED.clear()
        hit = _BOUNDED[key] = (var, var >= bound if op == ">=" else var <= bound)
    return hit[1]


@dataclass(frozen=True)
class Num:
    """An integer (or boolean, ``is_bool``) block value."""

    term: z3.ExprRef
    rank: int = 0
    #: (lane, axis) pairs the term mentions
    lanes: frozenset = frozenset()
    #: depends on loaded data (an unbounded unknown): addresses built from it are gathers
    data: bool = False
    #: bit width of the integer type (32 unless cast; a loaded value's is its tensor's dtype, not known
    #: here, and counts as 64 until a cast says otherwise)
    bits: int = 32
    #: the int32 products this value is computed from (:class:`Narrow`): a cast to int64 afterwards
    #: keeps them, since the product has already wrapped
    narrow: frozenset = frozenset()
    #: computed from what the kernel read from memory (a load, or an atomic's return), where ``data``
    #: also covers what the engine cannot follow (an unmodelled operation, a value a loop carries)
    loaded: bool = False
    #: what the value is a function of beyond its term: the addresses and masks of the loads it comes
    #: from, the terms a call it stands for was given, the bounds of the loops that carried it. Two
    #: programs whose reads agree compute the same value. None where that is not known.
    reads: "Reads | tuple | None" = ()
    #: each lane's value is computed from what its ``reads`` give at that same lane: no reduction,
    #: scan, dot or reshape of what was read, and no lane of it moved to another axis, lies between
    aligned: bool = True

    @property
    def is_bool(self) -> bool:
        return z3.is_bool(self.term)


@dataclass(frozen=True, eq=False)
class Narrow:
    """A product computed in 32 bits whose factor walks with the run (a program id, a loop counter, a
    value loaded and cast to int32): ``pid * stride``, ``i * n_tokens``, ``bos * H``."""

    #: the multiplication (a ``BinaryOperation``, or an ``AugAssign`` ``x *= n``)
    node: object
    term: z3.ArithRef
    #: the walking factor and the other one
    walker: "Num"
    size: "Num"
    #: the walking factor is the left operand (the target of ``x *= n``)
    walker_left: bool = True
    #: the conditions under which it is computed (the ``if`` branches and loops around it)
    path: tuple = ()
    #: when the evaluator met it, relative to the kernel's other products
    order: int = 0


@dataclass(frozen=True)
class Ptr:
    """``base + offset`` (in elements) for the tensor behind the kernel parameter ``base``."""

    base: str
    offset: Num


@dataclass(frozen=True)
class BlockPtr:
    """``tl.make_block_ptr``: per-dimension shape, strides and offsets; block_shape as integers."""

    base: str
    shape: tuple
    strides: tuple
    offsets: tuple
    block: tuple
    #: offset of the base pointer itself (``x_ptr + pid * stride`` as the base)
    base_offset: Num = None


@dataclass(frozen=True)
class Tup:
    items: tuple


@dataclass(frozen=True)
class Unknown:
    why: str = "not modelled"


UNKNOWN = Unknown()
NONE = Unknown("None")


def const(value: int | bool) -> Num:
    if isinstance(value, bool):
        return Num(_TRUTHS[value])
    return Num(int_val(int(value)))


#: the names of values that may differ from one program (lane, iteration, load) to the next: a
#: program's own variables, and the unmodelled values standing in for them
PROGRAM_DEPENDENT = (*PER_PROGRAM, *UNMODELLED)


def alike_in_every_program(term) -> bool:
    """Whether ``term`` reads nothing that may differ from one program, lane, iteration or load to
    the next (sizes, flags, constants)."""
    return not any(n.startswith(PROGRAM_DEPENDENT) for n in free_vars(term))


#: string code -> the string, for witnesses
_STRINGS: dict[int, str] = {}


def string_code(text: str) -> int:
    """A string constant (a compile-time choice, ``ACTIVATION == "gelu"``) as a number, the same in the
    kernel and in the host code that launches it: distinct strings differ, and no string is a small
    number a flag or a size could hold."""
    code = (1 << 48) + int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:6], "big")
    _STRINGS.setdefault(code, text)
    return code


def shown_value(n: int) -> str:
    """A witness's value as a reader writes it: a string constant's code as the string."""
    text = _STRINGS.get(n)
    return repr(text) if text is not None else str(n)


def combine(term: z3.ExprRef, *values: Num, data: bool = False, bits: int | None = None) -> Num:
    """A value computed from ``values``: it has their lanes, rank, int32 products and reads, it is
    data or loaded if any of them is, and as wide as the widest (unless ``bits`` says)."""
    rank, lanes, narrow, loaded, reads, widest = 0, frozenset(), frozenset(), False, (), 32 if not values else 0
    aligned = True
    parts = None  # more than one value's reads: joined below
    for v in values:  # one loop: this runs for every operation the engine evaluates
        aligned = aligned and v.aligned
        if v.rank > rank:
            rank = v.rank
        if v.lanes:
            lanes = lanes | v.lanes
        if v.narrow:
            narrow = narrow | v.narrow
        data = data or v.data
        loaded = loaded or v.loaded
        if v.bits > widest:
            widest = v.bits
        r = v.reads
        if r is None or reads is None:
            reads = None
        elif r and r is not reads:
            if not reads:
                reads = r
            else:
                parts = (parts or [reads]) + [r]
    if parts is not None and reads is not None:
        reads = merged_reads(parts)
    return Num(term, rank, lanes, data, bits if bits is not None else widest, narrow, loaded, reads, aligned)


class Reads:
    """What a value is a function of (:attr:`Num.reads`): terms of its own and the reads of the
    values it was made from, joined by reference and listed once on demand (most are never asked)."""

    __slots__ = ("terms", "parts", "_flat")

    def __init__(self, terms: tuple, parts: tuple):
        self.terms, self.parts, self._flat = terms, parts, None

    def __bool__(self) -> bool:
        return True

    def __iter__(self):
        return iter(self.flat())

    def flat(self) -> tuple:
        """Every term once, by ast id (iterative: values can be made of long chains)."""
        if self._flat is None:
            seen: dict = {}
            todo, visited = [self], set()
            while todo:
                node = todo.pop()
                if id(node) in visited:
                    continue
                visited.add(id(node))
                for t in node.terms:
                    seen.setdefault(t.get_id(), t)
                todo.extend(node.parts)
            self._flat = tuple(seen.values())
        return self._flat


def reads_of(*values) -> "Reads | tuple | None":
    """What a value computed from ``values`` reads: their reads and their terms (None unless each is
    a :class:`Num`, or if any's reads are unknown)."""
    if not all(isinstance(v, Num) for v in values):
        return None
    return merged_reads([v.reads for v in values], *(v.term for v in values))


def merged_reads(parts, *terms) -> "Reads | tuple | None":
    """The union of several values' ``reads`` and further ``terms`` (None if any is unknown)."""
    nonempty = []
    for part in parts:
        if part is None:
            return None
        if part:
            nonempty.append(part)
    if not terms:
        if not nonempty:
            return ()
        if len(nonempty) == 1 or all(part is nonempty[0] for part in nonempty):
            return nonempty[0]
    return Reads(terms, tuple(nonempty))


def move_axes(value, mapping: dict[int, int], rank: int):
    """Rename lane variables: the axis ``a`` (from the right) becomes ``mapping[a]``."""
    if isinstance(value, Ptr):
        return Ptr(value.base, move_axes(value.offset, mapping, rank))
    if not isinstance(value, Num):
        return value
    moves = {}
    lanes = set()
    for lane, axis in value.lanes:
        new = mapping.get(axis, axis)
        lanes.add((lane, new))
        if new != axis:
            moves[axis] = new
    term = _renamed(value.term, tuple(sorted(moves.items()))) if moves else value.term
    return Num(term, rank, frozenset(lanes), value.data, value.bits, value.narrow, value.loaded, value.reads,
               value.aligned and not (moves and value.reads))


#: (id of a term, its renamed axes) -> (the term, the term renamed): a block is broadcast the same
#: way wherever it is used (``offs[:, None]``)
_RENAMED: dict = {}
terms.CACHES.append(_RENAMED)


def _renamed(term: z3.ExprRef, moves: tuple) -> z3.ExprRef:
    key = (id(term), moves)
    hit = _RENAMED.get(key)
    if hit is None:
        if len(_RENAMED) > 50000:
            _RENAMED.clear()
        hit = _RENAMED[key] = (term, z3.substitute(term, *((position(a), position(b)) for a, b in moves)))
    return hit[1]


def rank_of(value) -> int:
    if isinstance(value, Ptr):
        return value.offset.rank
    if isinstance(value, Num):
        return value.rank
    return 0


@dataclass
class Symbols:
    """The free variables of one kernel's queries, with what each stands for (for witnesses)."""

    described: dict[str, str] = field(default_factory=dict)
    domain: list = field(default_factory=list)
    counter: int = 0

    def fresh(self, prefix: str, description: str) -> z3.ArithRef:
        self.counter += 1
        name = f"{prefix}!{self.counter}"
        self.described[name] = description
        return int_var(name)
