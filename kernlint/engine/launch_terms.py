"""What one launch tells the engine: parameter values, tensor extents and the grid, as z3 terms.

This is the engine's narrow interface to launch facts (:class:`LaunchFacts`). ``launch_facts``
reads each launch from the module's :class:`~kernlint.model.ModuleFacts` (the bound argument of
every parameter, resolved values, the tensor behind each pointer, and the host evaluator's state at
the launch: what each name was bound to, the asserts and branch tests on the way) and turns the
wrapper's expressions into terms over symbolic sizes (``x.shape[0]``), so that relations survive
(``stride = N``, ``grid = cdiv(M, BLOCK)``, the wrapper's asserts and enclosing ``if``s). A
tensor's extent is only given when its shape is known (unpacked ``M, N = x.shape``, created with
``torch.empty((M, N))``/``empty_like``, or shown by the facts) or its ``numel()`` is passed: never
invented. Tensors are modelled contiguous (an input the wrapper accepts).
"""

from __future__ import annotations

import re
from functools import partial
from dataclasses import dataclass, field, replace

import libcst as cst
import z3

from kernlint.engine.symbols import at_least, at_most, int_val, int_var, power_of_two, rounding_up, string_code
from kernlint.engine.terms import conjuncts, disjunction, free_vars, int_op
from kernlint.facts import (
    ALLOCATORS, FROM_DATA, LIKE_ALLOCATORS, OPTIONAL, data_shape, element, front_axis, returned_expression, shape_listed,
    VALUE_BOUNDS, is_number, shape_slice, shape_tensor, substituted, size_arguments, test_parts, unpacked_part,
)
from kernlint.source.configs import config_values, int_values, tuned_names
from kernlint.source import names as N
from kernlint.source.names import call_arguments, int_literal, source_text, written_out

MAX_SIZE = 2 ** 31




@dataclass
class LaunchFacts:
    label: str
    #: kernel parameter -> value at this launch
    values: dict[str, z3.ExprRef] = field(default_factory=dict)
    #: pointer parameter -> (extent in elements, how the wrapper sizes it)
    extents: dict[str, tuple] = field(default_factory=dict)
    #: grid axis -> number of programs (axes left out are unknown)
    grid: dict[int, z3.ExprRef] = field(default_factory=dict)
    assumptions: list = field(default_factory=list)
    #: z3 variable name -> wrapper text it stands for (``x.shape[0]``)
    names: dict[str, str] = field(default_factory=dict)
    #: constexpr -> the wrapper parameter it is passed as it is (left out of ``values``: what the
    #: caller may pass is a contract the engine cannot see, except where the grid is made of it too)
    chosen: dict[str, z3.ExprRef] = field(default_factory=dict)
    #: chosen constexpr -> (the wrapper's default for the parameter it is passed as, the default as
    #: written): a mode or flag (``mode="gather"``) a call that leaves it out compiles
    defaults: dict[str, tuple] = field(default_factory=dict)
    #: the defaults these facts were taken at (:meth:`at_defaults`), as written
    at_default: str = ""
    #: grid axis -> the element as written (axes the grid leaves out are 1, and absent here)
    grid_nodes: dict[int, cst.BaseExpression] = field(default_factory=dict)
    #: grid axis -> the kernel's parameter the launch passes the same host name as the axis
    #: (``(tiles, split_k)`` beside ``SPLIT_K=split_k``), whether or not its value can be read
    grid_params: dict[int, str] = field(default_factory=dict)
    #: the launch (:class:`~kernlint.source.discover.Launch`) these facts are of
    launch: object = None
    #: pointer parameter -> the test under which its extent is the one known (the tensor the wrapper
    #: makes, ``torch.full((H,), ...)``, where the caller passes none, ``scale is None``): the
    #: extent says nothing of a tensor the caller passes instead
    extent_guards: dict[str, z3.BoolRef] = field(default_factory=dict)
    #: pointer parameter -> the wrapper's name of the tensor passed whole (``ids``, ``ids.contiguous()``)
    tensors: dict[str, str] = field(default_factory=dict)
    #: scalar parameter -> (tensor, axis) of the stride the launch passes it (``x.stride(0)``)
    stride_args: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: tensor (of ``tensors`` and ``stride_args``) -> its strides as the wrapper lays it out (where its
    #: sizes are known), and the names of the tensors it shares its storage or layout with
    layouts: dict[str, tuple] = field(default_factory=dict)
    kin: dict[str, frozenset[str]] = field(default_factory=dict)
    #: those of them laid out contiguously whatever the caller passes (made by the wrapper, made
    #: ``.contiguous()``, or asserted ``x.is_contiguous()``)
    contiguous: set[str] = field(default_factory=set)

    def with_grid_choices(self, axes=None) -> dict[str, z3.ExprRef]:
        """``values``, and each constexpr the caller chooses where the grid (on ``axes``) is made of
        that choice too (``DK // BK`` programs): there the choice is the launch's. ``axes`` None: the
        grid's every axis, the launch's other values (``iters = cdiv(K, BLK_K)`` passed beside
        ``BLOCK_K=BLK_K``) and what the wrapper states of the choice (``assert rot_dim <= head_dim``,
        ``BLOCK_R = next_power_of_2(rot_dim // 2)``): a wrapper that computes with the choice, or
        checks it, is written for any choice that passes its checks."""
        known: set = set()
        for a, g in self.grid.items():
            if axes is None or a in axes:
                known |= set(free_vars(g))
        if axes is None:
            for v in self.values.values():
                known |= set(free_vars(v))
            caps = {c.get_id() for v in self.chosen.values() for c in size_caps(v)}
            for a in self.assumptions:
                if a.get_id() not in caps:
                    known |= set(free_vars(a))
        return {**{n: v for n, v in self.chosen.items() if set(free_vars(v)) <= known}, **self.values}

    def at_defaults(self) -> LaunchFacts:
        """This launch as a call that leaves the wrapper's defaulted modes and flags out compiles it
        (itself where none is defaulted)."""
        if not self.defaults:
            return self
        shown = ", ".join(text for _, text in self.defaults.values())
        # the wrapper's own name holds the default too, wherever else the launch reads it (a grid
        # ``cdiv(n, B) if split else 1``): one call, one value
        held = [(self.chosen[n], v) for n, (v, _) in self.defaults.items() if n in self.chosen]

        def at(term):
            return z3.substitute(term, *held) if held else term

        return replace(self, label=f"{self.label}, at the wrapper's default {shown}", at_default=shown,
                       values={**{n: at(t) for n, t in self.values.items()},
                               **{n: v for n, (v, _) in self.defaults.items()}},
                       chosen={n: v for n, v in self.chosen.items() if n not in self.defaults}, defaults={},
                       grid={a: at(g) for a, g in self.grid.items()},
                       extents={p: (at(e), how) for p, (e, how) in self.extents.items()},
                       extent_guards={p: at(g) for p, g in self.extent_guards.items()},
                       assumptions=[at(a) for a in self.assumptions])


def _dotted(node: cst.Attribute) -> str:
    return f"{node.value.value}.{node.attr.value}"


#: how many expressions deep one wrapper expression is read (through the names it uses)
MAX_DEPTH = 40


class _Wrapper:
    """Evaluates wrapper expressions (launch arguments, grid elements) to z3 terms, reading the
    names they use from the host evaluator's state at the launch (:class:`~kernlint.facts.HostScope`)."""

    def __init__(self, state, scope, facts: LaunchFacts, constexpr_values: dict, host=None):
        self.state = state
        self.scope = scope
        #: the launch (:class:`~kernlint.model.Launch`) whose expressions are read
        self.host = host
        #: each tensor's axes as the wrapper reads them (read on first use)
        self.axes: dict | None = None
        #: tensor -> whether the module's text reads an axis of it from the front or its rank
        self.fronted: dict[str, bool] = {}
        self.facts = facts
        self.constexpr_values = constexpr_values
        self.depth = 0
        self.dims: dict[tuple, list | None] = {}
        #: wrapper parameters passed on as they are (their value is the caller's)
        self.forwarded: set[str] = set()
        #: the wrapper's names the launch passes to runtime sizes only (never to a compile-time value)
        self.runtime_only: set[str] = set()
        #: the host names the launch passes as they are to compile-time parameters
        self.compiled: set[str] = set()
        #: forwarded parameters' mode or flag defaults (``mode="gather"``, ``causal=False``): (term, text)
        self.defaults: dict[str, tuple] = {}
        #: the grid axis being read, as written (where a bound alone says how many programs there are;
        #: not through the names it is made of: a bounded stand-in for a size that is also passed to
        #: the kernel would not be the value the kernel is given)
        self.grid_axis: cst.BaseExpression | None = None
        #: a helper's parameters -> the terms its call passes, while its returned expression is read
        self.inlined: dict[str, z3.ExprRef] | None = None
        #: the names whose bindings are being read
        self.resolving: set[int] = set()
        #: the bindings the expressions being read saw (:meth:`binding`)
        self.seen: list[dict] = []
        #: the tests of the choices being read, on the side they pick (``bias is not None`` of ``bias if
        #: bias is not None else x``, while ``bias`` is read): the asserts run under them hold there
        self.under: list[cst.BaseExpression] = []
        #: parameters a choice reads as a sequence of numbers (``k`` of ``kh, kw = (k, k) if
        #: isinstance(k, int) else k``): their elements are sizes the caller chooses
        self.sequences: set[str] = set()

    def size(self, name: str, text: str, held=None) -> z3.ArithRef:
        """The stand-in ``name`` for what the wrapper writes as ``text``, held where it is first made to
        ``held(var)``, else to a size's caps."""
        var = int_var(name)
        if name not in self.facts.names:
            self.facts.names[name] = text
            self.facts.assumptions += (held or size_caps)(var)
        return var

    def element_size(self, tensor: str) -> z3.ArithRef:
        name = f"{tensor}.element_size()"
        return self.size(name, name, lambda var: [z3.Or([var == n for n in (1, 2, 4, 8)])])

    def binding(self, name: str):
        """``name``'s binding: as the expression being read saw it when it was assigned (a name bound
        again later, ``x = x.view(B * S)`` after ``B, S = x.shape``, is still the ``x`` before), else
        at the launch."""
        if self.seen and name in self.seen[-1]:
            return self.seen[-1][name]
        return self.scope.binding(name) if self.scope is not None else None

    def _following(self, b, read):
        """``read()`` as of the binding ``b`` (:meth:`read_as_of`), None where ``b`` is being read
        already: a binding that reads itself is not followed into itself."""
        if id(b) in self.resolving:
            return None
        self.resolving.add(id(b))
        try:
            return self.read_as_of(b, read)
        finally:
            self.resolving.discard(id(b))

    def read_as_of(self, b, read):
        """``read()`` with the names as ``b`` (a binding) saw them."""
        if b is None:
            return read()
        return self._reading_with(b.seen or {}, read)  # (a binding that kept none reads the names at the launch)

    def _reading_with(self, seen: dict, read):
        self.seen.append(seen)
        try:
            return read()
        finally:
            self.seen.pop()

    def _display(self, name: str):
        """The binding of the display (tuple or list) ``name`` holds, through names bound to names
        (``ctx.grid = grid`` after ``grid = (a, b)``)."""
        if self.inlined is not None:
            return None
        b = self.binding(name)
        for _ in range(4):
            if b is None or not isinstance(b.node, cst.Name) or b.index is not None:
                return b
            inner = b.node.value
            b = self.read_as_of(b, lambda: self.binding(inner))
        return b

    def assigned(self, name: str) -> cst.BaseExpression | None:
        """The expression ``name`` was bound to as a whole (``name = expr``) on the path to the launch."""
        if self.inlined is not None:
            return None
        b = self.binding(name)
        return b.node if b is not None and b.index is None else None

    def length(self, name: str):
        """``len(name)``: a list or tuple written out has its length; one a comprehension filters
        out of such a display has at most that many elements (``[t for t in (dW, dB) if t is not
        None]``); anything else is a tensor's first dimension."""
        node = self.assigned(name)
        listed = written_out(node)
        if listed is not None:
            return int_val(len(listed))
        if isinstance(node, cst.ListComp) and node.for_in.inner_for_in is None \
                and written_out(node.for_in.iter) is not None:
            most = len(node.for_in.iter.elements)
            if not node.for_in.ifs:
                return int_val(most)
            return self.at_most(f"len({name})", most)
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
            most = _slice_length(node.slice[0].slice)  # ``tensors[i:i + 4]``: at most 4 of them
            if most is not None:
                return self.at_most(f"len({name})", most)
        return self.dim(name, 0)

    def power_of_two(self, name: str, text: str, relations=None):
        """A size known to be a power of two, one name wherever the same text is written, and what
        ``relations(p)`` says of it (where it rounds up from)."""
        new = name not in self.facts.names
        p = self.size(name, text)
        if new:
            self.facts.assumptions += [*(relations(p) if relations is not None else ()), power_of_two(p)]
        return p

    def at_most(self, name: str, most: int):
        """A size known only to be at most ``most``."""
        var = self.size(name, name)
        self.facts.assumptions.append(at_most(var, most))
        return var

    def tensor_dims(self, name: str) -> list | None:
        b = self.binding(name) if self.inlined is None else None
        # one name bound to two tensors (``x = x.view(-1)``) has the dims of each; one read where a
        # choice's test holds may have the rank an assert under that test states
        key = (name, id(b), *map(id, self.under))
        if key in self.dims:
            return self.dims[key]
        self.dims[key] = None  # cycles
        node = b.node if b is not None and b.index is None else None
        dims = self.read_as_of(b, lambda: self._created(node)) if node is not None else None
        if dims is None:
            dims = self._unpacked(name)
        self.dims[key] = dims
        return dims

    def _created(self, node: cst.BaseExpression) -> list | None:
        if isinstance(node, cst.Name):  # ``out = x``: the same tensor
            return self.tensor_dims(node.value)
        like = _like(node)
        if like is not None:
            return self.tensor_dims(like)
        if isinstance(node, cst.IfExp):  # ``x if x.is_contiguous() else x.contiguous()``
            present = _not_none_side(node) or self._filled_side(node)
            if present is not None:
                # ``torch.empty(M, N) if store else None``: a tensor read through the name is the first
                return self.tensor_dims(present.value) if isinstance(present, cst.Name) else self._created(present)
            kept = _shape_kept(node.body)
            if kept is not None and kept == _shape_kept(node.orelse):
                return self.tensor_dims(kept)
            # ``x.view(n, d) if x.is_contiguous() else x.reshape(n, d)``: the sizes both sides give
            sides = [self._created(side) for side in (node.body, node.orelse)]
            if None not in sides and len(sides[0]) == len(sides[1]) and all(
                    a.eq(b) for a, b in zip(*sides)):
                return sides[0]
            return None
        permuted = _permutation(node)
        if permuted is not None:  # ``torch.empty((G, M)).t()``: the sizes in the new order
            dims = self._created(permuted[0])
            order = _order(permuted[1], len(dims)) if dims is not None else None
            return None if order is None else [dims[i] for i in order]
        same = _same_storage(node)
        if same is not None:
            base = self.tensor_dims(same[0])
            return None if base is None else ([_product(base)] if same[1] else base)
        if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not node.args
                and _SAME_METHODS.get(node.func.attr.value) is False):
            return self._created(node.func.value)  # ``x.reshape(-1, D).contiguous()``: the reshape's sizes
        if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in ("reshape", "view") and node.args):
            parts = [a.value for a in node.args]
            if len(parts) == 1 and isinstance(parts[0], (cst.Tuple, cst.List)):
                parts = [el.value for el in parts[0].elements]
            dims = [int_val(-1) if int_literal(p) == -1 else self.node(p) for p in parts]
            if not dims or any(d is None for d in dims):
                return None
            return self._inferred_size(node, dims)
        kind = _created_kind(node)
        if kind is None:
            return None
        if kind in FROM_DATA:
            shape = data_shape(node)
            return [int_val(n) for n in shape] if shape else None
        parts = size_arguments(kind, node)
        if not parts:
            return None
        shape_of = shape_tensor(parts[0]) if len(parts) == 1 else None
        if shape_of is not None:
            return self.tensor_dims(shape_of)
        dims = [self.node(p) for p in parts]
        return dims if dims and all(d is not None for d in dims) else None

    def _inferred_size(self, view: cst.Call, dims: list) -> list | None:
        """The sizes of ``x.view(-1, S, D)``: the one written -1 is a size of its own (the element
        count of ``x`` over the others', left unstated: a count a stand-in caps would cap the view's
        product of sizes, where an int32 product of them can pass 2**31 - 1)."""
        inferred = [i for i, d in enumerate(dims) if z3.is_int_value(d) and d.as_long() == -1]
        if not inferred:
            return dims
        i = inferred[0]
        if len(inferred) > 1 or any(z3.is_int_value(d) and d.as_long() < 0 for d in dims[:i] + dims[i + 1:]):
            return None
        text = f"{source_text(self.state.info.module, view).strip()}.shape[{i}]"
        return dims[:i] + [self.size(text, text)] + dims[i + 1:]

    def _unpacked(self, name: str, bare: bool = False) -> list | None:
        """``M, N = x.shape`` before the launch, or a rank a test on its path states (``assert
        x.shape == (M, N)``, ``if x.dim() != 2: raise``): its sizes, each a size of its own.
        ``bare``: a rank stated alone counts too (:meth:`HostScope.stated_rank`)."""
        if self.scope is None or self.inlined is not None:
            return None
        current = self.binding(name)
        rank = self.scope.unpacked_rank(name, current)
        if not rank and (current is None or current.node is None or _keeps_shape_of(current.node, name)):
            # (the checks do not say which binding of a name bound again they read: only a parameter's,
            # or one of the same shape, ``bias = bias.contiguous()``)
            rank = self.scope.stated_rank(name, tuple(self.under), bare)
        if not rank:
            # ``assert v.shape == k.shape``: the sizes of the other, where they are known
            mate = self.scope.same_shape_as(name, tuple(self.under))
            return self.tensor_dims(mate) if mate is not None else None
        return [self.size(f"{name}.shape[{i}]", f"{name}.shape[{i}]") for i in range(rank)]

    def dim(self, tensor: str, i: int) -> z3.ArithRef:
        dims = self.tensor_dims(tensor)
        if dims is not None:
            if -len(dims) <= i < len(dims):
                return dims[i]
            return None
        if i < 0:
            # ``k.size(-2)`` beside ``k.shape[2]`` is one size where the wrapper shows k's rank as 4
            front = self.front_axis(tensor, i)
            if front is not None:
                i = front
        return self.size(f"{tensor}.shape[{i}]", f"{tensor}.shape[{i}]")

    def _same_shape(self, left, right):
        """``x.shape == (M, N)`` (either side; a list or ``torch.Size``): each size equal, where the
        rank matches; of a slice from the front, ``x.shape[:2] == (B, H)``, the sizes it names; None
        for any other comparison."""
        for a, b in ((left, right), (right, left)):
            listed = shape_listed(b)
            front = shape_slice(a)  # ``x.shape[:2] == (B, H)``: the sizes from that axis
            tensor, first = front if front is not None else (shape_tensor(a), 0)
            if tensor is None or listed is None:
                continue
            if front is None:
                dims = self.tensor_dims(tensor)
                if dims is not None and len(dims) != len(listed):
                    return None
            sizes = [self.node(e) for e in listed]
            parts = [self.dim(tensor, first + i) == v for i, v in enumerate(sizes) if v is not None and not z3.is_bool(v)]
            return z3.And(parts) if parts else None
        return None

    def front_axis(self, tensor: str, axis: int) -> int | None:
        if tensor not in self.fronted:
            self.fronted[tensor] = re.search(
                rf"\b{re.escape(tensor)}\s*\.\s*(?:shape\s*\[\s*\d|size\s*\(\s*\d|stride\s*\(\s*\d|n?dim)",
                self.state.info.source) is not None
        if not self.fronted[tensor]:
            return None  # the module reads no axis of it from the front, and states no rank: nothing to walk
        if self.axes is None:
            also = (*(a.node for a in self.host.args.values()), *(a.node for a in self.host.grid or ())) \
                if self.host is not None else ()
            self.axes = self.scope.indexed_axes(also) if self.scope is not None else {}
        return front_axis(self.axes.get(tensor), axis)

    def stride(self, tensor: str, i: int):
        node = self.assigned(tensor)
        permuted = _permutation(node) if node is not None else None
        if permuted is not None:
            # a transposed view: the viewed tensor's strides in the new order (column-major scales)
            return self.read_as_of(self.binding(tensor), lambda: self._permuted_stride(*permuted, i))
        dims = self.tensor_dims(tensor)
        if dims is None:
            sliced = self._sliced_stride(tensor, i)
            if sliced is not None:
                return sliced
            # the last axis of a tensor the wrapper makes is contiguous, whatever sizes it is made with
            rank = self._made_rank(tensor)
            return int_val(1) if rank and i in (-1, rank - 1) else None
        if not -len(dims) <= i < len(dims):
            return None
        i %= len(dims)
        return _product(dims[i + 1:])

    def _made_rank(self, tensor: str) -> int:
        """The rank of the tensor an allocator makes under this name (``torch.empty((rows, n))``: 2),
        also where the sizes it is made with are not known; 0 where it is not made so."""
        node = self.assigned(tensor)
        kind = _created_kind(node) if node is not None else None
        if kind is None or kind in FROM_DATA or kind == "empty_strided" or self.inlined is not None:
            return 0
        parts = size_arguments(kind, node)
        if not parts:
            return 0
        # one size written bare may be a whole shape (``torch.empty(shape)``): its rank is not known
        single = len(parts) == 1 and not isinstance(parts[0], (cst.Integer, cst.BinaryOperation))
        written = [a.value for a in node.args if a.keyword is None or a.keyword.value == "size"]
        listed = any(isinstance(w, (cst.Tuple, cst.List)) for w in written)
        return 0 if single and not listed else len(parts)

    def _permuted_stride(self, base, order: tuple, i: int):
        dims = self._created(base)
        order = _order(order, len(dims)) if dims is not None else None
        if order is None or not -len(order) <= i < len(order):
            return None
        j = order[i % len(order)]
        if isinstance(base, cst.Name):
            return self.stride(base.value, j)
        return _product(dims[j + 1:])  # a tensor made in place is contiguous

    def _sliced_stride(self, tensor: str, i: int):
        """The stride of a view made by slicing each leading axis (``x[::2]``, ``x[:, 1::4]``): the
        viewed tensor's stride on that axis times the slice's step."""
        node = self.assigned(tensor)
        if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and i >= 0
                and all(isinstance(e.slice, cst.Slice) for e in node.slice)):
            return None
        base = self.read_as_of(self.binding(tensor), lambda: self.stride(node.value.value, i))
        if base is None or i >= len(node.slice):
            return base
        step = node.slice[i].slice.step
        factor = 1 if step is None else int_literal(step)
        return None if factor is None or factor < 1 else base * factor

    def row_numel(self, tensor: str, leading: int):
        """The element count of ``tensor[0, ..., 0]`` (``leading`` indices): the tensor's count over
        its first ``leading`` sizes, a whole number of elements per row."""
        dims = self.tensor_dims(tensor)
        if dims is not None:
            return _product(dims[leading:]) if leading <= len(dims) else None
        sizes = [f"{tensor}.shape[{i}]" for i in range(leading)]
        for n in sizes:
            self.size(n, n)
        total = self.numel(tensor)
        if not (z3.is_const(total) and str(total) == f"{tensor}.numel()"):
            return None
        self.facts.assumptions += [r for r in _whole_rows(tensor, sizes)
                                   if not any(r.eq(a) for a in self.facts.assumptions)]
        rows = _rows(tensor, sizes)
        self.facts.names.setdefault(str(rows), f"{tensor}[{', '.join('0' * leading)}].numel()")
        return rows

    def numel(self, tensor: str):
        dims = self.tensor_dims(tensor)
        if dims is not None:
            return _product(dims)
        base = self.aliases(tensor)[-1]
        return self.size(f"{base}.numel()", f"{base}.numel()")

    def term(self, text: str):
        text = text.split("#", 1)[0].strip()
        if not text:
            return None
        node = _parsed(text)
        return None if node is None else self.node(node)

    def argument(self, arg):
        """A launch argument (a :class:`~kernlint.model.BoundArg`) as a term."""
        return self.node(arg.node) if arg.node is not None else self.term(arg.text)

    def node(self, node):
        # (deep enough for a wrapper's chain of names, ``grid = tiles - tiles_streamk``, each bound
        # to sums of the ones before; cycles are cut in :meth:`name`)
        if self.depth > MAX_DEPTH:
            return None
        self.depth += 1
        try:
            return self._node(node)
        except (z3.Z3Exception, TypeError, ValueError, AttributeError):
            return None
        finally:
            self.depth -= 1

    def _node(self, node):
        code = partial(source_text, self.state.info.module)
        kind = type(node)  # not isinstance: libcst's classes are abstract, and that check is slow
        if kind is cst.Integer:
            return int_val(int(node.value.replace("_", ""), 0))
        if kind is cst.SimpleString:  # a compile-time choice (``ACTIVATION="gelu"``), as the kernel reads it
            value = node.evaluated_value
            return int_val(string_code(value)) if isinstance(value, str) else None
        if kind is cst.Name:
            if node.value in ("True", "False"):  # a flag passed as a literal: fixed like any number
                return z3.BoolVal(node.value == "True")
            return self.name(node.value)
        if kind is cst.Attribute and node.attr.value == "multi_processor_count":
            # ``torch.cuda.get_device_properties(d).multi_processor_count``: whatever the device has
            return self.size("multi_processor_count", "the device's multiprocessor count")
        if kind is cst.Attribute and isinstance(node.value, cst.Name) and self.inlined is None:
            dotted = _dotted(node)  # ``ctx.grid``: what an autograd Function's forward set on its context
            if self.binding(dotted) is not None:
                return self.name(dotted)
        if kind is cst.BinaryOperation:
            a, b = self.node(node.left), self.node(node.right)
            op = type(node.operator).__name__
            if op == "LeftShift" and a is not None and z3.is_int_value(a) and a.as_long() == 1 \
                    and (b is None or not z3.is_int_value(b)):
                # ``1 << log_n`` of a ``log_n`` the reader cannot compute: a power of two, one name
                # wherever the same text is written (``DIM=dim_padded`` beside ``batch * dim_padded``)
                if self.inlined is not None:
                    return None  # a helper's text names its parameters, not the caller's values
                text = code(node).strip()
                below = self._bit_length_of(node.right)
                if below is None:
                    return self.power_of_two(text, text)
                # 2**e.bit_length() is the least power of two above e
                return self.power_of_two(text, text, lambda p: [p > below, z3.Implies(below >= 1, p <= 2 * below),
                                                                z3.Implies(below == 0, p == 1)])
            if a is None or b is None:
                return None
            if op in ("Power", "LeftShift") and z3.is_int_value(a) and z3.is_int_value(b) and 0 <= b.as_long() < 64:
                return int_val(a.as_long() ** b.as_long() if op == "Power" else a.as_long() << b.as_long())
            return {"Add": lambda: a + b, "Subtract": lambda: a - b, "Multiply": lambda: a * b,
                    "FloorDivide": lambda: a / b, "Modulo": lambda: a % b}.get(op, lambda: None)()
        if kind is cst.Comparison and len(node.comparisons) == 1 \
                and isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot)):
            given = self._given(node)
            return None if given is None else given if isinstance(node.comparisons[0].operator, cst.IsNot) \
                else z3.Not(given)
        if kind is cst.Comparison and len(node.comparisons) == 1 \
                and isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn)):
            return self._membership(node.left, node.comparisons[0].comparator,
                                    isinstance(node.comparisons[0].operator, cst.In))
        if kind is cst.Comparison and len(node.comparisons) == 1 \
                and isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
            same = self._same_shape(node.left, node.comparisons[0].comparator)
            if same is not None:
                return same if isinstance(node.comparisons[0].operator, cst.Equal) else z3.Not(same)
        if kind is cst.Comparison:
            # a chain (``0 < rot_dim <= head_dim``) holds where each link does
            links, a = [], self.node(node.left)
            for target in node.comparisons:
                b = self.node(target.comparator)
                if a is None or b is None:
                    return None
                op = type(target.operator).__name__
                link = {"LessThan": lambda: a < b, "LessThanEqual": lambda: a <= b, "GreaterThan": lambda: a > b,
                        "GreaterThanEqual": lambda: a >= b, "Equal": lambda: a == b,
                        "NotEqual": lambda: a != b}.get(op, lambda: None)()
                if link is None:
                    return None
                links.append(link)
                a = b
            return links[0] if len(links) == 1 else z3.And(links)
        if kind is cst.IfExp:  # ``0 if q.size(2) == k.size(2) else k.size(2) - q.size(2)``
            test, a, b = self.node(node.test), self.node(node.body), self.node(node.orelse)
            if a is None or b is None or z3.is_bool(a) != z3.is_bool(b):
                return None
            if test is None:
                # a test the reader cannot follow (``64 if is_hip() else 128``): either value, as the
                # host that runs it picks
                test = z3.Bool(f"`{code(node.test).strip()}`")
            # a number as a test is true where it is not 0 (``... if META["SPLIT"] else 1``)
            return z3.If(test if z3.is_bool(test) else test != 0, a, b)
        if kind is cst.UnaryOperation and isinstance(node.operator, cst.Not):
            a = self.node(node.expression)
            return None if a is None else z3.Not(a) if z3.is_bool(a) else a == 0
        if kind is cst.BooleanOperation:
            a, b = self.node(node.left), self.node(node.right)
            if a is None or b is None:
                return None
            if z3.is_bool(a) != z3.is_bool(b):
                # a number beside a test (``two_tiles and tiles > n``, a flag passed as a number):
                # as a test, the number holds where it is not 0
                a, b = (x if z3.is_bool(x) else x != 0 for x in (a, b))
            if z3.is_bool(a):
                return z3.And(a, b) if isinstance(node.operator, cst.And) else z3.Or(a, b)
            # on numbers Python gives an operand: ``n or 16`` is n unless n is 0
            if z3.is_int_value(a):
                return (b if a.as_long() != 0 else a) if isinstance(node.operator, cst.And) else (a if a.as_long() != 0 else b)
            return z3.If(a == 0, a, b) if isinstance(node.operator, cst.And) else z3.If(a != 0, a, b)
        if kind is cst.Subscript and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            index = node.slice[0].slice.value
            value = node.value
            if self.inlined is not None:
                return None  # a helper's tensors are the caller's, under other names
            if isinstance(value, cst.Attribute) and value.attr.value == "shape" and isinstance(value.value, cst.Name):
                i = int_literal(index)
                return None if i is None else self.dim(value.value.value, i)
            shape = self.binding(value.value) if isinstance(value, cst.Name) else None
            whole = shape_tensor(shape.node) if shape is not None and shape.index is None else None
            if whole is not None:  # ``shape[-1]`` of ``shape = x.shape``
                i = int_literal(index)
                return None if i is None else self.read_as_of(shape, lambda: self.dim(whole, i))
            if isinstance(index, cst.SimpleString) and isinstance(value, cst.Name):
                key = index.evaluated_value
                return self.constexpr_values.get(key)
            i = int_literal(index)
            named = value.value if isinstance(value, cst.Name) else _dotted(value) if (
                isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name)) else None
            b = self._display(named) if named is not None else None
            listed = written_out(b.node) if b is not None and b.index is None else None
            if i is not None and listed is not None and -len(listed) <= i < len(listed):
                # ``grid_hist[1]`` of ``grid_hist = (a, b)``, ``ctx.grid[1]`` of ``ctx.grid = grid``
                return self.read_as_of(b, lambda: self.node(listed[i]))
            if i is not None and i >= 0 and named in self.sequences and b is not None and b.index is None:
                if b.node is None:
                    # ``kernel_size[0]`` of a sequence the caller passes: a size it chooses, the
                    # number itself where the caller passes one (``(k, k) if isinstance(k, int)``)
                    self.forwarded.add(named)
                    new = f"{named}[{i}]" not in self.facts.names
                    part = self.size(f"{named}[{i}]", f"{named}[{i}]")
                    if new:
                        self.facts.assumptions.append(
                            z3.Implies(z3.Bool(f"`isinstance({named}, int)`"), part == self.name(named)))
                    return part
                part = element(b.node, i)  # of ``stride = kernel_size if stride is None else stride``
                if part is not None:
                    self.sequences |= _indexed_names(part)
                    return self.read_as_of(b, lambda: self.node(part))
            return None
        if kind is cst.Call:
            func = node.func
            args = [a.value for a in node.args]
            fname = code(func).strip() if isinstance(func, (cst.Name, cst.Attribute)) else ""
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and self.inlined is None:
                obj, method = func.value.value, func.attr.value
                if method == "numel" and not args:
                    return self.numel(obj)
                if method == "size" and len(args) == 1 and int_literal(args[0]) is not None:
                    return self.dim(obj, int_literal(args[0]))
                if method == "stride" and len(args) == 1 and int_literal(args[0]) is not None:
                    return self.stride(obj, int_literal(args[0]))
                if method in VALUE_BOUNDS and not args:  # ``ids.max()``: what the wrapper states of it
                    return self.value_bound(obj, VALUE_BOUNDS[method])
                if method == "element_size" and not args:
                    # bytes per element: 1, 2, 4 or 8, whichever dtype the caller's tensor has
                    return self.element_size(obj)
            if (isinstance(func, cst.Attribute) and func.attr.value in VALUE_BOUNDS and not args
                    and self.inlined is None and (sliced := _leading_slice(func.value)) is not None):
                # ``slots[:n].max()``: a bound the first elements meet; an input whose other elements
                # meet it too is one the wrapper accepts (a witness's loaded values are chosen within it)
                return self.value_bound(sliced, VALUE_BOUNDS[func.attr.value])
            if isinstance(func, cst.Attribute) and func.attr.value == "numel" and not args and self.inlined is None:
                inner = _leading_elements(func.value)  # ``x[0, 0].numel()``: the elements of one row
                if inner is not None:
                    return self.row_numel(*inner)
            if isinstance(func, cst.Attribute) and func.attr.value == "item" and not args:
                return self.node(func.value)  # ``ids.max().item()``: the same number
            if fname in ("triton.cdiv", "cdiv") and len(args) == 2:
                a, b = self.node(args[0]), self.node(args[1])
                return None if a is None or b is None else (a + b - 1) / b
            if fname == "math.ceil" and len(args) == 1 and isinstance(args[0], cst.BinaryOperation) \
                    and isinstance(args[0].operator, cst.Divide):
                a, b = self.node(args[0].left), self.node(args[0].right)
                return None if a is None or b is None else (a + b - 1) / b
            if fname == "len" and len(args) == 1 and isinstance(args[0], cst.Name) and self.inlined is None:
                return self.length(args[0].value)
            if fname in ("int", "abs") and len(args) == 1:
                return self.node(args[0])
            if fname == "isinstance" and len(args) == 2 and code(args[1]).strip() == "int":
                return self._is_int(args[0])
            if fname in ("min", "max") and len(args) == 2:
                a, b = self.node(args[0]), self.node(args[1])
                if a is None and b is None:
                    return None
                if a is None or b is None:
                    # a grid axis ``min(48, K)`` of a K the reader does not follow: at most 48 programs
                    # (a value passed to the kernel stays unknown: a block size the caller may choose)
                    known = a if b is None else b
                    if fname == "max" or node is not self.grid_axis or not z3.is_int_value(known):
                        return None
                    return self.at_most(code(node).strip(), known.as_long())
                return z3.If(a <= b, a, b) if fname == "min" else z3.If(a >= b, a, b)
            if fname in ("triton.next_power_of_2", "next_power_of_2") and len(args) == 1:
                a = self.node(args[0])
                if a is None:
                    return None
                # named by what it is of: inside a helper, by the term its parameter stands for
                of = code(args[0]).strip() if self.inlined is None else str(a)
                return self.power_of_two(f"next_power_of_2({of})", f"triton.next_power_of_2({of})",
                                         lambda p: rounding_up(p, a))
            if isinstance(func, cst.Name):
                return self._helper(func.value, node)
            return None
        return None

    def _is_int(self, node):
        """``isinstance(node, int)``: of a number or a tuple written out, known; of a parameter, the
        caller's choice (one name, the sequence's elements tied to it: :meth:`_node`); of a name
        bound to a choice (``stride = kernel_size if stride is None else stride``), each side's."""
        kind = type(node)
        if kind is cst.Integer:
            return z3.BoolVal(True)
        if kind in (cst.Tuple, cst.List):
            return z3.BoolVal(False)
        if kind is cst.IfExp:
            test, a, b = self.node(node.test), self._is_int(node.body), self._is_int(node.orelse)
            if test is None or a is None or b is None or not z3.is_bool(test):
                return None
            return z3.If(test, a, b)
        if kind is not cst.Name or self.inlined is not None:
            return None
        b = self.binding(node.value)
        if b is None or b.index is not None:
            return None
        if b.node is None:
            return z3.Bool(f"`isinstance({node.value}, int)`")
        return self._following(b, lambda: self._is_int(b.node))

    def _bit_length_of(self, node):
        """``e`` of ``e.bit_length()`` (``(n - 1).bit_length()``) as a term, else None."""
        if (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "bit_length"):
            return self.node(node.func.value)
        return None

    def _helper(self, name: str, call: cst.Call, part: tuple[int, int] | None = None):
        """A call of a module function whose body returns one expression (``def cdiv(a, b): return
        (a + b - 1) // b``): that expression, each parameter the term the call passes. ``part``:
        (index, arity) of a name unpacked from what it returns (``block, warps = _pick(n)`` of a
        function returning a tuple of ``arity`` elements written out)."""
        fn = self.state.info.functions.get(name)
        returned = returned_expression(fn)
        if part is not None:
            returned = element(returned, *part) if returned is not None else None
        params = fn.params if returned is not None else None
        if params is None or isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
            return None
        found = call_arguments(fn, call)
        if found is None or found[1]:
            return None
        tensors = {n.value.value for n in N.all_nodes(returned) if type(n) is cst.Attribute and type(n.value) is cst.Name}
        passed: dict[str, z3.ExprRef] = {}
        for key, value in found[0].items():
            term = self.node(value) if key not in tensors else None
            if term is None:
                # a tensor passed (``_dims(x)`` returning ``x.shape``'s sizes), or a value not read: the
                # returned expression with each parameter written as the argument, read where the call is
                return self._written_out(fn, found[0], returned)
            passed[key] = term
        for p in N.parameters(params):
            if p.name.value not in passed:
                outer, self.inlined = self.inlined, {}  # a default is read at the module's level
                try:
                    default = self.node(p.default) if p.default is not None else None
                finally:
                    self.inlined = outer
                if default is None:
                    return None
                passed[p.name.value] = default
        outer, self.inlined = self.inlined, passed
        try:
            return self.node(returned)
        finally:
            self.inlined = outer

    def _written_out(self, fn: cst.FunctionDef, arguments: dict, returned):
        """``returned`` (of ``fn``) with each parameter written as the argument a call passes it (or
        its default), read in the caller's names; None inside a helper, or for a parameter neither."""
        if self.inlined is not None:
            return None
        names = dict(arguments)
        for p in N.parameters(fn.params):
            if p.name.value not in names:
                if p.default is None:
                    return None
                names[p.name.value] = p.default
        return self.node(substituted(returned, names))

    def _membership(self, item, collection, inside: bool):
        """``Lk in {16, 32, 64, 128}`` (a set, tuple or list of numbers written out): one of them."""
        if isinstance(collection, cst.Set) and not any(isinstance(e, cst.StarredElement) for e in collection.elements):
            listed = [e.value for e in collection.elements]
        else:
            listed = written_out(collection)
        a = self.node(item)
        if a is None or not listed or z3.is_bool(a):
            return None
        options = [self.node(e) for e in listed]
        # numbers only: a mode's strings (codes past 2**48) say nothing of a size, and a disjunction
        # of them can cost a question its budget
        if any(o is None or not z3.is_int_value(o) or abs(o.as_long()) > MAX_SIZE for o in options):
            return None
        found = disjunction([a == o for o in options])
        return found if inside else z3.Not(found)

    def name(self, name: str):
        info = self.state.info
        if self.inlined is not None and name in self.inlined:
            return self.inlined[name]
        b = self.binding(name) if self.inlined is None else None
        # a module constant, unless the wrapper binds the name itself (``N, M, K = A.shape`` beside a
        # module-level ``M = 1024``: a name assigned in a function is that function's own)
        if name in info.constants and (b is None or b is info.host.module_env.get(name)):
            return int_val(info.constants[name])
        if self.inlined is not None:
            return None  # a helper sees its parameters and the module's constants, not the caller's names
        if b is None:
            return None
        if b.node is not None:
            if b.index is not None:  # one of several names unpacked from one value
                part = unpacked_part(b.node, b.index, b.arity)
                if isinstance(part, tuple):
                    return self.read_as_of(b, lambda: self.dim(*part))
                if type(part) is cst.IfExp:
                    self.sequences |= _indexed_names(part)
                if part is None and type(b.node) is cst.Call and type(b.node.func) is cst.Name \
                        and b.index >= 0 and b.arity:
                    # ``block, warps = _pick(n)``: the helper's tuple, element by element
                    picked = self.read_as_of(b, lambda: self._helper(b.node.func.value, b.node, (b.index, b.arity)))
                    if picked is not None:
                        return picked
                if part is None:
                    whole = self._parameter_part(name, b)
                    return whole if whole is not None else self._helper_result(name, b)
                return self.read_as_of(b, lambda: self.node(part))
            if not (isinstance(b.node, cst.Name) and b.node.value == name) and id(b) not in self.resolving:
                term = self._following(b, lambda: self.node(b.node))
                if term is None and isinstance(b.value, int) and not isinstance(b.value, bool):
                    # what the host evaluator made of it (``block = block or 256``: a name bound
                    # from its own earlier value, which the scope no longer holds)
                    return int_val(b.value)
                return term if term is not None else self._helper_result(name, b)
        if b.how == "default" and isinstance(b.value, int) and not isinstance(b.value, bool):
            return int_val(b.value)  # the wrapper's default
        # (an optional parameter read as a number is one the caller passed: ``stride = kernel_size
        # if stride is None else stride``, arithmetic on None would raise before the launch)
        if b.how in ("parameter", "default", OPTIONAL):
            self.forwarded.add(name)
            if b.how == "default" and isinstance(b.value, (bool, str)):
                # a mode or a flag, no size: the caller's choice, with a default (:meth:`LaunchFacts.at_defaults`)
                value = int_val(string_code(b.value) if isinstance(b.value, str) else int(b.value))
                self.defaults[name] = (value, f"`{name}={b.value!r}`")
                self.facts.names.setdefault(name, name)
                return int_var(name)
            if is_number(b.default) and name in self.compiled:
                return int_val(b.default)  # a compile-time choice: the default, as before the callers
            return self.size(name, name, _passed_over(b.default))  # a size the wrapper is given
        if b.how == "loop-carried":
            # what a loop left (``while kb % g: g //= 2``): a size of its own, which the loop's exit
            # test relates to the rest (:meth:`branch_conditions`)
            return self.size(f"{name} after its loop", name)
        return None

    def _parameter_part(self, name: str, b):
        """One of the sizes unpacked from a parameter (``ph, pw = padding``): a size the caller
        passes, at least 0 where the default holds a 0; None for anything else."""
        if type(b.node) is not cst.Name or b.index < 0 or not b.arity:
            return None
        whole = self.binding(b.node.value)
        if whole is None or whole.how != "parameter" or whole.node is not None:
            return None
        default = whole.default[b.index] if isinstance(whole.default, tuple) and len(whole.default) == b.arity else None
        if is_number(default) and name in self.compiled:
            return int_val(default)  # a compile-time choice (``BM, BN = tile``): the default's part
        part = f"{b.node.value}[{b.index}]"
        self.forwarded.add(part)
        return self.size(part, part, _passed_over(default))

    def _helper_result(self, name: str, b):
        """A size of its own for a name a function of the module computes (``n_pad = _pad(n)``, ``ids,
        n_pad = _align(...)``), which the launch passes to runtime sizes only: one value wherever it
        is read (a grid ``cdiv(n_pad, B)`` and the argument alike); None for any other name (a block
        size or a flag a helper picks is a choice whose values the reader cannot bound)."""
        if name not in self.runtime_only or not _computed_by_helper(b.node, self.state.info):
            return None
        return self.size(f"{name} = {source_text(self.state.info.module, b.node).strip()}", name)

    def branch_conditions(self) -> list:
        """The wrapper's ``if``/``elif``/``else`` branches the launch sits in, the tests of the
        ``if not ok: raise`` guards it passed and of the ``while`` loops it follows, as assumptions."""
        out = []
        for test, holds in self.scope.conditions if self.scope is not None else ():
            out += self.held(test) if holds else self.failed(test)
        return out

    def asserts(self) -> list:
        """The wrapper's ``assert`` statements run before the launch, as assumptions; one run on a
        path of an ``if`` the launch is not in holds where that path's tests do."""
        out = []
        for test in self.scope.asserts if self.scope is not None else ():
            out += self.held(test)
        for path, test in self.scope.guarded_asserts if self.scope is not None else ():
            where = [t for cond, holds in path for t in self._path_test(cond, holds)]
            stated = self.held(test)
            if None not in where and stated:
                out.append(z3.Implies(z3.And(where), z3.And(stated)) if where else z3.And(stated))
        return out

    def _as_ran(self, test, read):
        """``read()`` with the names ``test`` reads as they were bound when it ran (an assert or a
        branch test before a name was bound again), where the host code's walk noted them."""
        seen = self.scope.seen_at(test) if self.scope is not None and self.inlined is None else None
        return read() if seen is None else self._reading_with(seen, read)

    def _path_test(self, test, holds: bool) -> list:
        """A branch test of a path, whole, as terms ([None] where it cannot be read: a path read in
        part would state its asserts where they did not run)."""
        term = self._as_ran(test, lambda: self.node(test))
        if term is None or not z3.is_bool(term):
            return [None]
        return [term if holds else z3.Not(term)]

    def held(self, test) -> list:
        """What a test that holds says, as terms: each part of an ``and`` the engine reads on its
        own (``cu_seqlens is None and T % BT == 0``: the second), through a name bound to the
        test (``if oneslab:`` of ``oneslab = (...)``) and ``not`` (what fails)."""
        return self._parts(test, True)

    def failed(self, test) -> list:
        """What a test that fails says (an ``elif`` chain's earlier tests, an ``if ...: raise`` guard
        passed): each part of an ``or``, negated (``if x is None or n % B: raise``: ``n % B == 0``)."""
        return self._parts(test, False)

    def _parts(self, test, holds: bool) -> list:
        return self._as_ran(test, lambda: self._read_parts(test, holds))

    def _read_parts(self, test, holds: bool) -> list:
        resolve = (lambda name: self.assigned(name)) if self.inlined is None else None
        out = []
        for part, part_holds in test_parts(test, holds, resolve):
            term = self.node(part)
            if term is None or not z3.is_bool(term):
                continue
            if part_holds and z3.is_and(term):  # ``x.shape == (M, N)``: an equation per size
                out += conjuncts([term])
            elif not part_holds and z3.is_distinct(term) and term.num_args() == 2:  # ``if x.size(0) != n: raise``
                out.append(term.arg(0) == term.arg(1))
            else:
                out.append(term if part_holds else z3.Not(term))
        return out

    def _given(self, node: cst.Comparison) -> z3.BoolRef | None:
        """``x is not None`` (of ``x is None`` or ``x is not None``): for a name bound to a choice with
        ``None`` on one side (``torch.empty(...) if store else None``), that choice's own test; for any
        other, whether the caller passed an optional argument: a choice of the caller's that every
        test of it in the wrapper shares (the flag the kernel gets, ``HAS_BIAS=bias is not None``, and
        the tensor passed, ``bias if bias is not None else x``)."""
        left, right = node.left, node.comparisons[0].comparator
        if _is_none(left):
            left, right = right, left
        if not _is_none(right) or N.dotted(left) is None:
            return None
        if isinstance(left, cst.Name):
            b = self.binding(left.value)
            chosen = b.node if b is not None and b.index is None and isinstance(b.node, cst.IfExp) else None
            if chosen is not None and _not_none_side(chosen) is not None:
                test = self.read_as_of(b, lambda: self.node(chosen.test))
                if test is not None and z3.is_bool(test):
                    return test if _is_none(chosen.orelse) else z3.Not(test)
        return z3.Bool(f"`{N.dotted(left)} is not None`")

    def value_bound(self, tensor: str, which: str) -> z3.ArithRef:
        """The least or greatest element of ``tensor`` (``ids.max()``), a number of its own that the
        wrapper's tests bound (``assert int(ids.max()) < V``); a kernel's load of an element of the
        tensor lies within the two."""
        term = value_bounds(tensor)[which == "max"]
        self.facts.names.setdefault(str(term), str(term))
        return term

    def tensor(self, arg) -> tuple | None:
        """(extent, description, the test under which it is the extent or None) of a tensor argument
        (a BoundArg), when its size is known."""
        return self._tensor(arg.node) if arg.node is not None else None

    def _tensor(self, node) -> tuple | None:
        if isinstance(node, cst.IfExp):
            return self._either(node)
        chosen = self._chosen(node)
        if chosen is not None:
            found = self.read_as_of(chosen, lambda: self._either(chosen.node))
            if found is not None:
                return found
        found = self._whole_tensor(node)
        return None if found is None else (*found, None)

    def _filled_side(self, node: cst.IfExp) -> cst.BaseExpression | None:
        """The side of ``torch.empty(M, N) if out is None else out`` that the wrapper makes, where the
        other is an optional argument as the caller passed it: its sizes and strides are read as the
        ones of the tensor the wrapper makes (a caller's own tensor has whatever the caller gives it)."""
        for side, other in ((node.body, node.orelse), (node.orelse, node.body)):
            if isinstance(other, cst.Name) and not isinstance(side, cst.Name):
                b = self.binding(other.value)
                if b is not None and b.how == OPTIONAL:
                    return side
        return None

    def _chosen(self, node):
        """The binding of a name passed whole to a choice that reads the argument it replaces
        (``scale = torch.full(...) if scale is None else scale``: an optional argument the wrapper
        fills in)."""
        if not isinstance(node, cst.Name) or self.inlined is not None:
            return None
        b = self.binding(node.value)
        if b is None or b.index is not None or not isinstance(b.node, cst.IfExp) or b.seen is None:
            return None
        passed = b.seen.get(node.value)
        return b if passed is not None and passed.how == OPTIONAL else None

    def _either(self, node: cst.IfExp) -> tuple | None:
        """``bias if bias is not None else x``: the extent of the tensor the test picks, so that a
        kernel that reads it under the flag the same test sets reads the first one; where one side's
        extent is not known (the tensor a caller passes), the other's, under its test."""
        test = self.node(node.test)
        if test is None or not z3.is_bool(test):
            return None
        self.under.append(node.test)
        try:
            first = self._tensor(node.body)
        finally:
            self.under.pop()
        second = self._tensor(node.orelse)
        shown = " ".join(source_text(self.state.info.module, node.test).split())
        if first is not None and second is not None:
            (a, a_how, a_guard), (b, b_how, b_guard) = first, second
            if a_guard is None and b_guard is None:
                if a.eq(b):  # (a tensor the test only makes contiguous)
                    return a, a_how, None
                return z3.If(test, a, b), f"{a_how} if {shown} else {b_how}", None
            return None
        if first is not None and first[2] is None:
            return first[0], f"{first[1]} where {shown}", test
        if second is not None and second[2] is None:
            return second[0], f"{second[1]} where not {shown}", z3.Not(test)
        return None

    def _whole_tensor(self, node) -> tuple | None:
        name = _whole(node)
        dims = self.tensor_dims(name) if name is not None else None
        if dims is None:
            viewed = self.viewed(node)
            if viewed is not None and self.tensor_dims(viewed) is not None:
                return self.numel(viewed), f"{viewed}.numel()"  # the storage the view reaches
        if name is None:
            made = self._created(node) if isinstance(node, cst.Call) else None  # ``torch.full((H,), ...)``
            if made is None:
                return None
            return _product(made), f"{' '.join(source_text(self.state.info.module, node).split())}.numel()"
        if dims is not None:
            return _product(dims), f"{name}.numel()"
        for alias in self.aliases(name):
            if f"{alias}.numel()" in self.facts.names:
                return int_var(f"{alias}.numel()"), f"{name}.numel()"
        return None

    def viewed(self, node) -> str | None:
        """The tensor whose storage ``node`` (or the view it names) starts at: ``x[:, 0]``,
        ``x[0]``, ``x[:k]``, ``x.t()``. A pointer to the view reaches the viewed tensor's elements
        from its first one, whatever the view's own shape."""
        found = _view_of(node)
        if found is None and isinstance(node, cst.Name):
            assigned = self.assigned(node.value)
            found = _view_of(assigned) if assigned is not None else None
        return found

    def shown(self, tensor):
        return _shown_extent(self, tensor)

    def layout(self, name: str) -> tuple | None:
        """The strides of ``name`` on each axis, where its sizes are known (a tensor the caller passes
        laid out contiguously in them, as :meth:`stride` reads each)."""
        dims = self.tensor_dims(name)
        if dims is None:
            # a rank the wrapper states alone (``x.dim() == 2``): its sizes, each one of its own
            dims = self._unpacked(name, bare=True)
            return None if dims is None else tuple(_product(dims[i + 1:]) for i in range(len(dims)))
        strides = tuple(self.stride(name, i) for i in range(len(dims)))
        return None if any(s is None for s in strides) else strides

    def contiguous(self, name: str) -> bool:
        """Whether ``name`` is laid out contiguously whatever the caller passes: the wrapper makes it
        (``torch.empty(...)``, ``x.contiguous()``, ``torch.empty_like`` of such a tensor, a choice of
        such), or asserts it (``assert x.is_contiguous()``)."""
        if self.scope is not None and any(_asks_contiguous(t, name) for t in self.scope.asserts):
            return True
        node = self.assigned(name)
        return node is not None and self._made_contiguous(node, {name})

    def _made_contiguous(self, node, seen: set) -> bool:
        if isinstance(node, cst.IfExp):
            return all(self._made_contiguous(side, seen) for side in (node.body, node.orelse))
        if isinstance(node, cst.Name):
            if node.value in seen:
                return False
            seen.add(node.value)
            inner = self.assigned(node.value)
            return inner is not None and self._made_contiguous(inner, seen)
        if _created_kind(node) is not None:
            return True
        found = _method(node)
        if found is not None and found[1] == "contiguous":
            return True
        like = _like(node)
        return like is not None and like not in seen and (seen.add(like) or self.contiguous(like))

    def aliases(self, name: str) -> list[str]:
        """``name`` and the tensors it was made like (``out = torch.empty_like(x)``: same size)."""
        out = [name]
        while len(out) < 4:
            node = self.assigned(out[-1])
            if node is None:
                break
            base = _like(node)
            if base is None:
                same = _same_storage(node)
                base = same[0] if same is not None else None
            if base is None:
                break
            out.append(base)
        return out


#: methods whose result is the receiver's storage, whole: (method, the result is flat)
_SAME_METHODS = {"contiguous": False, "clone": False, "detach": False, "float": False, "half": False,
                 "cuda": False, "flatten": True}


def _torch_function(node) -> str:
    """``torch.f(...)``: ``f``; "" for any other expression."""
    name = (N.dotted(node.func) or "") if isinstance(node, cst.Call) else ""
    return name[6:] if name.startswith("torch.") else ""


def _asks_contiguous(test, name: str) -> bool:
    """Whether an assert's test states ``name.is_contiguous()`` (as one of its parts, :func:`test_parts`)."""
    return any(holds and _method(part) is not None and _method(part)[:2] == (name, "is_contiguous")
               for part, holds in test_parts(test, True))


def _created_kind(node) -> str | None:
    """``torch.empty(...)`` and the other allocators: the allocator's name."""
    kind = _torch_function(node)
    return kind if kind in ALLOCATORS or kind in FROM_DATA else None


def _like(node) -> str | None:
    """``torch.empty_like(x, ...)``: ``x``."""
    if (_torch_function(node) in LIKE_ALLOCATORS
            and node.args and node.args[0].keyword is None
            and not node.args[0].star and isinstance(node.args[0].value, cst.Name)):
        return node.args[0].value.value
    return None


def _method(node) -> tuple[str, str, list] | None:
    """``x.m(args)``: (x, m, args) for a method of a plain name."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
        return node.func.value.value, node.func.attr.value, list(node.args)
    return None


def _flat_view(method: str, args: list) -> bool:
    """``view(-1)`` / ``reshape(-1)``."""
    return method in ("view", "reshape") and len(args) == 1 and args[0].keyword is None \
        and int_literal(args[0].value) == -1


def _permutation(node) -> tuple | None:
    """``x.t()``, ``x.T``, ``x.mT``, ``x.transpose(a, b)``, ``x.permute(...)``: (``x`` as written, the
    order: ``("swap", a, b)`` of two axes, or the axes listed)."""
    if isinstance(node, cst.Attribute) and node.attr.value in ("T", "mT"):
        return node.value, ("swap", -2, -1)
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return None
    method, args = node.func.attr.value, [int_literal(a.value) for a in node.args]
    if any(a is None for a in args) or any(a.keyword is not None or a.star for a in node.args):
        return None
    if method == "t" and not args:
        return node.func.value, ("swap", 0, 1)
    if method in ("transpose", "swapaxes") and len(args) == 2:
        return node.func.value, ("swap", *args)
    if method == "permute" and args:
        return node.func.value, tuple(args)
    return None


def _order(order: tuple, rank: int) -> list[int] | None:
    """The axes of the viewed tensor, in the view's order, of a :func:`_permutation` order."""
    if order and order[0] == "swap":
        a, b = order[1], order[2]
        if not (-rank <= a < rank and -rank <= b < rank):
            return None
        out = list(range(rank))
        out[a % rank], out[b % rank] = out[b % rank], out[a % rank]
        return out
    if len(order) != rank or sorted(o % rank for o in order) != list(range(rank)):
        return None
    return [o % rank for o in order]


def _same_storage(node) -> tuple[str, bool] | None:
    """``x.contiguous()``, ``x.view(-1)``, ``x.to(dtype)``...: (``x``, whether the result is flat)."""
    found = _method(node)
    if found is None:
        return None
    base, method, args = found
    if method in _SAME_METHODS and not args:
        return base, _SAME_METHODS[method]
    if _flat_view(method, args):
        return base, True
    if method == "view_as" and len(args) == 1 and isinstance(args[0].value, cst.Name):
        return base, False
    if method == "to" and not any(isinstance(n, cst.Call) for a in args for n in _calls(a.value)):
        return base, False
    return None


def _keeps_shape_of(node, name: str) -> bool:
    """Whether ``node`` has the shape ``name`` had: ``name.contiguous()``, or a choice of such
    (``bias.contiguous() if bias is not None else bias``, a name a branch bound again)."""
    if isinstance(node, cst.IfExp):
        return _keeps_shape_of(node.body, name) and _keeps_shape_of(node.orelse, name)
    return _shape_kept(node) == name


def _shape_kept(node) -> str | None:
    """The tensor whose shape ``node`` has: ``x``, ``x.contiguous()``, ``x.to(dtype)``."""
    if isinstance(node, cst.Name):
        return node.value
    same = _same_storage(node)
    return same[0] if same is not None and not same[1] else None


def _calls(node):
    if isinstance(node, cst.Call):
        yield node
    elif isinstance(node, (cst.Attribute,)):
        yield from _calls(node.value)


def _whole(node) -> str | None:
    """A tensor argument passed whole: ``x``, ``x.contiguous()``, ``x.view(-1)``, ``x.flatten()``."""
    if isinstance(node, cst.Name):
        return node.value
    found = _method(node)
    if found is not None:
        base, method, args = found
        if (method in ("contiguous", "flatten") and not args) or _flat_view(method, args):
            return base
    return None


def _view_of(node) -> str | None:
    """The tensor a view starts at the first element of: ``x[:, 0]``, ``x[0]``, ``x[:k]``, ``x.t()``,
    ``x.T``, ``x.transpose(0, 1)``, ``x.permute(...)``; None for a view that starts past it."""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
        return node.value.value if all(_from_start(e.slice) for e in node.slice) else None
    if isinstance(node, cst.Attribute) and node.attr.value in ("T", "mT") and isinstance(node.value, cst.Name):
        return node.value.value
    found = _method(node)
    if found is not None:
        base, method, args = found
        if (method == "t" and not args) or (method in ("transpose", "permute")
                                            and not any(isinstance(a.value, cst.Call) for a in args)):
            return base
    return None


def _from_start(index) -> bool:
    """An index that keeps the first element: ``:``, ``0:``, ``:k``, ``0``, ``...``, ``None``."""
    if isinstance(index, cst.Slice):
        return index.lower is None or int_literal(index.lower) == 0  # with a step too: ``x[::2]``
    value = index.value
    return int_literal(value) == 0 or isinstance(value, cst.Ellipsis) or (
        isinstance(value, cst.Name) and value.value == "None")


_PARSED: dict[str, cst.BaseExpression | None] = {}


def _parsed(text: str):
    """``text`` parsed as an expression, once (the same sizes are read at every launch)."""
    if text not in _PARSED:
        try:
            _PARSED[text] = cst.parse_expression(text)
        except Exception:  # noqa: BLE001 - wrapper text the engine cannot read: unknown
            _PARSED[text] = None
        if len(_PARSED) > 50000:
            _PARSED.clear()
    return _PARSED[text]


def _grid(scope, launch):
    """The launch's grid expression, through a name bound to it before the launch (``grid = (...)``,
    ``grid = lambda META: (...)``, ``def grid(META): return (...)``)."""
    grid = launch.grid
    if isinstance(grid, cst.Name):
        b = scope.binding(grid.value) if scope is not None else None
        if b is None:
            return None
        if isinstance(b.value, cst.FunctionDef):
            return returned_expression(b.value)
        if b.node is None or b.index is not None:
            return None
        grid = b.node
    if isinstance(grid, cst.Lambda):
        grid = grid.body
    return grid


def _slice_length(piece: cst.Slice) -> int | None:
    """The most elements ``[lower:upper]`` takes, where the bounds differ by a number written out
    (``[i:i + 4]``, ``[:4]``) and no step is given."""
    if piece.step is not None or piece.upper is None:
        return None
    upper, lower = piece.upper, piece.lower
    if lower is None:
        n = int_literal(upper)
        return n if n is not None and n >= 0 else None
    if isinstance(upper, cst.BinaryOperation) and isinstance(upper.operator, cst.Add) \
            and upper.left.deep_equals(lower):
        n = int_literal(upper.right)
        return n if n is not None and n >= 0 else None
    return None


def _indexed_names(node) -> set[str]:
    """The names a choice of sequence elements indexes (``k`` of ``k if isinstance(k, int) else k[0]``)."""
    if type(node) is cst.IfExp:
        return _indexed_names(node.body) | _indexed_names(node.orelse)
    return {node.value.value} if type(node) is cst.Subscript and type(node.value) is cst.Name else set()


def _passed_over(default):
    """What a size with a default the callers pass over is held to: at least the default where that is
    below 1 (a padding of 0), else a size's caps."""
    if not is_number(default) or default >= 1:
        return None
    return lambda var: [at_least(var, default), at_most(var, MAX_SIZE)]


def size_caps(var) -> list:
    """What a size the wrapper is given is held to: at least 1, at most ``MAX_SIZE``."""
    return [at_least(var, 1), at_most(var, MAX_SIZE)]


def value_bounds(tensor: str) -> tuple[z3.ArithRef, z3.ArithRef]:
    """(least, greatest) element of ``tensor``, as :meth:`_Wrapper.value_bound` names them."""
    return int_var(f"{tensor}.min()"), int_var(f"{tensor}.max()")


def _leading_slice(node) -> str | None:
    """``x`` of ``x[:n]`` (or ``x[0:n]``): the first elements of a tensor named plainly."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1):
        return None
    part = node.slice[0].slice
    if isinstance(part, cst.Slice) and part.step is None and (part.lower is None or int_literal(part.lower) == 0):
        return node.value.value
    return None


def _is_none(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _not_none_side(node: cst.IfExp) -> cst.BaseExpression | None:
    """``a`` of ``a if t else None`` or ``None if t else a``."""
    if _is_none(node.orelse) and not _is_none(node.body):
        return node.body
    if _is_none(node.body) and not _is_none(node.orelse):
        return node.orelse
    return None


def _present_side(node):
    """The side of ``r.stride(0) if r is not None else 0`` a present tensor takes (the other, a
    number or None, is passed where there is no tensor to walk); any other expression as it is."""
    if isinstance(node, cst.IfExp):
        sides = [side for side in (node.body, node.orelse) if int_literal(side) is None and not _is_none(side)]
        if len(sides) == 1:
            return sides[0]
    return node


def _int(term):
    """Flags passed as comparisons (``group_size == K``) are the integers 0 and 1."""
    return z3.If(term, int_val(1), int_val(0)) if term is not None and z3.is_bool(term) else term


def _shown_extent(wrapper, tensor):
    """The extent the module's facts show for a pointer argument (shape or numel as text)."""
    if tensor is None:
        return None
    if tensor.shape is not None:
        dims = [wrapper.term(t) for t in tensor.shape]
        if dims and all(d is not None for d in dims):
            return _product(dims), f"{tensor.expr}.numel()"
    if tensor.numel is not None:
        n = wrapper.term(tensor.numel)
        if n is not None:
            return n, f"{tensor.expr}.numel()"
    return None


def _product(terms):
    out = int_val(1)
    for t in terms:
        out = out * t
    return z3.simplify(out) if not terms else out


def config_assumptions(state, model) -> list:
    """``triton.autotune`` configs: one config at a time, its values together (a kernel fact,
    whether or not the module launches the kernel)."""
    configs = {}
    for values in config_values(state.kernel.kernel):
        if values is None:
            return []  # a config built from what the module does not say: its values are not known
        # (configs that differ only in what the kernel does not read, ``num_warps``, are one here)
        known = tuple(sorted((n, v) for n, v in int_values(values).items() if n in model.params))
        configs.setdefault(known, z3.And([model.params[n] == v for n, v in known]))
    return [z3.Or(list(configs.values()))] if configs else []


def _computed_by_helper(node, info) -> bool:
    """Whether ``node`` calls a function the module defines."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in info.functions


def launch_facts(state, model) -> list[LaunchFacts]:
    """One :class:`LaunchFacts` per launch of the kernel in its module."""
    out = []
    kernel = state.kernel.kernel
    names = [p.name for p in kernel.params]
    module_facts = state.info.facts
    for launch in state.info.launches_of(state.name):
        line = state.info.span_of_offsets(launch.start, launch.end).line
        facts = LaunchFacts(f"the launch on line {line}", launch=launch)
        host = module_facts.launch_at(launch.start, launch.kernel)
        if host is None or host.starred or host.misfit or not host.calls(kernel):
            continue
        bound = {p: arg for p, arg in host.args.items() if p in names}
        resolved = {p: int_val(arg.value.value) for p, arg in host.args.items()
                    if arg.resolved and isinstance(arg.value.value, int) and not isinstance(arg.value.value, bool)}
        constexpr_values: dict = {}
        wrapper = _Wrapper(state, host.scope, facts, constexpr_values, host)
        # kernel parameter -> the host name the launch passes it as it is
        passed = {p: arg.node.value for p, arg in bound.items() if isinstance(arg.node, cst.Name)}
        compiled = wrapper.compiled = {passed[p.name] for p in kernel.params if p.constexpr and p.name in passed}
        wrapper.runtime_only = {passed[p.name] for p in kernel.params
                                if not p.constexpr and p.name in passed and p.name not in model.pointers} - compiled
        # host name -> the first parameter (not a pointer) passed it: where a grid's axis of that name goes
        receiver: dict[str, str] = {}
        for p, host_name in passed.items():
            if p in model.params and p not in model.pointers:
                receiver.setdefault(host_name, p)
        tuned: set[str] = set()
        configured = tuned_names(kernel)
        for p in kernel.params:
            if not p.constexpr:
                continue
            var = model.params[p.name]
            if p.name in bound:
                v = _int(wrapper.argument(bound[p.name])) if p.name not in resolved else resolved[p.name]
                if v is not None and z3.is_const(v) and v.decl().name() in wrapper.forwarded:
                    # a compile-time choice the caller makes, under a contract the engine cannot see
                    facts.chosen[p.name] = v
                    if v.decl().name() in wrapper.defaults:
                        facts.defaults[p.name] = wrapper.defaults[v.decl().name()]
                    v = None
                if v is not None:
                    facts.values[p.name] = v
                    constexpr_values[p.name] = v
                continue
            if p.name in configured:
                facts.values[p.name] = var
                constexpr_values[p.name] = var
                tuned.add(p.name)
                continue
            if p.default is not None and not host.spread and re.fullmatch(r"\d+", p.default.strip()):
                facts.values[p.name] = int_val(int(p.default))
                constexpr_values[p.name] = facts.values[p.name]
            elif p.default is None or host.spread:
                # set by what the engine cannot read (a tuner's configs, ``num_warps`` a config gives a
                # kernel that declares it, the launch's ``**extra``): the grid's ``META[name]`` is
                # still the kernel's own value
                constexpr_values[p.name] = var

        # scalars first: the sizes they pass (``x.numel()``) are what tensor extents are known by
        for p in kernel.params:
            if not p.constexpr and p.name in bound and p.name not in model.pointers:
                v = _int(wrapper.argument(bound[p.name]))
                v = resolved.get(p.name) if v is None else v
                if v is not None:
                    facts.values[p.name] = v
        facts.assumptions += wrapper.asserts() + wrapper.branch_conditions()
        grid = _grid(host.scope, launch)
        if isinstance(grid, (cst.Tuple, cst.List)):
            elements = [e.value for e in grid.elements]
        elif grid is not None and not isinstance(grid, (cst.Name, cst.Attribute, cst.Subscript)):
            # one axis written bare, when it reads as a number; a call the reader does not know
            # (``grid(meta)``) may return any tuple, so no axis of it is known
            elements = [grid] if wrapper.node(grid) is not None else None
        else:
            elements = None
        if elements is not None:
            for axis in range(3):
                if axis >= len(elements):
                    facts.grid[axis] = int_val(1)
                    continue
                wrapper.grid_axis = elements[axis]
                try:
                    g = wrapper.node(elements[axis])
                finally:
                    wrapper.grid_axis = None
                if g is not None:
                    facts.grid[axis] = g
                    facts.grid_nodes[axis] = elements[axis]
                if isinstance(elements[axis], cst.Name) and elements[axis].value in receiver:
                    facts.grid_params[axis] = receiver[elements[axis].value]
        for p in kernel.params:
            if p.name in model.pointers and p.name in bound:
                whole = _whole(bound[p.name].node) if bound[p.name].node is not None else None
                if whole is not None:
                    facts.tensors[p.name] = whole
                extent = wrapper.tensor(bound[p.name])
                if extent is None:
                    shown = wrapper.shown(host.args[p.name].tensor)
                    extent = None if shown is None else (*shown, None)
                if extent is not None:
                    facts.extents[p.name] = extent[:2]
                    if extent[2] is not None:
                        facts.extent_guards[p.name] = extent[2]
        for p in kernel.params:
            if not p.constexpr and p.name in bound and p.name not in model.pointers and bound[p.name].node is not None:
                node = bound[p.name].node
                if isinstance(node, cst.Name):  # ``stride_x = x.stride(0)`` before the launch
                    node = wrapper.assigned(node.value) or node
                found = _method(_present_side(node))
                if found is not None and found[1] == "stride" and len(found[2]) == 1:
                    axis = int_literal(found[2][0].value)
                    if axis is not None:
                        facts.stride_args[p.name] = (found[0], axis)
        for name in {*facts.tensors.values(), *(t for t, _ in facts.stride_args.values())}:
            facts.layouts[name] = wrapper.layout(name)
            facts.kin[name] = frozenset(wrapper.aliases(name))
            if wrapper.contiguous(name):
                facts.contiguous.add(name)
        facts.assumptions += _numel_relations(facts.names)
        out.append(facts)
    return out


SHAPE_NAME = re.compile(r"(.+)\.shape\[-?\d+\]")


def _leading_elements(node) -> tuple[str, int] | None:
    """(tensor, how many) of ``x[0, 0]``: a tensor indexed by integers on its first axes."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name)):
        return None
    for el in node.slice:
        if not isinstance(el.slice, cst.Index) or int_literal(el.slice.value) is None:
            return None
    return node.value.value, len(node.slice)


def _numel_relations(names: dict) -> list:
    """``x.numel() == x.shape[i] * r`` (``r >= 1``: the product of the other sizes) for each tensor
    whose element count and one of whose sizes are both stand-ins of the launch: a non-empty tensor
    has a whole number of rows of any one size, so at least as many elements as that size; and of
    several sizes read from the front (or several from the back: ``shape[0]`` and ``shape[-1]`` may be
    one axis), the same of their product (``indx.shape[0] * indx.shape[1] <= indx.numel()``)."""
    out = []
    axes: dict[str, dict[bool, list[str]]] = {}
    for name in names:
        m = SHAPE_NAME.fullmatch(name)
        if m is not None and f"{m.group(1)}.numel()" in names:
            out += _whole_rows(m.group(1), [name])
            back = name[name.rindex("[") + 1:].startswith("-")
            axes.setdefault(m.group(1), {}).setdefault(back, []).append(name)
    for tensor, ends in axes.items():
        for sizes in ends.values():
            if len(sizes) > 1:
                out += _whole_rows(tensor, sorted(sizes))
    return out


def _whole_rows(tensor: str, sizes: list[str]) -> list:
    rows = _rows(tensor, sizes)
    return [at_least(rows, 1), int_var(f"{tensor}.numel()") == _product([int_var(n) for n in sizes]) * rows]


def _rows(tensor: str, sizes: list[str]) -> z3.ArithRef:
    """The stand-in for ``tensor``'s element count over its ``sizes`` (the elements of one row)."""
    return int_var(f"{tensor}.numel() / {sizes[0]}" if len(sizes) == 1 else f"{tensor}.numel() / ({' * '.join(sizes)})")
