"""Resolve the dotted names a module uses (``tl.load``, ``jit``, ``T.Kernel``) to canonical ones.

``import triton.language as tl`` makes ``tl.load`` -> ``triton.language.load``;
``from triton import jit`` makes ``jit`` -> ``triton.jit``. Only imports are read: nothing runs.
"""

from __future__ import annotations

import dataclasses
import typing

import libcst as cst

from kernlint.model import Frontend


#: nodes that hold layout only (whitespace, comments, punctuation), never code
LAYOUT = (cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline, cst.Comment,
          cst.Comma, cst.Colon, cst.Dot, cst.Semicolon, cst.AssignEqual, cst.LeftParen, cst.RightParen,
          cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace)

#: node class -> its fields that can hold code (libcst nodes are dataclasses with slots)
_FIELDS: dict[type, tuple[str, ...]] = {}


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes directly under ``node`` that can hold code (not its whitespace, comments or
    punctuation), in field order (not always the order of the source: an ``IfExp``'s test comes
    first). libcst's ``children`` runs a visitor over the node to list them, ten times the cost, and
    most of a node's fields are layout, so walks that collect into sets or maps use this."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = _code_fields(type(node))
    out = []
    for name in names:
        value = getattr(node, name)
        if _is_node(value):
            out.append(value)
        elif isinstance(value, (tuple, list)):
            out.extend(v for v in value if _is_node(v))
    return out


_NESTED = (cst.FunctionDef, cst.ClassDef)


def body_nodes(fn: cst.FunctionDef) -> list:
    """Every node of ``fn``'s body but layout (not of functions or classes nested in it),
    iteratively. (Exact types, not ``isinstance``: libcst's classes are abstract, and that check is slow.)"""
    return _walked(fn.body, _NESTED)


def all_nodes(root: cst.CSTNode) -> list:
    """Every node under ``root`` but layout, those of nested functions and classes too."""
    return _walked(root, ())


def _walked(root: cst.CSTNode, skipped: tuple) -> list:
    out, todo = [], [root]
    while todo:
        node = todo.pop()
        out.append(node)
        todo.extend(c for c in child_nodes(node) if type(c) not in skipped)
    return out


def _code_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node class whose declared type admits a node that is not layout."""
    hints = typing.get_type_hints(kind)
    return tuple(f.name for f in dataclasses.fields(kind) if not _layout_only(hints.get(f.name)))


def _layout_only(hint) -> bool:
    """Whether a field's type admits only layout nodes (or no node: strings, sentinels)."""
    if hint is None:
        return False
    args = typing.get_args(hint)
    if args:
        return all(_layout_only(a) for a in args if a is not type(None))
    if not isinstance(hint, type):
        return False
    return not issubclass(hint, cst.CSTNode) or issubclass(hint, LAYOUT)


#: class -> whether it is a libcst node class
_NODE_CLASSES: dict[type, bool] = {}


def _is_node(value) -> bool:
    """``isinstance(value, cst.CSTNode)``, remembered per class: ``CSTNode`` is abstract, and
    ``isinstance`` against it goes through ``ABCMeta`` each time."""
    kind = type(value)
    hit = _NODE_CLASSES.get(kind)
    if hit is None:
        hit = _NODE_CLASSES[kind] = issubclass(kind, cst.CSTNode)
    return hit


#: the modules whose nodes' text was asked last, each with (node, text) by node id (a node is held
#: with its text, so that its id is not reused while the entry is kept)
_TEXTS: dict[int, tuple[cst.Module, dict[int, tuple[cst.CSTNode, str]]]] = {}
_KEPT_MODULES = 4
_PLAIN = (cst.Name, cst.Integer, cst.Float, cst.SimpleString)


def source_text(module: cst.Module, node: cst.CSTNode) -> str:
    """``module.code_for_node(node)``: names, numbers and dotted names read directly, the rest
    generated once per node (libcst's code generator walks the whole subtree on every call, and
    the phases ask for the text of the same nodes again and again)."""
    fast = _plain_text(node)
    if fast is not None:
        return fast
    entry = _TEXTS.get(id(module))
    if entry is None or entry[0] is not module:
        if len(_TEXTS) >= _KEPT_MODULES:
            _TEXTS.pop(next(iter(_TEXTS)))
        entry = _TEXTS[id(module)] = (module, {})
    texts = entry[1]
    hit = texts.get(id(node))
    if hit is None or hit[0] is not node:
        hit = texts[id(node)] = (node, module.code_for_node(node))
    return hit[1]


def _plain_text(node: cst.CSTNode) -> str | None:
    """The text of a name, number, string or dotted name without parentheses or inner spaces."""
    attrs = []
    while type(node) is cst.Attribute:  # not isinstance: an abstract class's check is slow
        dot = node.dot
        if node.lpar or node.rpar or not isinstance(dot, cst.Dot) or not _no_space(dot.whitespace_before) \
                or not _no_space(dot.whitespace_after):
            return None
        attrs.append(node.attr.value)
        node = node.value
    if type(node) not in _PLAIN or node.lpar or node.rpar:
        return None
    return ".".join([node.value, *reversed(attrs)]) if attrs else node.value


def argument(call: cst.Call, name: str, pos: int | None = None) -> cst.BaseExpression | None:
    """The argument of ``call`` given as the keyword ``name`` or, with ``pos``, at that position
    (not through ``*args``); None where it is not given."""
    for i, arg in enumerate(call.args):
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return arg.value
        elif pos is not None and i == pos and arg.star == "":
            return arg.value
    return None


def int_literal(node) -> int | None:
    """The value of an integer literal, negative ones included (``1``, ``-1``, ``0x10``); else None."""
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = int_literal(node.expression)
        return -inner if inner is not None else None
    return None


def _no_space(whitespace) -> bool:
    return isinstance(whitespace, cst.SimpleWhitespace) and not whitespace.value


def names_in(node: cst.CSTNode) -> set[str]:
    """Every bare name an expression mentions (attribute heads included, attribute tails not)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            out.add(n.value)
        elif isinstance(n, cst.Attribute):
            stack.append(n.value)
        else:
            stack.extend(child_nodes(n))
    return out


def dotted(node: cst.BaseExpression, through_calls: bool = False) -> str | None:
    """``a.b.c`` as a string, or None for anything that is not a plain dotted name. With
    ``through_calls``, a call inside the chain is kept as ``()``: ``torch.cuda.Stream().wait_stream``."""
    parts = []
    while True:
        while type(node) is cst.Attribute:  # not isinstance: an abstract class's check is slow
            parts.append(node.attr.value)
            node = node.value
        if through_calls and type(node) is cst.Call:
            parts.append("()")
            node = node.func
            continue
        break
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts)).replace(".()", "()")


def method_name(func: cst.BaseExpression) -> str:
    """The name a callee is called by: ``tl.load`` -> ``load``, ``x.view`` -> ``view``, ``f`` -> ``f``;
    "" for anything else."""
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def root_name(node: cst.BaseExpression) -> str:
    """The name at the root of an attribute and call chain: ``smem.index(0).store`` -> ``smem``; "" when
    the root is not a name."""
    while isinstance(node, (cst.Attribute, cst.Call)):
        node = node.value if isinstance(node, cst.Attribute) else node.func
    return node.value if isinstance(node, cst.Name) else ""


def _module_name(node: cst.BaseExpression) -> str:
    return dotted(node) or ""


#: the names a module that re-exports Triton gives it
_REEXPORTED = {"triton": "triton", "tl": "triton.language"}


class ImportMap:
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        #: (id(node), through_calls) -> (node, its resolved name): every phase resolves the same
        #: call nodes (the node is kept so that its id is not reused)
        self._resolved: dict = {}

    @classmethod
    def from_module(cls, module: cst.Module) -> "ImportMap":
        imports = cls()
        for stmt in module.body:
            imports._collect(stmt)
        # Defaults so code written against the usual aliases still resolves in fragments.
        imports.aliases.setdefault("tl", "triton.language")
        imports.aliases.setdefault("triton", "triton")
        return imports

    @classmethod
    def everywhere(cls, module: cst.Module) -> "ImportMap":
        """Every import of the module, inside functions and classes too (code under evaluation may
        import where it acts), and no default aliases: a name is here only if the module imports it."""
        imports = cls()

        class _Imports(cst.CSTVisitor):
            def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
                imports._collect(node)
                return False

        module.visit(_Imports())
        return imports

    def _collect(self, stmt: cst.CSTNode) -> None:
        self._resolved.clear()
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        full = _module_name(alias.name)
                        if alias.asname is not None:
                            self.aliases[alias.asname.name.value] = full  # type: ignore[union-attr]
                        else:
                            top = full.split(".")[0]
                            self.aliases[top] = top
                elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                    base = _module_name(small.module)
                    if isinstance(small.names, cst.ImportStar):
                        continue
                    for alias in small.names:
                        name = _module_name(alias.name)
                        local = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
                        # a project module that re-exports Triton under its usual names
                        # (``from pkg._triton import triton, tl``, made to import without Triton)
                        reexported = _REEXPORTED.get(name) if name == local and base.split(".")[0] != "triton" else None
                        self.aliases[local] = reexported or f"{base}.{name}"
        elif isinstance(stmt, (cst.If, cst.Try)):
            # imports under `if TYPE_CHECKING:` / `try: ... except ImportError:`
            for inner in stmt.body.body:
                self._collect(inner)

    def resolve(self, node: cst.BaseExpression, through_calls: bool = False) -> str | None:
        key = (id(node), through_calls)
        hit = self._resolved.get(key)
        if hit is not None and hit[0] is node:
            return hit[1]
        name = dotted(node, through_calls)
        if name is not None:
            head = name.split(".", 1)[0].split("(", 1)[0]
            if head in self.aliases:
                name = self.aliases[head] + name[len(head):]
        self._resolved[key] = (node, name)
        return name


TRITON_JIT = {"triton.jit", "triton.runtime.jit.jit", "triton.runtime.jit", "triton.experimental.gluon.jit"}
#: functions that return the kernel they are given, to be launched (PyTorch's custom-op wrappers:
#: ``torch.library.wrap_triton(kernel)[grid](...)``)
LAUNCH_WRAPPERS = frozenset({"wrap_triton", "capture_triton"})
TRITON_AUTOTUNE = {"triton.autotune", "triton.runtime.autotune", "triton.runtime.autotuner.autotune"}
TRITON_HEURISTICS = {"triton.heuristics", "triton.runtime.heuristics", "triton.runtime.autotuner.heuristics"}
TILELANG_PRIM_FUNC = {"tilelang.language.prim_func", "tvm.script.tir.prim_func", "tvm.tir.prim_func"}
TILELANG_JIT = {"tilelang.jit", "tilelang.jit.jit"}
TILELANG_KERNEL = {"tilelang.language.Kernel"}
#: what turns a function into a kernel when it is called on it (``k = triton.jit(f)``)
KERNEL_WRAPPERS = TRITON_JIT | TILELANG_JIT | TILELANG_PRIM_FUNC


def kernel_frontend(decorators: set[str]) -> Frontend | None:
    """Which kernel language a function with these (resolved) decorator names is written in."""
    if decorators & TRITON_JIT or any(d.endswith("triton.jit") for d in decorators):
        return Frontend.TRITON
    if decorators & (TILELANG_PRIM_FUNC | TILELANG_JIT) or any(d.endswith(".prim_func") for d in decorators):
        return Frontend.TILELANG
    return None


#: the nodes statements nest in (a ``with`` is a statement: a walk over these never enters an
#: expression)
STATEMENT_PARTS = (cst.BaseSuite, cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler,
                   cst.Finally, cst.MatchCase)


def statement_lines(body: cst.CSTNode, stop: tuple = (cst.FunctionDef, cst.ClassDef)):
    """The simple-statement lines of ``body`` and of the blocks nested in it, and the nodes of the
    ``stop`` kinds (not walked into: by default nested functions and classes). Expressions are never
    walked: a full visit of a long function costs more than its parse."""
    todo: list[cst.CSTNode] = [body]
    while todo:
        node = todo.pop()
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite, *stop)) and node is not body:
            yield node
        else:
            todo.extend(c for c in child_nodes(node) if isinstance(c, (cst.SimpleStatementLine, *STATEMENT_PARTS)))


def heuristics_values(fn: cst.FunctionDef, resolve) -> dict[str, cst.BaseExpression]:
    """Each name a ``@triton.heuristics({...})`` decorator of ``fn`` sets -> the expression that computes
    it (``resolve``: the module's dotted name of a decorator's callee); a mapping not written out as a
    dict literal gives none."""
    out: dict = {}
    for decorator in fn.decorators:
        out.update(heuristics_entries(decorator.decorator, resolve) or {})
    return out


def heuristics_entries(call: cst.BaseExpression, resolve) -> dict[str, cst.BaseExpression] | None:
    """For a ``triton.heuristics({...})`` call: each name its dict literal sets -> the expression that
    computes it, in order ({} for a mapping not written out); None for any other decorator."""
    if not isinstance(call, cst.Call) or resolve(call.func) not in TRITON_HEURISTICS:
        return None
    values = argument(call, "values", 0)
    out: dict = {}
    for element in values.elements if isinstance(values, cst.Dict) else ():
        if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
            key = element.key.evaluated_value
            if isinstance(key, str):
                out[key] = element.value
    return out


def mapping_reads(fn: cst.BaseExpression) -> list[str]:
    """The names a heuristic's function reads of the mapping it is given (``args["n"]`` of ``lambda
    args: ...``), in the order met; none for a function not written out as a lambda."""
    if not isinstance(fn, cst.Lambda) or not fn.params.params:
        return []
    mapping = fn.params.params[0].name.value
    found: dict[str, None] = {}
    todo = [fn.body]
    while todo:
        node = todo.pop()
        if (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == mapping
                and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
                and isinstance(node.slice[0].slice.value, cst.SimpleString)
                and isinstance(node.slice[0].slice.value.evaluated_value, str)):
            found[node.slice[0].slice.value.evaluated_value] = None
        todo.extend(reversed(child_nodes(node)))
    return list(found)


def written_out(node) -> list | None:
    """The elements of a list or tuple written out element by element (none spread with ``*``)."""
    if not isinstance(node, (cst.List, cst.Tuple)) or any(isinstance(e, cst.StarredElement) for e in node.elements):
        return None
    return [e.value for e in node.elements]


def parameters(params: cst.Parameters) -> list[cst.Param]:
    """The parameters a call binds by position or by name, in order (``*args`` and ``**kwargs`` not)."""
    return [*params.posonly_params, *params.params, *params.kwonly_params]


def call_arguments(fn: cst.FunctionDef, call: cst.Call) -> tuple[dict[str, cst.BaseExpression], list[cst.Arg]] | None:
    """Each of ``fn``'s parameters the call passes -> the argument's expression, and the keyword
    arguments no parameter of that name takes (``**kwargs``'s); None where the call spreads
    ``*args`` or ``**kwargs`` or passes more positional arguments than ``fn`` takes. A keyword that
    names a positional-only parameter is one of the extra keywords, as Python binds it."""
    positional = [*fn.params.posonly_params, *fn.params.params]
    known = {p.name.value for p in (*fn.params.params, *fn.params.kwonly_params)}
    bound: dict[str, cst.BaseExpression] = {}
    extra: list[cst.Arg] = []
    at = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if at >= len(positional):
                return None
            bound[positional[at].name.value] = arg.value
            at += 1
        elif arg.keyword.value in known:
            bound[arg.keyword.value] = arg.value
        else:
            extra.append(arg)
    return bound, extra


def bound_parameters(fn: cst.FunctionDef, positional: list, keywords: dict, missing) -> dict:
    """Each of ``fn``'s parameters -> what a call passes it, evaluated (``positional`` in order, then
    ``keywords`` by name), else ``missing(param)`` (its default's value, or an unknown)."""
    out = {}
    for i, p in enumerate(fn.params.params):
        name = p.name.value
        out[name] = positional[i] if i < len(positional) else keywords[name] if name in keywords else missing(p)
    return out


def assigned_names(body) -> set[str]:
    """Names a block assigns (statements only: a walk without a libcst visitor)."""
    return {name for name, node in bindings(body) if type(node) not in (cst.FunctionDef, cst.ClassDef)}


def bindings(body, imports: bool = False):
    """(name, node) of each binding a block makes, by statements only (no libcst visitor, nor the
    bodies of the functions and classes it defines): the node is the small statement that binds it
    (an assignment, a walrus), the ``for``, ``if`` (a walrus in its test), ``with`` or except
    handler, or the ``def``/``class`` that defines it. ``imports``: the names its imports bind too
    (``*`` for a star import, which binds names the module does not show)."""
    todo = list(body.body if isinstance(body, cst.BaseSuite) else body)
    while todo:
        stmt = todo.pop()
        kind = type(stmt)  # not isinstance: libcst's classes are abstract, and that check is slow
        if kind is cst.SimpleStatementLine:
            for small in stmt.body:
                small_kind = type(small)
                if imports and small_kind in (cst.Import, cst.ImportFrom):
                    yield from ((n, small) for n in _imported_names(small))
                elif small_kind is cst.Assign:
                    for t in small.targets:
                        yield from ((n, small) for n in target_names(t.target))
                elif small_kind in (cst.AugAssign, cst.AnnAssign):
                    yield from ((n, small) for n in target_names(small.target))
                elif small_kind is cst.Expr and type(small.value) is cst.NamedExpr:
                    yield from ((n, small) for n in target_names(small.value.target))
        elif kind in (cst.FunctionDef, cst.ClassDef):
            yield stmt.name.value, stmt
        elif kind in (cst.For, cst.While, cst.If, cst.With, cst.Try):
            if kind is cst.For:
                yield from ((n, stmt) for n in target_names(stmt.target))
            elif kind is cst.If and isinstance(stmt.test, cst.NamedExpr):
                yield from ((n, stmt) for n in target_names(stmt.test.target))
            elif kind is cst.With:
                for item in stmt.items:
                    if item.asname is not None:
                        yield from ((n, stmt) for n in target_names(item.asname.name))
            elif kind is cst.Try:
                for handler in stmt.handlers:
                    if handler.name is not None:
                        yield from ((n, handler) for n in target_names(handler.name.name))
                    todo.extend(handler.body.body)
                if stmt.finalbody is not None:
                    todo.extend(stmt.finalbody.body.body)
            todo.extend(stmt.body.body)
            orelse = getattr(stmt, "orelse", None)
            if isinstance(orelse, cst.If):
                todo.append(orelse)
            elif orelse is not None:
                todo.extend(orelse.body.body)


def _imported_names(small: cst.Import | cst.ImportFrom) -> list[str]:
    if isinstance(small.names, cst.ImportStar):
        return ["*"]
    out = []
    for alias in small.names:
        if alias.asname is not None:
            out += target_names(alias.asname.name)
        else:
            out.append(_module_name(alias.name).split(".")[0])
    return out


def global_names(module: cst.Module, declared: bool = True) -> set[str] | None:
    """Every name the module binds at its top level (assignments, imports, functions and classes,
    also under ``if``/``try``/``with``/loops, and, where ``declared``, what a function declares
    ``global``), or None where a star import binds names the module does not show."""
    out = {name for name, _ in bindings(module.body, imports=True)}
    for node in all_nodes(module) if declared else ():
        if type(node) is cst.Global:
            out |= {n.name.value for n in node.names}
    return None if "*" in out else out


def target_names(node) -> set[str]:
    """The names an assignment target binds (``a``, ``a, (b, *c)``)."""
    names: set[str] = set()
    _targets(node, names)
    return names


def _targets(node, names: set[str]) -> None:
    if isinstance(node, cst.Name):
        names.add(node.value)
    elif isinstance(node, (cst.Tuple, cst.List)):
        for el in node.elements:
            _targets(el.value, names)
    elif isinstance(node, cst.StarredElement):
        _targets(node.value, names)
