"""What stops a ``@triton.jit`` function from compiling on every supported Triton, read from its source
once: a ``triton.language`` name no release has (``tl.eye``), a call its function rejects (a missing
``order`` of ``tl.make_block_ptr``, a keyword it does not take), a method no Triton tensor has
(``x.transpose(1, 0)`` of a loaded block), a block shape read from a parameter that is not
``tl.constexpr``. A kernel that cannot compile runs nothing: nothing else is judged of it."""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import libcst as cst

from kernlint.model import Frontend
from kernlint.source import names as N
from kernlint.source.triton_api import api

_TL = "triton.language."
#: ``triton.language`` functions whose result is a block (its methods are a tensor's)
BLOCK_RESULTS = frozenset({
    "load", "zeros", "zeros_like", "full", "arange", "dot", "where", "sum", "max", "min", "exp", "exp2", "log",
    "log2", "sqrt", "rsqrt", "abs", "maximum", "minimum", "trans", "permute", "reshape", "view", "broadcast_to",
    "expand_dims", "cumsum", "cumprod", "sigmoid", "softmax", "cast", "clamp", "fma", "sin", "cos", "erf",
    "floor", "ceil", "argmax", "argmin", "join", "interleave", "flip", "sort",
})
#: ``triton.language`` functions whose result is a tensor (a block, or an atomic's old value)
TENSOR_RESULTS = BLOCK_RESULTS | {"atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
                                  "atomic_xchg", "atomic_cas", "program_id", "num_programs"}
#: methods of a block that return a block
BLOCK_METHODS = frozenset({"to", "trans", "reshape", "view", "broadcast_to", "expand_dims", "permute", "cast",
                           "sum", "max", "min", "exp", "abs"})
#: ``triton.language`` reductions and scans: each reads its argument's dtype and shape
REDUCTIONS = frozenset({"sum", "max", "min", "argmax", "argmin", "xor_sum", "cumsum", "cumprod", "reduce",
                        "associative_scan"})
#: (function, the position and keyword of its shape argument) for the blocks whose shape is compile-time
SHAPED = {"zeros": (0, "shape"), "full": (0, "shape"), "reshape": (1, "shape"), "broadcast_to": (1, "shape"),
          "view": (1, "shape"), "make_block_ptr": (4, "block_shape")}


@dataclass(frozen=True)
class Blocker:
    """Where a function cannot compile, and why."""

    node: cst.CSTNode
    message: str


def blockers(info, fn: cst.FunctionDef) -> list[Blocker]:
    """The places of ``fn`` (a ``@triton.jit`` function of ``info``'s module) that no supported
    Triton compiles (found once per function)."""
    return _scanned(info, fn)[1]


def _scanned(info, fn: cst.FunctionDef) -> tuple:
    """(fn, its blockers, the names it calls), from one walk of ``fn`` (once per function)."""
    memo = info.__dict__.setdefault("_compile_blockers", {})
    if id(fn) not in memo:
        nodes = N.body_nodes(fn)
        called = {n.func.value for n in nodes if type(n) is cst.Call and type(n.func) is cst.Name}
        memo[id(fn)] = (fn, _blockers(info, fn, nodes), called)
    return memo[id(fn)]


def cannot_compile(info, fn: cst.FunctionDef) -> bool:
    """Whether ``fn`` or a ``@triton.jit`` function of the module it calls (and so on) cannot compile."""
    return any(blockers(info, f) for f in _reached(info, [fn]))


def compiled(info, fn: cst.FunctionDef) -> bool:
    """Whether Triton compiles ``fn`` when the module runs: a kernel it launches, a ``@triton.jit``
    function such a kernel calls (and so on), or any of its functions where it launches none (a
    module of kernels another launches). Triton compiles only what a launch reaches: a helper no
    kernel calls never fails. (A kernel launched only after a launch that fails is asked too: each
    line Triton rejects is one to fix, as a compiler that went on past the first error would list.)"""
    if "_compiled" not in info.__dict__:
        launched = [k.node for k, launches in _host_launches(info) if launches]
        # (None: the module launches nothing, so any of its functions may be what another launches)
        info.__dict__["_compiled"] = {id(f) for f in _reached(info, launched)} if launched else None
    reached = info.__dict__["_compiled"]
    return reached is None or id(fn) in reached


def unreached(info, fn: cst.FunctionDef) -> bool:
    """Whether every launch of the kernel ``fn`` in the module comes after the host code launched,
    on every path to it, a kernel that cannot compile (which raises first: ``fwd_h[grid](...)`` then
    ``fwd_o[grid](...)``, where ``fwd_h`` cannot compile, never runs ``fwd_o``)."""
    if "_unreached" not in info.__dict__:
        launched = [(k, launches) for k, launches in _host_launches(info) if launches]
        failing = {k.kernel.name for k, _ in launched if cannot_compile(info, k.node)}
        info.__dict__["_unreached"] = {id(k.node) for k, launches in launched if failing and all(
            _after_failing(info, la, k.kernel.name, failing) for la in launches)}
    return id(fn) in info.__dict__["_unreached"]


def _after_failing(info, launch, name: str, failing: set[str]) -> bool:
    host = info.facts.launch_at(launch.start, name)
    return host is not None and host.scope is not None and bool(failing & set(host.scope.launched_before))


def _host_launches(info) -> list[tuple]:
    """(each Triton kernel of the module, its launches from host code): a "launch" inside a kernel is
    a compile error, not a launch."""
    triton = [k for k in info.kernels if k.kernel.frontend is Frontend.TRITON]
    spans = [(k.kernel.span.line, k.kernel.span.end_line) for k in triton]

    def from_host(launch) -> bool:
        line = info.source.count("\n", 0, launch.start) + 1
        return not any(first <= line <= last for first, last in spans)

    return [(k, [la for la in info.launches_of(k.kernel.name) if from_host(la)]) for k in triton]


def _reached(info, roots: list) -> list[cst.FunctionDef]:
    """``roots`` and the ``@triton.jit`` functions of the module they call, and so on."""
    kernels = {k.kernel.name: k.node for k in info.kernels if k.kernel.frontend is Frontend.TRITON}
    out, todo, seen = [], list(roots), set()
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        out.append(f)
        todo.extend(kernels[n] for n in _scanned(info, f)[2] if n in kernels)
    return out


def _versions() -> str:
    versions = api().versions
    return f"Triton {versions[0]} to {versions[-1]}" if len(versions) > 1 else f"Triton {versions[0]}"


def _blockers(info, fn: cst.FunctionDef, nodes: list) -> list[Blocker]:
    table = api()
    resolve = info.imports.resolve
    bindings = _bindings(fn, nodes)
    # (a helper's parameters are what its callers pass, constexprs included: not asked)
    own = [] if fn.name.value in info.inlined_kernels else [
        p for k in info.kernels if k.node is fn for p in k.kernel.params if p.name not in bindings]
    runtime = {p.name for p in own if not p.constexpr}
    numbers = {p.name for p in own if p.constexpr}
    # subscripts written to (``x[i] = v``, ``x[i] += v``): item assignment, which Triton has none of
    targets = {id(t.target) for n in nodes if type(n) is cst.Assign for t in n.targets}
    targets |= {id(n.target) for n in nodes if type(n) is cst.AugAssign}
    out = []
    star = fn.params.star_kwarg
    if star is not None:
        name = star.name.value
        out.append(Blocker(star, f"`**{name}`: a `@triton.jit` function takes no `**` parameter ({_versions()}): "
                                 f"Triton 3.9 rejects it where the function is defined (`JIT functions do not "
                                 f"support **{name} parameters`), earlier releases bind it as one required "
                                 f"parameter `{name}`, which a launch's keywords do not fill; take each value as a "
                                 "`tl.constexpr` parameter"))
    out += _undefined(info, fn, nodes, bindings)
    for node in nodes:
        kind = type(node)
        if kind is cst.Attribute:
            name = resolve(node)
            if name and name.startswith(_TL) and name.count(".") == 2 and name[len(_TL):] not in table.names:
                out.append(Blocker(node, f"`{N.source_text(info.module, node).strip()}` is not part of "
                                         f"`triton.language` ({_versions()}): Triton rejects the kernel when it "
                                         "compiles it"))
        elif kind is cst.Call:
            out += _call_blockers(info, node, resolve, bindings, runtime, numbers)
        elif kind is cst.WithItem and type(node.item) is cst.Call:
            name = resolve(node.item.func) or ""
            if name.startswith(_TL) and name[len(_TL):] in TENSOR_RESULTS:
                out.append(Blocker(node, f"`with {_shortened(info, node.item)}`: `tl.{name[len(_TL):]}` returns a tensor, not a context "
                                         f"manager (Triton rejects the kernel when it compiles it: `'tensor' object has "
                                         f"no attribute '__enter__'`; Triton 3.0 takes no `with` at all)"))
        elif kind is cst.Subscript and not _shape_index(node) and _is_block(node.value, bindings, resolve):
            text = " ".join(N.source_text(info.module, node).split())
            if id(node) in targets:
                out.append(Blocker(node, f"`{text} = ...` assigns into a block: a Triton block has no item "
                                         "assignment (Triton rejects the kernel when it compiles it: `__setitem__ "
                                         "is not supported in triton`); build the block with `tl.where` on a mask "
                                         "of the lanes to change"))
            else:
                out.append(Blocker(node, f"`{text}` selects from a block by position: a Triton block takes only "
                                         "`None` and `:` as indices (Triton rejects the kernel when it compiles "
                                         "it: `unsupported tensor index`); select with a mask and "
                                         "`tl.where`/`tl.sum`, or load the element through its own pointer"))
    return out


def _undefined(info, fn: cst.FunctionDef, nodes: list, bindings: dict) -> list[Blocker]:
    """The names ``fn`` reads that nothing binds: no parameter or assignment of its own, no name of
    the module, no builtin. Triton looks a name up in the function, then the module's globals, then
    the builtins, and rejects the function when all three miss (``NameError``)."""
    known, top = _module_names(info)
    if known is None or id(fn) not in top:
        return []  # a star import binds names the module does not show; a nested function sees its encloser's
    spared = set()  # names in positions that read no variable: ``x.attr``, ``f(key=...)``, parameters
    local = set(bindings) | {p.name.value for p in _parameters(fn.params)}
    for node in nodes:
        kind = type(node)
        if kind is cst.Attribute:
            spared.add(id(node.attr))
        elif kind is cst.Arg and node.keyword is not None:
            spared.add(id(node.keyword))
        elif kind is cst.Param:
            spared.add(id(node.name))
            local.add(node.name.value)
        elif kind in (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal):
            return []  # (not in a kernel Triton compiles; what it binds is not followed here)
    missing = {node.value for node in nodes if type(node) is cst.Name and id(node) not in spared
               and node.value not in local and node.value not in known and node.value not in _BUILTINS}
    if not missing:
        return []
    out = []
    for node in _in_order(fn.body):
        if type(node) is cst.Name and node.value in missing and id(node) not in spared:
            missing.discard(node.value)
            out.append(Blocker(node, f"`{node.value}` is not defined: no parameter, assignment or import "
                                     f"binds it in `{fn.name.value}` or its module, so Triton rejects the "
                                     f"function when it compiles it (`NameError`)"))
    return out


def _parameters(params: cst.Parameters) -> list[cst.Param]:
    return [*N.parameters(params), *(p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param))]


def _shortened(info, node: cst.CSTNode) -> str:
    """``node``'s code on one line, at most 60 characters."""
    text = " ".join(N.source_text(info.module, node).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _module_names(info) -> tuple[set[str] | None, set[int]]:
    """(the names the module binds, or None where it cannot tell; the ids of its top-level functions)."""
    if "_global_names" not in info.__dict__:
        top = {id(node) for _, node in N.bindings(info.module.body) if type(node) is cst.FunctionDef}
        info.__dict__["_global_names"] = (N.global_names(info.module, declared="global" in info.source), top)
    return info.__dict__["_global_names"]


def _in_order(root: cst.CSTNode):
    """The nodes under ``root`` in the order their fields are written (a nested function's too)."""
    todo = [root]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(reversed(N.child_nodes(node)))


#: what Python's builtins module holds: Triton's last place to look a name up
_BUILTINS = frozenset(dir(builtins))


def _shape_index(node: cst.Subscript) -> bool:
    """Whether each index of ``node`` is ``None``, ``:`` or ``...``: a reshape, not a selection."""
    for el in node.slice:
        s = el.slice
        if isinstance(s, cst.Slice):
            if s.lower is not None or s.upper is not None or s.step is not None:
                return False
        elif not (isinstance(s, cst.Index) and (
                isinstance(s.value, cst.Ellipsis) or isinstance(s.value, cst.Name) and s.value.value == "None")):
            return False
    return True


def _call_blockers(info, call: cst.Call, resolve, bindings: dict, runtime: set[str], numbers: set[str]
                   ) -> list[Blocker]:
    table = api()
    text = " ".join(N.source_text(info.module, call.func).split())
    func = resolve(call.func)
    out = []
    if type(call.func) is cst.Subscript and type(call.func.value) is cst.Name and any(
            k.kernel.name == call.func.value.value for k in info.kernels):
        out.append(Blocker(call, f"`{text}(...)` launches a kernel from inside a `@triton.jit` function: a "
                                 "kernel cannot launch another (Triton rejects it when it compiles it); call the "
                                 "helper directly, or launch both from the host"))
    if type(call.func) is cst.Name and call.func.value in ("float", "int") or func in ("math.sqrt", "math.log",
                                                                                        "math.exp", "math.log2"):
        arg = call.args[0].value if len(call.args) == 1 and call.args[0].keyword is None else None
        if type(arg) is cst.Name and arg.value in runtime:
            out.append(Blocker(call, f"`{text}({arg.value})` converts `{arg.value}`, a parameter that is not "
                                     "`tl.constexpr`: inside a kernel it is a tensor, which Python's conversions "
                                     "reject (Triton rejects the kernel when it compiles it, unless the value is 1, "
                                     "which it specializes as a constant); use `.to(tl.float32)` or `tl.sqrt`"))
    if func and func.startswith(_TL) and func.count(".") == 2:
        short = func[len(_TL):]
        axis = _literal_axis(call) if short in ("program_id", "num_programs") else None
        if axis is not None and axis not in (0, 1, 2):
            out.append(Blocker(call, f"`{text}({axis})`: a launch grid has axes 0, 1 and 2 only (Triton rejects "
                                     "the kernel when it compiles it: `program_id axis must be 0, 1, or 2`)"))
        sig = table.signatures.get(short)
        if sig is not None and not sig.open and not any(a.star for a in call.args):
            problem = _unbound(sig, call)
            if problem:
                out.append(Blocker(call, f"`{text}(...)` {problem} ({_versions()}): Triton rejects the kernel "
                                         "when it compiles it"))
        out += _runtime_shape(info, call, short, runtime)
        out += _reduced_number(info, call, short, numbers)
    elif isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name):
        receiver, method = call.func.value.value, call.func.attr.value
        if method not in table.tensor_methods and _is_block(call.func.value, bindings, resolve):
            out.append(Blocker(call, f"`{text}(...)`: `{receiver}` is a block, and no Triton tensor has a method "
                                     f"`{method}` ({_versions()}): Triton rejects the kernel when it compiles it"))
        if method in ("reshape", "view", "broadcast_to") and _is_block(call.func.value, bindings, resolve):
            out += _runtime_shape(info, call, method, runtime, method=True)
    return out


def _reduced_number(info, call: cst.Call, short: str, numbers: set[str]) -> list[Blocker]:
    """A reduction or scan over a number (``tl.min(BLOCK_K, K - k)``, a literal or a ``tl.constexpr``
    parameter) rather than a block: the function reads the argument's dtype, which a Python number
    has none of."""
    if short not in REDUCTIONS:
        return []
    first = call.args[0] if call.args and call.args[0].keyword is None and not call.args[0].star else next(
        (a for a in call.args if a.keyword is not None and a.keyword.value == "input"), None)
    if first is None:
        return []
    value = first.value
    if not (type(value) in (cst.Integer, cst.Float) or type(value) is cst.Name and value.value in numbers):
        return []
    shown = N.source_text(info.module, value).strip()
    return [Blocker(call, f"`{_shortened(info, call)}` reduces `{shown}`, a number, not a block: `tl.{short}` reads its "
                          "argument's dtype and shape, which a Python number has none of, so Triton rejects the "
                          f"kernel when it compiles it ({_versions()}); for the smaller or larger of two values use "
                          "`tl.minimum`/`tl.maximum`")]


def _literal_axis(call: cst.Call) -> int | None:
    arg = call.args[0].value if call.args and call.args[0].keyword is None else next(
        (a.value for a in call.args if a.keyword is not None and a.keyword.value == "axis"), None)
    return N.int_literal(arg) if arg is not None else None


def _unbound(sig, call: cst.Call) -> str | None:
    positional = [a for a in call.args if a.keyword is None]
    keywords = [a.keyword.value for a in call.args if a.keyword is not None]
    if len(positional) > sig.positional:
        return f"passes {len(positional)} arguments by position; it takes at most {sig.positional}"
    unknown = [k for k in keywords if k not in sig.params]
    if unknown:
        return f"passes `{unknown[0]}`, which it does not take"
    given = set(sig.params[:len(positional)]) | set(keywords)
    missing = [p for p in sig.params if p in sig.required and p not in given]
    if missing:
        return f"gives no `{missing[0]}`, which it requires"
    return None


def _runtime_shape(info, call: cst.Call, short: str, runtime: set[str], method: bool = False) -> list[Blocker]:
    where = SHAPED.get(short)
    if where is None or not runtime:
        return []
    position, keyword = where
    if method:
        position -= 1
    positional = [a.value for a in call.args if a.keyword is None]
    shape = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword), None)
    if shape is None and method and short != "broadcast_to" and len(positional) > 1:
        shape = cst.Tuple([cst.Element(v) for v in positional])  # ``x.reshape(M, N)``
    elif shape is None and len(positional) > position:
        shape = positional[position]
    if shape is None:
        return []
    dims = [el.value for el in shape.elements] if isinstance(shape, (cst.Tuple, cst.List)) else [shape]
    read = sorted({d.value for d in dims if isinstance(d, cst.Name) and d.value in runtime})
    if not read:
        return []
    text = _shortened(info, call)
    shown = ", ".join(f"`{n}`" for n in read)
    what = "a parameter that is not" if len(read) == 1 else "parameters that are not"
    return [Blocker(call, f"`{text}` takes its block shape from {shown}, {what} `tl.constexpr`: "
                          "block shapes are compile-time constants, so Triton rejects the kernel when it compiles "
                          "it (unless the value is 1, which it specializes as a constant)")]


def _bindings(fn: cst.FunctionDef, nodes: list) -> dict[str, list]:
    """Each name the body binds: the values of its plain assignments (None for a binding of another
    kind: a loop target, an unpacking, a walrus)."""
    out: dict[str, list] = {}
    for node in nodes:
        kind = type(node)
        if kind is cst.Assign:
            for t in node.targets:
                if type(t.target) is cst.Name:
                    out.setdefault(t.target.value, []).append(node.value)
                else:
                    for name in N.target_names(t.target):
                        out.setdefault(name, []).append(None)
        elif kind is cst.AnnAssign and type(node.target) is cst.Name:
            out.setdefault(node.target.value, []).append(node.value)
        elif kind is cst.For or kind is cst.CompFor:
            for name in N.target_names(node.target):
                out.setdefault(name, []).append(None)
        elif kind is cst.NamedExpr and type(node.target) is cst.Name:
            out.setdefault(node.target.value, []).append(None)
        elif kind is cst.AugAssign and type(node.target) is cst.Name:
            out.setdefault(node.target.value, [])
        elif kind is cst.WithItem and node.asname is not None:
            for name in N.target_names(node.asname.name):
                out.setdefault(name, []).append(None)
    return out


def _is_block(node: cst.BaseExpression, bindings: dict, resolve, seen: frozenset = frozenset(),
              depth: int = 0) -> bool:
    """Whether ``node`` is a block, as far as the function's source shows: what a ``triton.language``
    function returns, arithmetic or a comparison with one, a reshape of one (``x[:, None]``), a name
    every plain assignment binds to one (and that nothing else binds)."""
    if depth > 32:
        return False
    d = depth + 1
    if isinstance(node, cst.Call):
        name = resolve(node.func) or ""
        if any(a.keyword is not None and a.keyword.value == "return_indices" for a in node.args):
            return False  # (``tl.max(x, 0, return_indices=True)``: a tuple)
        if name.startswith(_TL) and name[len(_TL):] in BLOCK_RESULTS:
            return True
        return (isinstance(node.func, cst.Attribute) and node.func.attr.value in BLOCK_METHODS
                and _is_block(node.func.value, bindings, resolve, seen, d))
    if isinstance(node, cst.BinaryOperation):
        return any(_is_block(n, bindings, resolve, seen, d) for n in (node.left, node.right))
    if isinstance(node, cst.UnaryOperation):
        return _is_block(node.expression, bindings, resolve, seen, d)
    if isinstance(node, cst.Comparison):  # ``offs[:, None] < M``: a block of booleans
        return any(_is_block(n, bindings, resolve, seen, d) for n in (node.left, *(c.comparator for c in node.comparisons)))
    if isinstance(node, cst.Subscript):
        return _shape_index(node) and _is_block(node.value, bindings, resolve, seen, d)
    if isinstance(node, cst.Name) and node.value not in seen:
        values = bindings.get(node.value)
        return bool(values) and all(v is not None and _is_block(v, bindings, resolve, seen | {node.value}, d)
                                    for v in values)
    return False
