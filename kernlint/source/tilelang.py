"""Analysis of one TileLang kernel body, from its libcst tree only (nothing is imported or run).

The analysis walks statements (never a full-tree visitor) and records, in program order:

- buffers: the kernel's global tensors from its signature (``A: T.Tensor((M, K), dtype)``,
  ``T.Buffer``) and the on-chip ones from ``T.alloc_shared``/``alloc_fragment``/``alloc_local``/
  ``alloc_var``, with shape, dtype and scope;
- the ``T.Kernel(grid..., threads=...)`` launch block and its block index variables;
- loops (``T.Pipelined`` with ``num_stages``, ``T.Parallel``, ``T.serial``, ``T.unroll``, ``range``);
- tile operations (``T.copy`` with the tile regions of both sides, ``T.gemm``, ``T.clear``,
  ``T.fill``, ``T.reduce_*``, ``T.atomic_*``) and element statements (``X[i, j] = expr``) with the
  buffers they read and write.

Sizes such as ``block_M`` are usually parameters of a Python factory enclosing the kernel; the
:class:`Env` resolves them from parameter defaults, assignments in the enclosing functions,
module constants and, per call site of the factory, the arguments it is called with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import libcst as cst

from kernlint.facts import COMPARE
from kernlint.source import names as N
from kernlint.source.discover import DiscoveredKernel, ModuleInfo
from kernlint.source.names import argument, source_text

#: canonical prefixes of the TileLang language module (``import tilelang.language as T``)
_PREFIXES = ("tilelang.language.", "tvm.script.tir.", "tvm.script.tirx.", "T.")

DTYPE_BYTES = {
    "float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3": 1, "float8_e5m2": 1,
    "float8_e4m3fn": 1, "float8_e5m2fnuz": 1, "float8_e4m3fnuz": 1, "int64": 8, "int32": 4,
    "int16": 2, "int8": 1, "uint64": 8, "uint32": 4, "uint16": 2, "uint8": 1, "bool": 1,
    "float4_e2m1fn": 1,
}
_DTYPE_ALIASES = {"float": "float32", "half": "float16", "double": "float64", "int": "int32", "bf16": "bfloat16",
                  "fp16": "float16", "fp32": "float32", "e4m3_float8": "float8_e4m3", "e5m2_float8": "float8_e5m2"}
LOW_PRECISION = {"float16", "bfloat16"} | {d for d in DTYPE_BYTES if d.startswith(("float8", "float4"))}

ALLOC_SCOPES = {
    "alloc_shared": "shared.dyn",
    "alloc_fragment": "local.fragment",
    "alloc_local": "local",
    "alloc_var": "local.var",
    "alloc_reducer": "local.fragment",
}
REDUCE_OPS = {"reduce_max", "reduce_min", "reduce_sum", "reduce_abssum", "reduce_absmax", "reduce_bitand",
              "reduce_bitor", "reduce_bitxor", "cumsum", "reduce"}
ATOMIC_OPS = {"atomic_add", "atomic_addx2", "atomic_addx4", "atomic_max", "atomic_min", "atomic_load",
              "atomic_store"}
#: calls in the language module that hand a buffer to code the analysis does not model
_ESCAPES = {"call_extern", "call_intrin", "call_packed", "address_of", "access_ptr", "tvm_access_ptr", "ptx_ldmatrix",
            "ptx_stmatrix", "tma_copy", "tma_load", "tma_store", "c2d_im2col", "wgmma", "mma", "ptx_mma",
            "ptx_wgmma_ss", "ptx_wgmma_rs", "ptx_cp_async", "import_source", "reshape", "view", "Cast",
            "async_copy", "put", "get", "im2col"}
#: statement-level T.* calls that only read the buffers they are given
_READ_ONLY_STATEMENTS = {"print", "device_assert", "assume", "annotate_layout", "annotate_padding",
                         "annotate_safe_value", "annotate_l2_hit_ratio", "use_swizzle", "no_set_max_nreg"}
_ZERO_PRESERVING = {"abs", "Cast", "cast", "max", "min", "sqrt", "sin", "tanh", "erf", "round", "floor", "ceil",
                    "trunc", "fabs"}


def canonical_op(info: ModuleInfo, func: cst.BaseExpression) -> str | None:
    """``T.copy`` -> ``copy`` (for any alias of the TileLang language module), else None."""
    name = info.imports.resolve(func)
    if not name:
        return None
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    if name.startswith("tilelang.") and name.count(".") == 1:
        return name.split(".", 1)[1]
    return None


def normalise_dtype(text: str | None) -> str | None:
    if text is None:
        return None
    text = text.strip().strip("\"'")
    text = text.rsplit(".", 1)[-1]
    return _DTYPE_ALIASES.get(text, text)


names_in = N.names_in


def subscripts_in(node: cst.CSTNode) -> Iterator[cst.Subscript]:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Subscript):
            yield n
        stack.extend(n.children)


def calls_in(node: cst.CSTNode) -> Iterator[cst.Call]:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Call):
            yield n
        stack.extend(n.children)


# --------------------------------------------------------------------------- symbolic sizes


class Env:
    """Resolves the names a kernel's sizes and dtypes use to Python ints and dtype strings."""

    def __init__(self, bindings: dict[str, cst.BaseExpression | int | str], info: ModuleInfo) -> None:
        self.bindings = bindings
        self.info = info
        self._busy: set[str] = set()

    def overlay(self, extra: dict[str, cst.BaseExpression | int | str]) -> "Env":
        merged = dict(self.bindings)
        merged.update(extra)
        return Env(merged, self.info)

    def lookup(self, name: str):
        if name in self.bindings:
            return self.bindings[name]
        if name in self.info.constants:
            return self.info.constants[name]
        return None

    def value(self, node) -> int | float | str | None:
        """An int, a float, a dtype/str, or None when it depends on something unknown."""
        if node is None:
            return None
        if isinstance(node, (int, float, str)):
            return node
        if isinstance(node, cst.Integer):
            return int(node.evaluated_value)
        if isinstance(node, cst.Float):
            return float(node.evaluated_value)
        if isinstance(node, cst.SimpleString):
            return str(node.evaluated_value)
        if isinstance(node, cst.Name):
            if node.value in ("True", "False"):
                return int(node.value == "True")
            if node.value in self._busy:
                return None
            bound = self.lookup(node.value)
            if bound is None:
                return None
            self._busy.add(node.value)
            try:
                return self.value(bound)
            finally:
                self._busy.discard(node.value)
        if isinstance(node, cst.Attribute):
            op = canonical_op(self.info, node)
            if op and op.rsplit(".", 1)[-1] in DTYPE_BYTES | dict.fromkeys(_DTYPE_ALIASES):
                return normalise_dtype(op)
            return None
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            v = self.value(node.expression)
            return -v if isinstance(v, (int, float)) else None
        if isinstance(node, cst.BinaryOperation):
            a, b = self.value(node.left), self.value(node.right)
            if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
                return None
            op = node.operator
            try:
                if isinstance(op, cst.Add):
                    return a + b
                if isinstance(op, cst.Subtract):
                    return a - b
                if isinstance(op, cst.Multiply):
                    return a * b
                if isinstance(op, cst.FloorDivide):
                    return a // b
                if isinstance(op, cst.Modulo):
                    return a % b
                if isinstance(op, cst.Divide):
                    return a / b
                if isinstance(op, cst.Power):
                    return a**b
                if isinstance(op, cst.LeftShift):
                    return int(a) << int(b)
            except (ZeroDivisionError, OverflowError, ValueError):
                return None
            return None
        if isinstance(node, cst.Call):
            op = canonical_op(self.info, node.func)
            name = op or N.dotted(node.func) or ""
            args = [self.value(a.value) for a in node.args]
            if name in ("ceildiv", "cdiv", "triton.cdiv") and len(args) == 2 and all(isinstance(x, int) for x in args):
                return -(-args[0] // args[1]) if args[1] else None
            if name in ("min", "max") and args and all(isinstance(x, int) for x in args):
                return min(args) if name == "min" else max(args)
            if name == "int" and len(args) == 1 and isinstance(args[0], (int, float)):
                return int(args[0])
            if op and normalise_dtype(op) in DTYPE_BYTES and len(args) == 1:
                return args[0]  # T.float32(0) and the like
            return None
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            a, b = self.value(node.left), self.value(node.comparisons[0].comparator)
            op = node.comparisons[0].operator
            if isinstance(op, (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)) \
                    and isinstance(a, int) and isinstance(b, int):
                return int(COMPARE[type(op).__name__](a, b))
            if a is None or b is None or not isinstance(op, (cst.Equal, cst.NotEqual)):
                return None
            if isinstance(a, str) or isinstance(b, str):
                a, b = normalise_dtype(str(a)), normalise_dtype(str(b))
            return int((a == b) == isinstance(op, cst.Equal))
        if isinstance(node, cst.BooleanOperation):
            a, b = self.value(node.left), self.value(node.right)
            if isinstance(node.operator, cst.And):
                return 0 if 0 in (a, b) else (1 if a and b else None)
            return 1 if (isinstance(a, int) and a) or (isinstance(b, int) and b) else (0 if a == 0 and b == 0 else None)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            v = self.value(node.expression)
            return int(not v) if isinstance(v, (int, float)) else None
        if isinstance(node, (cst.Tuple, cst.List)):
            return None
        return None

    def dtype(self, node) -> str | None:
        v = self.value(node)
        return normalise_dtype(v) if isinstance(v, str) else None


# --------------------------------------------------------------------------- recorded facts


@dataclass
class Buffer:
    name: str
    scope: str  # global | shared.dyn | local.fragment | local | local.var
    shape: list[cst.BaseExpression]
    dtype_node: cst.BaseExpression | None
    node: cst.CSTNode
    #: for alloc_var: an ``init=`` was given
    initialised: bool = False

    @property
    def is_global(self) -> bool:
        return self.scope == "global"

    @property
    def is_shared(self) -> bool:
        return self.scope.startswith("shared")

    @property
    def per_thread(self) -> bool:
        return self.scope.startswith("local")


@dataclass
class Loop:
    kind: str  # pipelined | parallel | serial | unroll | range | persistent
    vars: list[str]
    extents: list[cst.BaseExpression]
    node: cst.For
    num_stages: cst.BaseExpression | None = None
    #: the first value of a range-like loop's variable (0 unless ``(start, stop)`` says otherwise)
    start: int | None = 0


@dataclass
class Launch:
    grid: list[cst.BaseExpression]
    block_vars: list[str]
    threads: cst.BaseExpression | None
    node: cst.With


@dataclass
class Region:
    """One side of a tile op: ``A[by * block_M, k * block_K]`` or a whole buffer ``A_shared``."""

    buffer: str
    node: cst.BaseExpression
    #: per indexed dimension: (start, stop) -- stop is None for a point index (the extent comes from
    #: the other side of the copy) and for a whole buffer every start is None.
    dims: list[tuple[cst.BaseExpression | None, cst.BaseExpression | None]]
    whole: bool = False


@dataclass
class Op:
    kind: str  # copy | gemm | clear | fill | reduce | atomic | store | augstore | call | escape
    node: cst.CSTNode
    name: str = ""
    #: buffers this statement reads / writes
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    src: Region | None = None
    dst: Region | None = None
    args: list[cst.BaseExpression] = field(default_factory=list)
    kwargs: dict[str, cst.BaseExpression] = field(default_factory=dict)
    value: cst.BaseExpression | None = None  # for element stores
    loops: tuple[Loop, ...] = ()
    guards: tuple[cst.BaseExpression, ...] = ()
    index: int = 0
    #: for T.gemm: how ``clear_accum`` behaves (never | always | first | later | unknown)
    clear: str = "never"


@dataclass
class TileLangState:
    kernel: DiscoveredKernel
    info: ModuleInfo
    env: Env
    #: one Env per call site of the kernel's factory (just ``[env]`` when none is found)
    configs: list[Env]
    buffers: dict[str, Buffer] = field(default_factory=dict)
    launch: Launch | None = None
    loops: list[Loop] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    #: local scalar names -> names they are computed from (``row = by * block_M + i``)
    derived: dict[str, set[str]] = field(default_factory=dict)
    #: kernel-local scalar name -> the expression last assigned to it (``kv_start = ...``)
    locals: dict[str, cst.BaseExpression] = field(default_factory=dict)
    #: ``assert`` tests in the kernel and its factories
    asserts: list[cst.BaseExpression] = field(default_factory=list)
    #: parameters of the kernel and its enclosing factories (sizes a caller picks)
    params: set[str] = field(default_factory=set)
    #: facts derived once per kernel by the modules that read this state (asserted multiples, ...)
    memo: dict = field(default_factory=dict)
    #: parameters ``@tilelang.autotune`` chooses, with the values its configs list (``[]``: unread)
    tuned: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)

    def tuned_values(self, name: str, env: "Env") -> list[int] | None:
        values = [env.value(v) for v in self.tuned.get(name, [])]
        return values if values and all(isinstance(v, int) for v in values) else None

    def code(self, node: cst.CSTNode) -> str:
        return source_text(self.info.module, node).strip()

    def anchor(self, node: cst.CSTNode) -> None:
        """No walk records where a node stands: the locator finds the statement that holds it."""
        return None

    def depends(self, node: cst.CSTNode) -> set[str]:
        """Names an expression depends on, following local scalar assignments."""
        out: set[str] = set()
        todo = list(names_in(node))
        while todo:
            n = todo.pop()
            if n in out:
                continue
            out.add(n)
            todo.extend(self.derived.get(n, ()))
        return out

    def reachable(self, op: "Op", env: Env) -> bool:
        """False when an enclosing ``if`` is a compile-time condition that is false in ``env``."""
        return all(env.value(g) != 0 for g in op.guards)

    def dtype_of(self, buffer: str, env: Env | None = None) -> str | None:
        b = self.buffers.get(buffer)
        if b is None or b.dtype_node is None:
            return None
        return (env or self.env).dtype(b.dtype_node)

    def divisible(self, total: cst.BaseExpression, block: cst.BaseExpression) -> bool:
        """True when ``total`` is provably a multiple of ``block`` for every input the kernel accepts."""
        from kernlint.source.tilelang_divide import divides

        return divides(self, total, block)


# --------------------------------------------------------------------------- the walk


def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        out = []
        for el in target.elements:
            out += _target_names(el.value)
        return out
    return []


def _shape(node: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    if node is None:
        return []
    if isinstance(node, (cst.Tuple, cst.List)):
        return [el.value for el in node.elements]
    return [node]


class _Walker:
    def __init__(self, state: TileLangState) -> None:
        self.state = state
        self.info = state.info
        #: a module that never names a pointer builtin needs no walk for them per statement
        self.has_pointers = any(w in state.info.source for w in ("access_ptr", "address_of"))

    def op_name(self, func: cst.BaseExpression) -> str | None:
        return canonical_op(self.info, func)

    # -- signature
    def params(self, fn: cst.FunctionDef) -> None:
        for p in N.parameters(fn.params):
            ann = p.annotation.annotation if p.annotation else None
            if isinstance(ann, cst.Call) and (self.op_name(ann.func) or "") in (
                "Tensor", "Buffer", "StridedTensor", "FragmentBuffer", "SharedBuffer",
            ):
                kind = self.op_name(ann.func)
                scope = {"FragmentBuffer": "local.fragment", "SharedBuffer": "shared.dyn"}.get(kind, "global")
                shape = argument(ann, "shape", 0)
                if isinstance(shape, cst.Name):  # shape = [batch, seq_len, heads, dim] in the factory
                    bound = self.state.env.lookup(shape.value)
                    if isinstance(bound, (cst.List, cst.Tuple)):
                        shape = bound
                dtype = argument(ann, "dtype", 1)
                self.state.buffers[p.name.value] = Buffer(p.name.value, scope, _shape(shape), dtype, p)
            elif isinstance(ann, cst.Subscript) and (self.op_name(ann.value) or "") in ("Tensor", "Buffer"):
                # T.Tensor[(M, K), dtype]
                els = [e.slice.value for e in ann.slice if isinstance(e.slice, cst.Index)]
                self.state.buffers[p.name.value] = Buffer(
                    p.name.value, "global", _shape(els[0] if els else None), els[1] if len(els) > 1 else None, p
                )

    # -- statements
    def block(self, body, loops: tuple[Loop, ...], guards: tuple) -> None:
        if isinstance(body, cst.IndentedBlock):
            stmts = body.body
        elif isinstance(body, cst.SimpleStatementSuite):
            stmts = [cst.SimpleStatementLine(body=body.body)]
        else:
            stmts = body
        for stmt in stmts:
            self.stmt(stmt, loops, guards)

    def stmt(self, stmt, loops, guards) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small, loops, guards)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                call = item.item
                if isinstance(call, cst.Call) and self.op_name(call.func) == "Kernel" and self.state.launch is None:
                    grid = [a.value for a in call.args if a.keyword is None]
                    threads = argument(call, "threads")
                    block_vars = _target_names(item.asname.name) if item.asname else []
                    self.state.launch = Launch(grid, block_vars, threads, stmt)
            self.block(stmt.body, loops, guards)
        elif isinstance(stmt, cst.For):
            loop = self.loop(stmt)
            self.state.loops.append(loop)
            self.block(stmt.body, loops + (loop,), guards)
        elif isinstance(stmt, cst.While):
            self.block(stmt.body, loops, guards + (stmt.test,))
        elif isinstance(stmt, cst.If):
            self.block(stmt.body, loops, guards + (stmt.test,))
            orelse = stmt.orelse
            while orelse is not None:
                if isinstance(orelse, cst.If):
                    self.block(orelse.body, loops, guards + (orelse.test,))
                    orelse = orelse.orelse
                else:
                    self.block(orelse.body, loops, guards + (cst.UnaryOperation(cst.Not(), stmt.test),))
                    orelse = None
        elif isinstance(stmt, cst.Try):
            self.block(stmt.body, loops, guards)
        # nested function definitions (T.macro helpers, inner kernels) are analysed on their own

    def loop(self, node: cst.For) -> Loop:
        vars_ = _target_names(node.target)
        it = node.iter
        kind, extents, stages = "range", [], None
        if isinstance(it, cst.Call):
            op = self.op_name(it.func)
            positional = [a.value for a in it.args if a.keyword is None]
            if op in ("Pipelined", "pipelined"):
                kind = "pipelined"
                stages = argument(it, "num_stages")
            elif op in ("Parallel", "parallel", "vectorized", "Vectorized"):
                kind = "parallel"
            elif op in ("serial", "Serial"):
                kind = "serial"
            elif op in ("unroll", "Unroll"):
                kind = "unroll"
            elif op in ("Persistent",):
                kind = "persistent"
            elif (N.dotted(it.func) or "") == "range":
                kind = "range"
            if kind in ("parallel",):
                extents = positional
            elif positional:
                # range-like: (stop) or (start, stop[, step])
                extents = [positional[0] if len(positional) == 1 else positional[1]]
                if len(positional) > 1:
                    first = self.state.env.value(positional[0])
                    start = first if isinstance(first, int) else None
                    return Loop(kind, vars_, extents, node, stages, start=start)
        return Loop(kind, vars_, extents, node, stages)

    def region(self, node: cst.BaseExpression) -> Region | None:
        if isinstance(node, cst.Name) and node.value in self.state.buffers:
            buf = self.state.buffers[node.value]
            return Region(node.value, node, [(None, None)] * len(buf.shape), whole=True)
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
            dims = []
            for el in node.slice:
                s = el.slice
                if isinstance(s, cst.Index):
                    dims.append((s.value, None))
                elif isinstance(s, cst.Slice):
                    dims.append((s.lower, s.upper if s.upper is not None else cst.Name("__end__")))
            return Region(node.value.value, node, dims)
        return None

    def buffer_reads(self, expr: cst.CSTNode) -> list[str]:
        """Buffers an expression reads: subscripted ones, whole buffers passed to calls (``T.max(x[0], y)``
        is covered by the first) and alloc_vars by their bare name (``nz_count + 1``); one walk."""
        buffers = self.state.buffers
        out: list[str] = []
        bare: list[str] = []
        stack = [expr]
        while stack:
            n = stack.pop()
            if isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name) and n.value.value in buffers:
                out.append(n.value.value)
            elif isinstance(n, cst.Call):
                out += [a.value.value for a in n.args if isinstance(a.value, cst.Name) and a.value.value in buffers]
            elif isinstance(n, cst.Name) and n.value in buffers and buffers[n.value].scope == "local.var":
                bare.append(n.value)
                continue
            elif isinstance(n, cst.Attribute):
                stack.append(n.value)
                continue
            stack.extend(n.children)
        return out + [n for n in dict.fromkeys(bare) if n not in out]

    def add(self, op: Op, loops, guards) -> None:
        op.loops, op.guards, op.index = loops, guards, len(self.state.ops)
        self.state.ops.append(op)

    def small(self, small, loops, guards) -> None:
        st = self.state
        if isinstance(small, cst.Assign):
            value = small.value
            target = small.targets[0].target if len(small.targets) == 1 else None
            if isinstance(value, cst.Call):
                op = self.op_name(value.func)
                if op in ALLOC_SCOPES and isinstance(target, cst.Name):
                    if op == "alloc_var":
                        dtype, shape = argument(value, "dtype", 0), []
                        init = argument(value, "init", 1)
                    else:
                        shape_node = argument(value, "shape", 0)
                        if isinstance(shape_node, cst.Name):
                            bound = st.env.lookup(shape_node.value)
                            if isinstance(bound, (cst.List, cst.Tuple)):
                                shape_node = bound
                        shape, dtype = _shape(shape_node), argument(value, "dtype", 1)
                        init = None
                    scope = ALLOC_SCOPES[op]
                    scope_arg = argument(value, "scope", 2)
                    if op == "alloc_shared" and isinstance(scope_arg, cst.SimpleString):
                        scope = str(scope_arg.evaluated_value)
                    st.buffers[target.value] = Buffer(target.value, scope, shape, dtype, small, initialised=init is not None)
                    return
            if isinstance(target, cst.Name):
                st.derived.setdefault(target.value, set()).update(names_in(value))
                st.locals[target.value] = value
                buf = st.buffers.get(target.value)
                if buf is not None and buf.scope == "local.var":
                    # ``m = -T.infinity(dtype)`` after ``m = T.alloc_var(dtype)``: the frontend turns a plain
                    # assignment to a var into a store into its one element
                    self.add(Op("store", small, target.value, reads=self.buffer_reads(value), writes=[target.value],
                                value=value), loops, guards)
                    return
                self.expr_stmt(value, small, loops, guards)
                return
            if isinstance(target, (cst.Tuple, cst.List)):
                for name in _target_names(target):
                    st.derived.setdefault(name, set()).update(names_in(value))
                self.expr_stmt(value, small, loops, guards)
                return
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                name = target.value.value
                if name in st.buffers:
                    reads = self.buffer_reads(value) + self.index_reads(target)
                    self.add(Op("store", small, name, reads=reads, writes=[name], dst=self.region(target), value=value),
                             loops, guards)
                    return
            self.expr_stmt(value, small, loops, guards)
        elif isinstance(small, cst.AugAssign):
            target = small.target
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value in st.buffers:
                name = target.value.value
                reads = [name] + self.buffer_reads(small.value) + self.index_reads(target)
                self.add(Op("augstore", small, name, reads=reads, writes=[name], dst=self.region(target),
                            value=small.value), loops, guards)
            elif isinstance(target, cst.Name):
                st.derived.setdefault(target.value, set()).update(names_in(small.value))
                if target.value in st.buffers:  # alloc_var scalars: x += ...
                    self.add(Op("augstore", small, target.value, reads=[target.value] + self.buffer_reads(small.value),
                                writes=[target.value], value=small.value), loops, guards)
        elif isinstance(small, cst.Expr):
            self.expr_stmt(small.value, small, loops, guards, statement=True)
        elif isinstance(small, cst.Assert):
            st.asserts.append(small.test)

    def index_reads(self, target: cst.Subscript) -> list[str]:
        out = []
        for el in target.slice:
            out += self.buffer_reads(el.slice)
        return out

    def clear_kind(self, flag: cst.BaseExpression | None, loops: tuple[Loop, ...]) -> str:
        """How ``clear_accum=flag`` behaves: ``never``, ``always``, ``first`` (``j == 0`` for an enclosing
        loop over ``j`` from 0: the first execution clears), ``later`` (``j == 1``: the first execution
        accumulates) or ``unknown``."""
        if flag is None:
            return "never"
        v = self.state.env.value(flag)
        if isinstance(v, (int, float)):
            return "always" if v else "never"
        if isinstance(flag, cst.Comparison) and len(flag.comparisons) == 1 and isinstance(
                flag.comparisons[0].operator, cst.Equal) and isinstance(flag.left, cst.Name):
            for lp in loops:
                if flag.left.value in lp.vars and lp.start is not None:
                    at = self.state.env.value(flag.comparisons[0].comparator)
                    if isinstance(at, int):
                        return "first" if at == lp.start else "later"
        return "unknown"

    def pointer_accesses(self, value: cst.BaseExpression) -> tuple[list[str], list[str]]:
        """Buffers an expression hands out by address, split by the access the pointer declares:
        ``T.access_ptr(buf, "w")`` / ``tvm_access_ptr(..., rw_mask)`` (1 read, 2 write), ``T.address_of``
        (unknown: counted as written)."""
        reads: list[str] = []
        writes: list[str] = []
        if not self.has_pointers:
            return reads, writes
        for call in calls_in(value):
            op = self.op_name(call.func)
            if op in ("access_ptr", "address_of"):
                base = argument(call, "base", 0) if op == "access_ptr" else argument(call, "buffer_load", 0)
                region = self.region(base) if base is not None else None
                if region is None:
                    continue
                mode = self.state.env.value(argument(call, "access_type", 1)) if op == "access_ptr" else "rw"
                mode = {1: "r", 2: "w", 3: "rw"}.get(mode, mode) if isinstance(mode, int) else (mode or "r")
                if "r" in str(mode):
                    reads.append(region.buffer)
                if "w" in str(mode):
                    writes.append(region.buffer)
            elif op == "tvm_access_ptr" and len(call.args) >= 5:
                data = call.args[1].value
                name = data.value if isinstance(data, cst.Name) else (
                    data.value.value if isinstance(data, cst.Attribute) and isinstance(data.value, cst.Name) else None)
                mask = self.state.env.value(call.args[4].value)
                if name in self.state.buffers:
                    if not isinstance(mask, int) or mask & 1:
                        reads.append(name)
                    if not isinstance(mask, int) or mask & 2:
                        writes.append(name)
        return reads, writes

    def thread_allreduce(self, call: cst.Call, stmt, loops, guards) -> bool:
        """``tvm_thread_allreduce(n, v_1..v_n, cond, out_1..out_n, threads...)`` reads the values and
        writes the outputs (TVM's builtin signature)."""
        args = [a.value for a in call.args if a.keyword is None]
        n = self.state.env.value(args[0]) if args else None
        if not isinstance(n, int) or len(args) < 2 * n + 2:
            return False
        reads = [r for v in args[1:n + 1] for r in self.buffer_reads(v)]
        writes = [r.buffer for v in args[n + 2:2 * n + 2] if (r := self.region(v)) is not None]
        self.add(Op("call", call, "tvm_thread_allreduce", reads=reads, writes=writes), loops, guards)
        return True

    def expr_stmt(self, value: cst.BaseExpression, stmt, loops, guards, statement: bool = False) -> None:
        st = self.state
        if not isinstance(value, cst.Call):
            reads = self.buffer_reads(value)
            if reads:
                self.add(Op("read", stmt, reads=reads), loops, guards)
            return
        op = self.op_name(value.func)
        positional = [a.value for a in value.args if a.keyword is None]
        kwargs = {a.keyword.value: a.value for a in value.args if a.keyword is not None}
        if op == "evaluate" and positional and isinstance(positional[0], cst.Call):
            self.expr_stmt(positional[0], stmt, loops, guards, statement=True)
            return
        if op == "tvm_thread_allreduce" and self.thread_allreduce(value, stmt, loops, guards):
            return
        ptr_reads, ptr_writes = self.pointer_accesses(value)
        if ptr_writes:
            self.add(Op("escape", value, op or (N.dotted(value.func) or ""), reads=ptr_reads, writes=ptr_writes),
                     loops, guards)
            return
        if op == "dp4a" and len(positional) == 3:
            acc = self.region(positional[2])
            reads = self.buffer_reads(value)
            self.add(Op("augstore", value, op, reads=reads, writes=[acc.buffer] if acc else [], dst=acc,
                        value=value), loops, guards)
            return
        if op == "copy" and len(positional) + len(kwargs) >= 2:
            src = self.region(argument(value, "src", 0))
            dst = self.region(argument(value, "dst", 1))
            reads = [src.buffer] if src else []
            writes = [dst.buffer] if dst else []
            for side in (src, dst):
                if side is not None and not side.whole and isinstance(side.node, cst.Subscript):
                    reads += self.index_reads(side.node)
            self.add(Op("copy", value, op, reads=reads, writes=writes, src=src, dst=dst, args=positional,
                        kwargs=kwargs), loops, guards)
        elif op in ("gemm", "gemm_v1", "gemm_v2", "wgmma_gemm", "gemm_sp"):
            a, b, c = (argument(value, n, i) for i, n in enumerate(("A", "B", "C")))
            if op == "gemm_sp":
                a, b, c = argument(value, "A_sparse", 0), argument(value, "B", 2), argument(value, "C", 3)
            names = [self.region(x).buffer if x is not None and self.region(x) else None for x in (a, b, c)]
            clear = self.clear_kind(kwargs.get("clear_accum"), loops)
            reads = [n for n in names[:2] if n]
            if names[2] and clear != "always":
                reads.append(names[2])
            self.add(Op("gemm", value, op, reads=reads, writes=[names[2]] if names[2] else [], args=positional,
                        kwargs=kwargs, src=self.region(a) if a is not None else None,
                        dst=self.region(c) if c is not None else None, clear=clear), loops, guards)
        elif op in ("clear", "fill"):
            target = self.region(argument(value, "buffer", 0)) if positional or "buffer" in kwargs else None
            if target:
                self.add(Op(op, value, op, writes=[target.buffer], dst=target, args=positional, kwargs=kwargs),
                         loops, guards)
        elif op in REDUCE_OPS:
            src = self.region(argument(value, "buffer", 0))
            dst = self.region(argument(value, "out", 1))
            clear = argument(value, "clear", 3)
            clears = clear is None or st.env.value(clear) != 0
            reads = [src.buffer] if src else []
            if dst and (not clears or op == "cumsum" and dst.buffer == (src.buffer if src else None)):
                reads.append(dst.buffer)
            self.add(Op("reduce", value, op, reads=reads, writes=[dst.buffer] if dst else [], src=src, dst=dst,
                        args=positional, kwargs=kwargs), loops, guards)
        elif op in ATOMIC_OPS:
            dst = self.region(argument(value, "dst", 0))
            src_node = argument(value, "value", 1)
            src = self.region(src_node) if src_node is not None else None
            reads = ([src.buffer] if src else []) + (self.buffer_reads(src_node) if src is None and src_node else [])
            self.add(Op("atomic", value, op, reads=reads, writes=[dst.buffer] if dst else [], src=src, dst=dst,
                        args=positional, kwargs=kwargs), loops, guards)
        else:
            # anything else: a user helper / macro or an intrinsic the analysis does not model gets every
            # buffer passed to it as both read and written (it escapes); T.* ops we know read only.
            passed = [a.value.value for a in value.args if isinstance(a.value, cst.Name) and a.value.value in st.buffers]
            passed += [s.value.value for a in value.args for s in subscripts_in(a.value)
                       if isinstance(s.value, cst.Name) and s.value.value in st.buffers]
            if not passed:
                return
            # a call whose value is discarded is there for its effect: a T.* intrinsic handed a buffer as a
            # statement (``T.clc_try_cancel_multicast(result, bar)``) may write it
            effect = statement and op not in _READ_ONLY_STATEMENTS
            if op is None or effect or op in _ESCAPES or op.startswith(("ptx_", "tma_", "call_")):
                self.add(Op("escape", value, op or (N.dotted(value.func) or ""), writes=passed), loops, guards)
            else:
                self.add(Op("call", value, op, reads=self.buffer_reads(value)), loops, guards)


# --------------------------------------------------------------------------- enclosing factory and call sites


def _enclosing(module: cst.Module, target: cst.FunctionDef) -> list[cst.FunctionDef]:
    """The chain of functions enclosing ``target`` (outermost first), found by a statement walk."""

    def search(stmts, chain):
        for stmt in stmts:
            if stmt is target:
                return chain
            body = None
            if isinstance(stmt, cst.FunctionDef):
                body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else []
                found = search(body, chain + [stmt])
                if found is not None:
                    return found
                continue
            if isinstance(stmt, (cst.ClassDef, cst.If, cst.With, cst.Try, cst.For, cst.While)):
                inner = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else []
                found = search(inner, chain)
                if found is not None:
                    return found
                orelse = getattr(stmt, "orelse", None)
                while isinstance(orelse, cst.If):
                    found = search(orelse.body.body if isinstance(orelse.body, cst.IndentedBlock) else [], chain)
                    if found is not None:
                        return found
                    orelse = orelse.orelse
                if isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
                    found = search(orelse.body.body, chain)
                    if found is not None:
                        return found
        return None

    return search(module.body, []) or []


def _simple_bindings(stmts, out: dict, asserts: list) -> None:
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    t = small.targets[0].target
                    if isinstance(t, cst.Name):
                        out.setdefault(t.value, small.value)
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value:
                    out.setdefault(small.target.value, small.value)
                elif isinstance(small, cst.Assert):
                    asserts.append(small.test)


def _param_defaults(fn: cst.FunctionDef, out: dict) -> list[str]:
    names = []
    for p in N.parameters(fn.params):
        names.append(p.name.value)
        if p.default is not None:
            out[p.name.value] = p.default
        else:
            out.pop(p.name.value, None)
    return names


def _call_sites(info: ModuleInfo, name: str) -> list[tuple[cst.Call, dict]]:
    """Calls ``name(...)`` in assignment, expression, return and assert statements anywhere (a statement
    walk; only the statement's own call and calls among its arguments are looked at), each with the
    bindings visible where it stands (the calling function's parameter defaults and assignments)."""
    if f"{name}(" not in info.source:
        return []
    out: list[tuple[cst.Call, dict]] = []

    def consider(expr, scope) -> None:
        if isinstance(expr, cst.Call):
            if N.dotted(expr.func) == name:
                out.append((expr, scope))
            else:
                consider(expr.func, scope)  # factory(M, N)(a): the kernel called where it is made
                for a in expr.args:
                    consider(a.value, scope)

    def walk(stmts, scope) -> None:
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, (cst.Assign, cst.AnnAssign, cst.Expr, cst.Return)) and small.value is not None:
                        consider(small.value, scope)
                    elif isinstance(small, cst.Assert):
                        consider(small.test, scope)
            elif isinstance(stmt, cst.FunctionDef):
                if isinstance(stmt.body, cst.IndentedBlock):
                    inner: dict = {}
                    _param_defaults(stmt, inner)
                    _simple_bindings(stmt.body.body, inner, [])
                    walk(stmt.body.body, inner)
            elif hasattr(stmt, "body") and isinstance(getattr(stmt, "body"), cst.IndentedBlock):
                walk(stmt.body.body, scope)
                orelse = getattr(stmt, "orelse", None)
                while orelse is not None:
                    if isinstance(getattr(orelse, "body", None), cst.IndentedBlock):
                        walk(orelse.body.body, scope)
                    orelse = getattr(orelse, "orelse", None) if isinstance(orelse, cst.If) else None

    walk(info.module.body, {})
    return out


def _autotuned(info: ModuleInfo, fn: cst.FunctionDef) -> dict[str, list[cst.BaseExpression]] | None:
    """The parameters ``@tilelang.autotune(configs=...)`` on ``fn`` chooses, each with the values its
    configs list when they can be read (``dict(block_M=[64, 128])``, ``{"split": 1}``, ``{"split": c[5]}``
    over ``itertools.product(..., splits)``), else ``[]``. Keys are read from the expression or the module
    function building it; every defaulted parameter counts when none can be read. None when ``fn`` is
    not autotuned."""
    for deco in fn.decorators:
        call = deco.decorator
        func = call.func if isinstance(call, cst.Call) else call
        if not (N.dotted(func) or "").endswith("autotune"):
            continue
        configs = argument(call, "configs", 0) if isinstance(call, cst.Call) else None
        nodes: list[cst.CSTNode] = [configs] if configs is not None else []
        if isinstance(configs, cst.Call) and info.functions.get(N.dotted(configs.func) or "") is not None:
            nodes.append(info.functions[N.dotted(configs.func)])
        elif isinstance(configs, cst.Name) and configs.value in info.lists:
            nodes.append(info.lists[configs.value])
        local: dict = {}
        for node in nodes:
            if isinstance(node, cst.FunctionDef) and isinstance(node.body, cst.IndentedBlock):
                _simple_bindings(node.body.body, local, [])
        products = [c for node in nodes for c in calls_in(node) if (N.dotted(c.func) or "").endswith("product")]

        def values(expr) -> list[cst.BaseExpression]:
            if isinstance(expr, cst.Name) and isinstance(local.get(expr.value), (cst.List, cst.Tuple)):
                expr = local[expr.value]
            if isinstance(expr, (cst.List, cst.Tuple)):
                return [el.value for el in expr.elements]
            if isinstance(expr, (cst.Integer, cst.SimpleString)):
                return [expr]
            if (isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index)
                    and isinstance(expr.slice[0].slice.value, cst.Integer) and len(products) == 1):
                i = int(expr.slice[0].slice.value.evaluated_value)
                args = [a.value for a in products[0].args if not a.star]
                return values(args[i]) if i < len(args) else []
            return []

        found: dict[str, list[cst.BaseExpression]] = {}
        for node in nodes:
            for c in calls_in(node):
                if N.dotted(c.func) == "dict":
                    for a in c.args:
                        if a.keyword is not None:
                            found.setdefault(a.keyword.value, values(a.value))
            stack = [node]
            while stack:
                n = stack.pop()
                if isinstance(n, cst.Dict):
                    for el in n.elements:
                        if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString):
                            found.setdefault(str(el.key.evaluated_value), values(el.value))
                stack.extend(n.children)
        defaulted = {p.name.value for p in [*fn.params.params, *fn.params.kwonly_params] if p.default is not None}
        keys = set(found) & defaulted or defaulted
        return {k: found.get(k, []) for k in keys}
    return None


def _configs(info: ModuleInfo, env: Env, factory: cst.FunctionDef | None, params: list[str]) -> list[Env]:
    if factory is None:
        return [env]
    configs = []
    tuned = _autotuned(info, factory) or {}
    for call, scope in _call_sites(info, factory.name.value)[:16]:
        # a tuned parameter the call leaves out is the autotuner's choice, not its default
        extra: dict = {name: cst.Name("__autotuned__") for name in tuned}
        pos = 0
        for arg in call.args:
            if arg.star:
                break
            value = arg.value
            if isinstance(value, cst.Name) and value.value in scope:
                value = scope[value.value]  # matmul(M, N, K) inside run(M=1024, ...)
            if arg.keyword is not None:
                extra[arg.keyword.value] = value
            elif pos < len(params):
                extra[params[pos]] = value
                pos += 1
        configs.append(env.overlay(extra))
    return configs or [env]


# --------------------------------------------------------------------------- entry point


def analyse(info: ModuleInfo, kernel: DiscoveredKernel) -> TileLangState:
    fn = kernel.node
    chain = _enclosing(info.module, fn)
    bindings: dict = {}
    asserts: list = []
    params: list[str] = []
    all_params: list[str] = []
    for outer in chain:
        params = _param_defaults(outer, bindings)
        all_params += params
        if isinstance(outer.body, cst.IndentedBlock):
            _simple_bindings(outer.body.body, bindings, asserts)
    own = _param_defaults(fn, bindings)
    env = Env(bindings, info)
    factory = chain[-1] if chain else None
    configs = _configs(info, env, factory, params) if factory is not None else _configs(info, env, fn, own)
    state = TileLangState(kernel, info, env, configs, asserts=asserts, params=set(own) | set(all_params),
                          tuned=_autotuned(info, factory if factory is not None else fn) or {})
    walker = _Walker(state)
    walker.params(fn)
    if isinstance(fn.body, cst.IndentedBlock):
        walker.block(fn.body, (), ())
    return state
