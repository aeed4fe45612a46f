"""Symbolic evaluation of one Triton kernel (helpers inlined per call site).

Every ``tl.load``/``tl.store``/atomic becomes an :class:`Access`: its address (a :class:`Ptr` or
:class:`BlockPtr`), mask and path condition as z3 terms, plus the domain facts its free variables
obey (program ids, lanes, loop iterations). Constructs the engine does not model evaluate to
``Unknown``; nothing here raises on valid code.
"""

from __future__ import annotations

import ctypes
import itertools
import re
from dataclasses import dataclass, field, replace

import libcst as cst
import z3

from kernlint.engine.symbols import (
    NONE, PER_PROGRAM, UNKNOWN, UNMODELLED, WALKING, BlockPtr, Lane, Narrow, Num, Ptr, Symbols, Tup, alike_in_every_program,
    at_least, combine, const, int_val, int_var, mentions, move_axes, position, rank_of, reads_of,
    power_of_two, rounding_up, string_code,
)
from kernlint.engine.heuristics import definitions, readable_body
from kernlint.engine.terms import conjunction, disjunction, free_vars, int_op, ite, negation, summands
from kernlint.engine.terms import text as terms_text
from kernlint.source.names import argument, assigned_names, bound_parameters, child_nodes, source_text

TL = "triton.language."
ATOMICS = frozenset(TL + n for n in (
    "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas"))
PASSTHROUGH = frozenset(TL + n for n in ("multiple_of", "max_contiguous", "max_constancy", "constexpr", "broadcast_to"))
DATA_CALLS = frozenset(TL + n for n in (
    "sum", "max", "min", "argmax", "argmin", "reduce", "cumsum", "cumprod", "xor_sum", "dot", "exp", "exp2", "log",
    "log2", "sqrt", "rsqrt", "abs", "sigmoid", "softmax", "fma", "rand",
    "randn", "randint", "zeros", "full", "zeros_like", "full_like", "histogram", "sort", "flip", "associative_scan",
    "ceil", "cos", "div_rn", "erf", "fdiv", "floor", "sin", "sqrt_rn", "umulhi"))
#: the data calls whose result at one lane comes from other lanes too
ACROSS_LANES = frozenset(TL + n for n in (
    "sum", "max", "min", "argmax", "argmin", "reduce", "cumsum", "cumprod", "xor_sum", "dot", "softmax", "histogram",
    "sort", "flip", "associative_scan"))
#: the data calls that reduce a block along an axis (or all of it)
REDUCING = frozenset(TL + n for n in ("sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"))
#: Triton's largest block (``TRITON_MAX_TENSOR_NUMEL``)
MAX_BLOCK_NUMEL = 1 << 20
#: the data calls whose result is a position in a block (never negative)
POSITIONS = frozenset(("argmax", "argmin"))
#: the data calls whose result, over elements that are each 0 or 1 (a test, cast or not), is never negative
OF_ELEMENTS = frozenset(("sum", "cumsum", "max", "min", "cumprod", "xor_sum"))
#: namespaces of element-wise math only (``tl.math``, CUDA's libdevice): every call there is data
ELEMENTWISE_MATH = ("triton.language.math.", "triton.language.extra.cuda.libdevice.", "triton.language.extra.libdevice.")
#: how deep helpers are inlined (deeper calls evaluate to unknown)
MAX_INLINE = 6
POINTER_HINTS = ("ptr", "Ptr", "PTR", "pointer")


@dataclass
class Access:
    kind: str  # load | store | atomic
    node: cst.Call
    #: the statement of the kernel body the access is reported at (the helper call for inlined code)
    site: cst.CSTNode
    ptr: object
    mask: object  # Num (bool) | None
    path: tuple
    #: ``boundary_check`` dimensions of a block-pointer access
    checked: tuple = ()
    helper: str | None = None
    #: the loops around the access: (loop variable, iteration variable, start term, step term)
    loops: tuple = ()
    mask_node: cst.BaseExpression | None = None
    #: the ``if`` conditions among ``path`` (loop guards left out)
    branches: tuple = ()
    #: a block-pointer access's axes ``boundary_check`` leaves out: :class:`BlockAxis` each
    unchecked: tuple = ()
    #: the value a store or atomic writes (UNKNOWN where the engine does not model it)
    value: object = None


@dataclass(frozen=True)
class DataBranch:
    """An ``if``/``while`` test or a ``for`` range computed from values the kernel loaded."""

    node: cst.CSTNode  # the If, While or For
    where: cst.BaseExpression  # its test, or its iterable
    #: a test only an atomic's return value decides: one program elected by a ticket
    #: (``tl.atomic_add(c, 1) == n - 1``), or a lock being taken (``while tl.atomic_cas(...)``)
    elected: bool = False


@dataclass(frozen=True)
class BlockAxis:
    """One dimension of a block-pointer access: the index each lane reaches on it and the shape the
    block pointer declares there."""

    dim: int
    index: Num
    shape: Num
    #: the axis of the block's lanes on it (from the right)
    axis: int


@dataclass
class KernelModel:
    accesses: list[Access] = field(default_factory=list)
    #: the names of values loaded as blocks (one per lane: an index array, not a scalar offset)
    lane_data: set = field(default_factory=set)
    symbols: Symbols = field(default_factory=Symbols)
    #: kernel parameter -> z3 variable
    params: dict[str, z3.ExprRef] = field(default_factory=dict)
    #: pointer parameters (bases of Ptr values)
    pointers: set[str] = field(default_factory=set)
    #: program-id axis -> (pid variable, grid variable)
    pids: dict[int, tuple] = field(default_factory=dict)
    lanes: list[Lane] = field(default_factory=list)
    constexprs: set[str] = field(default_factory=set)
    #: compile-time values a heuristics decorator computes from the other parameters (a relation in
    #: the domain says how): not a caller's choice. Name -> the parameters the relation reads
    defined: dict[str, frozenset] = field(default_factory=dict)
    #: id of a ceiling division's term -> (dividend, divisor) (``cdiv(K, BK)`` -> ``(K, BK)``)
    #: term id -> (n, B, the term): the term is kept so that its id is not reused by another
    ceil_divs: dict = field(default_factory=dict)
    #: int32 products (:class:`Narrow`) whose value is cast to a wider type afterwards
    late_casts: set = field(default_factory=set)
    #: int32 products multiplied again afterwards: indices, not offsets
    scaled: set = field(default_factory=set)
    #: the value a claiming compare-and-swap returned -> the value that means "claimed"
    claims: dict = field(default_factory=dict)
    #: the last name of every function or method the kernel calls (``sum`` for ``tl.sum`` and ``x.sum``)
    called: set = field(default_factory=set)
    #: the names of the values atomics returned (tickets and claims among them)
    returned: set = field(default_factory=set)
    #: the name of a ticket -> the ``tl.atomic_add`` that drew it
    drawn_by: dict = field(default_factory=dict)
    #: ``tl.where`` tests whose other side gives the lanes that fail them a value of their own (not a
    #: constant fill): a bound such a test states splits its axis, it is not the axis's extent
    splits: list = field(default_factory=list)
    #: the name of a value a plain load returned -> the pointer parameter it was loaded through
    loaded_from: dict = field(default_factory=dict)
    #: the name of a loaded value -> the values the kernel tests it for equality with (``y ==
    #: ignore_index``): values the kernel expects to read there
    sentinels: dict = field(default_factory=dict)
    #: the name of a loaded value -> the first value that fails a bound the kernel tests it against
    #: (``ids < n_valid``: ``n_valid``)
    tested_bounds: dict = field(default_factory=dict)
    #: the kernel writes memory in a way the engine does not record as an access (a tensor
    #: descriptor's ``store``, a scatter)
    unrecorded_writes: bool = False
    #: ``if``/``while`` tests and ``for`` ranges computed from loaded data
    data_branches: list[DataBranch] = field(default_factory=list)
    #: the evaluation stopped short (nesting too deep) or left a helper out (inlined too deep)
    partial: bool = False


class _Return(Exception):
    pass


def _int_text(text: str) -> int | None:
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        return None


def _movable(value, data: bool = False) -> bool:
    """A value a loop can move by a fixed step per trip (``data``: or one of loaded data, which a
    trip makes unknown but keeps its kind)."""
    if isinstance(value, BlockPtr):
        return True
    if isinstance(value, Ptr):
        return True  # (into a row a loaded value chose, it moves by its own step all the same)
    if isinstance(value, Num):
        return not value.is_bool and (data or not value.data)
    return False


_COMPARISONS = {"LessThan": "<", "LessThanEqual": "<=", "GreaterThan": ">", "GreaterThanEqual": ">=", "Equal": "==",
                "NotEqual": "!="}
#: the comparison with the loaded value on the left -> the shift from the other side to the first
#: value that fails it (``v < n`` fails at ``n``, ``v <= n`` at ``n + 1``), and each comparison mirrored
_FIRST_FAILING = {"LessThan": 0, "LessThanEqual": 1, "GreaterThan": 0, "GreaterThanEqual": -1}
_MIRRORED = {"LessThan": "GreaterThan", "LessThanEqual": "GreaterThanEqual", "GreaterThan": "LessThan",
             "GreaterThanEqual": "LessThanEqual"}


def _to_int(v) -> z3.ArithRef:
    term = v.term
    return ite(term, int_val(1), int_val(0)) if z3.is_bool(term) else term


#: the variables of the values an atomic returned
_RETURNED = ("ticket!", "claim!")
#: the names of calls that write memory
_WRITES = ("store", "atomic_", "scatter", "_experimental_descriptor_store")


def _elects(test) -> bool:
    """``ticket == c`` with ``c`` the same in every program: at most one program passes."""
    if not z3.is_eq(test):
        return False
    left, right = (set(free_vars(side)) for side in test.children())
    for ticket, other in ((left, right), (right, left)):
        if any(n.startswith(_RETURNED) for n in ticket) and not any(n.startswith(PER_PROGRAM) for n in other):
            return True
    return False


def _program_independent(value) -> bool:
    if isinstance(value, Ptr):
        value = value.offset
    if not isinstance(value, Num):
        return False
    return alike_in_every_program(value.term)


#: the width of a bitwise operation on integers (Triton's widest integer type)
_BITWISE_WIDTH = 64


def _bitwise(op: str, x, y):
    """``x & y``, ``x | y`` or ``x ^ y`` of two integer terms, as 64-bit two's complement."""
    bx, by = z3.Int2BV(x, _BITWISE_WIDTH), z3.Int2BV(y, _BITWISE_WIDTH)
    out = bx & by if op == "BitAnd" else bx | by if op == "BitOr" else bx ^ by
    # signed, as Python's and Triton's integers are
    return z3.If(z3.Extract(_BITWISE_WIDTH - 1, _BITWISE_WIDTH - 1, out) == 1,
                 z3.BV2Int(out) - 2 ** _BITWISE_WIDTH, z3.BV2Int(out))


def _to_bool(v) -> z3.BoolRef:
    term = v.term
    return term if z3.is_bool(term) else int_op("!=", term, int_val(0))


class Evaluator:
    def __init__(self, info, kernel, pointer_params: set[str] | None = None):
        self.info = info
        self.kernel = kernel
        self.imports = info.imports
        self.model = KernelModel()
        self.sym = self.model.symbols
        self.path: list = []
        #: loop guards in ``path`` (identity), to tell them from branch conditions
        self.guards: list = []
        self.loops: list = []
        self.helpers: list[str] = []
        #: each ``next_power_of_2(x)`` made (a heuristics lambda's) -> the names ``x`` reads
        self.rounded: dict[str, frozenset] = {}
        self.site: cst.CSTNode | None = None
        self.recording = True
        self.returns: list | None = None
        self.lane_ids = 0
        self.element_bits = _element_bits(info, kernel)
        pointers = set(pointer_params or ())
        self.env: dict[str, object] = {}
        for p in kernel.kernel.params:
            var = int_var(p.name)
            self.model.params[p.name] = var
            annotated = p.annotation is not None and ("pointer" in p.annotation or "*" in p.annotation)
            if p.constexpr:
                self.model.constexprs.add(p.name)
                self.env[p.name] = Num(var)
            elif p.name in pointers or annotated or any(h in p.name for h in POINTER_HINTS):
                self.model.pointers.add(p.name)
                self.env[p.name] = Ptr(p.name, const(0))
            else:
                self.env[p.name] = Num(var)
        for name in kernel.kernel.heuristics:
            if name not in self.env:
                self.model.constexprs.add(name)
                self.model.params[name] = int_var(name)
                self.env[name] = Num(int_var(name))
        self._heuristic_relations()

    def _heuristic_relations(self) -> None:
        """``name == value`` for each compile-time value a heuristics decorator computes from the
        kernel's other parameters (:mod:`kernlint.engine.heuristics`)."""
        params = set(self.model.params)
        for name, (parameter, body) in definitions(self.kernel.node, self.imports.resolve).items():
            if name not in self.model.constexprs:
                continue
            readable = readable_body(parameter, body, params - {name}, self.model.pointers)
            value = self.expr(readable) if readable is not None else None
            if not isinstance(value, Num) or value.lanes or not _program_independent(value):
                continue
            self.sym.domain.append(int_op("==", self.model.params[name], _to_int(value)))
            reads = set(free_vars(value.term))
            for n in list(reads):
                reads |= self.rounded.get(n, set())
            self.model.defined[name] = frozenset(reads) & params

    # -- entry ---------------------------------------------------------------------------------
    def run(self) -> KernelModel:
        try:
            self.block(self.kernel.node.body, top=True)
        except _Return:
            pass
        except RecursionError:
            self.model.partial = True
        except ctypes.ArgumentError as error:
            if "RecursionError" not in str(error):
                raise
            self.model.partial = True  # z3's C API met the recursion limit converting an argument
        return self.model

    def _data_branch(self, value, stmt) -> None:
        """Record a branch test or loop range computed from loaded values (KL106's question; one in an
        inlined helper is the helper's own, judged where the helper is)."""
        if not self.recording or self.helpers or not isinstance(value, Num) or value.lanes or not value.loaded:
            return
        where = stmt.iter if isinstance(stmt, cst.For) else stmt.test
        # a ``while`` on what an atomic returned waits for other programs (a lock, a barrier, a poll)
        spin = isinstance(stmt, cst.While) and any(n in self.model.returned for n in free_vars(value.term))
        self.model.data_branches.append(DataBranch(stmt, where, spin or _elects(value.term)))

    # -- statements ----------------------------------------------------------------------------
    def block(self, body, top: bool = False) -> None:
        stmts = body.body if isinstance(body, cst.BaseSuite) else body
        depth = len(self.path)
        try:
            for stmt in stmts:
                if top:
                    self.site = stmt
                self.stmt(stmt)
        finally:
            del self.path[depth:]

    def stmt(self, stmt) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small)
        elif isinstance(stmt, cst.For):
            self.for_loop(stmt)
        elif isinstance(stmt, cst.While):
            self.while_loop(stmt)
        elif isinstance(stmt, cst.If):
            self.if_stmt(stmt)
        elif isinstance(stmt, cst.With):
            self.block(stmt.body)
        elif isinstance(stmt, cst.Try):
            self.block(stmt.body)

    def small(self, small) -> None:
        if isinstance(small, cst.Assign):
            value = self.expr(small.value)
            for target in small.targets:
                self.bind(target.target, value)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self.bind(small.target, self.expr(small.value))
        elif isinstance(small, cst.AugAssign):
            op = type(small.operator).__name__.replace("Assign", "")
            self.bind(small.target, self.arith(op, self.expr(small.target), self.expr(small.value), small))
        elif isinstance(small, cst.Expr):
            self.expr(small.value)
        elif isinstance(small, cst.Return):
            # (evaluated in a helper judged as its own kernel too: a load it returns is an access)
            value = self.expr(small.value) if small.value is not None else NONE
            if self.returns is not None:
                self.returns.append((tuple(self.path), value))
            raise _Return()
        elif isinstance(small, (cst.Break, cst.Continue)):
            # the rest of this trip runs only where the ``if`` around it failed, as after a return
            # (the loop that evaluates the trip stops the unwinding)
            raise _Return()
        elif isinstance(small, cst.Assert):
            cond = self.expr(small.test)
            if isinstance(cond, Num) and not cond.lanes:
                self.path.append(_to_bool(cond))

    def bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            items = value.items if isinstance(value, Tup) else None
            for i, el in enumerate(target.elements):
                self.bind(el.value, items[i] if items is not None and i < len(items) else UNKNOWN)

    def _range(self, node: cst.BaseExpression):
        """(start, stop, step) of ``range``/``tl.range``/``tl.static_range``; None otherwise."""
        if not isinstance(node, cst.Call):
            return None
        name = self.imports.resolve(node.func) or ""
        if name not in ("range", TL + "range", TL + "static_range"):
            return None
        args = [self.expr(a.value) for a in node.args if a.keyword is None][:3]
        if not args or not all(isinstance(a, Num) and not a.lanes and not a.is_bool for a in args):
            return None
        if len(args) == 1:
            return const(0), args[0], const(1)
        return args[0], args[1], args[2] if len(args) > 2 else const(1)

    def for_loop(self, stmt: cst.For) -> None:
        bounds = self._range(stmt.iter)
        if bounds is None:
            self._data_branch(self.expr(stmt.iter), stmt)
        else:
            for bound in bounds:
                self._data_branch(bound, stmt)
        var = stmt.target.value if isinstance(stmt.target, cst.Name) else None
        carried = assigned_names(stmt.body)
        k = self.sym.fresh(f"iter_{var or 'loop'}", f"iteration of `for {var or '...'}`")
        stop = None
        if bounds is not None:
            start, stop, step = bounds
            index = combine(start.term + step.term * k, start, stop, step)
            step_s = z3.simplify(step.term)
            if z3.is_int_value(step_s) and step_s.as_long() < 0:
                guard = index.term > stop.term
            else:
                guard = index.term < stop.term
                if not z3.is_int_value(step_s):
                    self.sym.domain.append(z3.Implies(k > 0, step.term >= 1))
            cond = z3.And(k >= 0, guard)
        else:
            index, cond, start, step = Num(k, data=True), k >= 0, const(0), const(1)
        before = dict(self.env)
        linear = self._carried(stmt.body, var, index, carried, k, cond)
        self.env.update(linear)
        if var:
            self.env[var] = index
        self.path.append(cond)
        self.guards.append(cond)
        self.loops.append((var, k, start.term, step.term, stop.term if stop is not None else None))
        try:
            self.block(stmt.body)
        except _Return:
            pass
        finally:
            self.loops.pop()
            self.path.pop()
            self.guards.pop()
        for name in carried | ({var} if var else set()):
            first, last = before.get(name), self.env.get(name)
            self.env[name] = self._havoc(first, name, last, self._loop_reads(first, last, bounds))
        if stmt.orelse is not None:
            self.block(stmt.orelse.body)

    def _carried(self, body, var, index, carried: set[str], k, cond) -> dict:
        """Loop-carried names as functions of the iteration ``k``: ``init + k * delta`` where one trip
        adds a fixed ``delta`` (``ptrs += BLOCK_K * stride``); anything else becomes unknown."""
        if not carried:
            return {}
        init = {n: self.env.get(n) for n in carried}
        if not any(_movable(v) for n, v in init.items() if n != var):
            # nothing here can move by a fixed step (accumulators of loaded data, unknowns): the trip
            # need not be evaluated to say what these become
            return {n: self._havoc(v, n, reads=self._trip_reads(v)) if _movable(v, data=True) else UNKNOWN
                    for n, v in init.items() if n != var}
        saved_env, saved_rec, saved_acc = dict(self.env), self.recording, len(self.model.accesses)
        self.recording = False
        if var:
            self.env[var] = index
        self.path.append(cond)
        try:
            self.block(body)
        except _Return:
            pass
        finally:
            self.path.pop()
        after = dict(self.env)
        self.env, self.recording = saved_env, saved_rec
        del self.model.accesses[saved_acc:]
        out = {}
        for name in carried:
            if name == var:
                continue
            v0, v1 = init[name], after.get(name)
            out[name] = self._linear(v0, v1, k) if v0 is not None else UNKNOWN
        return out

    def _linear(self, v0, v1, k):
        if v1 is v0:
            return v0
        if isinstance(v0, Ptr) and isinstance(v1, Ptr) and v0.base == v1.base:
            moved = self._linear(v0.offset, v1.offset, k)
            return Ptr(v0.base, moved) if isinstance(moved, Num) else UNKNOWN
        if isinstance(v0, BlockPtr) and isinstance(v1, BlockPtr) and v0.base == v1.base:
            offs = []
            for a, b in zip(v0.offsets, v1.offsets):
                moved = self._linear(a, b, k)
                if not isinstance(moved, Num):
                    return UNKNOWN
                offs.append(moved)
            return replace(v0, offsets=tuple(offs))
        if isinstance(v0, Num) and isinstance(v1, Num) and not v0.is_bool and not v1.is_bool:
            delta = z3.simplify(v1.term - v0.term)
            # (a pointer into a row chosen by a loaded value moves by a fixed step all the same:
            # ``b_ptrs += BLOCK_K`` of ``b_ptrs = b + expert * stride_e + ...``)
            if not mentions(delta, k) and not _reads_data(delta) and v1.lanes == v0.lanes \
                    and (not v1.data or v0.data):
                return replace(v0, term=v0.term + k * delta)
            return self._havoc(v0, "loop-carried value", reads=self._trip_reads(v0))
        return UNKNOWN

    def _havoc(self, value, name: str, last=None, reads=None):
        """What a loop leaves in ``name``: unknown, made from ``value`` (before the loop) and ``last``
        (after a trip: a value computed from loaded data makes the result loaded too); ``reads``:
        what it is a function of (None: not known)."""
        num = value.offset if isinstance(value, Ptr) else value
        if not isinstance(num, Num) or num.is_bool:
            return UNKNOWN
        last = last.offset if isinstance(last, Ptr) else last
        loaded = num.loaded or (isinstance(last, Num) and last.loaded)
        out = Num(self.sym.fresh("carried", f"value of `{name}` after a loop"), num.rank, data=True,
                  loaded=loaded, reads=reads)
        return Ptr(value.base, out) if isinstance(value, Ptr) else out

    @staticmethod
    def _loop_reads(start, last, bounds):
        """What a ``for`` loop leaves in a name is a function of where it started, of what one trip
        makes of it (every trip: the iteration is the same variable in each program's question) and
        of the trip count."""
        if bounds is None:
            return None
        return reads_of(*(v.offset if isinstance(v, Ptr) else v for v in (start, last)), *bounds)

    @staticmethod
    def _trip_reads(value):
        """What a value a ``for`` loop carries is a function of during the loop: where it started
        (each trip's reads come with the trip; what the loop leaves says the whole)."""
        return reads_of(value.offset if isinstance(value, Ptr) else value)

    def while_loop(self, stmt: cst.While) -> None:
        carried = assigned_names(stmt.body)
        for name in carried:
            self.env[name] = self._havoc(self.env.get(name), name)
        cond = self.expr(stmt.test)
        self._data_branch(cond, stmt)
        if isinstance(cond, Num) and not cond.lanes:
            self.path.append(_to_bool(cond))
        try:
            self.block(stmt.body)
        except _Return:
            pass
        finally:
            if isinstance(cond, Num) and not cond.lanes:
                self.path.pop()
        for name in carried:
            self.env[name] = self._havoc(self.env.get(name), name)

    def if_stmt(self, stmt: cst.If) -> None:
        test = self.expr(stmt.test)
        self._data_branch(test, stmt)
        if not isinstance(test, Num) or test.lanes:
            # a test the engine does not model: one every program reads alike (``if M is not None``)
            # only decides whether the kernel runs the branch at all; one that may differ between
            # programs, lanes or iterations decides which of them do, so an opaque condition keeps
            # the branch's accesses out of every question (``modelled`` refuses what mentions one)
            cond = None if self._uniform(stmt.test) else self.sym.fresh("opaque", "an unmodelled `if` test") != 0
        else:
            cond = z3.simplify(_to_bool(test))
        before = dict(self.env)
        branches = []  # (condition, env after, returned)
        for body, c in ((stmt.body, cond), (stmt.orelse, None if cond is None else negation(cond))):
            if body is not None and c is not None and z3.is_false(c):
                continue  # a compile-time branch that cannot be taken
            self.env = dict(before)
            returned = False
            if c is not None and not z3.is_true(c):
                self.path.append(c)
            try:
                if isinstance(body, cst.If):
                    self.if_stmt(body)
                elif body is not None:
                    self.block(body.body)
            except _Return:
                returned = True
            finally:
                if c is not None and not z3.is_true(c):
                    self.path.pop()
            branches.append((c, self.env, returned))
        live = [(c, env) for c, env, returned in branches if not returned]
        for c, _, returned in branches:
            if returned and c is not None:
                self.path.append(negation(c))  # the rest of the block runs only where it did not return
        if not live:
            self.env = before
            raise _Return()
        if len(live) == 1 or cond is None:
            self.env = live[0][1] if len(live) == 1 else _join_unknown(live)
            return
        (c1, e1), (_, e2) = live
        merged = {}
        for name in set(e1) | set(e2):
            a, b = e1.get(name, UNKNOWN), e2.get(name, UNKNOWN)
            merged[name] = a if a is b else _select(c1, a, b)
        self.env = merged

    def _branches(self) -> tuple:
        """The ``if`` tests among the path conditions (the loop guards left out)."""
        return tuple(c for c in self.path if not any(c is guard for guard in self.guards))

    def _alike(self) -> Num:
        """A stand-in for a value the engine does not model that every program computes alike."""
        return Num(self.sym.fresh("same", "a value every program computes alike"))

    def _uniform(self, test: cst.BaseExpression) -> bool:
        """Whether ``test`` calls nothing and reads only names whose values no program, lane,
        iteration or load changes (parameters, constants, the module's names)."""
        stack = [test]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Call):
                return False
            if isinstance(node, cst.Name):
                value = self.env.get(node.value)
                if value is not None and not _program_independent(value):
                    return False
            elif isinstance(node, cst.Attribute):
                stack.append(node.value)
            else:
                stack.extend(child_nodes(node))
        return True

    # -- expressions ---------------------------------------------------------------------------
    def expr(self, node):
        try:
            return self._expr(node)
        except (z3.Z3Exception, TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError):
            return UNKNOWN

    def _expr(self, node):
        if node is None:
            return NONE
        # dispatch on the node's class: ``isinstance`` against libcst's abstract node classes goes
        # through ``ABCMeta`` and cost a tenth of the evaluation
        handler = _EXPRESSIONS.get(type(node))
        return handler(self, node) if handler is not None else UNKNOWN

    def _name(self, node):
        v = node.value
        if v in self.env:
            return self.env[v]
        if v in self.info.constants:
            return const(self.info.constants[v])
        if v in ("True", "False"):
            return const(v == "True")
        if v == "None":
            return NONE
        return UNKNOWN

    def _string(self, node):
        value = node.evaluated_value
        return const(string_code(value)) if isinstance(value, str) else UNKNOWN

    def _integer(self, node):
        n = _int_text(node.value)
        return const(n) if n is not None else UNKNOWN

    def _unary(self, node):
        v = self.expr(node.expression)
        if not isinstance(v, Num):
            return UNKNOWN
        if isinstance(node.operator, (cst.Not, cst.BitInvert)) and v.is_bool:
            return replace(v, term=z3.Not(v.term))
        if isinstance(node.operator, cst.Not):  # ``not FLAG`` of an integer (a constexpr flag)
            return replace(v, term=v.term == 0)
        if isinstance(node.operator, cst.Minus) and not v.is_bool:
            return replace(v, term=-v.term)
        if isinstance(node.operator, cst.BitInvert):  # two's complement: ``~x == -x - 1``
            return replace(v, term=-v.term - 1)
        if isinstance(node.operator, cst.Plus):
            return v
        return UNKNOWN

    def _binary(self, node):
        a, b = self.expr(node.left), self.expr(node.right)
        # a float literal beside a value already unknown in number (``0.5 * b_s``): what the two
        # compute is a function of that value alone, as what one program reads decides it
        a, b = self._literal_beside_data(node.left, a, b), self._literal_beside_data(node.right, b, a)
        return self.arith(type(node.operator).__name__, a, b, node)

    def _literal_beside_data(self, node, value, other):
        while isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            node = node.expression
        if (value is UNKNOWN and isinstance(node, cst.Float) and isinstance(other, Num) and other.data
                and not other.is_bool):
            return self._alike()
        return value

    def _boolean(self, node):
        a, b = self.expr(node.left), self.expr(node.right)
        if isinstance(a, Num) and isinstance(b, Num):
            op = conjunction if isinstance(node.operator, cst.And) else disjunction
            return combine(op([_to_bool(a), _to_bool(b)]), a, b)
        return UNKNOWN

    def _sequence(self, node):
        return Tup(tuple(self.expr(e.value) for e in node.elements))

    def _named(self, node):
        value = self.expr(node.value)
        self.bind(node.target, value)
        return value

    def _if_expression(self, node):
        test = self.expr(node.test)
        a, b = self.expr(node.body), self.expr(node.orelse)
        if isinstance(test, Num) and not test.lanes:
            c = z3.simplify(_to_bool(test))
            return a if z3.is_true(c) else b if z3.is_false(c) else _select(c, a, b)
        return UNKNOWN

    def arith(self, op: str, a, b, node=None):
        if isinstance(a, Ptr) and isinstance(b, Num) and op in ("Add", "Subtract") and not b.is_bool:
            off = self.arith(op, a.offset, b)
            return Ptr(a.base, off) if isinstance(off, Num) else UNKNOWN
        if isinstance(b, Ptr) and isinstance(a, Num) and op == "Add" and not a.is_bool:
            off = self.arith(op, b.offset, a)
            return Ptr(b.base, off) if isinstance(off, Num) else UNKNOWN
        if not (isinstance(a, Num) and isinstance(b, Num)):
            return UNKNOWN
        if op in ("BitAnd", "BitOr", "BitXor") and a.is_bool and b.is_bool:
            if op == "BitXor":
                return combine(z3.Xor(a.term, b.term), a, b)
            return combine((conjunction if op == "BitAnd" else disjunction)([a.term, b.term]), a, b)
        x, y = _to_int(a), _to_int(b)
        if op == "Add":
            return combine(int_op("+", x, y), a, b)
        if op == "Subtract":
            return combine(int_op("-", x, y), a, b)
        if op in ("Multiply", "LeftShift"):
            # a product the address scales again is an index (``bos = i_n * T``, then ``bos * H * K``):
            # its overflow is the outer product's, asked there
            self.model.scaled |= a.narrow | b.narrow
        if op == "Multiply":
            return _narrowed(combine(int_op("*", x, y), a, b), a, b, node, self.path, self.model)
        if op in ("FloorDivide", "Modulo"):
            self.divides_by(y)
        if op == "FloorDivide":
            out = combine(int_op("/", x, y), a, b)
            ceil = z3.simplify(x - y + 1, som=True)
            if len(ceil.sexpr()) < len(z3.simplify(x, som=True).sexpr()):
                self.model.ceil_divs[out.term.get_id()] = (ceil, y, out.term)  # ``(n + B - 1) // B``: cdiv(n, B)
            return out
        if op == "Modulo":
            out = combine(int_op("%", x, y), a, b)
            # a remainder by a bound is bounded whatever the dividend was
            return replace(out, data=b.data)
        if op in ("LeftShift", "RightShift"):
            sy = z3.simplify(y)
            if z3.is_int_value(sy) and 0 <= sy.as_long() < 63:
                f = int_val(1 << sy.as_long())
                out = combine(x * f if op == "LeftShift" else x / f, a, b)
                return (_narrowed(out, a, const(1 << sy.as_long()), node, self.path, self.model)
                        if op == "LeftShift" else out)
        if op in ("BitAnd", "BitOr", "BitXor") and _program_independent(a) and _program_independent(b):
            # of values every program computes alike (compile-time flags: ``if EVEN_M & EVEN_K:``),
            # exactly: what a launch fixes decides it, and the names stay visible to the path
            return combine(_bitwise(op, x, y), a, b)
        if op == "BitAnd":
            # ``x & m`` lies in [0, m] for non-negative operands
            v = self.sym.fresh("bits", "a bitwise and")
            self.sym.domain.append(z3.Implies(z3.And(x >= 0, y >= 0), z3.And(v >= 0, v <= y, v <= x)))
            return combine(v, a, b)
        return combine(self.sym.fresh("opaque", f"an unmodelled `{op}`"), a, b, data=True)

    def divides_by(self, divisor) -> None:
        """A run that reaches a division divides by something non-zero (z3 gives ``x / 0`` any value:
        a witness would be an input on which the kernel divides by zero). Scalar divisors only."""
        d = z3.simplify(divisor)
        if z3.is_int_value(d) or any(n.startswith("lane!") for n in free_vars(d)):
            return
        nonzero = int_op("!=", d, int_val(0))
        self.sym.domain.append(z3.Implies(conjunction(self.path), nonzero) if self.path else nonzero)

    def compare(self, node: cst.Comparison):
        left = self.expr(node.left)
        out = None
        for target in node.comparisons:
            right = self.expr(target.comparator)
            op = type(target.operator).__name__
            if not (isinstance(left, Num) and isinstance(right, Num)):
                return UNKNOWN
            x, y = _to_int(left), _to_int(right)
            if op not in _COMPARISONS:
                return UNKNOWN
            if op in ("Equal", "NotEqual"):
                self._sentinel(left, right)
                self._sentinel(right, left)
            elif op in _FIRST_FAILING:
                # ``valid = ids < n_valid``: the kernel tests the loaded value against a bound, so it
                # expects values that fail the test; the first of them is one it is written for
                self._sentinel(left, right, _FIRST_FAILING[op], self.model.tested_bounds)
                self._sentinel(right, left, _FIRST_FAILING[_MIRRORED[op]], self.model.tested_bounds)
            term = combine(int_op(_COMPARISONS[op], x, y), left, right)
            out = term if out is None else combine(z3.And(out.term, term.term), out, term)
            left = right
        return out if out is not None else UNKNOWN

    def _sentinel(self, value: Num, other: Num, shift: int = 0, into: dict | None = None) -> None:
        """Record ``other`` (plus ``shift``) as a value the loaded ``value`` is tested for, where
        ``value`` is one loaded value as loaded and ``other`` reads no data and no lane (a parameter, a
        constant); in ``into``, else :attr:`KernelModel.sentinels`."""
        if not (z3.is_const(value.term) and value.term.decl().name() in self.model.loaded_from):
            return
        if other.data or other.lanes or other.is_bool:
            return
        if any(n.startswith(PER_PROGRAM) for n in free_vars(other.term)):
            return
        target = self.model.sentinels if into is None else into
        target.setdefault(value.term.decl().name(), []).append(other.term + shift if shift else other.term)

    def subscript(self, node: cst.Subscript):
        base = self.expr(node.value)
        pattern = []
        for el in node.slice:
            s = el.slice
            if isinstance(s, cst.Slice):
                pattern.append(":")
            elif isinstance(s, cst.Index) and isinstance(s.value, cst.Name) and s.value.value == "None":
                pattern.append("None")
            elif isinstance(s, cst.Index) and isinstance(base, Tup):
                i = self.expr(s.value)
                if isinstance(i, Num) and z3.is_int_value(z3.simplify(i.term)):
                    idx = z3.simplify(i.term).as_long()
                    return base.items[idx] if -len(base.items) <= idx < len(base.items) else UNKNOWN
                return UNKNOWN
            else:
                return UNKNOWN
        if not isinstance(base, (Num, Ptr)):
            return UNKNOWN
        rank = rank_of(base)
        kept = [i for i, p in enumerate(pattern) if p == ":"]
        if len(kept) > rank or (rank and len(kept) < rank and "None" not in pattern):
            return UNKNOWN
        # source axis j (from the left of ``rank`` axes, the trailing ones unnamed) -> new axis
        new_rank = len(pattern) + (rank - len(kept))
        mapping = {}
        for j, pos in enumerate(kept):
            mapping[rank - 1 - j] = new_rank - 1 - pos
        return move_axes(base, mapping, new_rank)

    # -- calls ---------------------------------------------------------------------------------
    def _cast(self, base, dtype: cst.BaseExpression | None):
        """``x.to(dtype)`` and ``tl.cast(x, dtype)``: an integer keeps its value in its new width; any
        other conversion (to a float) is a value the engine does not follow."""
        target = (self.imports.resolve(dtype) or "" if dtype is not None else "").rsplit(".", 1)[-1]
        if isinstance(base, Num):
            if target.startswith(("int", "uint")) and target.lstrip("uint").isdigit():
                bits = int(target.lstrip("uint"))
                if bits > 32 and base.bits <= 32:
                    self.model.late_casts |= base.narrow  # widened after the product wrapped
                return replace(base, bits=bits)
            return replace(base, data=True)
        return base if isinstance(base, Ptr) and "pointer" not in target else UNKNOWN

    def call(self, node: cst.Call):
        name = self.imports.resolve(node.func) or ""
        tail = _call_tail(node.func)
        self.model.called.add(tail)
        if tail.startswith(_WRITES) and name != TL + "store" and name not in ATOMICS:
            self.model.unrecorded_writes = True
        if isinstance(node.func, cst.Attribute) and not name.startswith(TL):
            method = node.func.attr.value
            if method == "to":
                return self._cast(self.expr(node.func.value), node.args[0].value if node.args else None)
            if method in ("trans", "reshape", "view", "permute", "expand_dims", "broadcast_to"):
                args = [node.func.value] + [a.value for a in node.args]
                return self.shape_call(TL + method, [self.expr(a) for a in args], args, node)
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if name == TL + "cast" and positional:
            value = self.expr(positional[0])
            if len(positional) > 3 or "bitcast" in keywords:  # a reinterpretation of the bits
                return replace(value, data=True) if isinstance(value, Num) else UNKNOWN
            return self._cast(value, positional[1] if len(positional) > 1 else keywords.get("dtype"))
        if name == TL + "program_id":
            axis = self._const_arg(positional[0] if positional else keywords.get("axis"))
            if axis is None:
                return UNKNOWN
            return Num(self._pid(axis)[0])
        if name == TL + "num_programs":
            axis = self._const_arg(positional[0] if positional else keywords.get("axis"))
            return Num(self._pid(axis)[1]) if axis is not None else UNKNOWN
        if name == TL + "arange":
            return self.arange(node, positional, keywords)
        if name in (TL + "load", TL + "store") or name in ATOMICS:
            return self.access(node, name, positional, keywords)
        if name == TL + "make_block_ptr":
            return self.block_ptr(positional, keywords)
        if name == TL + "advance":
            args = [self.expr(a) for a in positional] + [self.expr(v) for v in keywords.values()]
            if len(args) == 2 and isinstance(args[0], BlockPtr) and isinstance(args[1], Tup):
                deltas = args[1].items
                if len(deltas) == len(args[0].offsets) and all(isinstance(d, Num) for d in deltas):
                    for d in deltas:
                        self.model.scaled |= d.narrow
                    return replace(args[0], offsets=tuple(
                        combine(o.term + d.term, o, d) for o, d in zip(args[0].offsets, deltas)))
            return UNKNOWN
        args = [self.expr(a) for a in positional]
        kwargs = {k: self.expr(v) for k, v in keywords.items()}
        if name in PASSTHROUGH or name in ("int",):
            return args[0] if args else UNKNOWN
        if name in (TL + "assume", TL + "device_assert", TL + "static_assert"):
            if args and isinstance(args[0], Num) and args[0].is_bool and not args[0].lanes:
                self.path.append(args[0].term)
            return NONE
        if name in ("triton.cdiv", TL + "cdiv") and len(args) == 2 and all(isinstance(a, Num) for a in args):
            a, b = args
            self.divides_by(b.term)
            out = combine((a.term + b.term - 1) / b.term, a, b)
            self.model.ceil_divs[out.term.get_id()] = (a.term, b.term, out.term)
            return out
        if name in ("triton.next_power_of_2", "next_power_of_2") and len(args) == 1 and isinstance(args[0], Num) \
                and not args[0].lanes and not args[0].is_bool:
            # (in a heuristics decorator's lambda: ``BLOCK_N = next_power_of_2(args["N"])``)
            p = int_var(f"next_power_of_2({terms_text(args[0].term)})")
            self.sym.domain += [*rounding_up(p, args[0].term), power_of_two(p)]
            self.rounded[p.decl().name()] = frozenset(free_vars(args[0].term))
            return combine(p, args[0])
        if name == TL + "where" and len(args) == 3:
            if len(positional) == 3:
                # an arm the engine does not model that reads nothing a program, lane, iteration or
                # load changes (``0.0``, ``float("-inf")``): the same in every program
                args = [args[0], *(a if isinstance(a, Num) or not self._uniform(n) else self._alike()
                                   for a, n in zip(args[1:], positional[1:]))]
            test, otherwise = args[0], args[2]
            if isinstance(test, Num) and test.is_bool and _live(otherwise, positional[2] if len(positional) == 3 else None):
                self.model.splits.append(test)
            return _select_block(*args)
        if name in (TL + "minimum", TL + "maximum", "min", "max") and len(args) == 2:
            a, b = args
            if isinstance(a, Num) and isinstance(b, Num) and not a.is_bool and not b.is_bool:
                smaller = "min" in name
                pick = a.term <= b.term if smaller else a.term >= b.term
                out = combine(z3.If(pick, a.term, b.term), a, b)
                # the bound side limits an unknown one
                return replace(out, data=a.data and b.data) if smaller else out
            return UNKNOWN
        if name == TL + "clamp" and len(args) == 3 and all(isinstance(a, Num) for a in args):
            x, lo, hi = args
            term = z3.If(x.term < lo.term, lo.term, z3.If(x.term > hi.term, hi.term, x.term))
            return replace(combine(term, x, lo, hi), data=lo.data or hi.data)
        if name.startswith(TL) and name.rsplit(".", 1)[-1] in ("trans", "reshape", "view", "permute",
                                                               "expand_dims", "ravel"):
            if "can_reorder" in keywords and source_text(self.info.module, keywords["can_reorder"]) != "False":
                return UNKNOWN  # the compiler may order the elements as it likes
            return self.shape_call(name, args, positional, node)
        if name == TL + "full" and len(args) >= 2 and isinstance(args[0], Tup) and isinstance(args[1], Num) \
                and not args[1].lanes and not args[1].is_bool:
            # a block holding one value at every lane: that value, of the block's rank
            dtype = positional[2] if len(positional) > 2 else keywords.get("dtype")
            return replace(self._cast(args[1], dtype), rank=len(args[0].items))
        if name in DATA_CALLS or name.startswith(ELEMENTWISE_MATH):
            rank = 0
            for a in args:
                rank = max(rank, rank_of(a))
            if name in (TL + "zeros", TL + "full") and args and isinstance(args[0], Tup):
                rank = len(args[0].items)  # a block of the shape given
            elif name in REDUCING and not _keeps_dims(keywords):
                # ``tl.sum(x, axis=0)`` drops the axis it reduces; without an axis, every axis
                axis = positional[1] if len(positional) > 1 else keywords.get("axis")
                rank = 0 if axis is None or (isinstance(axis, cst.Name) and axis.value == "None") else max(rank - 1, 0)
            loaded = any(isinstance(a, Num) and a.loaded for a in args)
            given = [a for a in args if a is not NONE and not isinstance(a, Tup)]
            aligned = name not in ACROSS_LANES and all(getattr(a, "aligned", False) for a in given)
            short = name.rsplit(".", 1)[-1]
            value = self.sym.fresh("data", f"the value of `{short}`")
            if short in POSITIONS or (short in OF_ELEMENTS and args and isinstance(args[0], Num) and args[0].is_bool):
                self.sym.domain.append(at_least(value, 0))
            if short in POSITIONS:
                # a position in a block: below Triton's largest number of elements in one
                self.sym.domain.append(value < int_val(MAX_BLOCK_NUMEL))
            # (a reduction or element-wise function of integers is as wide as the widest of them)
            widths = [a.bits for a in given if isinstance(a, Num) and not a.is_bool]
            bits = max(widths) if widths and short not in POSITIONS else 32
            return Num(value, rank, data=True, loaded=loaded, reads=reads_of(*given), aligned=aligned, bits=bits)
        helper = self._helper(node, name)
        if helper is not None:
            return self.inline(helper, args, kwargs)
        return UNKNOWN

    def _const_arg(self, node) -> int | None:
        v = self.expr(node) if node is not None else const(0)
        if isinstance(v, Num):
            s = z3.simplify(v.term)
            if z3.is_int_value(s):
                return s.as_long()
        return None

    def _pid(self, axis: int):
        if axis not in self.model.pids:
            pid, grid = int_var(f"pid!{axis}"), int_var(f"grid!{axis}")
            self.sym.described[f"pid!{axis}"] = f"program_id({axis})"
            self.sym.domain += [at_least(grid, 1), at_least(pid, 0), int_op("<", pid, grid)]
            self.model.pids[axis] = (pid, grid)
        return self.model.pids[axis]

    def arange(self, node, positional, keywords):
        start = self.expr(positional[0] if positional else keywords.get("start"))
        end = self.expr(positional[1] if len(positional) > 1 else keywords.get("end"))
        if not (isinstance(start, Num) and isinstance(end, Num)):
            return UNKNOWN
        self.lane_ids += 1
        module = self.info.module
        lane = Lane(self.lane_ids, start.term, end.term, lambda: source_text(module, node).strip(), node,
                    self._branches(), self.helpers[-1] if self.helpers else None)
        self.model.lanes.append(lane)
        return Num(start.term + lane.var(0), 1, frozenset({(lane, 0)}) | start.lanes | end.lanes)

    def _claim(self, cmp_node, value):
        """``tl.atomic_cas(p, c, v)`` with ``c != v`` the same in every program: of the programs that
        see ``c``, each sees it only after another has put it back (a lock), or one alone does (an
        election): never two at once. The returned value, with what it is compared with (``value``:
        ``v`` as the access evaluated it)."""
        cmp = _claim_of(self.expr(cmp_node), value)
        if cmp is None:
            return None
        old = self.sym.fresh("claim", "the value a compare-and-swap returned")
        self.model.claims[old.decl().name()] = cmp
        self.model.returned.add(old.decl().name())
        return Num(old, data=True, bits=64, loaded=True)

    def _as_pointer(self, value: Num):
        """An address built from a parameter the engine took for a scalar (``Q + offs`` passed to
        ``tl.load``): the one parameter added at the top of the sum is the tensor's base."""
        if value.is_bool or value.data:
            return UNKNOWN
        leaves = summands(value.term)
        params = self.model.params
        bases = [n for n in leaves if n in params and n not in self.model.constexprs]
        if len(bases) != 1 or leaves.count(bases[0]) != 1:
            return UNKNOWN
        base = bases[0]
        offset = z3.substitute(value.term, (params[base], int_val(0)))
        if mentions(offset, params[base]):
            return UNKNOWN  # the base also scales something: not an address
        self.model.pointers.add(base)
        return Ptr(base, replace(value, term=offset))

    def block_ptr(self, positional, keywords):
        names = ("base", "shape", "strides", "offsets", "block_shape", "order")
        args = {n: positional[i] for i, n in enumerate(names) if i < len(positional)}
        args.update({k: v for k, v in keywords.items() if k in names})
        base = self.expr(args.get("base"))
        if isinstance(base, Num):  # a parameter not known as a pointer until it is the base
            base = self._as_pointer(base)
        parts = [self.expr(args.get(n)) for n in ("shape", "strides", "offsets", "block_shape")]
        if not isinstance(base, Ptr) or not all(isinstance(p, Tup) for p in parts):
            return UNKNOWN
        shape, strides, offsets, block = (p.items for p in parts)
        if not all(isinstance(x, Num) for x in (*shape, *strides, *offsets, *block)):
            return UNKNOWN
        if len({len(shape), len(strides), len(offsets), len(block)}) != 1:
            return UNKNOWN
        for o in offsets:  # row and column indices: Triton scales them by the strides, in int64
            self.model.scaled |= o.narrow
        return BlockPtr(base.base, tuple(shape), tuple(strides), tuple(offsets), tuple(block), base.offset)

    def _block_access(self, ptr: BlockPtr, checked: tuple, text: str):
        """The block a block pointer addresses, as a pointer over one lane per block dimension, and
        the mask ``boundary_check`` applies (``0 <= offset + lane < shape`` on the checked ones)."""
        rank = len(ptr.block)
        base = ptr.base_offset if isinstance(ptr.base_offset, Num) else const(0)
        parts, conds, lanes, term, unchecked = [base], [], set(), base.term, []
        for d in range(rank):
            self.lane_ids += 1
            lane = Lane(self.lane_ids, int_val(0), ptr.block[d].term, f"{text} (block axis {d})")
            self.model.lanes.append(lane)
            lanes.add((lane, rank - 1 - d))
            index = combine(ptr.offsets[d].term + position(rank - 1 - d), ptr.offsets[d], ptr.shape[d])
            parts += [index, ptr.strides[d]]
            term = term + index.term * ptr.strides[d].term
            if d in checked or d - rank in checked:
                conds.append(z3.And(index.term >= 0, index.term < ptr.shape[d].term))
            else:
                unchecked.append(BlockAxis(d, replace(index, lanes=index.lanes | {(lane, rank - 1 - d)}),
                                           ptr.shape[d], rank - 1 - d))
        offset = replace(combine(term, *parts), rank=rank, lanes=frozenset(lanes) | base.lanes)
        mask = Num(z3.And(*conds), rank, frozenset(lanes)) if conds else None
        return Ptr(ptr.base, offset), mask, tuple(unchecked)

    def shape_call(self, name, args, nodes, node=None):
        fn = name.rsplit(".", 1)[-1]
        x = args[0] if args else UNKNOWN
        if not isinstance(x, (Num, Ptr)):
            return UNKNOWN
        rank = rank_of(x)
        if fn == "trans" and rank == 2 and len(args) == 1:
            return move_axes(x, {0: 1, 1: 0}, 2)
        if fn in ("trans", "permute"):
            dims = args[1].items if len(args) == 2 and isinstance(args[1], Tup) else args[1:]
            order = [self._const_of(d) for d in dims]
            if len(order) == rank and None not in order and sorted(order) == list(range(rank)):
                # new axis i (from the left) takes old axis order[i]
                return move_axes(x, {rank - 1 - o: rank - 1 - i for i, o in enumerate(order)}, rank)
            return UNKNOWN
        if fn == "expand_dims" and len(args) == 2:
            axis = self._const_of(args[1])
            if axis is None:
                return UNKNOWN
            axis = axis % (rank + 1)
            # axes right of the new one keep their place from the right; those left of it move by one
            return move_axes(x, {a: a + 1 for a in range(rank) if rank - 1 - a >= axis}, rank + 1)
        if fn in ("reshape", "view") and isinstance(x, Num) and not x.lanes:
            return x
        if fn == "reshape" and node is not None:
            return self.reshape(x, args[1:], source_text(self.info.module, node).strip())
        return UNKNOWN

    def reshape(self, x, dims, text: str):
        """``tl.reshape(x, (A, B))``: row-major, the element at new positions ``(i, j)`` is the one at
        linear index ``i * B + j`` of ``x``; each new axis gets a lane of its own. An axis of ``x``
        without a lane has no known length: unknown."""
        if isinstance(x, Ptr):
            moved = self.reshape(x.offset, dims, text)
            return Ptr(x.base, moved) if isinstance(moved, Num) else UNKNOWN
        if len(dims) == 1 and isinstance(dims[0], Tup):
            dims = dims[0].items
        if not dims or not all(isinstance(d, Num) and not d.lanes and not d.is_bool and not d.data for d in dims):
            return UNKNOWN
        rank, sizes = x.rank, {}
        if rank == 0 and not x.lanes:
            return x
        for lane, axis in x.lanes:
            sizes.setdefault(axis, lane.end - lane.start)
        if set(sizes) != set(range(rank)):
            return UNKNOWN
        old = [sizes[rank - 1 - j] for j in range(rank)]  # left to right
        new = [d.term for d in dims]
        m = len(new)
        linear, stride = int_val(0), int_val(1)
        lanes = set()
        for i in reversed(range(m)):
            self.lane_ids += 1
            lane = Lane(self.lane_ids, int_val(0), new[i], f"{text} (axis {i})")
            self.model.lanes.append(lane)
            lanes.add((lane, m - 1 - i))
            linear = linear + position(m - 1 - i) * stride
            stride = stride * new[i]
        # a reshape keeps the number of elements (Triton rejects any other)
        self.sym.domain.append(stride == z3.Product(*old))
        pairs, stride = [], int_val(1)
        for j in reversed(range(rank)):
            index = linear if j == rank - 1 else linear / stride
            pairs.append((position(rank - 1 - j), index % old[j] if j > 0 else index))
            stride = stride * old[j]
        term = z3.substitute(x.term, *pairs) if pairs else x.term
        return replace(x, term=term, rank=m, lanes=frozenset(lanes), aligned=x.aligned and not x.reads)

    def _const_of(self, v) -> int | None:
        if isinstance(v, Num):
            s = z3.simplify(v.term)
            return s.as_long() if z3.is_int_value(s) else None
        return None

    def _helper(self, node: cst.Call, name: str):
        if not isinstance(node.func, cst.Name):
            return None
        if len(self.helpers) >= MAX_INLINE:
            self.model.partial = True
            return None
        fn = self.info.functions.get(node.func.value)
        if fn is None or fn is self.kernel.node or fn.name.value in self.helpers:
            return None
        return fn

    def inline(self, fn: cst.FunctionDef, args, kwargs):
        env = bound_parameters(fn, args, kwargs, lambda p: self.expr(p.default) if p.default is not None else UNKNOWN)
        saved = (self.env, self.returns, len(self.path))
        self.env, self.returns = env, []
        self.helpers.append(fn.name.value)
        try:
            self.block(fn.body)
        except _Return:
            pass
        finally:
            self.helpers.pop()
            returns = self.returns
            self.env, self.returns = saved[0], saved[1]
            del self.path[saved[2]:]
        if not returns:
            return NONE
        value = returns[-1][1]
        for path, other in reversed(returns[:-1]):
            value = _select(z3.And(*path[saved[2]:]) if path[saved[2]:] else z3.BoolVal(True), other, value)
        return value

    def access(self, node, name, positional, keywords):
        kind = "load" if name == TL + "load" else "store" if name == TL + "store" else "atomic"
        names = ("pointer", "mask", "other") if kind == "load" else ("pointer", "value", "mask")
        if name == TL + "atomic_cas":
            names = ("pointer", "cmp", "value")
        given = {n: positional[i] for i, n in enumerate(names) if i < len(positional)}
        given.update({k: v for k, v in keywords.items() if k in names or k in ("val", "boundary_check")})
        if "val" in given:
            given["value"] = given.pop("val")
        ptr = self.expr(given.get("pointer"))
        if isinstance(ptr, Num):
            ptr = self._as_pointer(ptr)
        mask = self.expr(given["mask"]) if "mask" in given else None
        value = self.expr(given["value"]) if "value" in given else None
        if "value" in given and not isinstance(value, Num) and self._uniform(given["value"]):
            # a value the engine does not model that reads nothing a program, lane, iteration or load
            # changes (``1.0``, ``scale * 0.5``): whatever it is, every program stores the same
            value = self._alike()
        other = self.expr(given["other"]) if "other" in given else None
        if "other" in given and not isinstance(other, Num) and self._uniform(given["other"]):
            other = None  # ``other=0.0``: the same in every program
        checked: tuple = ()
        if "boundary_check" in given:
            bc = self.expr(given["boundary_check"])
            items = bc.items if isinstance(bc, Tup) else (bc,)
            checked = tuple(c for c in (self._const_of(i) for i in items) if c is not None)
        if mask is NONE:
            mask = None
        unchecked: tuple = ()
        if isinstance(ptr, BlockPtr) and mask is None:
            ptr, mask, unchecked = self._block_access(ptr, checked, source_text(self.info.module, given["pointer"]).strip())
        if self.recording:
            self.model.accesses.append(Access(
                kind, node, self.site or node, ptr, mask, tuple(self.path), checked,
                self.helpers[-1] if self.helpers else None, tuple(self.loops), given.get("mask"),
                self._branches(), unchecked, value,
            ))
        rank = rank_of(ptr) if isinstance(ptr, Ptr) else len(ptr.block) if isinstance(ptr, BlockPtr) else 0
        if kind == "store":
            return NONE
        # what a load returns has its tensor's dtype: an integer width every launch's tensor has, or
        # wide until cast
        if name == TL + "atomic_add":  # each program draws a different old value: a ticket
            ticket = self.sym.fresh("ticket", "the value an atomic returned")
            self.model.returned.add(ticket.decl().name())
            if self.recording:
                self.model.drawn_by[ticket.decl().name()] = self.model.accesses[-1]
            return Num(ticket, rank, data=True, bits=64, loaded=True)
        if name == TL + "atomic_cas" and not rank:
            claimed = self._claim(given.get("cmp"), value)
            if claimed is not None:
                return claimed
        loaded = self.sym.fresh("data", "a loaded value")
        if rank:
            self.model.lane_data.add(loaded.decl().name())
        if kind == "atomic":
            self.model.returned.add(loaded.decl().name())
        elif isinstance(ptr, (Ptr, BlockPtr)):
            self.model.loaded_from[loaded.decl().name()] = ptr.base
        # what the load reads: the addresses, the mask, and what masked-off lanes get
        read = [ptr.offset if isinstance(ptr, Ptr) else ptr, *(v for v in (mask, other) if v is not None)]
        aligned = all(getattr(v, "aligned", False) for v in read)
        bits = self.element_bits.get(ptr.base, 64) if kind == "load" and isinstance(ptr, Ptr) else 64
        return Num(loaded, rank, data=True, bits=bits, loaded=True, reads=reads_of(*read), aligned=aligned)


#: the expression evaluator of each libcst node class (others are UNKNOWN)
_EXPRESSIONS = {
    cst.Name: Evaluator._name, cst.Integer: Evaluator._integer, cst.SimpleString: Evaluator._string,
    cst.UnaryOperation: Evaluator._unary, cst.BinaryOperation: Evaluator._binary,
    cst.BooleanOperation: Evaluator._boolean, cst.Comparison: Evaluator.compare,
    cst.Subscript: Evaluator.subscript, cst.Call: Evaluator.call, cst.Tuple: Evaluator._sequence,
    cst.List: Evaluator._sequence, cst.NamedExpr: Evaluator._named, cst.IfExp: Evaluator._if_expression,
}


def _claim_of(cmp, val) -> object | None:
    """The compare value of ``tl.atomic_cas(p, cmp, val)`` when the swap claims the element: both
    the same in every program, and different."""
    if not (isinstance(cmp, Num) and isinstance(val, Num) and _program_independent(cmp)
            and _program_independent(val)):
        return None
    return cmp.term if z3.is_true(z3.simplify(cmp.term != val.term)) else None


def _reads_data(term) -> bool:
    """Whether a term reads a value loaded, returned by an atomic, or not modelled."""
    return any(n.startswith(("data!", "ticket!", "claim!", "bits!", *UNMODELLED)) for n in free_vars(term))


def _walks(value: Num) -> bool:
    return any(n.startswith(WALKING) for n in free_vars(value.term))


def _loaded_scalar(value: Num, model) -> bool:
    """Whether ``value`` reads a scalar a program loaded from a tensor (not a block of loaded values,
    nor a value computed from them)."""
    return any(n in model.loaded_from and n not in model.lane_data for n in free_vars(value.term))


def _loaded_indices(value: Num, model) -> bool:
    """Whether ``value`` is a block of indices as loaded from a tensor (``locs[:, None]`` of ``locs =
    tl.load(req_to_token + offs)``): each lane's own row, as large as the table holds."""
    return z3.is_const(value.term) and value.term.decl().name() in model.lane_data


_MET = itertools.count()


def _keeps_dims(keywords: dict) -> bool:
    """Whether a reduction's ``keep_dims=`` keeps the axis it reduces."""
    keep = keywords.get("keep_dims")
    return keep is not None and not (isinstance(keep, cst.Name) and keep.value == "False")


def _narrowed(out: Num, a: Num, b: Num, node, path: list, model) -> Num:
    """``out = a * b``, with the product recorded where it is computed in 32 bits from a scalar that
    walks with the run; of a block, only where a scalar each program loads walks it (``(bos + o_t) *
    H`` of ``bos = tl.load(cu_seqlens + i_n)``: the sequence's start, as large as the whole batch), or
    where it is a block of indices as loaded (``locs * stride``: rows of a pool)."""
    if out.bits > 32 or node is None or a.rank and b.rank:
        return out
    if _walks(a) and (not a.rank or _loaded_scalar(a, model) or _loaded_indices(a, model)):
        walker, size = a, b
    elif _walks(b) and (not b.rank or _loaded_scalar(b, model) or _loaded_indices(b, model)):
        walker, size = b, a
    else:
        return out
    return replace(out, narrow=out.narrow | {Narrow(node, out.term, walker, size, walker is a, tuple(path),
                                                    next(_MET))})


def _select(c, a, b):
    # a test the engine does not read decides which value: what it is a function of is not known
    blind = any(n.startswith(UNMODELLED) for n in free_vars(c))
    if isinstance(a, Num) and isinstance(b, Num) and a.is_bool == b.is_bool:
        out = combine(ite(c, a.term, b.term), a, b)
        return replace(out, reads=None) if blind else out
    if isinstance(a, Ptr) and isinstance(b, Ptr) and a.base == b.base:
        out = combine(ite(c, a.offset.term, b.offset.term), a.offset, b.offset)
        return Ptr(a.base, replace(out, reads=None) if blind else out)
    if a is NONE and b is NONE:
        return NONE
    if isinstance(a, Tup) and isinstance(b, Tup) and len(a.items) == len(b.items):
        return Tup(tuple(_select(c, x, y) for x, y in zip(a.items, b.items)))
    return UNKNOWN


def _select_block(cond, a, b):
    if not isinstance(cond, Num):
        return UNKNOWN
    c = _to_bool(cond)
    out = _select(c, a, b)
    if isinstance(out, Num):
        out = combine(out.term, out, cond)
        # ``tl.where(mask, idx, 0)``: a condition that is not itself data bounds the pick
        if a.data != b.data if isinstance(a, Num) and isinstance(b, Num) else False:
            out = replace(out, data=True)
    elif isinstance(out, Ptr):
        out = Ptr(out.base, combine(out.offset.term, out.offset, cond))
    return out


def _join_unknown(live):
    """Both branches taken under a condition the engine cannot express: names they disagree on
    become unknown."""
    (_, e1), (_, e2) = live
    return {n: (e1[n] if e1.get(n) is e2.get(n) else UNKNOWN) for n in set(e1) | set(e2)}


_BASES = {TL + "load": "pointer", TL + "store": "pointer", TL + "make_block_ptr": "base",
          TL + "make_tensor_descriptor": "base", **{a: "pointer" for a in ATOMICS}}


_BASE_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in _BASES)


def _live(value, node) -> bool:
    """Whether a ``tl.where`` arm ``value`` (written as ``node``) varies from lane to lane or program
    to program: data, a block, a program's own number, or an expression the engine does not model
    other than ``float("inf")`` (literal arms are stand-ins every program computes alike by now)."""
    if isinstance(value, Num):
        return bool(value.lanes) or value.data or any(n.startswith(PER_PROGRAM) for n in free_vars(value.term))
    while isinstance(node, cst.UnaryOperation):
        node = node.expression
    return not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "float")


def _call_tail(func: cst.BaseExpression) -> str:
    """The last name of what a call calls (``sum`` of ``tl.sum`` and of ``x.sum``; "" for ``f()()``)."""
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def _subscript_parts(node: cst.Subscript) -> list:
    out = [node.value]
    for element in node.slice:
        part = element.slice
        out += [part.value] if isinstance(part, cst.Index) else [x for x in (part.lower, part.upper, part.step) if x]
    return out


def _optional(*nodes) -> list:
    return [n for n in nodes if n is not None]


#: node type -> the statements and expressions directly under it (whitespace, punctuation and names
#: left out: a full walk of a libcst tree spends most of its time on those)
_CODE_CHILDREN = {
    cst.IndentedBlock: lambda n: n.body, cst.SimpleStatementLine: lambda n: n.body,
    cst.SimpleStatementSuite: lambda n: n.body, cst.Else: lambda n: [n.body], cst.Finally: lambda n: [n.body],
    cst.If: lambda n: _optional(n.test, n.body, n.orelse), cst.While: lambda n: _optional(n.test, n.body, n.orelse),
    cst.For: lambda n: _optional(n.iter, n.body, n.orelse),
    cst.With: lambda n: [*(item.item for item in n.items), n.body],
    cst.Try: lambda n: _optional(n.body, *(h.body for h in n.handlers), n.orelse, n.finalbody),
    cst.Assign: lambda n: [n.value], cst.AugAssign: lambda n: [n.value], cst.AnnAssign: lambda n: _optional(n.value),
    cst.Expr: lambda n: [n.value], cst.Return: lambda n: _optional(n.value), cst.NamedExpr: lambda n: [n.value],
    cst.Assert: lambda n: [n.test],
    cst.Call: lambda n: [n.func, *(a.value for a in n.args)], cst.Attribute: lambda n: [n.value],
    cst.BinaryOperation: lambda n: [n.left, n.right], cst.BooleanOperation: lambda n: [n.left, n.right],
    cst.UnaryOperation: lambda n: [n.expression],
    cst.Comparison: lambda n: [n.left, *(c.comparator for c in n.comparisons)],
    cst.Subscript: _subscript_parts, cst.Tuple: lambda n: [e.value for e in n.elements],
    cst.List: lambda n: [e.value for e in n.elements], cst.IfExp: lambda n: [n.test, n.body, n.orelse],
}


def _code_nodes(body) -> list:
    """The statements and expressions of a function body (:data:`_CODE_CHILDREN`)."""
    out, stack = [], [body]
    children = _CODE_CHILDREN.get
    while stack:
        node = stack.pop()
        out.append(node)
        under = children(type(node))
        if under is not None:
            stack.extend(under(node))
    return out


def address_bases(info, fn: cst.FunctionDef) -> set[str]:
    """The parameters of ``fn`` an address starts from: the leftmost term of the pointer a load, store,
    atomic or block pointer is given, followed through the names assigned it (``p_q = q + offs``,
    then ``tl.load(p_q)``). A kernel's pointers often have no telling name (``q``, ``k``, ``v``)."""
    params = {p.name.value for p in fn.params.params}
    assigned: dict[str, list] = {}
    starts: list = []
    for node in _code_nodes(fn.body):
        kind = type(node)  # not ``isinstance``: libcst's node classes are abstract, and that check is slow
        if kind is cst.Assign and len(node.targets) == 1:
            target, value = node.targets[0].target, node.value
            if isinstance(target, cst.Name):
                assigned.setdefault(target.value, []).append(value)
            elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
                for t, v in zip(target.elements, value.elements):
                    if isinstance(t.value, cst.Name):
                        assigned.setdefault(t.value.value, []).append(v.value)
        elif kind is cst.Call:
            keyword = _BASES.get(info.imports.resolve(node.func) or "") if _call_tail(node.func) in _BASE_NAMES else None
            if keyword is not None:
                given = argument(node, keyword, 0)
                if given is not None:
                    starts.append(given)
    found, seen = set(), set()
    while starts:
        node = starts.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
            starts.append(node.left)
        elif isinstance(node, cst.Subscript):
            starts.append(node.value)
        elif isinstance(node, cst.IfExp):
            starts += [node.body, node.orelse]
        elif isinstance(node, cst.Name) and node.value not in seen:
            seen.add(node.value)
            if node.value in params:
                found.add(node.value)
            starts += assigned.get(node.value, [])
    return found


def _element_bits(info, kernel) -> dict[str, int]:
    """The integer width of what each pointer parameter points to, where every launch in the module
    binds it to a tensor the host code gives an integer dtype of that width (``cu_seqlens`` asserted
    ``torch.int32``): what the kernel loads through it is that wide until cast."""
    launches = info.facts.launches_of(kernel.kernel) if info.kernels else []
    out: dict[str, int] = {}
    for p in kernel.kernel.params if launches else ():
        widths = set()
        for launch in launches:
            arg = launch.args.get(p.name)
            dtype = arg.tensor.dtype if arg is not None and arg.tensor is not None else None
            m = re.fullmatch(r"torch\.u?int(\d+)", dtype or "")
            widths.add(int(m.group(1)) if m else None)
        if len(widths) == 1 and None not in widths:
            out[p.name] = widths.pop()
    return out


def evaluate(info, kernel, pointer_params: set[str] | None = None) -> KernelModel:
    bases = address_bases(info, kernel.node) - {p.name for p in kernel.kernel.params if p.constexpr}
    return Evaluator(info, kernel, set(pointer_params or ()) | bases).run()
