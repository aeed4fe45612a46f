"""Decide what to compile for a Triton kernel: its *specializations*.

A Triton kernel is compiled per signature (argument types), constexpr values and launch options.
kernlint compiles, in this order of preference:

1. every ``# kernlint: specialize(NAME=VALUE, ...)`` comment written on the kernel's decorator or
   ``def`` lines, or on the lines directly above them (one specialization per comment);
2. every ``triton.Config(...)`` of the kernel's ``@triton.autotune`` (at most ``max_configs``);
3. every launch ``kernel[grid](...)`` in the same module whose constexpr arguments are literals
   (at most ``max_configs``), as the core's discovery finds them
   (:func:`kernlint.source.discover.find_launches`);
4. the **fallback**, one specialization:

   - constexpr parameters take their default (a literal, or a dtype ``tl.float16``) when they
     have one; otherwise constexprs used as a dtype (``dtype=ACC_TYPE``) and ``*DTYPE`` names are
     ``tl.float32``, flags
     (``HAS_*``, ``IS_*``, ``USE_*``, ``EVEN_*``...) are ``False``, ``GROUP*`` sizes are ``8``,
     ``NUM_STAGES``/``num_*`` are 2 and every other constexpr is ``64`` (a power of two);
   - a parameter is a pointer when the kernel dereferences it (it appears in the pointer argument
     of ``tl.load``/``tl.store``/``tl.atomic_*``/``tl.make_block_ptr``) or its name says so
     (``*_ptr``, ``ptr``, ``*_ptrs``); pointers are ``*fp32``, or ``*fp16``/``*bf16`` when the name
     hints (``fp16``, ``half``, ``bf16``) or the module's host code names half-precision torch
     dtypes (``torch.float16``...) and never ``torch.float32``, and they are assumed 16-byte
     aligned, as Triton's
     launcher specializes them for tensors from PyTorch's allocator; pointers named like integer
     data (``lock``, ``idx``, ``indices``, ``count``, ``offsets``, ``seqlen``...), used by
     ``tl.atomic_cas``/``tl.atomic_xchg`` with integer operands, or whose loaded values end up in
     an address (``dest = tl.load(Dest_loc + i)`` ... ``Out + dest * stride``) or in integer-only
     arithmetic (``//``, ``%``, shifts, bit operations) are ``*i32``;
   - a stride parameter (``stride`` in its name) is the constant 1 when every launch passes a
     literal 1 or ``t.stride(-1)`` for it, or when it scales an index broadcast along a tile's last axis
     (``offs_n[None, :] * stride_cn``) and no launch passes another stride for it than a tensor's
     last (``t.stride(-1)`` or the highest ``t.stride(d)`` of the call): Triton's launcher turns
     an integer argument equal to 1 into the constant 1, so contiguous tensors compile that way;
   - scalars named like floats (``eps``, ``scale``, ``alpha``, ``beta``, ``*_f``...) are ``fp32``;
     every other scalar is ``i32``, assumed divisible by 16 (Triton's launcher specializes
     integers that are multiples of 16, which sizes and strides usually are). Write
     ``n="i32"`` in a ``specialize`` comment to drop that assumption, ``n="i32:16"`` to keep it.

In a ``specialize`` comment a string value is a type (``"*fp16"``, ``"i64"``, ``"fp32"``) and any
other literal is a constexpr value; ``num_warps`` and ``num_stages`` set the launch options.
Parameters a comment leaves out keep their fallback.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from kernlint.facts import facts_for_source
from kernlint.model import BoundArg, Kernel, ModuleFacts

SPECIALIZE_COMMENT = re.compile(r"#\s*kernlint:\s*specialize\((?P<body>.*)\)\s*$")
DEFAULT_MAX_CONFIGS = 4
DEFAULT_NUM_WARPS = 4
DEFAULT_NUM_STAGES = 3

_POINTER_USERS = {
    "load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
    "atomic_xor", "atomic_xchg", "atomic_cas", "make_block_ptr", "make_tensor_descriptor",
}
_FLOAT_NAMES = re.compile(
    r"^(eps|epsilon|scale|sm_scale|alpha|beta|gamma|momentum|temperature|temp|lr|p|dropout_p|"
    r"theta|softcap|.*_scale|.*_eps|.*_f|.*_alpha|.*_beta)$", re.I)
_FLAG_NAMES = re.compile(r"^(HAS|IS|USE|EVEN|ENABLE|DO|WITH|APPLY|TRANS|RETURN|SAVE|STORE|NEED)_", re.I)


@dataclass(frozen=True)
class Specialization:
    """One compilation of a kernel: Triton signature, constexpr values and launch options."""

    #: parameter name -> Triton type (``*fp32``, ``i32``, ``fp32``) or ``constexpr``
    signature: dict[str, str]
    constexprs: dict[str, Any]
    num_warps: int = DEFAULT_NUM_WARPS
    num_stages: int = DEFAULT_NUM_STAGES
    #: parameters assumed divisible by 16 (pointers: 16-byte aligned)
    divisible: tuple[str, ...] = ()
    #: short human-readable name, e.g. ``autotune[1] BLOCK=128 warps=4 stages=3``
    label: str = ""
    #: where it came from: ``comment`` | ``autotune`` | ``launch`` | ``fallback``
    origin: str = "fallback"
    #: constexprs compiled with a value kernlint chose (nothing in the module gave one)
    guessed: tuple[str, ...] = ()

    def guessed_values(self) -> str:
        """``BLOCK_M=64, BLOCK_N=64``: the guessed constexprs with the values compiled."""
        return ", ".join(f"{p}={self.constexprs.get(p)}" for p in self.guessed)

    def key(self) -> str:
        """A canonical string: part of the cache key."""
        return json.dumps(
            {
                "signature": self.signature,
                "constexprs": {k: repr(v) for k, v in self.constexprs.items()},
                "num_warps": self.num_warps,
                "num_stages": self.num_stages,
                "divisible": sorted(self.divisible),
            },
            sort_keys=True,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "origin": self.origin,
            "signature": dict(self.signature),
            "constexprs": {k: _jsonable(v) for k, v in self.constexprs.items()},
            "num_warps": self.num_warps,
            "num_stages": self.num_stages,
            "divisible": list(self.divisible),
            "guessed": list(self.guessed),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Specialization":
        return cls(
            signature=dict(d["signature"]),
            constexprs=dict(d["constexprs"]),
            num_warps=int(d["num_warps"]),
            num_stages=int(d["num_stages"]),
            divisible=tuple(d.get("divisible", ())),
            label=d.get("label", ""),
            origin=d.get("origin", "fallback"),
            guessed=tuple(d.get("guessed", ())),
        )


def _jsonable(v: Any) -> Any:
    return v if isinstance(v, (int, float, str, bool)) or v is None else repr(v)


# --------------------------------------------------------------------------------------------
# kernel source helpers


@dataclass
class KernelSource:
    """What specialization needs to know about a kernel, read from its source without importing."""

    name: str
    params: list[str]
    constexpr: set[str]
    defaults: dict[str, str]  # param -> default's source text
    annotations: dict[str, str]
    dereferenced: set[str]
    #: pointers used by integer-only atomics (atomic_cas/atomic_xchg with integer operands)
    int_pointers: set[str]
    first_line: int  # first decorator line (1-based)
    def_line: int
    autotune_configs: list[str] = field(default_factory=list)
    launches: list[dict[str, str]] = field(default_factory=list)  # param -> argument source
    #: stride parameters that scale the last axis of a tile (``offs_n[None, :] * stride_cn``)
    last_axis_strides: set[str] = field(default_factory=set)
    #: stride parameters that scale a 1-D lane index (``offs_k * xk_stride``)
    lane_strides: set[str] = field(default_factory=set)
    #: the element type of float pointers without a hint in their name (:func:`module_float_type`)
    float_type: str = "*fp32"
    #: constexprs the kernel uses as a dtype (``dtype=ACC_TYPE``)
    dtype_constexprs: set[str] = field(default_factory=set)

    def unit_strides(self) -> set[str]:
        """Stride parameters that are 1 for contiguous tensors, compiled as the constant 1 as
        Triton's launcher does with an integer argument equal to 1: those every launch passes a
        literal 1 or ``t.stride(-1)`` for, and those that scale an index broadcast along a tile's
        last axis (``offs_n[None, :] * stride_cn``) unless a launch passes something else than the
        last stride of a tensor for them (``t.stride(0)``, or ``t.stride(d)`` below the highest
        ``d`` the call passes for ``t``), and those that scale a 1-D lane index (``offs_k *
        xk_stride``) where the launches pass the highest stride of a tensor for them."""
        out = set()
        for p in self.params:
            if p in self.constexpr or "stride" not in p.lower():
                continue
            verdicts = [_unit_argument(launch, p) for launch in self.launches if p in launch]
            if verdicts and all(v == "one" for v in verdicts):
                out.add(p)
            elif p in self.last_axis_strides and "other" not in verdicts:
                out.add(p)
            elif p in self.lane_strides and "last" in verdicts and "other" not in verdicts:
                out.add(p)  # a 1-D index scaled by the last stride the call passes for its tensor
        return out


def _func_defs(tree: ast.AST) -> Iterable[ast.FunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node  # type: ignore[misc]


def _attr_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_attr_name(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _attr_name(node.func)
    return ""


def _pointer_roots(expr: ast.AST) -> set[str]:
    """Names that can be the pointer of a pointer expression: ``p + i * s`` -> {p} (and {i}'s
    neighbours in additions); multiplied, divided or compared operands are integers."""
    if isinstance(expr, ast.Name):
        return {expr.id}
    if isinstance(expr, ast.BinOp):
        if isinstance(expr.op, ast.Add):
            return _pointer_roots(expr.left) | _pointer_roots(expr.right)
        if isinstance(expr.op, ast.Sub):
            return _pointer_roots(expr.left)
        return set()
    if isinstance(expr, ast.Subscript):
        return _pointer_roots(expr.value)
    if isinstance(expr, ast.IfExp):
        return _pointer_roots(expr.body) | _pointer_roots(expr.orelse)
    if isinstance(expr, ast.Call) and expr.args and _attr_name(expr.func).split(".")[-1] in (
            "broadcast_to", "reshape", "view", "expand_dims", "where", "multiple_of", "max_contiguous"):
        args = expr.args[1:] if _attr_name(expr.func).endswith("where") else expr.args[:1]
        return set().union(*(_pointer_roots(a) for a in args))
    return set()


def read_kernel_source(source: str, name: str, tree: ast.AST | None = None,
                       facts: ModuleFacts | None = None) -> KernelSource | None:
    tree = tree or ast.parse(source)
    fn = next((f for f in _func_defs(tree) if f.name == name), None)
    if fn is None:
        return None
    args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
    params = [a.arg for a in args]
    constexpr = {a.arg for a in args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}
    annotations = {a.arg: ast.unparse(a.annotation) for a in args if a.annotation is not None}
    defaults: dict[str, str] = {}
    positional = fn.args.posonlyargs + fn.args.args
    for a, d in zip(positional[len(positional) - len(fn.args.defaults):], fn.args.defaults):
        defaults[a.arg] = ast.unparse(d)
    for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults):
        if d is not None:
            defaults[a.arg] = ast.unparse(d)
    dereferenced = _dereferenced(fn, {f.name: f for f in _func_defs(tree)}, set())
    assigns = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
    int_pointers: set[str] = _index_pointers(fn, set(params), dereferenced, assigns)
    for node in ast.walk(fn):
        if (isinstance(node, ast.Call) and _attr_name(node.func).split(".")[-1] in ("atomic_cas", "atomic_xchg")
                and node.args and any(isinstance(a, ast.Constant) and isinstance(a.value, int)
                                      and not isinstance(a.value, bool) for a in node.args[1:])):
            int_pointers |= _pointer_roots(node.args[0])
    first = min([d.lineno for d in fn.decorator_list] + [fn.lineno])
    configs: list[str] = []
    for dec in fn.decorator_list:
        if isinstance(dec, ast.Call) and _attr_name(dec.func).split(".")[-1] == "autotune":
            cfg = next((k.value for k in dec.keywords if k.arg == "configs"), dec.args[0] if dec.args else None)
            if isinstance(cfg, (ast.List, ast.Tuple)):
                configs += [ast.unparse(e) for e in cfg.elts]
            elif isinstance(cfg, ast.Name):  # configs=CONFIGS defined at module level
                for node in getattr(tree, "body", []):
                    if isinstance(node, ast.Assign) and any(
                            isinstance(t, ast.Name) and t.id == cfg.id for t in node.targets):
                        if isinstance(node.value, (ast.List, ast.Tuple)):
                            configs += [ast.unparse(e) for e in node.value.elts]
    ks = KernelSource(name, params, constexpr, defaults, annotations, dereferenced, int_pointers, first,
                      fn.lineno, configs)
    ks.launches = launch_arguments(facts if facts is not None else facts_for_source("<module>", source), name)
    ks.last_axis_strides = _last_axis_scales(fn, set(params) - constexpr, ks.lane_strides)
    ks.float_type = module_float_type(source)
    ks.dtype_constexprs = _dtype_uses(fn, constexpr, {f.name: f for f in _func_defs(tree)})
    return ks


_INT_OPS = (ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _arith_names(node: ast.AST) -> set[str]:
    """The names whose value an expression carries through arithmetic (``b + i * s``,
    ``x.to(...)``, ``x[:, None]``); calls (``tl.argmax(x)``, ``tl.sum``) and comparisons make new
    values and carry none."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.BinOp):
        return _arith_names(node.left) | _arith_names(node.right)
    if isinstance(node, ast.UnaryOp):
        return _arith_names(node.operand)
    if isinstance(node, ast.Subscript):
        return _arith_names(node.value)
    if isinstance(node, ast.IfExp):
        return _arith_names(node.body) | _arith_names(node.orelse)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to":
        return _arith_names(node.func.value)
    if isinstance(node, ast.Call) and _attr_name(node.func).split(".")[-1] in ("multiple_of", "max_contiguous",
                                                                             "minimum", "maximum", "where"):
        return set().union(*(_arith_names(a) for a in node.args))
    return set()


def _loaded_from(value: ast.AST, params: set[str]) -> set[str]:
    """The parameters ``tl.load(P + ...)`` (possibly ``.to(...)``-cast) reads through."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to":
        value = value.func.value
    if (isinstance(value, ast.Call) and _attr_name(value.func).split(".")[-1] == "load"
            and (value.args or value.keywords)):
        target = value.args[0] if value.args else next((k.value for k in value.keywords if k.arg == "pointer"), None)
        if target is not None:
            return _pointer_roots(target) & params
    return set()


def _index_pointers(fn: ast.AST, params: set[str], dereferenced: set[str], assigns: list[ast.AST]) -> set[str]:
    """Pointers whose loaded values are integers: a value that ends up in an address (``Out +
    dest_index * stride``, ``Q + (start + offs) * stride``) or in integer-only arithmetic
    (``//``, ``%``, shifts, bit operations) cannot be a float."""
    sources: dict[str, set[str]] = {}  # name -> pointer parameters its value was loaded through
    for _ in range(4):
        for node in assigns:
            if not isinstance(node, ast.Assign) or node.value is None:
                continue
            direct = _loaded_from(node.value, params)
            derived = set().union(*(sources.get(n, set()) for n in _arith_names(node.value)))
            for t in node.targets:
                for n in _names(t):
                    sources.setdefault(n, set()).update(direct | derived)
    # a parameter rebound to what it points at (``bias = tl.load(bias + rn)``) names both: skip it
    sources = {k: v for k, v in sources.items() if v and k not in params}
    if not sources:
        return set()
    used: set[str] = set()
    local = {n for node in assigns for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
             for n in _names(t)}
    for node in ast.walk(fn):
        func = _attr_name(node.func) if isinstance(node, ast.Call) else ""
        # ``smem.store(x)``: a method of a local object (a shared-memory buffer) takes a value, not a pointer
        if func.split(".")[-1] in _POINTER_USERS and node.args and func.split(".")[0] not in local:
            used |= _arith_names(node.args[0])
        elif isinstance(node, ast.BinOp) and isinstance(node.op, _INT_OPS):
            used |= _arith_names(node.left) | _arith_names(node.right)
    for node in assigns:  # the offsets of pointer variables: o_ptrs = Out + dest_index * stride
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if node.value is not None and any(n in dereferenced for t in targets for n in _names(t)):
            used |= _arith_names(node.value)
    out: set[str] = set()
    for n in used:
        out |= sources.get(n, set())
    return out


def _dereferenced(fn: ast.FunctionDef, funcs: dict[str, ast.FunctionDef], visiting: set[str]) -> set[str]:
    """Names of ``fn`` that can be the pointer of a dereferenced address: in ``tl.load``/
    ``tl.store``... directly, through assignments (``ptrs = a_ptr + offs``), and through the
    parameters of helper functions of the module that dereference them (``_inner(K_ptrs)``)."""
    dereferenced: set[str] = set()
    visiting = visiting | {fn.name}
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        if _attr_name(node.func).split(".")[-1] in _POINTER_USERS:
            target = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg in ("pointer", "base", "ptr")), None)
            if target is not None:
                dereferenced |= _pointer_roots(target)
        elif (isinstance(node.func, ast.Name) and node.func.id in funcs and node.func.id not in visiting
              and len(visiting) < 4):
            callee = funcs[node.func.id]
            inner = _dereferenced(callee, funcs, visiting)
            names = [a.arg for a in callee.args.posonlyargs + callee.args.args]
            for name, arg in zip(names, node.args):
                if name in inner and not isinstance(arg, ast.Starred):
                    dereferenced |= _pointer_roots(arg)
            for kw in node.keywords:
                if kw.arg in inner:
                    dereferenced |= _pointer_roots(kw.value)
    # names that flow into dereferenced expressions through assignments (ptrs = a_ptr + offs)
    changed = True
    assigns = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
    while changed:
        changed = False
        for node in assigns:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            tnames = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            # ``ptr += step`` / ``idx -= start``: the value is an offset, never the pointer
            if tnames & dereferenced and node.value is not None and not isinstance(node, ast.AugAssign):
                new = _pointer_roots(node.value) - dereferenced
                if new:
                    dereferenced |= new
                    changed = True
    return dereferenced


def _is_last_axis(node: ast.AST) -> bool:
    """``x[None, :]``, ``x[None, None, :]``: an index broadcast along the last axis of a tile."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple):
        return False
    elts = node.slice.elts
    return (len(elts) >= 2 and isinstance(elts[-1], ast.Slice) and elts[-1].lower is None
            and elts[-1].upper is None and all(isinstance(e, ast.Constant) and e.value is None for e in elts[:-1]))


def _is_other_axis(node: ast.AST) -> bool:
    """``x[:, None]`` and the like: an index along another axis than the last."""
    return (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) >= 2
            and not _is_last_axis(node) and any(isinstance(e, ast.Slice) for e in node.slice.elts))


def _last_axis_expr(node: ast.AST, names: set[str]) -> bool:
    if _is_last_axis(node) or (isinstance(node, ast.Name) and node.id in names):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        sides = (node.left, node.right)
        return any(_last_axis_expr(x, names) for x in sides) and not any(_is_other_axis(x) for x in sides)
    return False


def _arange_1d(node: ast.AST, ranges: set[str]) -> bool:
    """``tl.arange(0, B)``, ``start + tl.arange(0, B)`` or a name assigned one: a 1-D lane index."""
    if isinstance(node, ast.Name):
        return node.id in ranges
    if isinstance(node, ast.Call):
        return _attr_name(node.func).split(".")[-1] == "arange"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _arange_1d(node.left, ranges) or _arange_1d(node.right, ranges)
    return False


def _last_axis_scales(fn: ast.AST, candidates: set[str], one_d: set[str] | None = None) -> set[str]:
    """Parameters multiplying an index broadcast along a tile's last axis (directly or through a
    variable assigned one: ``offs = tl.arange(0, BLOCK)[None, :]``); those multiplying a 1-D lane
    index (``offs_k * stride``) are added to ``one_d`` when given."""
    ranges: set[str] = set()
    for _ in range(2):
        for n in ast.walk(fn):
            if (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
                    and _arange_1d(n.value, ranges)):
                ranges.add(n.targets[0].id)
    names: set[str] = set()
    assigns = [n for n in ast.walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name)]
    for _ in range(3):
        for n in assigns:
            if n.targets[0].id not in names and _last_axis_expr(n.value, names):
                names.add(n.targets[0].id)
    out: set[str] = set()
    vetoed: set[str] = set()
    # ``(start + offs) * stride`` expanded along another axis (``[:, None]``) is not a 1-D index
    expanded = {id(n.value) for n in ast.walk(fn) if isinstance(n, ast.Subscript) and _is_other_axis(n)}
    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and id(node) not in expanded:
            for a, b in ((node.left, node.right), (node.right, node.left)):
                if isinstance(a, ast.Name) and a.id in candidates and _last_axis_expr(b, names):
                    out.add(a.id)
                elif one_d is not None and isinstance(a, ast.Name) and a.id in candidates and _arange_1d(b, ranges):
                    one_d.add(a.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            # ``K + offs_n[None, :] * stride_kn + offs_d[:, None]``: another axis is added without a
            # stride, so that one is the contiguous axis and the last axis' stride is not 1
            terms = _addends(node)
            if any(_is_other_axis(t) for t in terms):
                for t in terms:
                    if isinstance(t, ast.BinOp) and isinstance(t.op, ast.Mult):
                        vetoed |= {x.id for x in (t.left, t.right) if isinstance(x, ast.Name) and x.id in candidates}
    return out - vetoed


def _addends(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _addends(node.left) + _addends(node.right)
    return [node]


_STRIDE_CALL = re.compile(r"^(?P<t>[\w.\[\]]+?)\.stride\(\s*(?P<d>-?\d+)\s*\)$")


def _unit_argument(launch: dict[str, str], param: str) -> str:
    """What a launch passes for a stride: ``one`` (a literal 1, or ``t.stride(-1)``), ``last`` (the
    highest ``t.stride(d)``, d >= 1, the call passes for ``t``: the last dimension unless the call
    leaves later ones out), ``other`` (another stride of a tensor, or another literal) or
    ``unknown``."""
    text = launch[param].strip()
    if text == "1":
        return "one"
    if re.fullmatch(r"-?\d+", text):
        return "other"
    m = _STRIDE_CALL.match(text)
    if not m:
        return "unknown"
    d = int(m.group("d"))
    if d == -1:
        return "one"  # the last dimension's stride: 1 for a contiguous tensor
    dims = [int(x.group("d")) for x in (_STRIDE_CALL.match(v.strip()) for v in launch.values())
            if x and x.group("t") == m.group("t")]
    if -1 in dims:  # the call passes the last stride as stride(-1): stride(d) is another one
        return "other"
    return "last" if d >= 1 and d == max(dims) else "other"


def _argument_text(arg: BoundArg) -> str:
    """A launch argument as the specializer reads it: the literal a host value resolves to
    (``BLOCK=BLOCK`` after ``BLOCK, N = 64, 128`` reads as ``64``), else the text as written."""
    value = arg.value.value if arg.value is not None and not arg.value.guessed else None
    if isinstance(value, bool) or isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value if _DTYPE_TEXT.match(value) else repr(value)
    return arg.text


def launch_arguments(facts: ModuleFacts, name: str) -> list[dict[str, str]]:
    """The launches of kernel ``name`` in the module's facts, each as param (or launch option) ->
    argument text, with host values resolved to literals."""
    out = []
    for launch in facts.launches_of(name):
        bound = {p: _argument_text(a) for p, a in launch.options.items()}
        bound.update({p: _argument_text(a) for p, a in launch.args.items()})
        out.append(bound)
    return out


# --------------------------------------------------------------------------------------------
# building specializations


_INT_POINTER_NAMES = re.compile(r"(lock|idx|index|indices|count|offsets|seqlen|_ids|^ids|token|expert|"
                                r"sorted|histogram|bins|label|target)", re.I)


_HALF = re.compile(r"\btorch\.(float16|half|bfloat16)\b")
_SINGLE = re.compile(r"\btorch\.(float32|float)\b|dtype\s*=\s*['\"]float32")


def module_float_type(source: str) -> str:
    """The float element type a module's tensors have, as far as its host code shows: ``*fp16``
    or ``*bf16`` when it names half-precision torch dtypes (``torch.float16``...) and never
    ``torch.float32``, else ``*fp32``. Kernel-side casts (``.to(tl.float16)``) do not count: they
    say what a value becomes, not what the tensor holds."""
    half = {m.group(1) for m in _HALF.finditer(source)}
    if not half or _SINGLE.search(source):
        return "*fp32"
    return "*bf16" if half == {"bfloat16"} else "*fp16"


def _pointer_type(name: str, int_hint: bool = False, float_type: str = "*fp32") -> str:
    low = name.lower()
    if int_hint or _INT_POINTER_NAMES.search(name):
        return "*i32"
    if "bf16" in low or "bfloat" in low:
        return "*bf16"
    if "fp16" in low or "half" in low or "f16" in low:
        return "*fp16"
    if "int8" in low or "i8" == low[-2:]:
        return "*i8"
    if "fp32" in low or "float32" in low or "f32" in low:
        return "*fp32"
    return float_type


def _is_pointer_name(name: str) -> bool:
    low = name.lower()
    return low.endswith("ptr") or low.endswith("ptrs") or low in ("ptr", "base") or low.endswith("_p")


_DTYPE_TEXT = re.compile(r"^(?:tl|triton\.language)\.(?:float|bfloat|int|uint)\w*$")


def _constexpr_literal(text: str) -> Any:
    """A constexpr argument's value: a literal, or a Triton dtype written ``tl.float16`` (kept as
    that text; the compile worker turns it into the dtype). Raises ValueError otherwise."""
    text = text.strip()
    if _DTYPE_TEXT.match(text):
        return text
    try:
        return ast.literal_eval(text)
    except SyntaxError as e:
        raise ValueError(str(e)) from None


def _dtype_uses(fn: ast.AST, names: set[str], funcs: dict[str, ast.FunctionDef] | None = None,
                depth: int = 0) -> set[str]:
    """Constexprs used as a dtype: ``dtype=NAME``, ``x.to(NAME)``, ``tl.zeros(shape, NAME)``, here
    or in a helper function of the module they are passed to."""
    out = set()
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg == "dtype" and isinstance(kw.value, ast.Name) and kw.value.id in names:
                out.add(kw.value.id)
        if funcs and depth < 3 and isinstance(node.func, ast.Name) and node.func.id in funcs \
                and node.func.id != getattr(fn, "name", None):
            callee = funcs[node.func.id]
            params = [a.arg for a in callee.args.posonlyargs + callee.args.args]
            passed = {p: a.id for p, a in zip(params, node.args) if isinstance(a, ast.Name) and a.id in names}
            passed.update({k.arg: k.value.id for k in node.keywords
                           if k.arg and isinstance(k.value, ast.Name) and k.value.id in names})
            if passed:
                inner = _dtype_uses(callee, set(passed), funcs, depth + 1)
                out |= {passed[p] for p in inner}
        attr = _attr_name(node.func).split(".")[-1]
        if attr in ("to", "zeros", "full", "cast") and node.args:
            cand = node.args[0] if attr in ("to", "cast") else node.args[-1]
            if isinstance(cand, ast.Name) and cand.id in names and (attr != "cast" or len(node.args) > 1):
                out.add(cand.id)
    return out


def _constexpr_fallback(name: str, default: str | None, dtype_use: bool = False) -> Any:
    if default is not None:
        try:
            return _constexpr_literal(default)
        except ValueError:
            pass
    if dtype_use or re.search(r"(^|_)DTYPE$", name, re.I):
        return "tl.float32"  # ACC_TYPE used as ``dtype=ACC_TYPE``, OUT_DTYPE, dtype
    if _FLAG_NAMES.match(name):
        return False
    up = name.upper()
    if up.startswith("GROUP"):
        return 8
    if "STAGES" in up or up.startswith("NUM_"):
        return 2
    return 64


def fallback(ks: KernelSource) -> Specialization:
    signature: dict[str, str] = {}
    constexprs: dict[str, Any] = {}
    divisible = []
    unit = ks.unit_strides()
    for p in ks.params:
        ann = ks.annotations.get(p, "")
        if p in ks.constexpr:
            signature[p] = "constexpr"
            constexprs[p] = _constexpr_fallback(p, ks.defaults.get(p), p in ks.dtype_constexprs)
        elif p in unit:
            signature[p] = "constexpr"  # what Triton's launcher makes of an integer argument equal to 1
            constexprs[p] = 1
        elif p in ks.dereferenced or _is_pointer_name(p) or "pointer" in ann:
            signature[p] = _pointer_type(p, p in ks.int_pointers, ks.float_type)
            divisible.append(p)
        elif _FLOAT_NAMES.match(p) or ann in ("float", "tl.float32"):
            signature[p] = "fp32"
        else:
            signature[p] = "i64" if ann in ("tl.int64",) else "i32"
            divisible.append(p)
    return Specialization(signature, constexprs, DEFAULT_NUM_WARPS, DEFAULT_NUM_STAGES,
                          tuple(divisible), label="fallback", origin="fallback")


def _override(base: Specialization, values: dict[str, Any], num_warps: int | None,
              num_stages: int | None, label: str, origin: str, declared: set[str] = frozenset(),
              guessed: tuple[str, ...] = ()) -> Specialization:
    signature = dict(base.signature)
    constexprs = dict(base.constexprs)
    divisible = set(base.divisible)
    for k, v in values.items():
        if k not in signature:
            continue
        if signature[k] == "constexpr" and k not in declared and isinstance(v, str):
            constexprs.pop(k, None)  # a stride guessed to be 1, given a type: no longer a constant
            signature[k] = "i32"
        if signature[k] == "constexpr":
            constexprs[k] = v
        elif isinstance(v, str):
            typ, _, div = v.partition(":")
            signature[k] = typ
            if div == "16" or (typ.startswith("*") and div != "1"):
                divisible.add(k)
            else:
                divisible.discard(k)
    return Specialization(signature, constexprs, num_warps or base.num_warps,
                          num_stages or base.num_stages, tuple(p for p in signature if p in divisible),
                          label=label, origin=origin, guessed=guessed)


def _describe(values: dict[str, Any], num_warps: int, num_stages: int) -> str:
    parts = [f"{k}={v}" for k, v in values.items()]
    return " ".join(parts + [f"warps={num_warps}", f"stages={num_stages}"])


def parse_specialize_comment(body: str) -> tuple[dict[str, Any], int | None, int | None]:
    """``NAME=VALUE, ...`` -> (values, num_warps, num_stages); raises ValueError when malformed."""
    call = ast.parse(f"f({body})", mode="eval").body
    assert isinstance(call, ast.Call)
    values: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise ValueError("specialize() takes NAME=VALUE pairs")
        values[kw.arg] = ast.literal_eval(kw.value)
    nw = values.pop("num_warps", None)
    ns = values.pop("num_stages", None)
    return values, nw, ns


def parse_config(text: str) -> tuple[dict[str, Any], int | None, int | None]:
    """``triton.Config({...}, num_warps=.., num_stages=..)`` source -> its values and options."""
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call):
        raise ValueError("not a call")
    values: dict[str, Any] = {}
    kwargs = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "kwargs"), None)
    if isinstance(kwargs, ast.Dict):
        for k, v in zip(kwargs.keys, kwargs.values):
            if isinstance(k, ast.Constant):
                values[str(k.value)] = _constexpr_literal(ast.unparse(v))
    opts = {k.arg: k.value for k in node.keywords if k.arg in ("num_warps", "num_stages")}
    nw = ast.literal_eval(opts["num_warps"]) if "num_warps" in opts else None
    ns = ast.literal_eval(opts["num_stages"]) if "num_stages" in opts else None
    return values, nw, ns


def comment_specializations(source_lines: list[str], ks: KernelSource) -> list[tuple[int, str]]:
    """(line, body) of ``specialize`` comments on the kernel's header or directly above it."""
    out = []
    start = ks.first_line - 1  # 0-based index of first decorator
    i = start - 1
    while i >= 0 and source_lines[i].strip().startswith("#"):  # comment block just above
        i -= 1
    for idx in range(i + 1, ks.def_line):
        m = SPECIALIZE_COMMENT.search(source_lines[idx]) if idx < len(source_lines) else None
        if m:
            out.append((idx + 1, m.group("body")))
    return out


def specializations_for(kernel: Kernel | str, source: str, max_configs: int = DEFAULT_MAX_CONFIGS,
                        tree: ast.AST | None = None, facts: ModuleFacts | None = None,
                        configured: dict[str, Any] | None = None) -> tuple[list[Specialization], list[str]]:
    """The specializations to compile for ``kernel`` (a Kernel or a kernel name) in ``source``.

    ``facts``: the module's facts when the caller has them (else they are built from ``source``).
    ``configured``: ``NAME = value`` pairs from ``[tool.kernlint.specialize]``, compiled as a
    ``specialize`` comment would be.
    Returns (specializations, problems): problems are malformed comments/configs, reported by the
    caller as notes; they never stop the fallback from being compiled. A specialization lists in
    ``guessed`` the constexprs no comment, config, launch or default gave a value.
    """
    name = kernel if isinstance(kernel, str) else kernel.name
    ks = read_kernel_source(source, name, tree, facts)
    if ks is None:
        return [], [f"kernel {name} not found"]
    if not isinstance(kernel, str) and kernel.autotune_configs and not ks.autotune_configs:
        ks.autotune_configs = list(kernel.autotune_configs)
    base = fallback(ks)
    problems: list[str] = []
    specs: list[Specialization] = []
    for line, body in comment_specializations(source.splitlines(), ks):
        try:
            values, nw, ns = parse_specialize_comment(body)
        except (ValueError, SyntaxError) as e:
            problems.append(f"line {line}: malformed specialize comment: {e}")
            continue
        unknown = sorted(set(values) - set(ks.params))
        if unknown:
            problems.append(f"line {line}: specialize names unknown parameters {unknown}")
        specs.append(_override(base, values, nw, ns,
                               f"comment@{line} " + _describe(values, nw or base.num_warps, ns or base.num_stages),
                               "comment", declared=ks.constexpr, guessed=_guessed(ks, values)))
    if configured:
        values = dict(configured)
        nw, ns = values.pop("num_warps", None), values.pop("num_stages", None)
        unknown = sorted(set(values) - set(ks.params))
        if unknown:
            problems.append(f"[tool.kernlint.specialize] {name} names unknown parameters {unknown}")
        specs.append(_override(base, values, nw, ns,
                               "config " + _describe(values, nw or base.num_warps, ns or base.num_stages),
                               "comment", declared=ks.constexpr, guessed=_guessed(ks, values)))
    if specs:
        return specs, problems
    launch_values = [_launch_constexprs(ks, launch) for launch in ks.launches]
    # what every launch passes alike fills the constexprs an autotune config leaves out
    common = {k: v for k, v in launch_values[0].items() if all(lv.get(k) == v for lv in launch_values)
              } if launch_values else {}
    for i, text in enumerate(ks.autotune_configs[:max_configs]):
        try:
            values, nw, ns = parse_config(text)
        except (ValueError, SyntaxError) as e:
            problems.append(f"autotune config {i}: cannot read {text!r}: {e}")
            continue
        values = {**{k: v for k, v in common.items() if k not in values}, **values}
        specs.append(_override(base, values, nw, ns,
                               f"autotune[{i}] " + _describe(values, nw or base.num_warps, ns or base.num_stages),
                               "autotune", declared=ks.constexpr, guessed=_guessed(ks, values)))
    if specs:
        return specs, problems
    seen = set()
    for launch, values in zip(ks.launches, launch_values):
        nw = _literal_int(launch.get("num_warps"))
        ns = _literal_int(launch.get("num_stages"))
        spec = _override(base, values, nw, ns, "launch " + _describe(values, nw or base.num_warps,
                                                                         ns or base.num_stages), "launch",
                         declared=ks.constexpr, guessed=_guessed(ks, values))
        if values and spec.key() not in seen:
            seen.add(spec.key())
            specs.append(spec)
        if len(specs) >= max_configs:
            break
    return (specs or [replace(base, guessed=_guessed(ks, {}))]), problems


def _launch_constexprs(ks: KernelSource, launch: dict[str, str]) -> dict[str, Any]:
    values = {}
    for p in ks.constexpr:
        if p in launch:
            try:
                values[p] = _constexpr_literal(launch[p])
            except ValueError:
                pass
    return values


def _guessed(ks: KernelSource, values: dict[str, Any]) -> tuple[str, ...]:
    """Constexprs a specialization compiles with a value kernlint chose (no literal default)."""
    out = []
    for p in ks.params:
        if p not in ks.constexpr or p in values:
            continue
        try:
            _constexpr_literal(ks.defaults[p])
        except (KeyError, ValueError):
            out.append(p)
    return tuple(out)


def _literal_int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return v if isinstance(v, int) else None
