"""Source positions for nodes inside a kernel, computed lazily and cheaply.

libcst's PositionProvider regenerates the code of the whole module, which costs about twice the
parse. Positions are only needed for findings, so they are found from the text instead:

1. a node whose code occurs once in the kernel's source is where that text is;
2. otherwise the statement it stands in is found (the k-th statement of the kernel in document
   order is the k-th statement Python's own ``ast`` reports, with exact line/column ranges), and
   the node's code is searched inside that statement;
3. only if both fail is the kernel rendered with PositionProvider.
"""

from __future__ import annotations

import ast
import re
import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from kernlint.model import Span
from kernlint.source.names import child_nodes, source_text

_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.M)


class KernelLocator:
    def __init__(
        self, module: cst.Module, fn: cst.FunctionDef, def_lines: dict[str, list[tuple[int, int]]], source_lines: list[str]
    ):
        self.source_lines = source_lines
        self.module = module
        self.fn = fn
        self._positions = None
        self._text: str | None = None
        self._statement_ranges: dict[int, tuple[int, int]] | None = None
        self._owners: dict[int, cst.CSTNode] | None = None
        self._line_shift = 0
        self._col_shift = 0
        candidates = def_lines.get(fn.name.value, [])
        self._def = candidates[0] if len(candidates) == 1 else None
        self._ambiguous = len(candidates) != 1

    @staticmethod
    def def_lines(source: str) -> dict[str, list[tuple[int, int]]]:
        out: dict[str, list[tuple[int, int]]] = {}
        line, counted = 1, 0
        for m in _DEF.finditer(source):
            line += source.count("\n", counted, m.start())  # counted from the previous def: linear
            counted = m.start()
            out.setdefault(m.group(2), []).append((line, len(m.group(1).expandtabs())))
        return out

    def _resolve(self):
        if self._positions is not None:
            return self._positions
        if self._ambiguous:
            # The same name is defined twice (or the def line is unusual): pay for the whole module.
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions = wrapper.resolve(PositionProvider)
            return self._positions
        wrapper = MetadataWrapper(cst.Module(body=[self.fn]), unsafe_skip_copy=True)
        positions = wrapper.resolve(PositionProvider)
        def_line, indent = self._def  # type: ignore[misc]
        self._line_shift = def_line - positions[self.fn.name].start.line
        self._col_shift = indent
        self._positions = positions
        return positions

    @property
    def text(self) -> str:
        """The kernel's source from its ``def`` line to its last line, as the file has it."""
        if self._text is None:
            span = self.kernel_span()
            self._text = "\n".join(self.source_lines[span.line - 1:span.end_line])
        return self._text

    def _span_by_text(self, node: cst.CSTNode, within: cst.CSTNode | None = None) -> Span | None:
        """Where the node's text occurs exactly once in the kernel (or once in the kernel's text of
        the statement it stands in, and that statement once in the kernel), that is its position."""
        if self._def is None:
            return None
        target = source_text(self.module, node).strip()
        text = self.text
        start = text.find(target)
        if not target or start < 0:
            return None
        if text.find(target, start + 1) >= 0:
            within = within if within is not None else self._owner(node)
            found = self._statement_range(within) if within is not None else None
            if found is None:
                return None
            lo, hi = found
            inside = text.find(target, lo, hi)
            if inside < 0 or text.find(target, inside + 1, hi) >= 0:
                return None  # not in it, or twice in it (``p + row * D`` stored, loaded from ``q + row * D``)
            start = inside
        inner = _without_parentheses(self.module, node, target)
        start += target.find(inner)
        end = start + len(inner)
        def_line, indent = self._def

        def at(offset: int) -> tuple[int, int]:
            line = def_line + text.count("\n", 0, offset)
            return line, offset - (text.rfind("\n", 0, offset) + 1) + 1

        return Span(*at(start), *at(end))

    def _owner(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The innermost statement of the kernel whose line (or compound header) holds ``node``."""
        if self._owners is None:
            self._owners = {}
            for stmt in _cst_statements(self.fn.body):
                todo = list(_header(stmt))
                while todo:
                    n = todo.pop()
                    self._owners[id(n)] = stmt
                    todo.extend(child_nodes(n))
        return self._owners.get(id(node))

    def _statement_range(self, stmt: cst.CSTNode) -> tuple[int, int] | None:
        """Offsets of a statement of the kernel in ``self.text``: by its text when that occurs once,
        else through Python's ast (which costs a parse of the kernel)."""
        if isinstance(stmt, cst.SimpleStatementLine):
            code = source_text(self.module, stmt).strip()
            first = self.text.find(code)
            if code and first >= 0 and self.text.find(code, first + 1) < 0:
                return first, first + len(code)
        if self._statement_ranges is None:
            self._statement_ranges = self._map_statements()
        return self._statement_ranges.get(id(stmt))

    def _map_statements(self) -> dict[int, tuple[int, int]]:
        ours = list(_cst_statements(self.fn.body))
        try:
            tree = ast.parse(textwrap.dedent(self.text))
        except (SyntaxError, ValueError):
            return {}
        fn = tree.body[0] if tree.body and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        theirs = list(_ast_statements(fn.body)) if fn is not None else []
        if len(ours) != len(theirs):
            return {}
        lines = self.text.split("\n")
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)
        indent = self._def[1] if self._def else 0
        out = {}
        for node, (first, last) in zip(ours, theirs):
            lo = starts[first.lineno - 1] + first.col_offset + indent
            hi = starts[last.end_lineno - 1] + last.end_col_offset + indent
            out[id(node)] = (lo, hi)
        return out

    def span(self, node: cst.CSTNode, within: cst.CSTNode | None = None) -> Span:
        if self._positions is None:
            fast = self._span_by_text(node, within)
            if fast is not None:
                return fast
        positions = self._resolve()
        pos = positions.get(node)
        if pos is None:
            return self.kernel_span()
        return Span(
            pos.start.line + self._line_shift,
            pos.start.column + self._col_shift + 1,
            pos.end.line + self._line_shift,
            pos.end.column + self._col_shift + 1,
        )

    def kernel_span(self) -> Span:
        """From the ``def`` line to the last line of the body, found by indentation in the source."""
        if self._def is None:
            return self.span(self.fn.name)
        line, indent = self._def
        lines = self.source_lines
        last = line
        for i in range(line, len(lines)):  # lines[i] is line i + 1
            text = lines[i]
            stripped = text.strip()
            if not stripped or stripped.startswith("#"):
                continue
            if len(text) - len(text.lstrip()) <= indent and not stripped.startswith((")", "]", "}")):
                break
            last = i + 1
        return Span(line, indent + 1, last, len(lines[last - 1].rstrip()) + 1)


_COMPOUND = (cst.If, cst.For, cst.While, cst.With, cst.Try)


def _header(stmt: cst.CSTNode) -> list:
    """A simple-statement line whole; of a compound statement, what its first line holds."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return [stmt]
    if isinstance(stmt, (cst.If, cst.While)):
        return [stmt.test]
    if isinstance(stmt, cst.For):
        return [stmt.target, stmt.iter]
    if isinstance(stmt, cst.With):
        return list(stmt.items)
    return []


def _cst_statements(block):
    """The kernel's statements in document order: a simple-statement line, or a compound statement
    (for its header); nested functions and classes are left out, as in :func:`_ast_statements`."""
    body = block.body if isinstance(block, cst.IndentedBlock) else []
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield stmt
        elif isinstance(stmt, _COMPOUND):
            yield stmt
            yield from _cst_statements(stmt.body)
            if isinstance(stmt, cst.Try):
                for handler in stmt.handlers:
                    yield from _cst_statements(handler.body)
                if stmt.finalbody is not None:
                    yield from _cst_statements(stmt.finalbody.body)
            orelse = getattr(stmt, "orelse", None)
            while orelse is not None:
                if isinstance(orelse, cst.If):
                    yield orelse
                    yield from _cst_statements(orelse.body)
                    orelse = orelse.orelse
                else:
                    yield from _cst_statements(orelse.body)
                    orelse = None


_AST_COMPOUND = (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith)


def _ast_statements(body):
    """(first, last) ast statements per item of :func:`_cst_statements`: one line of simple
    statements (``a = 1; b = 2`` is one libcst line), or a compound statement."""
    group = []
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if group:
                yield group[0], group[-1]
                group = []
            continue
        if isinstance(stmt, _AST_COMPOUND):
            if group:
                yield group[0], group[-1]
                group = []
            yield stmt, stmt
            yield from _ast_statements(stmt.body)
            if isinstance(stmt, ast.Try):
                for handler in stmt.handlers:
                    yield from _ast_statements(handler.body)
                yield from _ast_statements(stmt.orelse)
                yield from _ast_statements(stmt.finalbody)
            elif isinstance(stmt, ast.If):
                orelse = stmt.orelse
                # `elif` and `else: if` give the same order of statements in both trees
                while len(orelse) == 1 and isinstance(orelse[0], ast.If):
                    yield orelse[0], orelse[0]
                    yield from _ast_statements(orelse[0].body)
                    orelse = orelse[0].orelse
                yield from _ast_statements(orelse)
            else:
                yield from _ast_statements(getattr(stmt, "orelse", []))  # a ``with`` has none
            continue
        if group and group[-1].end_lineno == stmt.lineno:
            group.append(stmt)
        else:
            if group:
                yield group[0], group[-1]
            group = [stmt]
    if group:
        yield group[0], group[-1]


def _without_parentheses(module: cst.Module, node: cst.CSTNode, code: str) -> str:
    """A node's code without the parentheses around it (positions, as libcst reports them, exclude them)."""
    if getattr(node, "lpar", None):
        return source_text(module, node.with_changes(lpar=[], rpar=[])).strip()
    return code
