"""Abstract interpretation of one Triton kernel body.

The interpreter walks the kernel's statements once (loop bodies twice, so loop-carried values such
as pointers advanced with ``+=`` reach a fixed point), computes a :class:`Val` for every
expression and records the events rules read: memory accesses, reductions, branches and loops.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import libcst as cst

from kernlint.source import values as V
from kernlint.source.discover import DiscoveredKernel, ModuleInfo
from kernlint.source.names import argument, assigned_names, bound_parameters, source_text
from kernlint.source.values import (
    ZERO_PADDED, BlockShape, Bound, Elected, Fact, Lane, LoopCounter, PaddedAxis, PaddingSide,
    ProgramAxis, ScalarLoad, Val,
)

TL = "triton.language."
ACCESS = {
    TL + "load": "load",
    TL + "store": "store",
}
ATOMICS = {
    TL + n: "atomic"
    for n in ("atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas")
}
#: reductions that keep the shape (their padding lanes hold a prefix, not a sum of zeros)
SCANS = frozenset({"cumsum", "cumprod"})
REDUCTIONS = {TL + n: n for n in ("sum", "max", "min", "argmax", "argmin", "reduce", "cumsum", "cumprod", "xor_sum")}
SIZE_NAME = re.compile(
    r"^(?:[MNKDLTH]|n|[a-z]*_?(?:n|num|len|size|dim|cols|rows|elements|numel|length|width|height)"
    r"|(?:n|num)_\w+|\w+_(?:size|len|length|dim|cols|rows|elements|numel))$",
    re.I,
)
#: the value None (a mask left out on purpose)
NONE = Val(constexpr=True)
#: calls the rules read as events (others only contribute their values)
RECORDED_CALLS = frozenset({TL + "arange", *(TL + n for n in (
    "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas",
    "debug_barrier", "dot", "device_assert"))})
#: element-wise functions whose value on the padding the interpreter follows, by name
MATH = frozenset({"exp", "log", "exp2", "log2", "sqrt", "rsqrt"})
PASSTHROUGH = {TL + n for n in ("multiple_of", "max_contiguous", "max_constancy", "assume")}


@dataclass
class Access:
    kind: str  # load | store | atomic
    node: cst.Call
    ptr: Val
    ptr_node: cst.BaseExpression
    mask: Val | None
    mask_node: cst.BaseExpression | None
    other_node: cst.BaseExpression | None
    guards: tuple[Val, ...]
    loops: tuple[str, ...]
    #: for ``tl.load``: ``boundary_check`` or ``padding_option`` given (block pointers)
    boundary_check: bool = False
    value: Val | None = None
    #: inside a spin-lock critical section
    locked: bool = False


@dataclass
class Reduction:
    op: str
    node: cst.Call
    arg: Val
    arg_node: cst.BaseExpression
    #: the ``@triton.jit`` helper the reduction is written in, inlined at a call of the kernel's
    helper: str | None = None


@dataclass
class Branch:
    kind: str  # if | while | for
    node: cst.CSTNode
    cond: Val
    loops: tuple[str, ...]


@dataclass
class CallEvent:
    name: str  # canonical dotted name (only those in RECORDED_CALLS are recorded)
    node: cst.Call
    args: list[Val]
    arg_nodes: list[cst.BaseExpression]
    kwargs: dict[str, Val]
    kwarg_nodes: dict[str, cst.BaseExpression]
    guards: tuple[Val, ...]
    loops: tuple[str, ...]


#: what the interpreter fills in for the rules: field -> its empty value
_INTERPRETED = {"accesses": list, "reductions": list, "branches": list, "calls": list, "pid_axes": set,
                "used_names": set, "anchors": dict, "mask_vars": dict, "stride_terms": dict, "index_loads": dict,
                "env": dict}


class KernelState:
    """One Triton kernel as the source rules see it. What the interpreter finds is made on first use
    (a kernel whose rules read only the symbolic engine never pays for the walk):

    - ``accesses``, ``reductions``, ``branches``, ``calls``: the events rules read;
    - ``pid_axes``; ``used_names``: names the kernel body reads;
    - ``anchors``: id(node) -> the statement (or header expression) it stands in, to locate it cheaply;
    - ``mask_vars``: variables assigned a mask (name -> (value, node));
    - ``stride_terms``: runtime parameter -> how the indices multiplied by it vary ("fixed", "long" or
      "other"): what walks each dimension of a tensor whose stride the parameter is;
    - ``index_loads``: a scalar ``tl.load`` call -> the runtime parameters its value is multiplied by;
    - ``env``: the first node that binds each variable (for messages).
    """

    def __init__(self, kernel: DiscoveredKernel, info: ModuleInfo, refine_padding: bool = False):
        self.kernel = kernel
        self.info = info
        #: ask the bounds engine on which axes a masked load's mask holds in every lane
        self.refine_padding = refine_padding

    def __getattr__(self, name: str):
        if name not in _INTERPRETED:
            raise AttributeError(name)
        for field_name, empty in _INTERPRETED.items():
            self.__dict__[field_name] = empty()
        Interpreter(self).run()
        return self.__dict__[name]

    @property
    def name(self) -> str:
        return self.kernel.kernel.name

    def anchor(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The statement the walk met ``node`` in, where the walk has run (locating a node needs no
        walk: the locator finds the statement that holds it by itself)."""
        anchors = self.__dict__.get("anchors")
        return anchors.get(id(node)) if anchors is not None else None

    def unused_masks(self) -> list[tuple[str, Val]]:
        """Masks computed into a variable that nothing ever reads: computed but not passed."""
        return [(n, v) for n, (v, _) in self.mask_vars.items() if n not in self.used_names]

    @property
    def unused_sizes(self) -> list[str]:
        """Size-like runtime parameters (``N``, ``n_cols``, ``seq_len``...) the kernel never reads:
        often the bound a mask forgot. Unused strides and pointers are common and mean nothing."""
        return [
            p.name for p in self.kernel.kernel.params
            if not p.constexpr and p.name not in self.used_names and SIZE_NAME.match(p.name)
        ]

    def code(self, node: cst.CSTNode) -> str:
        return source_text(self.info.module, node).strip()


def _int(text: str) -> int | None:
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        return None


def _float(text: str) -> float | None:
    try:
        return float(text.replace("_", ""))
    except ValueError:
        return None


def _is_advance(node: cst.Assign) -> bool:
    """``name = name + x`` / ``name = name - x``."""
    if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
        return False
    value = node.value
    return (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract))
            and isinstance(value.left, cst.Name) and value.left.value == node.targets[0].target.value)


def _zero_padded(v: Val) -> bool:
    """Padding lanes hold 0 (``other=0``, or no ``other``: what a sum already assumes)."""
    return bool(v.facts & ZERO_PADDED) and Fact.PAD_NONZERO not in v.facts


def _kept_padding(arg: Val, reduced: int, facts: frozenset) -> frozenset:
    """A reduction along axis ``reduced`` (negative) of a block padded with 0 keeps the padding of
    the other axes: a padding row of ``tl.sum(x * y, axis=-1)`` is a sum of zeros."""
    if not _zero_padded(arg):
        return facts
    on_axes = arg.facts_of(PaddedAxis) + arg.facts_of(PaddingSide)
    kept = {replace(f, axis=f.axis + 1 if f.axis < reduced else f.axis) for f in on_axes if f.axis != reduced}
    if not any(isinstance(f, PaddedAxis) for f in kept):
        return facts
    return (facts - set(arg.facts_of(PaddingSide))) | kept | (arg.facts & ZERO_PADDED)


def _broadcast_rank(node: cst.Call) -> int | None:
    """The rank ``tl.broadcast_to(x, (a, b))`` (or ``tl.broadcast_to(x, a, b)``) gives, where written out."""
    shape = [a.value for a in node.args[1:] if a.keyword is None and not a.star]
    if len(shape) == 1 and isinstance(shape[0], (cst.Tuple, cst.List)):
        elements = shape[0].elements
        return None if any(isinstance(e, cst.StarredElement) for e in elements) else len(elements)
    return len(shape) if shape and len(shape) == len(node.args) - 1 else None


def _transposed(v: Val) -> Val:
    """``x.T`` / ``tl.trans(x)`` of a 2-D block: lanes and padded axes swap."""
    on_axes = v.facts_of(PaddedAxis) + v.facts_of(PaddingSide)
    swapped = {replace(f, axis=-3 - f.axis) for f in on_axes}
    return v.with_(lanes=tuple(sorted((1 - d, l) for d, l in v.lanes)), bounds=(),
                   facts=(v.facts - set(on_axes)) | swapped)


#: what a value holds on its padding lanes
PAD_VALUES = frozenset({Fact.PAD_UNDEFINED, Fact.PAD_ZERO, Fact.PAD_NONZERO, Fact.PAD_INF, Fact.PAD_NEG_INF})


def _dot(a: Val, b: Val, joined: Val) -> Val:
    """``tl.dot(a, b)``: the rows of the result are ``a``'s (axis -2), the columns ``b``'s (axis -1);
    the padding of the contracted axis (``a``'s -1, ``b``'s -2) is summed away when one side is 0
    there. Otherwise (or for a padded operand of unknown shape) every fact of either operand is
    kept; an operand of unknown shape without padding (a block pointer's load) pads no axis."""
    if any(v.rank < 2 and v.facts_of(PaddedAxis) for v in (a, b)) or (a.rank < 2 and b.rank < 2):
        return joined
    a_k, b_k = -1 in _padded_axes(a), -2 in _padded_axes(b)
    if (a_k or b_k) and not (a_k and _zero_padded(a)) and not (b_k and _zero_padded(b)):
        return joined  # non-zero padding on both sides of the contraction: every lane changes
    facts = set(joined.facts - PAD_VALUES) - set(joined.facts_of(PaddedAxis)) - set(joined.facts_of(PaddingSide))
    for operand, contracted in ((a, -1), (b, -2)):
        kept = {f for f in operand.facts_of(PaddedAxis) + operand.facts_of(PaddingSide) if f.axis != contracted}
        facts |= kept
        if any(isinstance(f, PaddedAxis) for f in kept):
            facts |= operand.facts & PAD_VALUES
    return joined.with_(facts=frozenset(facts))


def _padded_axes(v: Val) -> set[int]:
    return {f.axis for f in v.facts_of(PaddedAxis)}


def _has_floor_div(node: cst.CSTNode) -> bool:
    """``N // T`` or ``(N // T) * T``: a loop bound that stops at the last whole block."""
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, cst.FloorDivide) or _has_floor_div(node.left) or _has_floor_div(node.right)
    return False


def calls(node: cst.CSTNode, attr: str) -> bool:
    """The expression calls something named ``attr`` (cheap: walks operators and calls only)."""
    return called(node, attr) is not None


def called(node: cst.CSTNode, attr: str) -> cst.Call | None:
    """The first call in the expression of something named ``attr`` (operators and calls walked)."""
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == attr or isinstance(func, cst.Name) and func.value == attr:
            return node
        kids = [a.value for a in node.args]
    elif isinstance(node, cst.Comparison):
        kids = [node.left, *(c.comparator for c in node.comparisons)]
    elif isinstance(node, (cst.BinaryOperation, cst.BooleanOperation)):
        kids = [node.left, node.right]
    elif isinstance(node, cst.UnaryOperation):
        kids = [node.expression]
    else:
        return None
    return next((c for c in (called(k, attr) for k in kids) if c is not None), None)


def _names(node: cst.BaseExpression) -> set[str]:
    """Plain names in an arithmetic expression (cheap: no visitor)."""
    kind = type(node)  # not isinstance: libcst's classes are abstract, and that check is slow
    if kind is cst.Name:
        return {node.value}
    if kind is cst.BinaryOperation:
        return _names(node.left) | _names(node.right)
    if kind is cst.UnaryOperation:
        return _names(node.expression)
    if kind is cst.Call:
        return set().union(*(_names(a.value) for a in node.args)) if node.args else set()
    if kind is cst.Attribute:
        return {node.attr.value}
    if kind in (cst.Tuple, cst.List):
        return set().union(*(_names(e.value) for e in node.elements)) if node.elements else set()
    return set()


def _is_minus_one(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Subtract)
        and isinstance(node.right, cst.Integer)
        and node.right.value == "1"
    )


def _wrapped(out: Val, a: Val, b: Val) -> Val:
    """``x % n`` stays bounded by ``n`` through arithmetic with constants only."""
    if Fact.WRAPPED in out.facts and not all(Fact.WRAPPED in v.facts or v.constexpr for v in (a, b)):
        return out.with_(facts=out.facts - {Fact.WRAPPED})
    return out


def _walk_kind(index: Val) -> str:
    """How an index walks its dimension: "long" (moved in blocks by a program id or a loop, or read
    from memory: a sequence or token position), "fixed" (a constant, or lanes of a constexpr block
    that never moves: a whole small dimension such as the head dimension), else "other" (e.g. one
    program per index: the extent is the grid's)."""
    if Fact.WRAPPED in index.facts:
        return "other"  # `x % n`: bounded by the modulus, whatever `x` is
    if index.loops or index.data or Fact.BLOCK_OFFSET in index.facts:
        return "long"
    if any(lane.shift or lane.data for _, lane in index.lanes):
        return "long"
    if index.pid or index.index or index.runtime:
        return "other"
    if all(lane.constexpr_extent for _, lane in index.lanes) and (index.lanes or index.constexpr):
        return "fixed"
    return "other"


#: how deep helpers are followed inlined (deeper calls join their arguments)
MAX_INLINE = 3


class Interpreter:
    def __init__(self, state: KernelState):
        info, kernel = state.info, state.kernel
        self.info = info
        self.refine_padding = state.refine_padding
        self.state = state
        self.env: dict[str, Val] = {}
        self.current: cst.CSTNode | None = None
        self.guards: list[Val] = []
        self.loops: list[str] = []
        #: the lock pointer (as written) while inside a spin-lock critical section (atomic_cas acquire
        #: ... atomic_xchg release of that pointer), else False
        self.locked: str | bool = False
        #: values returned by ``tl.atomic_add(counter, k)`` on one shared counter (k a non-zero constant):
        #: each program draws a different ticket, so ``ticket == c`` lets at most one of them through
        self.tickets: list[Val] = []
        #: names in each loop's range() arguments (its block size, e.g. BLOCK_K)
        self.loop_blocks: dict[str, set[str]] = {}
        self.recording = True
        #: inside an inlined helper: the helpers' names, and whether its reductions are recorded (the
        #: values it returns are followed; its other events are its own kernel's, judged where it is)
        self.helpers: list[str] = []
        self.helper_reductions = False
        self.returns: list[Val] | None = None
        self.imports = info.imports
        self.params = {p.name for p in kernel.kernel.params}
        self.runtime_params = {p.name for p in kernel.kernel.params if not p.constexpr}
        for p in kernel.kernel.params:
            if p.constexpr:
                const = None
                if p.default is not None:
                    try:
                        const = int(p.default)
                    except ValueError:
                        const = None
                self.env[p.name] = Val(constexpr=True, const=const, params=frozenset([p.name]))
            else:
                self.env[p.name] = Val(runtime=True, params=frozenset([p.name]))
        # values triton.heuristics computes are compile-time constants
        for h in kernel.kernel.heuristics:
            self.env.setdefault(h, Val(constexpr=True))
            if not self.env[h].constexpr:
                self.env[h] = Val(constexpr=True, params=frozenset([h]))

    # -- entry ---------------------------------------------------------------------------------
    def run(self) -> KernelState:
        self.block(self.state.kernel.node.body)
        self.state.env = self.env
        return self.state

    # -- statements ------------------------------------------------------------------------------
    def block(self, body) -> None:
        stmts = body.body if hasattr(body, "body") else body
        if isinstance(stmts, cst.BaseSuite):
            stmts = stmts.body
        for stmt in stmts:
            self.stmt(stmt)

    def stmt(self, stmt: cst.CSTNode) -> None:
        self.current = stmt  # the statement a finding's node can be located within
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small)
        elif isinstance(stmt, cst.For):
            self.for_loop(stmt)
        elif isinstance(stmt, cst.While):
            cond = self.expr(stmt.test)
            self.branch("while", stmt, cond)
            self.loop_body(stmt.body, None, cond)
            cas = called(stmt.test, "atomic_cas")
            if cas is not None and cas.args:
                # `while tl.atomic_cas(lock, 0, 1) == 1: pass` takes a spin lock
                self.locked = source_text(self.info.module, cas.args[0].value).strip()
        elif isinstance(stmt, cst.If):
            self.if_stmt(stmt)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                self.expr(item.item)
            self.block(stmt.body)
        elif isinstance(stmt, cst.Try):
            self.block(stmt.body)
        elif isinstance(stmt, cst.IndentedBlock):
            self.block(stmt)

    def small(self, small: cst.CSTNode) -> None:
        if isinstance(small, cst.Assign) and _is_advance(small):
            # `p = p + inc` advances like `p += inc`
            small = cst.AugAssign(
                target=small.targets[0].target,
                operator=cst.AddAssign() if isinstance(small.value.operator, cst.Add) else cst.SubtractAssign(),
                value=small.value.right,
            )
        if isinstance(small, cst.Assign):
            val = self.expr(small.value)
            for target in small.targets:
                self.bind(target.target, val, small.value)
                if val.bounds and isinstance(target.target, cst.Name) and self.recording:
                    self.state.mask_vars.setdefault(target.target.value, (val, small.value))
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self.bind(small.target, self.expr(small.value), small.value)
        elif isinstance(small, cst.AugAssign):
            target = small.target
            old = self.expr(target)
            rhs = self.expr(small.value)
            new = self.binop(small.operator, old, rhs, small)
            if isinstance(small.operator, (cst.AddAssign, cst.SubtractAssign)) and new.lanes and self.loops:
                # A block pointer advanced inside a loop moves along the axis whose block size the
                # increment or the loop's range names (``a_ptrs += BLOCK_K * stride_ak``).
                moved = _names(small.value)
                running = set()
                for loop in self.loops:
                    if LoopCounter(loop) in self.env.get(loop, V.TOP).index:
                        running.add(LoopCounter(loop))
                        moved |= self.loop_blocks.get(loop, set())
                if running:
                    new = new.with_(lanes=tuple(
                        (d, Lane(l.families, l.arange, l.shift | frozenset(running), l.data, l.constexpr_extent))
                        if l.families & moved else (d, l)
                        for d, l in new.lanes
                    ))
            self.bind(target, new, small.value)
        elif isinstance(small, cst.Expr):
            self.expr(small.value)
        elif isinstance(small, cst.Return) and small.value is not None:
            value = self.expr(small.value)
            if self.returns is not None:
                self.returns.append(value)

    def bind(self, target: cst.BaseExpression, val: Val, value_node: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = val
        elif isinstance(target, (cst.Tuple, cst.List)):
            elems = value_node.elements if isinstance(value_node, (cst.Tuple, cst.List)) else None
            for i, el in enumerate(target.elements):
                if elems is not None and i < len(elems):
                    self.bind(el.value, self.expr(elems[i].value), elems[i].value)
                else:
                    self.bind(el.value, val, value_node)

    def for_loop(self, stmt: cst.For) -> None:
        iter_node = stmt.iter
        var = stmt.target.value if isinstance(stmt.target, cst.Name) else None
        loop_val = V.TOP
        static = False
        if isinstance(iter_node, cst.Call):
            if var:
                self.loop_blocks[var] = set().union(*(_names(a.value) for a in iter_node.args))
            fname = self.imports.resolve(iter_node.func) or ""
            args = [self.expr(a.value) for a in iter_node.args if a.keyword is None]
            bound_args = V.join(*args) if args else V.TOP
            static = fname.endswith("static_range") or all(a.constexpr for a in args)
            exact = any(_has_floor_div(a.value) for a in iter_node.args) or any(
                Fact.COUNT in a.facts and Fact.CEIL not in a.facts for a in args)
            if fname in ("range", TL + "range", TL + "static_range"):
                # an exact loop (static, or stopping at the last whole block) still moves the block,
                # but never past the tensor: its marker says so
                index = frozenset() if static else frozenset([LoopCounter(var, exact)])
                loop_val = Val(
                    pid=bound_args.pid,
                    loops=bound_args.loops | ({var} if var else set()),
                    index=index | bound_args.index,
                    runtime=not static,
                    constexpr=static,
                    data=bound_args.data,
                )
            else:
                loop_val = bound_args
        else:
            loop_val = self.expr(iter_node)
        if var is None:
            self.bind(stmt.target, loop_val, iter_node)
        self.branch("for", stmt, loop_val)
        self.loop_body(stmt.body, var, loop_val, static=static)
        if stmt.orelse is not None:
            self.block(stmt.orelse.body)

    def _rounds_down(self, name: str) -> bool:
        """A helper of this module that returns a multiple of a block (``prev_multiple_of``:
        ``tl.cdiv(a, b) * b - b`` or ``(a // b) * b``)."""
        fn = self.info.functions.get(name)
        if fn is None or not isinstance(fn.body, cst.IndentedBlock):
            return False
        for stmt in fn.body.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Return) and small.value is not None:
                        text = source_text(self.info.module, small.value)
                        if ("//" in text or "cdiv" in text) and "*" in text:
                            return True
        return False

    def loop_body(self, body, var: str | None, loop_val: Val, static: bool = False) -> None:
        if var:
            self.loops.append(var)
        recording = self.recording
        before = dict(self.env)
        if (assigned_names(body) - {var}) & before.keys():
            # a trip changes names bound before the loop: join what one trip makes of them, then
            # run again recording events (with none, the first trip would change nothing)
            self.recording = False
            if var:
                self.env[var] = loop_val
            self.block(body)
            for name, val in list(self.env.items()):
                if name in before and before[name] is not val:
                    self.env[name] = V.join(before[name], val, keep_bounds=False).with_(
                        facts=before[name].facts | val.facts, const=None,
                        bounds=val.bounds if val.bounds == before[name].bounds else (),
                    )
            self.recording = recording
        if var:
            self.env[var] = loop_val
        self.block(body)
        if var:
            self.loops.pop()

    def if_stmt(self, stmt: cst.If) -> None:
        cond = self.expr(stmt.test)
        self.branch("if", stmt, cond)
        static = cond.constexpr
        before = dict(self.env)
        self.guards.append(cond)
        self.block(stmt.body)
        then_env = self.env
        self.env = dict(before)
        orelse = stmt.orelse
        if orelse is not None:
            if isinstance(orelse, cst.If):
                self.if_stmt(orelse)
            else:
                self.block(orelse.body)
        self.guards.pop()
        for name, val in then_env.items():
            other = self.env.get(name)
            if other is None:
                self.env[name] = val
            elif static and (val is NONE or other is NONE):
                # `if EVEN: mask = None else: mask = offs < n`: the flag proves the unmasked case
                self.env[name] = other if val is NONE else val
            elif other is not val:
                merged = V.join(val, other).with_(facts=val.facts | other.facts)
                if val.bounds == other.bounds:
                    merged = merged.with_(bounds=val.bounds)
                elif static and val.bounds and other.bounds:
                    # masks chosen by compile-time flags (`if DIVISIBLE_M: mask = mask_k else: mask =
                    # mask_m & mask_k`): an axis one branch leaves open is one its flag proved safe
                    merged = merged.with_(bounds=V.combine_masks(val, other, conj=True).bounds)
                self.env[name] = merged

    def branch(self, kind: str, node: cst.CSTNode, cond: Val) -> None:
        if self.recording:
            self.state.branches.append(Branch(kind, node, cond, tuple(self.loops)))

    # -- expressions -----------------------------------------------------------------------------
    def expr(self, node: cst.BaseExpression | None) -> Val:
        if node is None:
            return V.TOP
        # dispatch on the node's class: ``isinstance`` against libcst's abstract node classes goes
        # through ``ABCMeta`` (slow, and this runs for every expression)
        handler = _EXPRESSIONS.get(type(node))
        return handler(self, node) if handler is not None else V.TOP

    def _name(self, node: cst.Name) -> Val:
        self.state.used_names.add(node.value)
        if node.value in self.env:
            return self.env[node.value]
        if node.value in self.info.constants:
            return Val(constexpr=True, const=self.info.constants[node.value])
        if node.value == "None":
            return NONE
        if node.value in ("True", "False"):
            return Val(constexpr=True)
        return Val(constexpr=node.value.isupper())

    def _number(self, node: cst.Integer | cst.Float) -> Val:
        return Val(constexpr=True, const=(_int if isinstance(node, cst.Integer) else _float)(node.value))

    def _string(self, node) -> Val:
        return Val(constexpr=True)

    def _binary(self, node: cst.BinaryOperation) -> Val:
        return self.binop(node.operator, self.expr(node.left), self.expr(node.right), node)

    def _boolean(self, node: cst.BooleanOperation) -> Val:
        return V.combine_masks(self.expr(node.left), self.expr(node.right), isinstance(node.operator, cst.And))

    def _sequence(self, node: cst.Tuple | cst.List) -> Val:
        return V.join(*(self.expr(e.value) for e in node.elements))

    def _if_expression(self, node: cst.IfExp) -> Val:
        return V.join(self.expr(node.test), self.expr(node.body), self.expr(node.orelse))

    def _unary(self, node: cst.UnaryOperation) -> Val:
        val = self.expr(node.expression)
        if isinstance(node.operator, (cst.Not, cst.BitInvert)):
            return val.with_(bounds=())
        if isinstance(node.operator, cst.Minus) and val.const is not None:
            return val.with_(const=-val.const)
        return val

    def _attribute(self, node: cst.Attribute) -> Val:
        base = self.expr(node.value)
        if node.attr.value == "T" and base.rank == 2:
            return _transposed(base)
        if node.attr.value in ("dtype", "shape", "element_ty", "numel"):
            return Val(constexpr=True)
        return base

    def binop(self, op, a: Val, b: Val, node) -> Val:
        self.state.anchors[id(node)] = self.current
        name = type(op).__name__.replace("Assign", "")
        if name in ("Add", "Subtract"):
            out = _wrapped(V.add(a, b), a, b)
            if name == "Subtract" and a.const is not None and b.const is not None:
                out = out.with_(const=a.const - b.const)
            return self._pad_nonzero(out, a, b)
        if name in ("Multiply", "LeftShift"):
            out = _wrapped(V.mul(a, b), a, b)
            if (name == "Multiply" and (Fact.PAD_NEG_INF in a.facts and _zero_padded(b)
                                        or Fact.PAD_NEG_INF in b.facts and _zero_padded(a))):
                # -inf padding times 0 padding is NaN (one operand's facts may hold both: they come
                # from the two sides of an `if`, not from one lane)
                out = out.with_(facts=(out.facts - {Fact.PAD_NEG_INF}) | {Fact.PAD_NONZERO, Fact.PAD_INF, Fact.PAD_ZERO})
            elif (name == "Multiply" and Fact.PAD_NONZERO in out.facts and Fact.PAD_INF not in out.facts
                    and (_zero_padded(a) or _zero_padded(b))):
                # `(x - mean) * dy` with dy padded by 0: the product's padding is 0 again
                out = out.with_(facts=out.facts - {Fact.PAD_NONZERO})
            if name == "Multiply" and (a.rank == 0 and a.index and b.rank == 0 and b.constexpr and b.const != 1
                                       or b.rank == 0 and b.index and a.rank == 0 and a.constexpr and a.const != 1):
                out = out.with_(facts=out.facts | {Fact.BLOCK_OFFSET})  # `pid * BLOCK`: a block walking its dimension
            if name == "Multiply" and self.recording and isinstance(node, cst.BinaryOperation):
                self._stride_term(node.right, a)
                self._stride_term(node.left, b)
            return out
        if name == "Modulo":
            out = V.wrap(a, b)
            return out.with_(facts=out.facts | {Fact.WRAPPED}) if a.rank == 0 and b.rank == 0 else out
        if name in ("BitAnd", "BitOr"):
            if a.bounds or b.bounds:
                return V.combine_masks(a, b, name == "BitAnd")
            return V.join(a, b)
        out = V.join(a, b)
        if name in ("Divide", "FloorDivide", "RightShift") and a.index and not b.runtime:
            out = out.with_(index=a.index)
        if name == "FloorDivide" and a.rank == 0 and b.rank == 0:
            out = out.with_(facts=out.facts | {Fact.COUNT})  # a number of blocks or programs, not a size
        if name == "Divide" and b.facts & ZERO_PADDED:
            if Fact.PAD_NONZERO not in b.facts:  # dividing by padding zeros
                out = out.with_(facts=out.facts | {Fact.PAD_NONZERO, Fact.PAD_INF})
            elif _zero_padded(a):  # 0 / (x + eps): the padding is 0 again
                out = out.with_(facts=out.facts - {Fact.PAD_NONZERO, Fact.PAD_INF})
            else:  # by padding made non-zero (`sqrt(var + eps)`): finite, not 0
                out = out.with_(facts=out.facts | {Fact.PAD_NONZERO})
        return out

    def _stride_term(self, factor: cst.BaseExpression, index: Val) -> None:
        """``index * param`` with ``param`` a parameter of the kernel (a stride, usually)."""
        if not isinstance(factor, cst.Name) or factor.value not in self.params:
            return
        if factor.value in self.runtime_params:
            self.state.stride_terms.setdefault(factor.value, set()).add(_walk_kind(index))
        if index.rank == 0 and index.data:
            # a value read from memory scales a stride: the scalar loads behind it read indices
            for load in index.facts:
                if isinstance(load, ScalarLoad):
                    self.state.index_loads.setdefault(load.node, set()).add(factor.value)

    def _block_ptr_terms(self, node: cst.Call) -> None:
        """``make_block_ptr(shape=(...), strides=(s0, s1), offsets=(o0, o1))``: each stride parameter
        walks its dimension by the offset, within a shape that is a constexpr (fixed) or not."""
        shape, strides, offsets = (argument(node, "shape", 1), argument(node, "strides", 2), argument(node, "offsets", 3))
        if not all(isinstance(t, (cst.Tuple, cst.List)) for t in (shape, strides, offsets)):
            return
        if not len(shape.elements) == len(strides.elements) == len(offsets.elements):
            return
        self.recording = False  # evaluated again only to classify: record nothing twice
        try:
            for extent, stride, offset in zip(shape.elements, strides.elements, offsets.elements):
                if isinstance(stride.value, cst.Name) and stride.value.value in self.runtime_params:
                    kind = _walk_kind(self.expr(offset.value))
                    if kind == "fixed" and not self.expr(extent.value).constexpr:
                        kind = "other"  # the block may be advanced along a runtime extent
                    self.state.stride_terms.setdefault(stride.value.value, set()).add(kind)
        finally:
            self.recording = True

    @staticmethod
    def _pad_nonzero(out: Val, a: Val, b: Val) -> Val:
        """Padding lanes of a masked load (0) stop being 0 after ``x - m``, ``exp(x)``, ``1 / x``."""
        if Fact.PAD_NEG_INF in a.facts or Fact.PAD_NEG_INF in b.facts:
            # an operand padded with -inf keeps the sum's padding at -inf (the identity of max)
            return out.with_(facts=(out.facts - ZERO_PADDED - {Fact.PAD_NONZERO}) | {Fact.PAD_NEG_INF})
        if not (a.facts & ZERO_PADDED or b.facts & ZERO_PADDED):
            return out
        other = b if a.facts & ZERO_PADDED else a
        # a scalar (or a broadcast reduction, e.g. a row mean) shifts every padding lane away from 0
        broadcast = other.rank == 0 or Fact.REDUCED in other.facts
        padded = a if other is b else b
        # a broadcast value is 0 on the padding only where it is padded along every padded axis (a row
        # sum padded along the rows is not 0 on the padding columns)
        zero_in_padding = other.const == 0 or Fact.FILL in other.facts or bool(other.facts & ZERO_PADDED) and (
            other.rank == 0 or _zero_padded(other) and _padded_axes(padded) <= _padded_axes(other))
        if broadcast and not zero_in_padding:
            return out.with_(facts=out.facts | {Fact.PAD_NONZERO})
        return out
    def compare(self, node: cst.Comparison) -> Val:
        left_node = node.left
        left = self.expr(left_node)
        result = left
        for target in node.comparisons:
            right = self.expr(target.comparator)
            op = type(target.operator).__name__
            result = V.join(left, right)
            lanes_l, lanes_r = left.lanes, right.lanes
            bound_dims: dict[int, Bound] = {}
            # lanes < bound   or   bound > lanes
            lanes_l = tuple((d, l) for d, l in lanes_l if l.arange or l.families and not l.data)
            lanes_r = tuple((d, l) for d, l in lanes_r if l.arange or l.families and not l.data)
            if lanes_l and not lanes_r and op in ("LessThan", "LessThanEqual", "Equal"):
                lane_side, bound_node, opname = left, target.comparator, op
            elif lanes_r and not lanes_l and op in ("GreaterThan", "GreaterThanEqual", "Equal"):
                lane_side, bound_node, opname = right, left_node, op
            else:
                lane_side = None
            if lane_side is not None:
                text = source_text(self.info.module, bound_node).strip()
                symbol = {"LessThan": "<", "GreaterThan": "<", "Equal": "=="}.get(opname, "<=")
                for d, lane in (lanes_l if lane_side is left else lanes_r):
                    # `lanes == k` lets one lane through: as bounded as `< k + 1`
                    bound_dims[d] = Bound(lane.families, symbol, text,
                                          symbol == "==" or _is_minus_one(bound_node), node,
                                          symbol == "<" and lane.arange and not lane.shift and lane.families == {text})
                result = result.with_(bounds=tuple(sorted(bound_dims.items())))
            elected = self._elected(op, left, right)
            if elected:
                result = result.with_(facts=result.facts | {elected})
            left, left_node = right, target.comparator
        # a comparison is a boolean, not the padded numbers it compared
        return result.with_(facts=V.without_padding(result.facts, {Fact.PAD_NONZERO, Fact.PAD_INF}))

    def _elected(self, op: str, left: Val, right: Val) -> Elected | None:
        """``ticket == c`` with ``c`` the same in every program: at most one program passes along the
        program-id axes the counter is shared along."""
        if op != "Equal":
            return None
        for ticket, other in ((left, right), (right, left)):
            if any(t is ticket for t in self.tickets) and not other.pid and not any(t is other for t in self.tickets):
                return Elected(frozenset(a for a in range(3) if a not in ticket.pid))
        return None

    def subscript(self, node: cst.Subscript) -> Val:
        base = self.expr(node.value)
        pattern = []
        for el in node.slice:
            s = el.slice
            if isinstance(s, cst.Slice):
                pattern.append(":")
            elif isinstance(s, cst.Index) and isinstance(s.value, cst.Name) and s.value.value == "None":
                pattern.append("None")
            else:
                if isinstance(s, cst.Index):
                    self.expr(s.value)
                return base.with_(rank=0, lanes=(), bounds=())
        if base.rank == 0:
            return base
        out = V.subscript(base, pattern)
        on_axes = base.facts_of(PaddedAxis) + base.facts_of(PaddingSide)
        if on_axes and "None" in pattern:
            # facts about an axis move with the block's axes (`z[:, None]`: axis -1 becomes -2)
            kept = [i for i, p in enumerate(pattern) if p == ":"]
            moved = set()
            for fact in on_axes:
                src = base.rank + fact.axis
                if 0 <= src < len(kept):
                    moved.add(replace(fact, axis=kept[src] - len(pattern)))
            out = out.with_(facts=(out.facts - set(on_axes)) | moved)
        return out

    def call(self, node: cst.Call) -> Val:
        self.state.anchors[id(node)] = self.current
        fname = self.imports.resolve(node.func) or ""
        # method calls: x.to(tl.int64), x.to(tl.float32)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "to" and not fname.startswith(TL):
            base = self.expr(node.func.value)
            target = self.imports.resolve(node.args[0].value) if node.args else None
            target = target or ""
            for a in node.args[1:]:
                self.expr(a.value)
            return base.with_(int64=base.int64 or target.rsplit(".", 1)[-1] in ("int64", "uint64"))
        if fname == "float" and len(node.args) == 1 and isinstance(node.args[0].value, cst.SimpleString):
            try:
                return Val(constexpr=True, const=float(node.args[0].value.evaluated_value))
            except (ValueError, TypeError):
                return Val(constexpr=True)
        args = [self.expr(a.value) for a in node.args if a.keyword is None]
        kwargs = {a.keyword.value: self.expr(a.value) for a in node.args if a.keyword is not None}
        if self.recording and fname in RECORDED_CALLS:
            self.state.calls.append(
                CallEvent(
                    fname, node, args,
                    [a.value for a in node.args if a.keyword is None],
                    kwargs,
                    {a.keyword.value: a.value for a in node.args if a.keyword is not None},
                    tuple(self.guards), tuple(self.loops),
                )
            )
        if fname == TL + "program_id":
            axis = args[0].const if args and args[0].const is not None else kwargs.get("axis", V.TOP).const
            axis = int(axis) if axis is not None else 0
            self.state.pid_axes.add(axis)
            return Val(pid=frozenset([axis]), index=frozenset([ProgramAxis(axis)]), runtime=True)
        if fname == TL + "num_programs":
            return Val(runtime=True)
        if fname == TL + "arange":
            end_node = argument(node, "end", 1)
            start = args[0] if args else V.TOP
            end = args[1] if len(args) > 1 else kwargs.get("end", V.TOP)
            text = source_text(self.info.module, end_node).strip() if end_node is not None else "?"
            lane = Lane(frozenset([text]), True, frozenset(), False, end.constexpr and start.constexpr)
            return Val(rank=1, lanes=((0, lane),), constexpr=False)
        if fname in ACCESS or fname in ATOMICS:
            out = self.access(node, fname, args, kwargs)
            if fname == TL + "atomic_xchg" and node.args and self.locked \
                    and source_text(self.info.module, node.args[0].value).strip() == self.locked:
                self.locked = False  # the lock's release (an exchange on another pointer is not)
            return out
        if fname in REDUCTIONS:
            arg_node = node.args[0].value if node.args else None
            arg = args[0] if args else V.TOP
            if (self.recording or self.helper_reductions) and arg_node is not None:
                self.state.reductions.append(Reduction(REDUCTIONS[fname], node, arg, arg_node,
                                                       self.helpers[-1] if self.helpers else None))
            axis = args[1] if len(args) > 1 else kwargs.get("axis")
            # a reduced value carries no padding lanes of its own (the max of a row padded with -inf is
            # the row's max)
            facts = V.without_padding(arg.facts, {Fact.PAD_NONZERO, Fact.PAD_NEG_INF}) | {Fact.REDUCED}
            if axis is None or axis.const is None or arg.rank == 0:
                return arg.with_(rank=0, lanes=(), bounds=(), facts=facts)
            ax = int(axis.const) % max(arg.rank, 1)
            lanes = tuple((d if d < ax else d - 1, l) for d, l in arg.lanes if d != ax)
            if "keep_dims" not in kwargs and REDUCTIONS[fname] not in SCANS:
                facts = _kept_padding(arg, ax - arg.rank, facts)
            return arg.with_(rank=arg.rank - 1, lanes=lanes, bounds=(), facts=facts)
        if fname in PASSTHROUGH:
            return args[0] if args else V.TOP
        if fname == TL + "trans" and len(args) == 1 and args[0].rank == 2:
            return _transposed(args[0])
        if fname == TL + "broadcast_to" and args:
            rank = _broadcast_rank(node)
            if rank is not None and args[0].rank <= rank:
                # the new axes come first: a mask's bounds and padding stay on the axes they were on
                return V.subscript(args[0], ["None"] * (rank - args[0].rank) + [":"] * args[0].rank) \
                    if args[0].rank < rank else args[0]
        if fname == TL + "dot" and len(args) >= 2:
            return _dot(args[0], args[1], V.join(*args, *kwargs.values()).with_(bounds=(), index=frozenset()))
        if fname == TL + "maximum" and len(args) == 2:
            out = V.join(*args)
            if out.facts & ZERO_PADDED and any(x.rank == 0 or x.constexpr for x in args):
                # max(x, eps) lifts padding zeros to a finite non-zero value
                out = out.with_(facts=(out.facts - ZERO_PADDED) | {Fact.PAD_NONZERO})
            return out
        if fname == TL + "minimum" and len(args) == 2:
            return V.wrap(args[0], args[1]) if args[0].lanes else V.wrap(args[1], args[0])
        if fname == TL + "where" and len(args) == 3:
            cond, a, b = args
            out = V.join(*args)
            if cond.bounds or (cond.lanes and not cond.data):
                # an index condition (`tl.where(mask, x, identity)`, a causal mask) resets the padding
                facts = V.without_padding(out.facts, {Fact.PAD_NONZERO})
            else:  # a test on the data itself: padding lanes pick either branch
                facts = (a.facts | b.facts | cond.facts) - {Fact.PAD_NEG_INF}
            if any(x.const is not None and x.const <= -1e4 for x in (a, b)):
                facts |= {Fact.PAD_NEG_INF}  # padding forced to -inf (or a huge negative): max ignores it
            if cond.bounds and a.lanes and b.rank == 0:
                # `tl.where(offs < n, offs, 0)` clamps the lanes the condition bounds
                shift = out.rank - cond.rank
                bounded = {d + shift for d, _ in cond.bounds}
                out = out.with_(lanes=tuple((d, Lane(l.families, False, l.shift, l.data, l.constexpr_extent))
                                            if d in bounded else (d, l) for d, l in out.lanes))
            return out.with_(bounds=(), facts=facts)
        if fname in (TL + "abs", TL + "math.abs") and args:
            return args[0].with_(facts=V.without_padding(args[0].facts))
        if fname == TL + "make_block_ptr":
            if self.recording:
                self._block_ptr_terms(node)
            offsets = kwargs.get("offsets") or (args[3] if len(args) > 3 else V.TOP)
            block = argument(node, "block_shape", 4)
            out = V.join(*args, *kwargs.values())
            return out.with_(block_ptr=True, lanes=(), rank=0, index=offsets.index,
                             facts=out.facts | {BlockShape(n) for n in (_names(block) if block is not None else ())})
        if fname == TL + "advance" and args:
            running = frozenset(LoopCounter(l) for l in self.loops if LoopCounter(l) in self.env.get(l, V.TOP).index)
            return args[0].with_(index=args[0].index | running)
        if fname in (TL + "make_tensor_descriptor",):
            return V.join(*args, *kwargs.values()).with_(block_ptr=True, lanes=(), rank=0, facts=frozenset({Fact.DESCRIPTOR}))
        if fname in (TL + "zeros", TL + "full", TL + "zeros_like", TL + "full_like"):
            return Val(constexpr=True, facts=frozenset({Fact.FILL}))
        if fname in ("triton.cdiv", TL + "cdiv"):
            return V.join(*args).with_(facts=V.join(*args).facts | {Fact.COUNT, Fact.CEIL})  # rounds up: a partial last block
        if fname.rsplit(".", 1)[-1] in MATH and (fname.startswith(TL) or len(args) == 1):
            # Triton's, libdevice's or a project's own one-argument wrapper (`def exp(x): return
            # tl.exp(x.to(tl.float32))`, often imported from another module whose body is not read)
            out = V.join(*args)
            fn = fname.rsplit(".", 1)[-1]
            facts = out.facts
            if fn in ("exp", "exp2") and Fact.PAD_NEG_INF in facts:
                facts -= {Fact.PAD_NEG_INF}  # exp(-inf) = 0: the padding is 0 again
            if facts & ZERO_PADDED and fn in ("exp", "log", "exp2", "log2", "rsqrt"):
                if fn in ("log", "log2", "rsqrt") and Fact.PAD_NONZERO not in facts:
                    facts |= {Fact.PAD_INF}  # log(0) = -inf: not even a zero factor makes it 0 again
                facts |= {Fact.PAD_NONZERO}
            return out.with_(bounds=(), facts=facts)
        helper = self._helper(node)
        if helper is not None:
            return self.inline(helper, args, kwargs)
        out = V.join(*args, *kwargs.values())
        out = out.with_(bounds=(), index=out.index if fname in ("int", "min", "max") else frozenset())
        if isinstance(node.func, cst.Name) and out.rank == 0 and self._rounds_down(node.func.value):
            out = out.with_(facts=out.facts | {Fact.COUNT})  # a loop bound that stops at the last whole block
        return out

    def _helper(self, node: cst.Call) -> cst.FunctionDef | None:
        """The ``@triton.jit`` helper of this module a call runs, to follow inlined (not the kernel
        itself, not one already being followed, at most ``MAX_INLINE`` deep)."""
        if not isinstance(node.func, cst.Name) or len(self.helpers) >= MAX_INLINE:
            return None
        fn = self.info.functions.get(node.func.value)
        if (fn is None or fn is self.state.kernel.node or fn.name.value in self.helpers
                or not any("jit" in source_text(self.info.module, d.decorator) for d in fn.decorators)
                or self._rounds_down(fn.name.value)):
            return None
        return fn

    def inline(self, fn: cst.FunctionDef, args: list[Val], kwargs: dict[str, Val]) -> Val:
        """The value a helper returns for these arguments (its reductions recorded where the call's
        would be)."""
        env = bound_parameters(fn, args, kwargs, lambda p: self.expr(p.default) if p.default is not None else V.TOP)
        saved = (self.env, self.returns, self.recording, self.helper_reductions, self.guards, self.loops)
        self.helper_reductions = self.recording or self.helper_reductions
        self.env, self.returns, self.recording = env, [], False
        self.guards, self.loops = list(self.guards), list(self.loops)
        self.helpers.append(fn.name.value)
        current = self.current
        try:
            self.block(fn.body)
            returns = self.returns
        finally:
            self.helpers.pop()
            self.env, self.returns, self.recording, self.helper_reductions, self.guards, self.loops = saved
            self.current = current
        return V.join(*returns) if returns else V.TOP

    def access(self, node: cst.Call, fname: str, args: list[Val], kwargs: dict[str, Val]) -> Val:
        kind = ACCESS.get(fname) or ATOMICS[fname]
        positional = [a.value for a in node.args if a.keyword is None]

        def arg(name: str, pos: int) -> tuple[cst.BaseExpression | None, Val | None]:
            # reuse the values call() computed: evaluating twice would record events twice
            if name in kwargs:
                return argument(node, name), kwargs[name]
            if pos < len(positional):
                return positional[pos], args[pos]
            return None, None

        ptr_node, ptr = arg("pointer", 0)
        ptr = ptr or V.TOP
        if kind == "load":
            mask_node, mask = arg("mask", 1)
            other_node, _ = arg("other", 2)
            value = None
        else:
            _, value = arg("val" if kind == "atomic" else "value", 1)
            mask_node, mask = arg("mask", 2)
            other_node = None
        bc = any(a.keyword is not None and a.keyword.value in ("boundary_check", "padding_option") for a in node.args)
        if self.recording:
            self.state.accesses.append(
                Access(
                    kind, node, ptr, ptr_node, mask, mask_node, other_node,
                    tuple(self.guards), tuple(self.loops), bc, value, bool(self.locked),
                )
            )
        if kind == "load":
            lanes = tuple((d, Lane(l.families, False, l.shift, True, l.constexpr_extent)) for d, l in ptr.lanes)
            facts = set() if ptr.rank else {ScalarLoad(node)}  # a scalar read: is it an index?
            zero_other = other_node is not None and isinstance(other_node, (cst.Integer, cst.Float)) and _float(other_node.value) == 0.0
            other_code = source_text(self.info.module, other_node) if other_node is not None else ""
            padded = ({d - ptr.rank for d, b in mask.bounds if not b.vacuous} if mask is not None and mask.bounds
                      else set(range(-ptr.rank, 0)))
            if padded and self.refine_padding and mask_node is not None and ptr.rank and (
                    other_node is None or zero_other or "inf" in other_code):
                from kernlint.engine.run import unpadded_axes

                # axes whose mask the bounds engine proves true in every lane the launches allow
                padded -= unpadded_axes(self.state, node, frozenset(padded))
            if "inf" in other_code and "-" in other_code and (padded or not ptr.rank):
                facts.add(Fact.PAD_NEG_INF)
            if mask_node is not None and (other_node is None or zero_other) and padded:
                facts.add(Fact.PAD_UNDEFINED if other_node is None else Fact.PAD_ZERO)
                facts |= {PaddedAxis(d) for d in padded}
                # ``lanes < n`` keeps a prefix of the axis: its padding trails the real lanes
                trailing = {d - ptr.rank for d, b in (mask.bounds if mask is not None else ())
                            if not b.vacuous and b.op in ("<", "<=")}
                facts |= {PaddingSide(d, True) for d in padded & trailing} | {PaddingSide(d, False) for d in padded - trailing}
            return Val(
                rank=ptr.rank, lanes=lanes, pid=ptr.pid, loops=ptr.loops, data=True, runtime=True,
                facts=frozenset(facts), params=ptr.params,
            )
        if kind == "atomic":
            out = Val(rank=ptr.rank, pid=ptr.pid, data=True, runtime=True)
            if (fname == TL + "atomic_add" and ptr.rank == 0 and not ptr.lanes and value is not None
                    and value.const not in (None, 0) and value.rank == 0 and mask_node is None):
                self.tickets.append(out)
            return out
        return V.TOP


def interpret(info: ModuleInfo, kernel: DiscoveredKernel, refine_padding: bool = False) -> KernelState:
    """The kernel's state for the rules (interpreted when a rule first reads what the walk finds)."""
    return KernelState(kernel, info, refine_padding)



#: the evaluator of each libcst expression class (others are unknown)
_EXPRESSIONS = {
    cst.Name: Interpreter._name, cst.Integer: Interpreter._number, cst.Float: Interpreter._number,
    cst.SimpleString: Interpreter._string, cst.ConcatenatedString: Interpreter._string,
    cst.FormattedString: Interpreter._string, cst.UnaryOperation: Interpreter._unary,
    cst.BinaryOperation: Interpreter._binary, cst.BooleanOperation: Interpreter._boolean,
    cst.Comparison: Interpreter.compare, cst.Call: Interpreter.call, cst.Subscript: Interpreter.subscript,
    cst.Attribute: Interpreter._attribute, cst.Tuple: Interpreter._sequence, cst.List: Interpreter._sequence,
    cst.IfExp: Interpreter._if_expression,
}
