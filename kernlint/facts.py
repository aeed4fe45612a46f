"""The one pass that builds :class:`~kernlint.model.ModuleFacts` from a module's parsed libcst tree.

Launch sites come from one linear scan of the text (:func:`kernlint.source.discover.launch_index`);
the host code around them is then evaluated statement by statement, without running anything:
literals, tuple unpacking, augmented assignment, module constants, dict/list configs and their
items, helpers that return an expression, ``triton.next_power_of_2``, ``triton.cdiv``, ``min``,
``max``, ``int``, arithmetic, and the tensors behind pointer arguments (allocations, ``*_like``,
views, slices, ``.contiguous()``, size asserts). What does not resolve stays unresolved: consumers
that need a value anyway choose one and mark it *guessed*. Each launch also keeps the evaluator's
state where it stands (:class:`HostScope`: what each name was bound to, the asserts, ``raise``
guards and branch tests on its path), which the symbolic engine turns into terms.
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import libcst as cst

from kernlint.model import BoundArg, HostValue, Kernel, Launch, ModuleFacts, Span, TensorExtent
from kernlint.source import names as N
from kernlint.source.configs import CONFIG_OPTIONS, set_by_every_config, supplied_by_configs
from kernlint.source.launch_options import LAUNCH_OPTIONS
from kernlint.source.names import int_literal, source_text
from kernlint.source.launch_helpers import launch_through

#: helpers are followed this many calls deep; beyond, a value is unknown
MAX_CALL_DEPTH = 4
#: expressions nested deeper than this are unknown (valid code can chain 1,000 terms)
MAX_EXPR_DEPTH = 64


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()
#: the environment's entry for size asserts (not a Python name: no host variable can shadow it);
#: its value is immutable, so that a branch's copy of the environment cannot leak into another's
_SIZES = "<same size>"
#: the asserts run on the path to a statement (their test expressions), and the branch tests that
#: hold there (test, whether it is true): entries of the environment no host variable can shadow
_ASSERTS = "<asserts>"
_PATH = "<path>"
#: the asserts run on some paths only (inside an ``if``): (the tests of that path, as ``_PATH``
#: holds them, the assert's test), true wherever that path's tests hold
_GUARDED = "<guarded asserts>"
#: the kernels launched on every path to a statement, in order
_LAUNCHED = "<launched>"
#: id of each test of an assert or a branch on the path -> (the test, the bindings of the names it
#: reads when it ran): a name bound again later (``w = w.reshape(C, K)`` after ``assert w.shape[1]
#: == 1``) is read in the test as it was then
_READ = "<read as of>"
_PATH_ENTRIES = (_SIZES, _ASSERTS, _PATH, _GUARDED, _LAUNCHED, _READ)
#: how an optional parameter (``bias=None``) of a function read on its own is bound: either way
OPTIONAL = "optional parameter"
#: how a parameter is bound as the caller passed it
_PASSED = (OPTIONAL, "parameter")
_DTYPE_MODULES = ("triton.language.", "torch.")


@dataclass(frozen=True)
class _Tensor:
    """A tensor the host code made or received (a value in the evaluator's environment)."""

    root: str
    shape: tuple[str, ...] | None = None
    numel: str | None = None
    derived: tuple[str, ...] = ()
    #: its element type where the host code makes it so (``dtype=torch.int32``, ``.to(torch.int32)``)
    dtype: str | None = None


@dataclass(frozen=True)
class HostConfig:
    """A ``triton.Config(...)`` the host code builds: (name, value, the text it was written as) of each
    constexpr it sets and each option it passes; a value that cannot be resolved is UNKNOWN."""

    values: tuple[tuple[str, Any, str], ...]
    options: tuple[tuple[str, Any, str], ...]

    @property
    def known(self) -> bool:
        return all(_const(v) for _, v, _ in (*self.values, *self.options))

    def text(self) -> str:
        """The config written out with its values (an unresolved one as the text it was written as)."""
        def shown(v: Any, text: str) -> str:
            return repr(v) if isinstance(v, (int, float, bool, str)) and _const(v) else text

        values = ", ".join(f"{k!r}: {shown(v, t)}" for k, v, t in self.values)
        options = "".join(f", {k}={shown(v, t)}" for k, v, t in self.options)
        return f"triton.Config({{{values}}}{options})"


#: ``triton.Config``, as its module's names resolve
CONFIG_CALLS = frozenset({"triton.Config", "triton.runtime.Config", "triton.runtime.autotuner.Config"})
#: a comprehension that builds more values than this is unknown
MAX_COMPREHENSION = 4096


@dataclass(frozen=True)
class _Lambda:
    node: cst.Lambda
    env: dict


@dataclass
class _Value:
    """A resolved value with how it was found (kept beside the value in the environment), and the
    expression it was assigned from: ``index`` is its position when a name was unpacked from one
    value (``M, N = x.shape``: ``x.shape`` at 0 and 1, of ``arity`` 2; ``*lead, n = x.shape``: ``n``
    at -1, of ``arity`` 0, a number of names not known)."""

    value: Any
    how: str
    node: cst.BaseExpression | None = None
    index: int | None = None
    arity: int = 0
    #: the bindings of the names ``node`` reads, as they were when it was assigned (``S`` of ``B, S =
    #: x.shape`` reads the ``x`` before a later ``x = x.view(B * S)``)
    seen: dict | None = None
    #: a parameter the module's callers pass other values than its default: the default's value
    default: Any = None


#: a name's binding in the host code at a launch (:class:`HostScope`)
Binding = _Value


@dataclass(frozen=True)
class HostScope:
    """The host code's state at one launch, as the evaluator reached it on its path: each name's
    binding, the asserts run before it and the branch tests that hold at it. The symbolic engine
    reads launches through it (:mod:`kernlint.engine.launch_terms`)."""

    env: dict

    def binding(self, name: str) -> Binding | None:
        return self.env.get(name) if name not in _PATH_ENTRIES else None

    @property
    def asserts(self) -> tuple[cst.BaseExpression, ...]:
        held = self.env.get(_ASSERTS)
        return held.value if held is not None else ()

    @property
    def guarded_asserts(self) -> tuple[tuple[tuple, cst.BaseExpression], ...]:
        """(the branch tests of its path, as :attr:`conditions`; the test) of each assert run before
        the launch on a path of an ``if`` other than the launch's (``if bias is not None: assert
        bias.shape[0] == N``): what it states holds wherever those tests do."""
        held = self.env.get(_GUARDED)
        return held.value if held is not None else ()

    def seen_at(self, test: cst.BaseExpression) -> dict | None:
        """The bindings of the names ``test`` (an assert's or a branch's) read when it ran."""
        held = self.env.get(_READ)
        entry = held.value.get(id(test)) if held is not None else None
        return entry[1] if entry is not None and entry[0] is test else None

    @property
    def launched_before(self) -> tuple[str, ...]:
        """The kernels the host code launches on every path to this launch, before it."""
        held = self.env.get(_LAUNCHED)
        return held.value if held is not None else ()

    @property
    def conditions(self) -> tuple[tuple[cst.BaseExpression, bool], ...]:
        """(test, holds) of the ``if``/``elif`` branches the launch sits in (``holds`` False: an
        earlier test of the chain that failed)."""
        held = self.env.get(_PATH)
        return held.value if held is not None else ()

    def stated_rank(self, tensor: str, under: tuple = (), bare: bool = False) -> int | None:
        """The rank of ``tensor`` where the tests the path guarantees (:func:`held_tests`) state its
        whole shape: written out (``x.shape == (M, N)``), or a rank and a relation for each size
        (``x.ndim != 1 or x.size(0) != M``, ``ids.max() < x.shape[1]``). A rank alone gives sizes
        nothing relates to the rest; reading the tensor as laid out contiguously in them would invent
        a layout the wrapper does not state (a packed ``qkv`` of rank 2 is no row of ``q_size +
        k_size`` elements). ``bare``: the rank a test states, whatever relates its sizes."""
        rank, sized = None, set()
        for test, holds in held_tests(self, under):
            if len(test.comparisons) == 1:
                # a size bounded by a stated relation (``pos.max() < cache.shape[2]``) is one of its
                # own, which convicts only where that relation ties it to what the kernel receives
                sides = (test.left, test.comparisons[0].comparator)
                for side, other in (sides, sides[::-1]):
                    axis = _axis_of(side)
                    if axis is not None and axis[0] == tensor and not _is_stride(side):
                        sized.add(axis[1])
                    elif _bounds_values(other):
                        # (what a stated bound of a tensor's elements compares them with, a product
                        # of sizes or a name bound to one, ``slots.max() < cache.shape[0] * rows``,
                        # ties those sizes to what the kernel gathers as much)
                        sized |= {axis[1] for axis in _axes_in(side, self) if axis[0] == tensor}
            equal = cst.Equal if holds else cst.NotEqual
            stated = _stated_rank(test, equal)
            if stated is not None and stated[0] == tensor:
                if _stated_rank(test, equal, listed=False) is None:
                    return stated[1]  # the shape written out
                rank = stated[1]
            if type(test.comparisons[0].operator) is equal and len(test.comparisons) == 1:
                for side, other in ((test.left, test.comparisons[0].comparator),
                                    (test.comparisons[0].comparator, test.left)):
                    front, listed = shape_slice(side), shape_listed(other)
                    if front is not None and front[0] == tensor and listed is not None:
                        sized |= set(range(front[1], front[1] + len(listed)))  # ``x.shape[:2] == (B, H)``
        if rank is not None:
            # a size the wrapper reads into a name (``hidden = x.shape[1]``) is one the launch can relate
            for name, b in self.env.items():
                axis = _axis_of(b.node) if name not in _PATH_ENTRIES and isinstance(b, _Value) else None
                if axis is not None and axis[0] == tensor and not _is_stride(b.node):
                    sized.add(axis[1])
        # (the leading size may stay unstated, a table's row count: it is a size of its own, which
        # convicts only where a stated relation ties it to what the kernel receives)
        if rank is not None and (bare or all(i in sized or i - rank in sized for i in range(1, rank))):
            return rank
        return None

    def same_shape_as(self, tensor: str, under: tuple = ()) -> str | None:
        """The other tensor a test the path guarantees says ``tensor`` has the shape of
        (``assert v.shape == k.shape``, ``if v.shape != k.shape: raise``)."""
        for test, holds in held_tests(self, under):
            if len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not (
                    cst.Equal if holds else cst.NotEqual):
                continue
            sides = (test.left, test.comparisons[0].comparator)
            for side, other in (sides, sides[::-1]):
                mate = shape_tensor(other)
                if shape_tensor(side) == tensor and mate is not None and mate != tensor:
                    return mate
        return None

    def indexed_axes(self, also: tuple = ()) -> dict[str, tuple[int | None, int, int]]:
        """Each tensor's axes as the host code at the launch (its bindings, asserts and ``also``, the
        launch's own expressions) reads them: (the rank an assert states, ``assert x.dim() == 4``;
        the last axis read from the front; the farthest read from the back), for :func:`front_axis`."""
        nodes = [b.node for b in self.env.values() if isinstance(b.node, cst.CSTNode)]
        nodes += [n for n in (*self.asserts, *also) if isinstance(n, cst.CSTNode)]
        return _indexed_axes(nodes)

    def unpacked_rank(self, tensor: str, current: Binding | None = None) -> int | None:
        """The number of names ``tensor.shape`` was unpacked into on the path (``M, N = x.shape``;
        ``B, T, H, K, V = *k.shape, v.shape[-1]``: 4 of ``k``), where the unpacking read ``current``,
        the binding of ``tensor`` asked about (not one the name had before it was bound again)."""
        for b in self.env.values():
            if b.index is None or not b.arity or (b.seen or {}).get(tensor) is not current:
                continue  # (a name unpacked beside a starred one, ``*lead, n = x.shape``, says no rank)
            if shape_tensor(b.node) == tensor:
                return b.arity
            spread = _spread_shape(b.node)
            if spread is not None and spread[1] == tensor and b.arity >= len(b.node.elements) - 1:
                return b.arity - (len(b.node.elements) - 1)
        return None


def shape_tensor(node) -> str | None:
    """``x`` of ``x.shape`` or ``x.size()``."""
    if isinstance(node, cst.Attribute) and node.attr.value == "shape" and isinstance(node.value, cst.Name):
        return node.value.value
    if (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "size" and isinstance(node.func.value, cst.Name)):
        return node.func.value.value
    return None


def shape_slice(node) -> tuple[str, int] | None:
    """(tensor, first axis) of a slice of a shape from the front, ``x.shape[:3]`` or ``x.size()[1:]``
    (names unpacked from it are sizes from that axis on; how many the shape has, it does not say)."""
    if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice)):
        return None
    tensor = shape_tensor(node.value)
    part = node.slice[0].slice
    if tensor is None or part.step is not None:
        return None
    if part.lower is None:
        return tensor, 0
    if isinstance(part.lower, cst.Integer):
        return tensor, int(part.lower.evaluated_value)
    return None


def _spread_shape(node) -> tuple[int, str] | None:
    """(position, tensor) of the one ``*x.shape`` a tuple written out spreads (``(*k.shape, D)``)."""
    if not isinstance(node, (cst.Tuple, cst.List)):
        return None
    starred = [(i, e) for i, e in enumerate(node.elements) if isinstance(e, cst.StarredElement)]
    if len(starred) != 1:
        return None
    tensor = shape_tensor(starred[0][1].value)
    return (starred[0][0], tensor) if tensor is not None else None


def unpacked_part(node, index: int, arity: int):
    """What name ``index`` of ``arity`` unpacked from ``node`` holds: (tensor, axis) where it is a
    size of a shape (``M, N = x.shape``; ``B, T, H, K, V = *k.shape, v.shape[-1]``: T is
    ``(k, 1)``), the expression written for it in a tuple that spreads a shape (V: ``v.shape[-1]``),
    else None."""
    tensor = shape_tensor(node)
    if tensor is not None:
        return tensor, index
    if index < 0:
        return None  # counted from the back of a sequence whose length is not known
    if isinstance(node, cst.IfExp):
        # ``h, w = (a, b) if transposed else (b, a)``: each name is the test's choice of its part
        return element(node, index, arity)
    sliced = shape_slice(node)
    if sliced is not None:
        return sliced[0], sliced[1] + index
    spread = _spread_shape(node)
    if spread is None:
        return None
    at, tensor = spread
    length = arity - (len(node.elements) - 1)
    if length < 0:
        return None
    if index < at:
        return node.elements[index].value
    if index < at + length:
        return tensor, index - at
    return node.elements[index - length + 1].value


def element(node, index: int, arity: int | None = None):
    """The expression for element ``index`` of a sequence: of a tuple written out (of ``arity``
    elements where that is known), of each side of a choice, ``k[index]`` of a name ``k``
    (``kh, kw = (k, k) if isinstance(k, int) else k``: the other side is indexed); else None."""
    if isinstance(node, (cst.Tuple, cst.List)) and not any(isinstance(el, cst.StarredElement) for el in node.elements):
        n = len(node.elements)
        return node.elements[index].value if (n == arity if arity is not None else 0 <= index < n) else None
    if isinstance(node, cst.IfExp):
        sides = [element(side, index, arity) for side in (node.body, node.orelse)]
        return None if None in sides else node.with_changes(body=sides[0], orelse=sides[1])
    if isinstance(node, cst.Name):
        return cst.Subscript(value=node, slice=[cst.SubscriptElement(slice=cst.Index(value=cst.Integer(str(index))))])
    return None


def front_axis(axes: tuple[int | None, int, int] | None, axis: int) -> int | None:
    """The axis counted from the front that ``axis`` (counted from the back) names, given a tensor's
    :meth:`HostScope.indexed_axes`: a stated rank names it; otherwise the least rank the axes read
    from the front show names it only where a later axis is read from the front too
    (``k.stride(3)`` beside ``k.size(-2)``: axis 2). The last axis alone is never so named: a
    row-major wrapper reads ``x.stride(0)`` and ``x.size(-1)`` of a tensor of any rank."""
    if axes is None:
        return None
    stated, front, back = axes
    if stated is not None:
        return stated + axis if stated + axis >= 0 else None
    named = max(front + 1, back) + axis
    return named if 0 <= named < front else None


def _indexed_axes(nodes: list) -> dict[str, tuple[int | None, int, int]]:
    out: dict[str, list] = {}
    seen: set[int] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        found = _axis_of(node)
        if found is not None:
            entry = out.setdefault(found[0], [None, -1, 0])
            if found[1] >= 0:
                entry[1] = max(entry[1], found[1])
            else:
                entry[2] = max(entry[2], -found[1])
        stated = _stated_rank(node)
        if stated is not None:
            out.setdefault(stated[0], [None, -1, 0])[0] = stated[1]
        stack.extend(node.children)
    return {t: tuple(v) for t, v in out.items()}


def _is_stride(node) -> bool:
    return type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "stride"


def _axis_of(node) -> tuple[str, int] | None:
    """(tensor, literal axis) of ``tensor.shape[i]``, ``tensor.size(i)`` or ``tensor.stride(i)``."""
    kind = type(node)
    if kind is cst.Subscript and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index \
            and type(node.value) is cst.Attribute and node.value.attr.value == "shape" and type(node.value.value) is cst.Name:
        i = int_literal(node.slice[0].slice.value)
        return (node.value.value.value, i) if i is not None else None
    if kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in ("size", "stride") \
            and type(node.func.value) is cst.Name and len(node.args) == 1:
        i = int_literal(node.args[0].value)
        return (node.func.value.value, i) if i is not None else None
    return None


#: the tensor methods that give its least or greatest element (``ids.max()``): which of the two
VALUE_BOUNDS = {"max": "max", "amax": "max", "min": "min", "amin": "min"}


def _bounds_values(node) -> bool:
    """Whether an expression is a tensor's least or greatest element (``ids.max()``,
    ``int(slots[:n].max())``, ``ids.max().item()``)."""
    while isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Name) and func.value == "int" and len(node.args) == 1:
            node = node.args[0].value
        elif isinstance(func, cst.Attribute) and func.attr.value == "item" and not node.args:
            node = func.value
        else:
            return isinstance(func, cst.Attribute) and func.attr.value in VALUE_BOUNDS and not node.args
    return False


def _axes_in(side, scope: "HostScope") -> set[tuple[str, int]]:
    """The sizes (tensor, axis) an arithmetic expression reads: ``x.shape[i]`` and ``x.size(i)``, in
    sums and products and through a name bound to one (not strides)."""
    out, todo = set(), [side]
    while todo:
        node = todo.pop()
        axis = _axis_of(node)
        if axis is not None:
            if not _is_stride(node):
                out.add(axis)
        elif isinstance(node, cst.BinaryOperation):
            todo += [node.left, node.right]
        elif isinstance(node, cst.UnaryOperation):
            todo.append(node.expression)
        elif isinstance(node, cst.Name):
            bound = scope.binding(node.value)
            if bound is None or not isinstance(bound.node, cst.BaseExpression):
                continue
            if bound.index is not None:  # ``rows, cols = x.shape``
                unpacked = bound.node
                if (isinstance(unpacked, cst.Attribute) and unpacked.attr.value == "shape"
                        and isinstance(unpacked.value, cst.Name)):
                    out.add((unpacked.value.value, bound.index))
            elif (found := _axis_of(bound.node)) is not None and not _is_stride(bound.node):
                out.add(found)
    return out


def _stated_rank(node, equal: type = cst.Equal, listed: bool = True) -> tuple[str, int] | None:
    """(tensor, rank) of ``x.dim() == 4``, ``x.ndim == 4``, ``len(x.shape) == 4`` or (``listed``)
    ``x.shape == (B, H, N, D)`` (either side); ``equal``: the operator that states it (``cst.NotEqual``
    for a test that fails)."""
    if not (type(node) is cst.Comparison and len(node.comparisons) == 1
            and type(node.comparisons[0].operator) is equal):
        return None
    sides = (node.left, node.comparisons[0].comparator)
    for a, b in (sides, sides[::-1]):
        n = int_literal(b)
        tensor = _rank_of(a) if n is not None else None
        if tensor is not None:
            return tensor, n
        sizes = shape_listed(b) if listed else None
        tensor = shape_tensor(a) if sizes is not None else None
        if tensor is not None:
            return tensor, len(sizes)
    return None


def shape_listed(node) -> list | None:
    """The sizes a shape is compared with, written out: ``(B, N)``, ``[B, N]``, ``torch.Size([B, N])``."""
    if isinstance(node, cst.Call) and N.dotted(node.func) in ("torch.Size", "Size") and len(node.args) == 1:
        node = node.args[0].value
    if isinstance(node, (cst.Tuple, cst.List)) and all(isinstance(e, cst.Element) for e in node.elements):
        return [e.value for e in node.elements]
    return None


def test_parts(test, holds: bool, resolve: Callable | None = None, depth: int = 8):
    """(part, whether it holds) of each part a test says on its own: the parts of an ``and`` that
    holds, of an ``or`` that fails (``if x is None or n % B: raise`` passed: ``n % B`` fails), through
    ``not`` and, with ``resolve`` (a name's assigned expression), a name bound to such a test
    (``if oneslab:`` of ``oneslab = (...)``); ``depth`` levels deep at most."""
    todo = [(test, holds, depth)]
    while todo:
        test, holds, left = todo.pop()
        if left > 0:
            if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And if holds else cst.Or):
                todo += [(test.right, holds, left - 1), (test.left, holds, left - 1)]
                continue
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                todo.append((test.expression, not holds, left - 1))
                continue
            if isinstance(test, cst.Name) and resolve is not None:
                bound = resolve(test.value)
                if isinstance(bound, (cst.BooleanOperation, cst.UnaryOperation)):
                    todo.append((bound, holds, left - 1))
                    continue
        yield test, holds


def held_tests(scope: "HostScope", under: tuple = ()):
    """(comparison, holds) of each test the path to a launch guarantees: the parts of its asserts
    and of the branches it sits in (:func:`test_parts`). ``under``: tests taken to hold too (the test
    of ``bias if bias is not None else x``, where ``bias`` is read): the asserts run on a path whose
    every test holds at the launch or is one of them are held as well."""
    asserts = list(scope.asserts)
    if under:
        given = {_test_text(t) for t in under} | {_test_text(t) for t, holds in scope.conditions if holds}
        failed = {_test_text(t) for t, holds in scope.conditions if not holds}
        asserts += [test for path, test in scope.guarded_asserts
                    if all(_test_text(t) in (given if holds else failed) for t, holds in path)]
    for test, holds in [(t, True) for t in asserts] + list(scope.conditions):
        for part, part_holds in test_parts(test, holds):
            if isinstance(part, cst.Comparison):
                yield part, part_holds


def _test_text(node) -> str:
    return " ".join(cst.Module([]).code_for_node(node).split())


def _rank_of(node) -> str | None:
    """``x`` of ``x.ndim``, ``x.dim()``, ``x.ndimension()`` or ``len(x.shape)``."""
    if isinstance(node, cst.Attribute) and node.attr.value == "ndim" and isinstance(node.value, cst.Name):
        return node.value.value
    if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in ("dim", "ndimension") and isinstance(node.func.value, cst.Name):
        return node.func.value.value
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len" and len(node.args) == 1:
        return shape_tensor(node.args[0].value) if isinstance(node.args[0].value, cst.Attribute) else None
    return None


def _literal(node: cst.Integer | cst.Float | cst.SimpleString) -> Any:
    """A literal's value without ``evaluated_value`` (which compiles the text for every literal)."""
    text = node.value
    if isinstance(node, cst.SimpleString):
        quote = text[-1]
        if text[0] == quote and "\\" not in text and not text.startswith(quote * 3):
            return text[1:-1]
        return node.evaluated_value
    try:
        return int(text.replace("_", ""), 0) if isinstance(node, cst.Integer) else float(text.replace("_", ""))
    except ValueError:
        return node.evaluated_value


def _const(v: Any) -> bool:
    return not isinstance(v, (_Unknown, _Tensor, _Lambda, cst.FunctionDef))


class HostEvaluator:
    """Evaluates host expressions in an environment (name -> _Value)."""

    def __init__(self, module: cst.Module, imports: N.ImportMap, functions: dict[str, cst.FunctionDef]):
        self.module = module
        self.imports = imports
        self.functions = functions
        #: the module's names, as the module-level walk binds them (helpers run over these)
        self.module_env: dict = {}
        self._calls = 0
        #: while a ``backward`` runs: what its ``forward`` saved on the context
        self.saved: _Saved | None = None
        self._calls_by_name: dict[str, list[cst.Call]] | None = None

    def passed_by_callers(self, fn: cst.FunctionDef) -> set[str]:
        """The parameters of ``fn`` with a default that some call in the module passes a value the
        module does not fix (``conv2d(x, w, self.stride, self.padding)`` of ``def conv2d(x, w,
        stride=(1, 1), padding=(0, 0))``): the default is then one value of many. (Where every such
        value is a constant of the module, the default stays the value read.)"""
        if self._calls_by_name is None:
            self._calls_by_name = {}
            for node in N.all_nodes(self.module):
                if type(node) is cst.Call and N.method_name(node.func):
                    self._calls_by_name.setdefault(N.method_name(node.func), []).append(node)
        defaults = {p.name.value: p.default for p in N.parameters(fn.params) if p.default is not None}
        out = set()
        for call in self._calls_by_name.get(fn.name.value, ()):
            found = N.call_arguments(fn, call)
            for name, arg in (found[0].items() if found is not None else ()):
                if name in defaults and self.value(arg, self.module_env) is UNKNOWN:
                    out.add(name)
        return out

    def code(self, node: cst.CSTNode) -> str:
        return source_text(self.module, node).strip()

    # ---------------------------------------------------------------- expressions
    def value(self, node: cst.BaseExpression, env: dict, depth: int = 0) -> Any:
        try:
            return self._value(node, env, depth)
        except (ArithmeticError, TypeError, ValueError, IndexError, KeyError, RecursionError, OverflowError):
            return UNKNOWN

    def _value(self, node: cst.BaseExpression, env: dict, depth: int) -> Any:
        if depth > MAX_EXPR_DEPTH:
            return UNKNOWN
        d = depth + 1
        kind = type(node)  # not isinstance: libcst's classes are abstract, and that check is slow
        if kind in (cst.Integer, cst.Float, cst.SimpleString):
            return _literal(node)
        if kind is cst.Name:
            if node.value in env:
                return env[node.value].value
            return {"True": True, "False": False, "None": None}.get(node.value, UNKNOWN)
        if kind in (cst.Tuple, cst.List):
            items = []
            for el in node.elements:
                if isinstance(el, cst.StarredElement):
                    inner = self._value(el.value, env, d)
                    if not isinstance(inner, (tuple, list)):
                        return UNKNOWN
                    items.extend(inner)
                else:
                    items.append(self._value(el.value, env, d))
            return tuple(items) if kind is cst.Tuple else list(items)
        if kind is cst.Dict:
            out = {}
            for el in node.elements:
                if not isinstance(el, cst.DictElement):
                    return UNKNOWN
                key = self._value(el.key, env, d)
                if isinstance(key, _Unknown) or isinstance(key, (list, dict)):
                    return UNKNOWN
                out[key] = self._value(el.value, env, d)
            return out
        if kind is cst.Subscript:
            return self._subscript(node, env, d)
        if kind is cst.BinaryOperation:
            a, b = self._value(node.left, env, d), self._value(node.right, env, d)
            return _binary(type(node.operator).__name__, a, b)
        if kind is cst.UnaryOperation:
            a = self._value(node.expression, env, d)
            if not _const(a):
                return UNKNOWN
            op = type(node.operator).__name__
            return {"Minus": lambda: -a, "Plus": lambda: +a, "Not": lambda: not a, "BitInvert": lambda: ~a}[op]()
        if kind is cst.Comparison:
            return self._comparison(node, env, d)
        if kind is cst.BooleanOperation:
            a = self._value(node.left, env, d)
            if not _const(a):
                return UNKNOWN
            if isinstance(node.operator, cst.And):
                return self._value(node.right, env, d) if a else a
            return a if a else self._value(node.right, env, d)
        if kind is cst.IfExp:
            test = self._value(node.test, env, d)
            if not _const(test):
                return _either_tensor(self._value(node.body, env, d), self._value(node.orelse, env, d))
            return self._value(node.body if test else node.orelse, env, d)
        if kind is cst.Lambda:
            return _Lambda(node, env)
        if kind is cst.ListComp:
            return self.comprehension(node, env, d)
        if kind is cst.Attribute:
            return self._attribute(node, env, d)
        if kind is cst.Call:
            return self._call(node, env, d)
        return UNKNOWN

    def comprehension(self, node: cst.ListComp, env: dict, d: int, iterable: Callable | None = None) -> list:
        """The list a comprehension builds, where its iterables and conditions are known; raises
        ValueError otherwise (the value is unknown). With ``iterable`` (what an iterable can hold on
        some machine), the values it can build: an iterable not known gives its name one unknown
        value, a condition not known keeps the item."""
        read = iterable or self._value
        out: list = []

        def walk(comp: cst.CompFor, scope: dict) -> None:
            items = read(comp.iter, scope, d)
            if isinstance(items, _Unknown) and iterable is not None:
                items = [UNKNOWN]
            if not isinstance(items, (list, tuple, range)) or len(items) > MAX_COMPREHENSION:
                raise ValueError("an iterable not known")
            for item in items:
                if isinstance(comp.target, (cst.Tuple, cst.List)) and not isinstance(item, _Unknown) and not (
                        isinstance(item, (tuple, list)) and len(item) == len(comp.target.elements)):
                    raise ValueError("a target not unpacked")
                inner = dict(scope)
                _assign(self, comp.target, item, inner, "loop")
                held = [self._value(c.test, inner, d) for c in comp.ifs]
                if not all(_const(h) for h in held) and iterable is None:
                    raise ValueError("a condition not known")
                if not all(h for h in held if _const(h)):
                    continue
                if comp.inner_for_in is not None:
                    walk(comp.inner_for_in, inner)
                else:
                    out.append(self._value(node.elt, inner, d))
                    if len(out) > MAX_COMPREHENSION:
                        raise ValueError("too many values")

        walk(node.for_in, env)
        return out

    def _config(self, node: cst.Call, env: dict, d: int) -> HostConfig | _Unknown:
        positional = [a for a in node.args if a.keyword is None]
        kwargs = positional[0].value if positional else next(
            (a.value for a in node.args if a.keyword is not None and a.keyword.value == "kwargs"), None)
        if not isinstance(kwargs, cst.Dict):
            return UNKNOWN
        values = []
        for el in kwargs.elements:
            key = self._value(el.key, env, d) if isinstance(el, cst.DictElement) else UNKNOWN
            if not isinstance(key, str):
                return UNKNOWN
            values.append((key, self._value(el.value, env, d), self.code(el.value)))
        options = tuple((a.keyword.value, self._value(a.value, env, d), self.code(a.value)) for a in node.args
                        if a.keyword is not None and a.keyword.value not in ("kwargs", "pre_hook"))
        return HostConfig(tuple(values), options)

    def _comparison(self, node: cst.Comparison, env: dict, d: int) -> Any:
        left = self._value(node.left, env, d)
        for target in node.comparisons:
            right = self._value(target.comparator, env, d)
            if not (_const(left) and _const(right)):
                return UNKNOWN
            op = COMPARE.get(type(target.operator).__name__)
            if op is None:
                return UNKNOWN
            if not op(left, right):
                return False
            left = right
        return True

    def _subscript(self, node: cst.Subscript, env: dict, d: int) -> Any:
        base = self._value(node.value, env, d)
        if isinstance(base, _Tensor):
            return replace(base, shape=None, numel=None, derived=(*base.derived, "slice"))
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return UNKNOWN
        key = self._value(node.slice[0].slice.value, env, d)
        if isinstance(base, dict) and _const(key) and key in base:
            return base[key]
        if isinstance(base, (list, tuple)) and isinstance(key, int) and not isinstance(key, bool):
            return base[key]
        return UNKNOWN

    def _attribute(self, node: cst.Attribute, env: dict, d: int) -> Any:
        name = self.imports.resolve(node)
        if name and name.startswith(_DTYPE_MODULES) and name.count(".") == name.startswith("triton.language.") + 1:
            # a dtype (``tl.float16``, ``torch.bfloat16``): kept as the text Triton's compile worker reads
            return "tl." + name.rsplit(".", 1)[1] if name.startswith("triton.language.") else name
        base = self._value(node.value, env, d)
        if isinstance(base, _Tensor) and node.attr.value in ("T", "mT"):
            return replace(base, shape=None, derived=(*base.derived, node.attr.value))
        return UNKNOWN

    def _call(self, node: cst.Call, env: dict, d: int) -> Any:
        func = node.func
        if isinstance(func, cst.Attribute):
            base = self._value(func.value, env, d)
            if isinstance(base, _Tensor):
                return self._tensor_method(base, func.attr.value, node, env, d)
            if isinstance(base, dict) and func.attr.value == "get" and node.args:
                key = self._value(node.args[0].value, env, d)
                if _const(key) and key in base:
                    return base[key]
                return self._value(node.args[1].value, env, d) if len(node.args) > 1 else None
        name = self.imports.resolve(func) or ""
        short = name.rsplit(".", 1)[-1]
        if any(a.star for a in node.args):
            return UNKNOWN
        if name.startswith("torch.") and (short in ALLOCATORS or short in LIKE_ALLOCATORS):
            return self._allocation(short, node, env, d)
        if name in CONFIG_CALLS:
            return self._config(node, env, d)
        if name.startswith("torch.") and short in FROM_DATA:
            shape = data_shape(node)
            if shape:
                return _Tensor(f"<{short}>", tuple(map(str, shape)), str(math.prod(shape)),
                               dtype=self._dtype_argument(node))
        if isinstance(func, cst.Name) and func.value in env and isinstance(env[func.value].value, _Lambda):
            return self._apply_lambda(env[func.value].value, node, env, d)
        args = [self._value(a.value, env, d) for a in node.args if a.keyword is None]
        if not all(_const(a) for a in args):
            local = env.get(func.value) if isinstance(func, cst.Name) else None
            if local is not None and isinstance(local.value, cst.FunctionDef):
                return _dtypes_only(self._helper(local.value, node, env, d, through_loops=True))
            return UNKNOWN
        if name in ("triton.next_power_of_2", "triton.language.next_power_of_2") and len(args) == 1:
            n = int(args[0])
            return 1 if n <= 1 else 1 << (n - 1).bit_length()
        if name in ("triton.cdiv", "triton.language.cdiv") and len(args) == 2:
            return -(-args[0] // args[1])
        local = env.get(func.value) if isinstance(func, cst.Name) else None
        if local is None and isinstance(func, cst.Name):
            builtin = _BUILTINS.get(func.value)
            if builtin is not None and args:
                return builtin(*args)
        if name in ("math.ceil", "math.floor", "math.log2", "math.sqrt") and len(args) == 1:
            return getattr(math, short)(args[0])
        fn = local.value if local is not None else None
        if isinstance(fn, cst.FunctionDef):
            return self._helper(fn, node, env, d)
        return UNKNOWN

    def _apply_lambda(self, lam: _Lambda, call: cst.Call, env: dict, d: int) -> Any:
        params = [p.name.value for p in lam.node.params.params]
        inner = dict(lam.env)
        for p, a in zip(params, call.args):
            inner[p] = _Value(self._value(a.value, env, d), "argument")
        return self._value(lam.node.body, inner, d)

    def _helper(self, fn: cst.FunctionDef, call: cst.Call, env: dict, d: int, through_loops: bool = False) -> Any:
        """A module function called with resolvable arguments: run its body as host code."""
        if self._calls >= MAX_CALL_DEPTH or not isinstance(fn.body, cst.IndentedBlock):
            return UNKNOWN
        inner = dict(self.module_env)
        bind_params(self, fn, inner, env, call)
        self._calls += 1
        try:
            result = run_block(self, fn.body.body, inner, want_return=True, through_loops=through_loops)
        finally:
            self._calls -= 1
        return UNKNOWN if result is None else result

    def _allocation(self, kind: str, node: cst.Call, env: dict, d: int) -> Any:
        positional = [a for a in node.args if a.keyword is None]
        dtype = self._dtype_argument(node)
        if kind.endswith("_like"):
            src = self._value(positional[0].value, env, d) if positional else UNKNOWN
            if isinstance(src, _Tensor):
                return _Tensor(f"<{kind}>", src.shape, src.numel, dtype=dtype or src.dtype)
            return _Tensor(f"<{kind}>", dtype=dtype)
        dims = size_arguments(kind, node)
        if not dims:
            return _Tensor(f"<{kind}>", dtype=dtype)
        shape = tuple(self._dim(el, env, d) for el in dims)
        return _Tensor(f"<{kind}>", shape, " * ".join(shape) if len(shape) > 1 else shape[0], dtype=dtype)

    def _dtype_argument(self, node: cst.Call) -> str | None:
        """The ``torch`` dtype a call's ``dtype=`` keyword names (``torch.int32``), or None."""
        for a in node.args:
            if a.keyword is not None and a.keyword.value == "dtype":
                return torch_dtype(self.imports.resolve(a.value))
        return None

    def _dim(self, node: cst.BaseExpression, env: dict, d: int) -> str:
        v = self._value(node, env, d)
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else self.code(node)

    def _tensor_method(self, t: _Tensor, method: str, node: cst.Call, env: dict, d: int) -> Any:
        if method in CASTS:
            return replace(t, dtype=CASTS[method])
        if method in ("to", "type"):
            named = [torch_dtype(self.imports.resolve(a.value)) for a in node.args
                     if a.keyword is None or a.keyword.value == "dtype"]
            named = [n for n in named if n is not None]
            return replace(t, dtype=named[0]) if named else t
        if method in ("contiguous", "cuda", "clone", "detach"):
            return replace(t, derived=(*t.derived, method)) if method in ("contiguous", "clone") else t
        if method in ("view", "reshape", "flatten", "ravel", "expand", "permute", "transpose", "t", "unsqueeze",
                      "squeeze"):
            shape = None
            if method in ("view", "reshape") and node.args:
                dims = [a.value for a in node.args]
                if len(dims) == 1 and isinstance(dims[0], (cst.Tuple, cst.List)):
                    dims = [el.value for el in dims[0].elements]
                shape = tuple(self._dim(x, env, d) for x in dims)
                if "-1" in shape:
                    shape = None if len(shape) > 1 else (t.numel,) if t.numel else None
            elif method in ("flatten", "ravel"):
                shape = (t.numel,) if t.numel else None
            numel = t.numel if method not in ("expand",) else None
            return _Tensor(t.root, shape, numel, (*t.derived, method), t.dtype)
        if method in ("numel", "size", "stride", "dim", "item", "data_ptr", "element_size"):
            return UNKNOWN
        return UNKNOWN


#: ``x.<name>()``: the casts to one dtype
CASTS = {"float": "torch.float32", "half": "torch.float16", "bfloat16": "torch.bfloat16", "double": "torch.float64",
         "int": "torch.int32", "long": "torch.int64", "short": "torch.int16", "bool": "torch.bool"}


def torch_dtype(name: str | None) -> str | None:
    """``torch.int32`` for a name that resolves to a torch dtype (``torch.int32``, ``torch.int``)."""
    if not name or not name.startswith("torch."):
        return None
    short = name[len("torch."):]
    short = {"int": "int32", "long": "int64", "short": "int16", "float": "float32", "half": "float16",
             "double": "float64"}.get(short, short)
    return f"torch.{short}" if re.fullmatch(r"(u?int\d+|float\d+|bfloat16|bool|float8\w*)", short) else None


#: ``torch.<name>(shape...)``: the allocators that take a shape
ALLOCATORS = frozenset({"empty", "zeros", "ones", "full", "rand", "randn", "randint", "empty_strided"})
#: ``torch.<name>(x)``: the allocators that copy another tensor's shape
LIKE_ALLOCATORS = frozenset({"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like"})
#: ``torch.<name>([[...], ...])``: the constructors from a nested list of values
FROM_DATA = frozenset({"tensor", "as_tensor"})


def size_arguments(kind: str, node: cst.Call) -> list[cst.BaseExpression] | None:
    """The expressions an allocator's size is written with: ``torch.empty(M, N)`` and
    ``torch.empty((M, N))`` -> [M, N], ``torch.full((M, N), v)`` -> [M, N], ``torch.randint(lo, hi,
    (n,))`` -> [n], ``size=(...)``; ``torch.empty(x.shape)`` -> [x.shape]. None where starred."""
    if any(a.star for a in node.args):
        return None
    positional = [a.value for a in node.args if a.keyword is None]
    given = [a.value for a in node.args if a.keyword is not None and a.keyword.value == "size"]
    if given:
        sized = given
    elif kind == "full":
        sized = positional[:1]
    elif kind == "randint":
        sized = positional[-1:] if len(positional) >= 2 else []  # (high, size) or (low, high, size)
    else:
        sized = positional
    if len(sized) == 1 and isinstance(sized[0], (cst.Tuple, cst.List)):
        if any(isinstance(el, cst.StarredElement) for el in sized[0].elements):
            return None
        return [el.value for el in sized[0].elements]
    return sized


def data_shape(node: cst.Call) -> tuple[int, ...] | None:
    """The shape of ``torch.tensor(data, ...)`` (or ``as_tensor``) where ``data`` is written out."""
    first = node.args[0] if node.args else None
    return literal_shape(first.value) if first is not None and first.keyword is None and not first.star else None


def literal_shape(node: cst.BaseExpression) -> tuple[int, ...] | None:
    """The shape of a nested list (or tuple) literal of values, as ``torch.tensor`` makes it:
    ``[[1, 2], [3, 4]]`` -> (2, 2); None for ragged, starred or comprehension-made data."""
    if not isinstance(node, (cst.List, cst.Tuple)):
        return ()
    items = list(node.elements)
    if any(isinstance(el, cst.StarredElement) for el in items):
        return None
    inner = [literal_shape(el.value) for el in items]
    if any(i is None for i in inner) or len(set(inner)) > 1:
        return None
    return (len(items), *(inner[0] if inner else ()))


#: a comparison operator's libcst class name -> what it computes (shared by the host-value evaluators)
COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "LessThan": lambda a, b: a < b, "LessThanEqual": lambda a, b: a <= b, "GreaterThan": lambda a, b: a > b,
    "GreaterThanEqual": lambda a, b: a >= b, "Equal": lambda a, b: a == b, "NotEqual": lambda a, b: a != b,
    "In": lambda a, b: a in b, "NotIn": lambda a, b: a not in b, "Is": lambda a, b: a is b,
    "IsNot": lambda a, b: a is not b,
}
_BUILTINS: dict[str, Callable[..., Any]] = {
    "min": min, "max": max, "int": int, "float": float, "abs": abs, "bool": bool, "len": len,
    "round": round, "pow": pow, "str": str, "range": range,
}


def _binary(op: str, a: Any, b: Any) -> Any:
    if not (_const(a) and _const(b)):
        return UNKNOWN
    if op == "Power" and isinstance(b, int) and abs(b) > 256:
        return UNKNOWN
    if op in ("LeftShift",) and isinstance(b, int) and b > 256:
        return UNKNOWN
    ops = {
        "Add": lambda: a + b, "Subtract": lambda: a - b, "Multiply": lambda: a * b, "Divide": lambda: a / b,
        "FloorDivide": lambda: a // b, "Modulo": lambda: a % b, "Power": lambda: a ** b,
        "LeftShift": lambda: a << b, "RightShift": lambda: a >> b, "BitAnd": lambda: a & b,
        "BitOr": lambda: a | b, "BitXor": lambda: a ^ b,
    }
    fn = ops.get(op)
    if fn is None:
        return UNKNOWN
    if op == "Multiply" and isinstance(a, (str, list, tuple)) or isinstance(b, (str, list, tuple)) and op == "Multiply":
        return UNKNOWN  # ``"x" * n`` is never a launch constant; refuse to build huge sequences
    return fn()


# -------------------------------------------------------------------- statements


#: what a tensor made from all of another is made with (a view of the whole, or its ``.contiguous()``)
WHOLE = frozenset({"view", "reshape", "flatten", "ravel", "unsqueeze", "squeeze", "contiguous"})


def _either_tensor(a: Any, b: Any) -> Any:
    """``a if test else b`` of two tensors made from all of one (``x.view(n, d) if x.is_contiguous()
    else x.reshape(n, d)``): that tensor, with what both sides say of it; anything else is unknown."""
    if not (isinstance(a, _Tensor) and isinstance(b, _Tensor) and a.root == b.root
            and set(a.derived) <= WHOLE and set(b.derived) <= WHOLE):
        return UNKNOWN
    same = lambda x, y: x if x == y else None  # noqa: E731
    derived = a.derived if a.derived == b.derived else ("reshape",)
    return _Tensor(a.root, same(a.shape, b.shape), same(a.numel, b.numel), derived, same(a.dtype, b.dtype))


def _dtypes_only(value: Any) -> Any:
    """What a helper called with tensors or unknown sizes returns, less all but the dtypes of the
    tensors it makes (``return sorted_ids, expert_ids`` of ``torch.zeros(..., dtype=torch.int32)``): its
    sizes are written in the helper's own names, and its numbers rest on values it was not given."""
    if isinstance(value, _Tensor):
        return _Tensor("<returned>", dtype=value.dtype)
    if isinstance(value, tuple):
        return tuple(_dtypes_only(v) for v in value)
    return UNKNOWN


def bind_params(ev: HostEvaluator, fn: cst.FunctionDef, env: dict, caller_env: dict | None = None,
                call: cst.Call | None = None) -> None:
    """Bind ``fn``'s parameters in ``env``: to a call's arguments when given, else to their defaults
    (a parameter without either is a tensor or a size the host passes: unknown, or a tensor)."""
    params = N.parameters(fn.params)
    bound: dict[str, _Value] = {}
    passed = N.call_arguments(fn, call) if call is not None else None
    if passed is not None:  # (a call that spreads its arguments binds none that is known)
        for name, value in passed[0].items():
            bound[name] = _Value(ev.value(value, caller_env or {}), "argument")
    for p in params:
        name = p.name.value
        if name in bound:
            env[name] = bound[name]
        elif p.default is not None and call is None and isinstance(p.default, cst.Name) and p.default.value == "None":
            # an optional argument (``bias=None``): whether the caller passes it is the caller's choice,
            # so the wrapper's tests of it take both ways
            env[name] = _Value(UNKNOWN, OPTIONAL)
        elif p.default is not None:
            default = ev.value(p.default, env)
            if call is None and _sizes_only(default) and name in ev.passed_by_callers(fn):
                # a size with a default the module's callers override: a size the caller passes
                env[name] = _Value(UNKNOWN, "parameter", default=default)
            else:
                env[name] = _Value(default, "default")
        else:
            env[name] = _Value(_Tensor(name), "parameter") if call is None else _Value(UNKNOWN, "parameter")


def is_number(value: Any) -> bool:
    """An integer, not a flag."""
    return isinstance(value, int) and not isinstance(value, bool)


def _sizes_only(value: Any) -> bool:
    """A number, or a tuple of numbers (``padding=(0, 0)``)."""
    if isinstance(value, tuple):
        return bool(value) and all(_sizes_only(v) for v in value)
    return is_number(value)


def _product_of(loop, env: dict) -> str | None:
    """The name ``n`` of ``for s in shape: n *= s`` where ``n`` is 1 before the loop (and the loop does
    nothing else), else None."""
    if not isinstance(loop, cst.For) or loop.orelse is not None or not isinstance(loop.target, cst.Name):
        return None
    body = loop.body.body
    line = body[0] if len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) else None
    step = line.body[0] if line is not None and len(line.body) == 1 else None
    if not (isinstance(step, cst.AugAssign) and isinstance(step.operator, cst.MultiplyAssign)
            and isinstance(step.target, cst.Name) and isinstance(step.value, cst.Name)
            and step.value.value == loop.target.value):
        return None
    before = env.get(step.target.value)
    return step.target.value if before is not None and before.value == 1 and before.value is not True else None


def _seen(node: cst.BaseExpression | None, env: dict) -> dict | None:
    if node is None:
        return None
    return {n: env[n] for n in N.names_in(node) if n in env and n not in _PATH_ENTRIES}


def _noting(env: dict, read: dict) -> None:
    """Add ``read`` (test id -> (test, the bindings it read)) to what the path's tests read."""
    if read:
        held = env[_READ].value if _READ in env else {}
        env[_READ] = _Value({**held, **read}, "read as of")


def _read_now(tests, env: dict) -> dict:
    return {id(t): (t, _seen(t, env)) for t in tests if t is not None}


def _assign(ev: HostEvaluator, target: cst.BaseExpression, value: Any, env: dict, how: str,
            node: cst.BaseExpression | None = None, seen: dict | None = None) -> None:
    """``seen``: the bindings ``node`` reads, where they were taken before an assignment of several
    names began to change them (``a, b = b, a``)."""
    if seen is None:
        seen = _seen(node, env)
    if isinstance(target, cst.Name):
        env[target.value] = _Value(value, how, node, seen=seen)
    elif isinstance(target, (cst.Tuple, cst.List)):
        elements = target.elements
        starred = any(isinstance(el, cst.StarredElement) for el in elements)
        if isinstance(value, (tuple, list)) and len(value) == len(elements) and not starred:
            nodes = [el.value for el in node.elements] if isinstance(node, (cst.Tuple, cst.List)) and len(
                node.elements) == len(elements) and not any(isinstance(el, cst.StarredElement)
                                                              for el in node.elements) else None
            seens = [_seen(n, env) for n in nodes] if nodes is not None else None
            for i, (el, v) in enumerate(zip(elements, value)):
                if nodes is not None:
                    _assign(ev, el.value, v, env, "tuple unpacking", nodes[i], seens[i])
                elif isinstance(el.value, cst.Name):
                    env[el.value.value] = _Value(v, "tuple unpacking", node, i, len(elements), seen)
                else:
                    _assign(ev, el.value, v, env, "tuple unpacking")
        else:
            for name in N.target_names(target):
                env[name] = _Value(UNKNOWN, how)
            if node is not None and not starred:
                for i, el in enumerate(elements):
                    if isinstance(el.value, cst.Name):
                        env[el.value.value] = _Value(UNKNOWN, how, node, i, len(elements), seen)
            elif node is not None:
                # ``*lead, n = x.shape``: the names before the star count from the front, those after
                # it from the back (``n`` is ``x.shape[-1]``); how many the star takes is not known
                at = next(i for i, el in enumerate(elements) if isinstance(el, cst.StarredElement))
                for i, el in enumerate(elements):
                    if i != at and isinstance(el.value, cst.Name):
                        index = i if i < at else i - len(elements)
                        env[el.value.value] = _Value(UNKNOWN, how, node, index, 0, seen)
    elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value in env:
        base = env[target.value.value].value
        if isinstance(base, (dict, list)) and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
            key = ev.value(target.slice[0].slice.value, env)
            if _const(key) and not isinstance(key, (list, dict)):
                try:
                    base = dict(base) if isinstance(base, dict) else list(base)
                    base[key] = value
                    env[target.value.value] = _Value(base, "item assignment")
                except (IndexError, TypeError):
                    env[target.value.value] = _Value(UNKNOWN, how)


def _on_every_path(branches: tuple, key: str, how: str) -> _Value:
    """What every branch ran, in order (the asserts, the launches), where ``key`` holds it."""
    ran = [b[key].value if key in b else () for b in branches]
    return _Value(tuple(t for t in ran[0] if all(t in r for r in ran[1:])), how)


def _merge(into: dict, *branches: dict, tests: tuple | None = None) -> None:
    """After a branch point a name keeps its value only where every path agrees, and a size fact
    holds only where every path asserted it. ``tests``: each branch's test (None for the ``else``)
    of an ``if`` chain; a name the branches bind differently is then bound to the chain of their
    expressions (``a if test else b``)."""
    names = set().union(*(b.keys() for b in branches)) - set(_PATH_ENTRIES)
    if any(_SIZES in b for b in branches):
        into[_SIZES] = _Value(frozenset.intersection(*(same_size_pairs(b) for b in branches)), "asserts")
    if any(_LAUNCHED in b for b in branches):
        into[_LAUNCHED] = _on_every_path(branches, _LAUNCHED, "launches")
    for b in branches:
        if _READ in b and b[_READ] is not into.get(_READ):
            _noting(into, b[_READ].value)
    if any(_ASSERTS in b for b in branches):
        into[_ASSERTS] = _on_every_path(branches, _ASSERTS, "asserts")
        if tests is not None:  # (an ``if`` chain: each path's own tests say where its asserts ran)
            common = into[_ASSERTS].value
            guarded = [g for b in branches for g in (b[_GUARDED].value if _GUARDED in b else ())]
            guarded += [(b[_PATH].value if _PATH in b else (), t) for b in branches
                        for t in (b[_ASSERTS].value if _ASSERTS in b else ()) if t not in common]
            into[_GUARDED] = _Value(tuple(dict.fromkeys(guarded)), "asserts")
    # the tests were read before any branch ran: the names they read are the bindings before them
    before = {n: into[n].node for n in names
              if n in into and into[n].node is not None and into[n].index is None
              and any(b.get(n) is not into[n] for b in branches)} if tests is not None else {}
    for name in names:
        vals = [b.get(name) for b in branches]
        first = vals[0]
        same = first is not None and all(v is first or v is not None and _same(v.value, first.value) for v in vals)
        if same:
            into[name] = first
            continue
        if tests is not None and all(v is not None and v.index is None for v in vals):
            # each path's expression under its test; one no expression stands for (what a loop
            # carried, a value read from what is not modelled) leaves the name unreadable, but for an
            # optional argument as the caller passed it (``if scale is None: scale = torch.full(...)``)
            # or any parameter so (``if x.stride(1) != 1: x = x.contiguous()``), which the chain reads
            # as that argument
            passed = {name: v for v in vals if v.node is None and v.how in _PASSED}
            nodes = [cst.Name(name) if v.node is None and v.how in _PASSED else v.node for v in vals]
            into[name] = _Value(UNKNOWN, "branches disagree", _chain(_tests_before(tests, before), nodes),
                                seen=passed or None)
            continue
        # the value is unknown; the symbolic engine reads the binding of the last path that has one
        # (the branch written last), as a reader of the text would
        last = next((v for v in reversed(vals) if v is not None and v.node is not None), None)
        into[name] = _Value(UNKNOWN, "branches disagree", *((last.node, last.index, last.arity) if last else ()))


class _Renamed(cst.CSTTransformer):
    def __init__(self, nodes: dict):
        self.nodes = nodes

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        node = self.nodes.get(original.value)
        return cst.ensure_type(node, cst.BaseExpression) if node is not None else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)  # ``x.n``: an attribute's name is no variable


def _tests_before(tests: tuple, before: dict) -> tuple:
    """``tests`` with each name that a branch binds written as the expression it held before the
    ``if`` (``before``; the chain is read at the launch, where the name holds the chain itself)."""
    rebound = {}
    for test in tests:
        if test is not None:
            for n in N.names_in(test):
                if n in before:
                    rebound[n] = before[n]
    if not rebound:
        return tests
    return tuple(t.visit(_Renamed(rebound)) if t is not None else None for t in tests)


def _chain(tests: tuple, nodes: list) -> cst.BaseExpression | None:
    """``nodes[0] if tests[0] else nodes[1] if tests[1] else ...``; the last branch is what holds where
    every test before it failed (its own test, if any, is then implied: the ``else`` raised)."""
    if any(n is None for n in nodes):
        return None
    out = nodes[-1]
    for test, node in zip(reversed(tests[:-1]), reversed(nodes[:-1])):
        out = cst.IfExp(test=test, body=node, orelse=out)
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, _Unknown) or isinstance(b, _Unknown):
        return False
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - incomparable values: not the same
        return False


StatementHook = Callable[[cst.SimpleStatementLine, dict], None]


def run_block(ev: HostEvaluator, stmts, env: dict, on_statement: StatementHook | None = None,
              want_return: bool = False, through_loops: bool = False) -> Any:
    """Run statements over ``env`` in order (loops once, branches merged). With ``want_return``,
    the value of the first ``return`` reached on the straight path (None when there is none;
    ``through_loops``: past a loop that cannot leave by ``break`` or ``return``, as where only the
    dtypes of what the helper returns are read)."""
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            if on_statement is not None:
                on_statement(stmt, env)
            for small in stmt.body:
                if isinstance(small, cst.Return) and want_return:
                    return ev.value(small.value, env) if small.value is not None else None
                _simple(ev, small, env)
        elif isinstance(stmt, cst.If):
            # an elif chain is walked as a list (1,000 elifs are valid code): the first branch whose
            # test is known true is the one taken; unknown tests run every branch and merge them
            branches: list = []
            node: cst.If | cst.Else | None = stmt
            while isinstance(node, cst.If):
                branches.append((node.test, node.body.body))
                node = node.orelse
            branches.append((None, node.body.body if isinstance(node, cst.Else) else []))
            taken = None
            possible = []
            for test, body in branches:
                value = ev.value(test, env) if test is not None else True
                if not _const(value):
                    possible.append((test, body))
                    continue
                if value:
                    if not possible:
                        taken = body
                    else:
                        possible.append((None, body))
                    break
            if taken is not None:
                result = run_block(ev, taken, env, on_statement, want_return, through_loops)
                if want_return and result is not None:
                    return result
                continue
            if want_return:
                return None  # a helper whose result depends on a runtime branch: unknown
            outcomes = []
            path = env[_PATH].value if _PATH in env else ()
            read = _read_now((t for t, _ in possible), env)  # (the tests run before any branch does)
            for i, (test, body) in enumerate(possible):
                branch_env = dict(env)
                _noting(branch_env, read)
                # the tests before it failed, its own holds (an else, or a test known true: nothing)
                held = [(t, False) for t, _ in possible[:i] if t is not None]
                branch_env[_PATH] = _Value((*path, *held, *([(test, True)] if test is not None else [])), "branch")
                run_block(ev, body, branch_env, on_statement)
                if not _raises(body):
                    outcomes.append((test, branch_env))
            if outcomes:
                _merge(env, *(e for _, e in outcomes), tests=tuple(t for t, _ in outcomes))
            # ``if not ok: raise ...``: what follows runs only where the leading raising tests failed
            guards = []
            for test, body in possible:
                if test is None or not _raises(body):
                    break
                guards.append((test, False))
            if guards:
                env[_PATH] = _Value((*(env[_PATH].value if _PATH in env else ()), *guards), "guard")
                _noting(env, read)
        elif isinstance(stmt, (cst.For, cst.While)):
            if want_return and (not through_loops or _breaks(stmt.body)):
                return None
            looped = dict(env)
            if isinstance(stmt, cst.For):
                for name in N.target_names(stmt.target):
                    looped[name] = _Value(UNKNOWN, "loop variable")
            product = _product_of(stmt, env)
            run_block(ev, stmt.body.body, looped, on_statement)
            exits = isinstance(stmt, cst.While) and not _breaks(stmt.body)
            # ``while kb % g: g //= 2``: a name the test reads that the loop updates is whatever the
            # last trip left (a value the test relates to the rest; other names the loop updates
            # stay unknown)
            carried = {n for n in N.names_in(stmt.test) if n in env and looped.get(n) is not env[n]} if exits else ()
            _merge(env, dict(env), looped)
            for name in carried:
                if env[name].how == "branches disagree":
                    env[name] = _Value(UNKNOWN, "loop-carried")
            if product is not None:
                # ``n = 1; for s in shape: n *= s``: the number of elements of a tensor of that shape,
                # read as ``torch.empty(shape)``'s is (one size named by what it multiplies)
                env[product] = _Value(UNKNOWN, "product of a shape", stmt.iter, seen=_seen(stmt.iter, env))
            if exits:  # what follows runs where the loop's test failed
                exit_test = _truth(stmt.test)
                env[_PATH] = _Value((*(env[_PATH].value if _PATH in env else ()), (exit_test, False)), "loop exit")
                _noting(env, _read_now([exit_test], env))
        elif isinstance(stmt, cst.With):
            result = run_block(ev, stmt.body.body, env, on_statement, want_return, through_loops)
            if want_return and result is not None:
                return result
        elif isinstance(stmt, cst.Try):
            result = run_block(ev, stmt.body.body, env, on_statement, want_return)
            if want_return:
                return result
            for handler in stmt.handlers:
                caught = dict(env)
                run_block(ev, handler.body.body, caught, on_statement)
                _merge(env, caught, dict(env))
        elif isinstance(stmt, cst.FunctionDef):
            env[stmt.name.value] = _Value(stmt, "helper")
        elif isinstance(stmt, cst.ClassDef):
            env[stmt.name.value] = _Value(UNKNOWN, "class")
    return None


def _truth(test: cst.BaseExpression) -> cst.BaseExpression:
    """A loop's test as a condition: a number's truth is that it is not 0 (``while kb % g:``)."""
    if isinstance(test, (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation)):
        return test
    return cst.Comparison(test, [cst.ComparisonTarget(cst.NotEqual(), cst.Integer("0"))])


def _breaks(suite: cst.BaseSuite) -> bool:
    """Whether a loop's body can leave the loop by ``break`` or ``return`` (a ``break`` of a loop
    nested in it is that loop's own; one in that loop's ``else`` is not)."""
    leaves = (cst.Break, cst.Return)
    if isinstance(suite, cst.SimpleStatementSuite):  # ``while a: break``
        return any(isinstance(small, leaves) for small in suite.body)
    for node in N.statement_lines(suite, (cst.FunctionDef, cst.ClassDef, cst.For, cst.While)):
        if isinstance(node, (cst.For, cst.While)):
            if any(isinstance(small, cst.Return) for line in N.statement_lines(node.body)
                   if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) for small in line.body):
                return True
            if node.orelse is not None and _breaks(node.orelse.body):
                return True
        elif isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) \
                and any(isinstance(small, leaves) for small in node.body):
            return True
    return False


def _raises(body) -> bool:
    """A branch that always raises: its last statement is a ``raise``."""
    last = body[-1] if body else None
    return isinstance(last, cst.SimpleStatementLine) and bool(last.body) and isinstance(last.body[-1], cst.Raise)


@dataclass
class _Saved:
    """What an autograd Function's ``forward`` left on its context for ``backward``: the tensors
    ``ctx.save_for_backward(...)`` saved and the attributes it set (``ctx.grid = grid``), each a
    binding as ``forward`` made it (its expression and the names that read, as they were then)."""

    ctx: str
    tensors: list
    attributes: dict


def _restores(small: cst.Assign, saved: _Saved) -> bool:
    """``a, b, c = ctx.saved_tensors`` with one name per saved tensor."""
    value = small.value
    if not (isinstance(value, cst.Attribute) and value.attr.value == "saved_tensors"
            and isinstance(value.value, cst.Name) and value.value.value == saved.ctx and len(small.targets) == 1):
        return False
    target = small.targets[0].target
    return (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == len(saved.tensors)
            and all(isinstance(el, cst.Element) and isinstance(el.value, cst.Name) for el in target.elements))


def _forwards(module: cst.Module) -> dict[int, cst.FunctionDef]:
    """``id(backward)`` -> the ``forward`` beside it in one class (an autograd Function)."""
    out: dict[int, cst.FunctionDef] = {}
    stack = [module.body]
    while stack:
        for stmt in stack.pop():
            if isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
                methods = {m.name.value: m for m in stmt.body.body if isinstance(m, cst.FunctionDef)}
                if "forward" in methods and "backward" in methods:
                    out[id(methods["backward"])] = methods["forward"]
            for block in (getattr(stmt, "body", None), getattr(getattr(stmt, "orelse", None), "body", None)):
                if isinstance(block, cst.IndentedBlock):
                    stack.append(block.body)
    return out


def _saved_by(ev: HostEvaluator, forward: cst.FunctionDef, module_env: dict, backward: cst.FunctionDef
              ) -> _Saved | None:
    """What ``forward`` saves on its context (its first parameter), for ``backward`` (whose first
    parameter names the context there); None where it saves nothing this reads."""
    params = [*forward.params.posonly_params, *forward.params.params]
    back = [*backward.params.posonly_params, *backward.params.params]
    if not params or not back or not isinstance(forward.body, cst.IndentedBlock):
        return None
    ctx = params[0].name.value
    tensors: list = []
    attributes: dict = {}

    def on_statement(stmt: cst.SimpleStatementLine, env: dict) -> None:
        for small in stmt.body:
            call = small.value if isinstance(small, cst.Expr) else None
            if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value == "save_for_backward" and isinstance(call.func.value, cst.Name)
                    and call.func.value.value == ctx and not any(a.star for a in call.args)):
                tensors[:] = [env[a.value.value] if isinstance(a.value, cst.Name) and a.value.value in env
                              else _Value(UNKNOWN, "saved for backward", a.value, seen=_seen(a.value, env))
                              for a in call.args]
            elif isinstance(small, cst.Assign) and len(small.targets) == 1:
                t = small.targets[0].target
                if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == ctx:
                    attributes[t.attr.value] = _Value(UNKNOWN, "saved on the context", small.value,
                                                      seen=_seen(small.value, env))

    env = {k: v for k, v in module_env.items() if k not in _PATH_ENTRIES}
    bind_params(ev, forward, env)
    run_block(ev, forward.body.body, env, on_statement)
    if not tensors and not attributes:
        return None
    return _Saved(back[0].name.value, tensors, attributes)


def _simple(ev: HostEvaluator, small: cst.BaseSmallStatement, env: dict) -> None:
    if isinstance(small, cst.Assign) and ev.saved is not None and _restores(small, ev.saved):
        for el, saved in zip(small.targets[0].target.elements, ev.saved.tensors):
            env[el.value.value] = saved
        return
    if isinstance(small, cst.Assign):
        value = ev.value(small.value, env)
        how = "tuple unpacking" if isinstance(small.value, (cst.Tuple, cst.List)) else "assignment"
        for t in small.targets:
            _assign(ev, t.target, value, env, how, small.value)
    elif isinstance(small, cst.AnnAssign) and small.value is not None:
        _assign(ev, small.target, ev.value(small.value, env), env, "assignment", small.value)
    elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
        name = small.target.value
        before = env.get(name)
        old = before.value if before is not None else UNKNOWN
        op = type(small.operator).__name__.removesuffix("Assign")
        # the expression it now holds, written out (``n -= g`` after ``n = t // g * g``: ``(t // g * g) - g``),
        # where the binding before is one expression as a whole
        node = None
        if before is not None and before.node is not None and before.index is None and hasattr(cst, op):
            node = cst.BinaryOperation(left=before.node, operator=getattr(cst, op)(), right=small.value)
        # (the expression before it reads its names as they were then)
        seen = {**(_seen(small.value, env) or {}), **(before.seen or {})} if node is not None else None
        env[name] = _Value(_binary(op, old, ev.value(small.value, env)), "augmented assignment", node, seen=seen)
    elif isinstance(small, cst.Assert):
        _assert_sizes(ev, small.test, env)
        held = env[_ASSERTS].value if _ASSERTS in env else ()
        env[_ASSERTS] = _Value((*held, small.test), "asserts")
        _noting(env, _read_now([small.test], env))


def _assert_sizes(ev: HostEvaluator, test: cst.BaseExpression, env: dict) -> None:
    """``assert x.shape == y.shape`` / ``x.numel() == y.numel()``: the two tensors share a size."""
    if isinstance(test, cst.BooleanOperation):
        _assert_sizes(ev, test.left, env)
        _assert_sizes(ev, test.right, env)
        return
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)):
        return
    sides = [_sized_tensor(test.left), _sized_tensor(test.comparisons[0].comparator)]
    if all(sides) and sides[0] != sides[1]:
        env[_SIZES] = _Value(same_size_pairs(env) | {frozenset(sides)}, "asserts")


def same_size_pairs(env: dict) -> frozenset[frozenset[str]]:
    """The pairs of tensor names asserted to share a size on the path that reached ``env``."""
    held = env.get(_SIZES)
    return held.value if held is not None and isinstance(held.value, frozenset) else frozenset()


def _sized_tensor(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Attribute) and node.attr.value == "shape" and isinstance(node.value, cst.Name):
        return node.value.value
    if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "numel"
            and isinstance(node.func.value, cst.Name)):
        return node.func.value.value
    return None


# ------------------------------------------------------------------------ launches


class _LaunchCalls(cst.CSTVisitor):
    """``k[grid](...)`` calls of the module's kernels inside one statement (nested defs excluded),
    and calls of the helpers that launch the kernel they receive."""

    def __init__(self, kernels: set[str], helpers: dict, factories: dict, aliases: dict) -> None:
        self.kernels, self.helpers, self.factories, self.aliases = kernels, helpers, factories, aliases
        self.found: list[tuple[str, cst.Call]] = []

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return True

    def visit_Call(self, node: cst.Call) -> None:
        self.found.extend(_launch_call(node, self.kernels, self.helpers, self.factories, self.aliases))


def _launch_call(call: cst.Call, names: set[str], helpers: dict, factories: dict, aliases: dict
                 ) -> list[tuple[str, cst.Call]]:
    """(kernel, launch) of a call that launches one of ``names``: itself (``k[g](...)``,
    ``factory()[g](...)`` of a function that returns the kernel, ``wrap_triton(k)[g](...)``, an alias
    ``fn[g](...)`` of each kernel ``fn`` may be) or the launch a helper makes."""
    func = call.func
    if isinstance(func, cst.Subscript):
        made = func.value
        if isinstance(made, cst.Call) and not made.args and isinstance(made.func, cst.Name):
            kernel = factories.get(made.func.value)
            return [(kernel, call)] if kernel in names else []
        if (isinstance(made, cst.Call) and len(made.args) == 1 and isinstance(made.args[0].value, cst.Name)
                and (N.dotted(made.func) or "").rsplit(".", 1)[-1] in N.LAUNCH_WRAPPERS):
            kernel = made.args[0].value.value
            return [(kernel, call)] if kernel in names else []
        if isinstance(made, cst.Name) and made.value in aliases:
            return [(kernel, call) for kernel in aliases[made.value] if kernel in names]
        name = N.dotted(func.value)
        if name is not None and name.rsplit(".", 1)[-1] in names:
            return [(name.rsplit(".", 1)[-1], call)]
    elif isinstance(func, cst.Name) and func.value in helpers:
        found = launch_through(helpers[func.value], call, names)
        return [found] if found is not None else []
    return []


def _shallow_launch(small: cst.BaseSmallStatement, names: set[str], helpers: dict, factories: dict, aliases: dict
                    ) -> list[tuple[str, cst.Call]]:
    """The launches that are the whole value of a statement (``k[g](...)``, ``y = k[g](...)``,
    ``return k[g](...)``): found without visiting the statement's expressions."""
    value = getattr(small, "value", None)
    return _launch_call(value, names, helpers, factories, aliases) if isinstance(value, cst.Call) else []


@dataclass
class _Scope:
    """A function (or the module) that holds launch sites, and the text range it covers."""

    node: cst.FunctionDef | None
    first: int
    last: int
    sites: list = field(default_factory=list)


def _line_starts(source: str) -> list[int]:
    return [0, *(m.end() for m in re.finditer("\n", source))]


def _def_ranges(source: str, starts: list[int]) -> list[tuple[str, int, int, int]]:
    """(name, def line, indent, last line) of every ``def`` in the text, in document order."""
    lines = source.split("\n")
    indents: list[int | None] = []
    for line in lines:
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#") or stripped[0] in ")]}":
            indents.append(None)
        else:
            indents.append(len(line) - len(stripped))
    out = []
    for m in re.finditer(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", source, re.M):
        line = bisect.bisect_right(starts, m.start())
        indent = len(m.group(1).expandtabs())
        last = line
        i = line  # 0-based index of the next line
        header_open = True
        while i < len(lines):
            ind = indents[i]
            if ind is not None and ind <= indent and not header_open:
                break
            if header_open and lines[i - 1].rstrip().endswith(":"):
                header_open = False
            if ind is not None and ind > indent:
                header_open = False
            if ind is not None:
                last = i + 1
            i += 1
        out.append((m.group(2), line, indent, last))
    return out


#: the statements that hold blocks of statements
_COMPOUND = frozenset((cst.FunctionDef, cst.ClassDef, cst.For, cst.While, cst.With, cst.If, cst.Try))


def function_nodes(module: cst.Module) -> list[cst.FunctionDef]:
    """Every FunctionDef in document order, found by walking statements only."""
    out: list[cst.FunctionDef] = []
    stack = [iter(module.body)]
    while stack:
        stmt = next(stack[-1], None)
        if stmt is None:
            stack.pop()
            continue
        kind = type(stmt)  # not isinstance: libcst's classes are abstract, and that check is slow
        if kind is cst.FunctionDef:
            out.append(stmt)
        blocks = []
        if kind in _COMPOUND:
            blocks.append(stmt.body)
            orelse = getattr(stmt, "orelse", None)
            if orelse is not None:
                blocks.append(orelse if type(orelse) is cst.If else orelse.body)
            for handler in getattr(stmt, "handlers", ()):
                blocks.append(handler.body)
            if getattr(stmt, "finalbody", None) is not None:
                blocks.append(stmt.finalbody.body)
        inner = []
        for block in blocks:
            if type(block) is cst.If:
                inner.append(block)
            elif type(block) is cst.IndentedBlock:
                inner.extend(block.body)
        if inner:
            stack.append(iter(inner))
    return out


def build(info) -> ModuleFacts:
    """The facts of a module the source phase discovered (:class:`kernlint.source.discover.ModuleInfo`)."""
    from kernlint.source.discover import scan_launches

    facts = ModuleFacts(info.path, [k.kernel for k in info.kernels])
    kernels = {k.kernel.name: k.kernel for k in info.kernels}
    ev = info.host
    module_env = ev.module_env
    for name, v in module_env.items():
        if name not in _PATH_ENTRIES and not name.startswith("__") and _const(v.value):
            facts.constants[name] = HostValue(v.value, "module constant")
    if not info._launches and info.kernels:
        scan_launches(info)
    sites = [s for name in kernels for s in info._launches.get(name, [])]
    if not sites:
        return facts
    starts = _line_starts(info.source)
    ranges = _def_ranges(info.source, starts)
    nodes = function_nodes(info.module)
    by_name: dict[str, list[cst.FunctionDef]] = {}
    for node in nodes:
        by_name.setdefault(node.name.value, []).append(node)
    seen: dict[str, int] = {}
    scopes: list[_Scope] = []
    for name, first, _indent, last in ranges:
        k = seen.get(name, 0)
        seen[name] = k + 1
        candidates = by_name.get(name, [])
        if k < len(candidates):
            node = candidates[k]
            # ``def grid(meta): return ...``: its body is on the def line, not the lines after it
            scopes.append(_Scope(node, first, first if isinstance(node.body, cst.SimpleStatementSuite) else last))
    module_scope = _Scope(None, 1, len(starts))
    firsts = [s.first for s in scopes]  # document order: ascending
    parents: list[int] = []  # each scope's enclosing scope (-1: the module), from a stack of open ranges
    stack: list[int] = []
    for i, sc in enumerate(scopes):
        while stack and scopes[stack[-1]].last < sc.first:
            stack.pop()
        parents.append(stack[-1] if stack else -1)
        stack.append(i)
    # the scope each kernel is defined in (-1: the module): a name launched in a function means the
    # kernel of that name its own scope, or the nearest enclosing one, defines (Python's lookup)
    index_of = {id(sc.node): i for i, sc in enumerate(scopes)}
    defined: dict[tuple[int, str], list[Kernel]] = {}
    for k in info.kernels:
        own = index_of.get(id(k.node))
        defined.setdefault((parents[own] if own is not None else -1, k.kernel.name), []).append(k.kernel)
    # the kernels defined by a statement of their scope's own body, not under an ``if`` or ``try``
    bodies = [info.module.body, *(sc.node.body.body if isinstance(sc.node.body, cst.IndentedBlock) else ()
                                   for sc in scopes)]
    top = {id(stmt) for body in bodies for stmt in body}
    direct = {id(k.kernel) for k in info.kernels if id(k.node) in top}
    for site in sorted(sites, key=lambda s: s.start):
        line = bisect.bisect_right(starts, site.start)
        scope, at = module_scope, -1
        # the innermost function holding the line: from the nearest def above, up its enclosing ones
        i = bisect.bisect_right(firsts, line) - 1
        while i >= 0:
            candidate = scopes[i]
            if candidate.first <= line <= candidate.last and candidate.node.name.value != site.kernel:
                scope, at = candidate, i
                break
            i = parents[i]
        if site.alias is not None and site.kernel not in info.kernel_aliases.of(scope.node).get(site.alias, ()):
            continue  # the name is an alias of this kernel in another scope, not in this one
        site._targets = _visible_kernels(defined, parents, at, site.kernel, line, direct) or [kernels[site.kernel]]
        scope.sites.append((site, line))
    backward = any(s.sites and s.node is not None and s.node.name.value == "backward" for s in scopes)
    forwards = _forwards(info.module) if backward else {}
    for scope in [*scopes, module_scope]:
        if scope.sites:
            try:
                facts.launches.extend(_scope_launches(ev, info, scope, kernels, module_env, starts, forwards))
            except RecursionError:
                pass  # host code nested too deeply to follow: these launches are not known

    facts.launches.sort(key=lambda launch: (launch.span.line, launch.span.col))
    return facts


def _visible_kernels(defined: dict, parents: list[int], at: int, name: str, line: int, direct: set[int]
                     ) -> list[Kernel] | None:
    """The kernels ``name`` may mean at ``line`` of scope ``at`` (-1: the module): those defined there
    or in the nearest scope around it (several where branches define it each their way). A definition
    that is a statement of the scope's own body replaces the earlier ones; a launch in the defining
    scope itself sees only the definitions above it, one in a scope within it (a function, run
    later) the last."""
    own = at
    while True:
        found = defined.get((at, name))
        if found is not None or at < 0:
            break
        at = parents[at]
    if not found:
        return found
    ordered = sorted(found, key=lambda k: k.span.line)
    if at == own:
        ordered = [k for k in ordered if k.span.line < line] or ordered
    last = max((i for i, k in enumerate(ordered) if id(k) in direct), default=0)
    return ordered[last:]


def _scope_launches(ev: HostEvaluator, info, scope: _Scope, kernels: dict, module_env: dict,
                    starts: list[int], forwards: dict) -> list[Launch]:
    found: list[tuple[str, cst.Call, dict]] = []
    names = {site.kernel for site, _ in scope.sites}

    deep = [False]

    aliases = info.kernel_aliases.of(scope.node)

    def on_statement(stmt: cst.SimpleStatementLine, env: dict) -> None:
        if deep[0]:
            visitor = _LaunchCalls(names, info.launch_helpers, info.kernel_factories, aliases)
            stmt.visit(visitor)
            calls = visitor.found
        else:
            calls = [c for small in stmt.body
                     for c in _shallow_launch(small, names, info.launch_helpers, info.kernel_factories, aliases)]
        for kernel, call in calls:
            found.append((kernel, call, dict(env)))
        if calls:  # (after the statement's own launches are recorded: they do not precede themselves)
            before = env[_LAUNCHED].value if _LAUNCHED in env else ()
            env[_LAUNCHED] = _Value((*before, *(k for k, _ in calls)), "launches")

    if scope.node is None:
        env: dict = {}
        body = info.module.body
    else:
        env = {k: v for k, v in module_env.items() if k not in _PATH_ENTRIES}  # the function's own path
        bind_params(ev, scope.node, env)
        body = scope.node.body.body if isinstance(scope.node.body, cst.IndentedBlock) else []
        forward = forwards.get(id(scope.node))
        if forward is not None:  # an autograd Function's backward: what its forward saved on the context
            ev.saved = _saved_by(ev, forward, module_env, scope.node)
            if ev.saved is not None:
                env.update({f"{ev.saved.ctx}.{a}": v for a, v in ev.saved.attributes.items()})
    start_env = dict(env)
    try:
        run_block(ev, body, env, on_statement)
        if len(found) < len(scope.sites):  # a launch inside an expression: look into every statement
            found.clear()
            deep[0] = True
            run_block(ev, body, start_env, on_statement)
    finally:
        ev.saved = None
    out = []
    remaining = {name: [s for s in scope.sites if s[0].kernel == name] for name in names}
    for kernel, call, env in found:
        site_list = remaining.get(kernel) or []
        if not site_list:
            continue
        site, line = site_list.pop(0)
        site._call = call  # the site's text need not be parsed again
        parts = call.func.slice
        if all(isinstance(p.slice, cst.Index) for p in parts):
            # ``k[a, b, c](...)`` launches a grid of three axes, as ``k[(a, b, c)]`` does
            site._grid = parts[0].slice.value if len(parts) == 1 else cst.Tuple(
                [cst.Element(p.slice.value) for p in parts])
        end_line = bisect.bisect_right(starts, max(site.end - 1, site.start))
        col = site.start - starts[line - 1] + 1
        span = Span(line, col, end_line, site.end - starts[end_line - 1] + 1)
        launch = _launch(ev, site._targets[-1], call, env, span, info.path,
                         scope.node.name.value if scope.node is not None else None, site)
        launch.target_lines = tuple(k.span.line for k in site._targets)
        launch.offset = site.start
        launch.scope = HostScope(env)
        out.append(launch)
    return out


def _text(ev: HostEvaluator, node: cst.BaseExpression, written: str | None) -> str:
    """An argument's source: a name's or literal's own text, the launch's text split at its commas,
    and only else the code generated from the node (which costs more than the rest of the pass)."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float)) and not node.lpar:
        return node.value
    return written if written is not None else ev.code(node)


def _bound(ev: HostEvaluator, param: str, node: cst.BaseExpression, env: dict, written: str | None = None
           ) -> BoundArg:
    value = ev.value(node, env)
    text = _text(ev, node, written)
    how = "literal" if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) else "host expression"
    if isinstance(node, cst.Name) and node.value in env:
        how = env[node.value].how
    if isinstance(value, _Tensor):
        same = same_size_pairs(env)
        root = value.root if not value.root.startswith("<") else (text if isinstance(node, cst.Name) else None)
        if value.root.startswith("<") and isinstance(node, cst.Name):
            root = node.value
        peers = sorted({n for pair in same if root in pair for n in pair} - {root}) if root else []
        dtype = value.dtype or (_stated_dtype(HostScope(env), root, ev) if root else None)
        tensor = TensorExtent(text, root, value.shape, value.numel, value.derived, tuple(peers), dtype)
        return BoundArg(param, text, None, tensor, node)
    if _const(value) and not isinstance(value, (dict, list)) or isinstance(value, tuple):
        return BoundArg(param, text, HostValue(value, how), node=node)
    # a name the host cannot follow (an optional argument the wrapper fills in on one path) whose
    # dtype the path to the launch states (``assert ids.dtype == torch.int32``): a tensor of that dtype
    stated = _stated_dtype(HostScope(env), node.value, ev) if isinstance(node, cst.Name) else None
    if stated is not None:
        return BoundArg(param, text, None, TensorExtent(text, node.value, dtype=stated), node)
    return BoundArg(param, text, node=node)


def _stated_dtype(scope: HostScope, tensor: str, ev: HostEvaluator) -> str | None:
    """The dtype the tests the path to a launch guarantees state of ``tensor``: ``x.dtype ==
    torch.int32``, ``x.dtype in (torch.int32,)`` (one dtype), ``if x.dtype != torch.int32: raise``."""
    for test, holds in held_tests(scope):
        if len(test.comparisons) != 1:
            continue
        op = type(test.comparisons[0].operator)
        if not (op is cst.Equal and holds or op is cst.NotEqual and not holds or op is cst.In and holds):
            continue
        sides = (test.left, test.comparisons[0].comparator)
        for side, other in (sides, sides[::-1]):
            if (isinstance(side, cst.Attribute) and side.attr.value == "dtype" and isinstance(side.value, cst.Name)
                    and side.value.value == tensor):
                named = [other] if op is not cst.In else (
                    [e.value for e in other.elements] if isinstance(other, (cst.Tuple, cst.List)) else [])
                dtypes = {torch_dtype(ev.imports.resolve(n)) for n in named}
                if len(dtypes) == 1 and None not in dtypes:
                    return dtypes.pop()
    return None


def _launch(ev: HostEvaluator, kernel, call: cst.Call, env: dict, span: Span, path: str,
            caller: str | None, site) -> Launch:
    grid_node = call.func.slice[0].slice.value if isinstance(call.func.slice[0].slice, cst.Index) else None
    launch = Launch(kernel.name, path, span, site.grid_text.strip(), caller=caller)
    positional_texts, keyword_texts = site.argument_texts()
    if grid_node is not None:
        launch.grid = _grid(ev, grid_node, env, site.grid_elements())
    params = [p.name for p in kernel.params]
    position = 0
    for arg in call.args:
        if arg.star == "**":  # (no positional argument follows it)
            launch.spread = True
            continue
        if arg.star:
            # ``*strides`` of a tuple the host code writes out: its elements take the next positions
            # (unknown values, but the arguments after it are bound where they belong)
            length = None if launch.starred else _spread_length(arg.value, env)
            if length is None:
                launch.starred = True
                continue
            text = ev.code(arg.value)
            for i in range(length):
                if position < len(params):
                    launch.args[params[position]] = BoundArg(params[position], f"{text}[{i}]")
                position += 1
            continue
        if arg.keyword is not None:
            key = arg.keyword.value
            bound = _bound(ev, key, arg.value, env, keyword_texts.get(key))
            if key in params:
                if key in launch.args and not launch.starred and not launch.misfit:
                    launch.misfit = f"passes `{key}` twice, by position and by keyword"
                launch.args[key] = bound
            else:
                launch.options[key] = bound
            continue
        if launch.starred or position >= len(params):
            position += 1
            continue
        written = positional_texts[position] if position < len(positional_texts) else None
        launch.args[params[position]] = _bound(ev, params[position], arg.value, env, written)
        position += 1
    if position > len(params) and not launch.starred:  # (what Python reports first)
        launch.misfit = f"passes {position} positional arguments to a kernel of {len(params)} parameters"
    supplied = supplied_by_decorators(kernel)
    if supplied is not None and not launch.misfit:
        launch.misfit = _unbound(kernel, launch, supplied)
    return launch


def _unbound(kernel, launch: Launch, supplied: set[str]) -> str:
    """Why a launch that binds its positions leaves the kernel unable to run: options or values the
    autotuner passes too, keywords neither a parameter nor a launch option, parameters without a
    default left without a value, what a heuristic reads before anything sets it ("" if none)."""
    unknown = [k for k in launch.options if k not in LAUNCH_OPTIONS and k not in supplied]
    empty, unseen = [], []
    if not (launch.starred or launch.spread):  # (a spread may give any of these)
        missing = [p.name for p in kernel.params
                   if p.default is None and p.name not in launch.args and p.name not in supplied]
        unseen = [n for n in _unseen_by_heuristics(kernel, launch) if n not in missing]
        empty = [f"`{n}`" for n in missing]
        if kernel.var_keyword is not None:
            # (Triton 3.9 rejects such a kernel where it is defined)
            empty.append(f"`**{kernel.var_keyword}`: Triton passes no keywords through it, it binds it as one "
                         "parameter of that name")
    # (the autotuner raises "Conflicting meta-parameters" while it benchmarks, or the kernel's call
    # gets the value twice)
    tuned = set_by_every_config(kernel)
    retuned = [k for k in launch.args if k in tuned]
    # (every triton.Config passes these to the kernel with its values: Config.all_kwargs)
    twice = [k for k in launch.options if k in CONFIG_OPTIONS] if kernel.autotune_configs else []
    parts = []
    if twice:
        parts.append(f"passes {', '.join(f'`{k}`' for k in twice)}, which each `triton.Config` of its "
                     f"`@triton.autotune` passes too (TypeError: got multiple values for keyword argument "
                     f"'{twice[0]}')")
    if retuned:
        # one config is not benchmarked: the kernel's call gets the value twice
        error = (f"TypeError: got multiple values for keyword argument '{retuned[0]}'" if _one_config(kernel)
                 else f"Conflicting meta-parameters: {retuned[0]}")
        parts.append(f"gives {', '.join(f'`{k}`' for k in retuned)}, which every `@triton.autotune` config "
                     f"sets (Triton rejects it: `{error}`)")
    if unknown:
        parts.append(f"passes {', '.join(f'`{k}`' for k in unknown)}, neither a parameter of the kernel nor a "
                     f"launch option (Triton rejects it: `Keyword argument {unknown[0]} was specified but "
                     "unrecognised`)")
    if empty:
        parts.append(f"gives no value to {len(empty)} parameter{'s' if len(empty) > 1 else ''} "
                     f"without a default ({', '.join(empty)})")
    if unseen:
        parts.append(f"leaves {', '.join(f'`{n}`' for n in unseen)} unset when its `@triton.heuristics` "
                     f"read{'' if len(unseen) > 1 else 's'} {'them' if len(unseen) > 1 else 'it'} (they see the "
                     "launch's arguments and what the decorators above them add, not defaults nor what an "
                     f"`@triton.autotune` below sets later: KeyError: '{unseen[0]}')")
    return " and ".join(parts)


def _one_config(kernel) -> bool:
    """Whether the kernel's ``@triton.autotune`` lists exactly one ``triton.Config(...)``."""
    configs = kernel.autotune_configs
    return len(configs) == 1 and re.match(r"(?:\w+\.)*Config\s*\(", configs[0].strip()) is not None


def _unseen_by_heuristics(kernel, launch: Launch) -> list[str]:
    """Names a heuristic function reads that nothing has given when it runs: the launch's arguments
    and the values of the decorators above it (and of the earlier entries of its own) are all it sees."""
    seen = set(launch.args) | set(launch.options)
    unseen: list[str] = []
    for decorator in kernel.decorators:  # outermost first: the order they run in at a launch
        if _kind(decorator) == "heuristics":
            for name, reads in decorator.reads.items():
                unseen += sorted(n for n in set(reads) - seen if n not in unseen)
                seen.add(name)
        else:
            seen |= _supplied_by(kernel, decorator) or set()
    return unseen


def supplied_by_decorators(kernel) -> set[str] | None:
    """The parameters a kernel's decorators give values (each autotune config's, the heuristics'),
    or None where a decorator may give any (configs or heuristics the code builds, a decorator of
    the project's own)."""
    out: set[str] = set()
    for decorator in kernel.decorators:
        supplied = _supplied_by(kernel, decorator)
        if supplied is None:
            return None
        out |= supplied
    return out


def _kind(decorator) -> str:
    return decorator.name.rpartition(".")[2]


def _supplied_by(kernel, decorator) -> set[str] | None:
    """The parameters one decorator of ``kernel`` gives values, or None where it may give any."""
    kind = _kind(decorator)
    if kind == "jit":
        return set()
    if kind == "autotune" and kernel.autotune_configs:
        return supplied_by_configs(kernel)
    if kind == "heuristics" and decorator.reads:
        return set(decorator.reads)
    return None


def _spread_length(node: cst.BaseExpression, env: dict, depth: int = 0) -> int | None:
    """How many arguments ``*node`` passes, where the host code writes the tuple out: a literal tuple
    or list, a name bound to one, or ``a if c else b`` of two of one length; None otherwise."""
    if depth > 4:
        return None
    listed = N.written_out(node)
    if listed is not None:
        return len(listed)
    if isinstance(node, cst.IfExp):
        a, b = (_spread_length(x, env, depth + 1) for x in (node.body, node.orelse))
        return a if a is not None and a == b else None
    if isinstance(node, cst.Name):
        bound = env.get(node.value)
        if isinstance(bound, _Value):
            if isinstance(bound.value, (tuple, list)):
                return len(bound.value)
            if bound.node is not None and bound.index is None:
                return _spread_length(bound.node, env, depth + 1)
    return None


def possible_configs(ev: HostEvaluator, node: cst.BaseExpression, env: dict, depth: int = 0
                     ) -> list[HostConfig] | None:
    """The configs an autotune ``configs=`` expression builds on any machine: a list or a
    comprehension of ``triton.Config``, lists joined with ``+``, a name bound to one, a helper that
    returns one. A choice the host makes at run time (``[2, 4] + ([] if hopper() else [8])``, a list
    chosen so at module level) takes every branch: each config it can build is one some machine runs.
    None where a config cannot be read."""
    if depth > MAX_CALL_DEPTH * 4:
        return None
    deeper = depth + 1
    if isinstance(node, (cst.List, cst.Tuple)):
        out: list = []
        for el in node.elements:
            part = (possible_configs(ev, el.value, env, deeper) if isinstance(el, cst.StarredElement)
                    else _configs_in([ev.value(el.value, env)]))
            if part is None:
                return None
            out.extend(part)
        return out
    if isinstance(node, cst.ListComp):
        try:
            built = ev.comprehension(node, env, 0, lambda n, e, _d: _possible(ev, n, e, deeper))
        except (ArithmeticError, TypeError, ValueError, IndexError, KeyError, RecursionError, OverflowError):
            return None
        return _configs_in(built)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left, right = (possible_configs(ev, n, env, deeper) for n in (node.left, node.right))
        return left + right if left is not None and right is not None else None
    if isinstance(node, cst.IfExp):
        test = ev.value(node.test, env)
        if _const(test):
            return possible_configs(ev, node.body if test else node.orelse, env, deeper)
        body, orelse = (possible_configs(ev, n, env, deeper) for n in (node.body, node.orelse))
        return body + orelse if body is not None and orelse is not None else None
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
        # ``configs[:1] if interpreting else configs``: the slice of the list, its bounds numbers
        whole = possible_configs(ev, node.value, env, deeper)
        cut = node.slice[0].slice
        bounds = [None if x is None else ev.value(x, env) for x in (cut.lower, cut.upper, cut.step)]
        if whole is None or any(b is not None and type(b) is not int for b in bounds) or bounds[2] == 0:
            return None
        return whole[slice(*bounds)]
    if isinstance(node, cst.Name) and node.value in env:
        bound = env[node.value]
        found = _configs_in(bound.value)
        if found is None and isinstance(bound.node, cst.BaseExpression):
            return possible_configs(ev, bound.node, {**env, **(bound.seen or {})}, deeper)
        return found
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        fn = env[node.func.value].value if node.func.value in env else None
        returned = _every_return(fn)
        if returned:
            inner = dict(ev.module_env)
            bind_params(ev, fn, inner, env, node)
            out = []
            for each in returned:  # (``if os.environ.get(...): return [...]``: each some machine's)
                part = possible_configs(ev, each, inner, deeper)
                if part is None:
                    return None
                out.extend(part)
            return out
    return _configs_in(ev.value(node, env))


def _every_return(fn) -> list[cst.BaseExpression] | None:
    """What a function made only of ``if`` tests and ``return`` statements (after its docstring)
    returns, on every path; None for any other function."""
    if not isinstance(fn, cst.FunctionDef):
        return None
    one = returned_expression(fn)
    if one is not None:
        return [one]
    out: list = []

    def walk(statements) -> bool:
        for stmt in statements:
            if isinstance(stmt, cst.If):
                if not walk(stmt.body.body) or (stmt.orelse is not None and not walk(
                        [stmt.orelse] if isinstance(stmt.orelse, cst.If) else stmt.orelse.body.body)):
                    return False
            elif isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(
                    stmt.body[0], cst.Return) and stmt.body[0].value is not None:
                out.append(stmt.body[0].value)
            elif not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(
                    stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.SimpleString)):
                return False
        return True

    return out if walk(fn.body.body) and out else None


def _possible(ev: HostEvaluator, node: cst.BaseExpression, env: dict, depth: int) -> Any:
    """The values an iterable can hold on some machine: every branch of a choice made at run time."""
    if depth > MAX_CALL_DEPTH * 4:
        return UNKNOWN
    value = ev.value(node, env)
    if _const(value):
        return value
    deeper = depth + 1
    if isinstance(node, cst.IfExp):
        parts = [_possible(ev, n, env, deeper) for n in (node.body, node.orelse)]
    elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        parts = [_possible(ev, n, env, deeper) for n in (node.left, node.right)]
    elif isinstance(node, cst.Name) and node.value in env and isinstance(env[node.value].node, cst.BaseExpression):
        bound = env[node.value]
        return _possible(ev, bound.node, {**env, **(bound.seen or {})}, deeper)
    else:
        return UNKNOWN
    if all(isinstance(p, (list, tuple, range)) for p in parts):
        return [v for p in parts for v in p]
    return UNKNOWN


def _configs_in(value: Any) -> list[HostConfig] | None:
    if isinstance(value, (list, tuple)) and all(isinstance(v, HostConfig) for v in value):
        return list(value)
    return None


def returned_expression(fn) -> cst.BaseExpression | None:
    """What a function of one ``return`` statement (after its docstring, if any, its asserts, and
    assignments of one name each or of a shape's sizes, or of one name on both sides of an if/else,
    read as ``a if test else b``) returns, each name so assigned written as its expression: a grid
    function, a helper such as ``def cdiv(a, b): return (a + b - 1) // b``, ``block =
    min(next_power_of_2(n), 1024); return block, 4 if block <= 512 else 8`` or ``B, T, H, D = x.shape;
    return B, T, H, D``; else None."""
    if not isinstance(fn, cst.FunctionDef):
        return None
    small = list(fn.body.body) if isinstance(fn.body, cst.SimpleStatementSuite) else []
    for i, stmt in enumerate(fn.body.body if not small else ()):
        chosen = _branch_assignment(stmt)
        if chosen is not None:
            small.append(chosen)
            continue
        if not isinstance(stmt, cst.SimpleStatementLine):
            return None
        if i == 0 and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
                and isinstance(stmt.body[0].value, cst.SimpleString):
            continue  # the docstring
        small += stmt.body
    if not small or not isinstance(small[-1], cst.Return) or small[-1].value is None:
        return None
    assigned: dict[str, cst.BaseExpression] = {}
    for step in small[:-1]:
        if isinstance(step, cst.Assert):
            continue  # (what it checks changes no value)
        if not (isinstance(step, cst.Assign) and len(step.targets) == 1):
            return None
        target = step.targets[0].target
        value = substituted(step.value, assigned)
        if isinstance(target, cst.Name):
            assigned[target.value] = value
            continue
        tensor = shape_tensor(step.value)
        names = [el.value for el in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else None
        if tensor is None or names is None or not all(isinstance(n, cst.Name) for n in names):
            return None
        for i, n in enumerate(names):  # ``B, T, H, D = x.shape``: ``x.shape[i]`` each
            assigned[n.value] = cst.Subscript(value=cst.Attribute(value=cst.Name(tensor), attr=cst.Name("shape")),
                                              slice=[cst.SubscriptElement(cst.Index(cst.Integer(str(i))))])
    return substituted(small[-1].value, assigned)


def _branch_assignment(stmt) -> cst.Assign | None:
    """``if t: n = a`` / ``else: n = b`` as the one assignment ``n = a if t else b``; None for any other
    statement."""
    if not (isinstance(stmt, cst.If) and isinstance(stmt.orelse, cst.Else)):
        return None
    sides = []
    for block in (stmt.body, stmt.orelse.body):
        lines = block.body if isinstance(block, cst.IndentedBlock) else ()
        step = lines[0].body[0] if len(lines) == 1 and isinstance(lines[0], cst.SimpleStatementLine) \
            and len(lines[0].body) == 1 else None
        if not (isinstance(step, cst.Assign) and len(step.targets) == 1 and isinstance(step.targets[0].target, cst.Name)):
            return None
        sides.append(step)
    if sides[0].targets[0].target.value != sides[1].targets[0].target.value:
        return None
    return cst.Assign(targets=sides[0].targets, value=cst.IfExp(test=stmt.test, body=sides[0].value,
                                                                 orelse=sides[1].value))


def substituted(node: cst.BaseExpression, names: dict[str, cst.BaseExpression]) -> cst.BaseExpression:
    """``node`` with each name of ``names`` written as its expression (an attribute's name is none)."""
    return cst.ensure_type(node.visit(_Renamed(names)), cst.BaseExpression) if names else node


def _grid(ev: HostEvaluator, node: cst.BaseExpression, env: dict, written: list[str] | None = None
          ) -> tuple[BoundArg, ...] | None:
    """The grid's elements: a tuple written at the launch, a name bound to one, or a lambda's body
    (``META[...]`` items stay unresolved: the launch's own constexprs and autotune fill them)."""
    target = node
    if isinstance(node, cst.Name) and node.value in env and isinstance(env[node.value].value, _Lambda):
        lam = env[node.value].value
        target, env = lam.node.body, lam.env
    elif isinstance(node, cst.Name) and node.value in env and (returned := returned_expression(env[node.value].value)) is not None:
        target = returned  # ``def grid(meta): return (...)``
    elif isinstance(node, cst.Lambda):
        target = node.body
    elif isinstance(node, cst.Name):
        value = env.get(node.value)
        if value is not None and isinstance(value.value, tuple):
            written_at = value.node if (isinstance(value.node, (cst.Tuple, cst.List)) and value.index is None
                                        and len(value.node.elements) == len(value.value)) else None
            if written_at is not None:  # ``grid = (a, b)``: each element as written, with how it is known
                return tuple(_bound(ev, f"grid[{i}]", el.value, env) for i, el in enumerate(written_at.elements))
            return tuple(BoundArg(f"grid[{i}]", str(v), HostValue(v, value.how) if _const(v) else None)
                         for i, v in enumerate(value.value))
        return None
    if isinstance(target, (cst.Tuple, cst.List)):
        texts = written if target is node and written is not None and len(written) == len(target.elements) else None
        return tuple(_bound(ev, f"grid[{i}]", el.value, env, texts[i] if texts else None)
                     for i, el in enumerate(target.elements))
    if target is not node or not isinstance(node, (cst.Name, cst.Call, cst.Attribute, cst.Subscript)):
        return (_bound(ev, "grid[0]", target, env),)
    return None
