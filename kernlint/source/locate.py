"""Source positions for nodes inside a kernel, computed lazily.

libcst's PositionProvider regenerates the code of the whole module, which costs about twice the
parse. Kernels are a small part of most files and most kernels have no finding, so positions are
resolved per kernel, only when a finding needs one: the kernel's function is rendered on its own
and shifted to where its ``def`` line stands in the file.
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from kernlint.model import Span

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
        self._line_shift = 0
        self._col_shift = 0
        candidates = def_lines.get(fn.name.value, [])
        self._def = candidates[0] if len(candidates) == 1 else None
        self._ambiguous = len(candidates) != 1

    @staticmethod
    def def_lines(source: str) -> dict[str, list[tuple[int, int]]]:
        out: dict[str, list[tuple[int, int]]] = {}
        for m in _DEF.finditer(source):
            line = source.count("\n", 0, m.start()) + 1
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
        """The kernel's code from its ``def`` line on, as libcst renders it (lossless)."""
        if self._text is None:
            self._text = self.module.code_for_node(self.fn.with_changes(decorators=[], leading_lines=[])).rstrip("\n")
        return self._text

    def _span_by_text(self, node: cst.CSTNode) -> Span | None:
        """Where the node's text occurs exactly once in the kernel, its offset is its position."""
        if self._def is None:
            return None
        target = self.module.code_for_node(node).strip()
        text = self.text
        start = text.find(target)
        if not target or start < 0 or text.find(target, start + 1) >= 0:
            return None
        end = start + len(target)
        def_line, indent = self._def

        def at(offset: int) -> tuple[int, int]:
            line = def_line + text.count("\n", 0, offset)
            return line, offset - (text.rfind("\n", 0, offset) + 1) + indent + 1

        return Span(*at(start), *at(end))

    def span(self, node: cst.CSTNode) -> Span:
        if self._positions is None:
            fast = self._span_by_text(node)
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
