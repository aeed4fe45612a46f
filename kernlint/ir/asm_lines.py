"""Source lines of inline-PTX instructions.

Triton gives every instruction of a ``tl.inline_asm_elementwise`` block one debug location, and
which line that is differs between Triton versions (the asm string's first line, its last line, the
call's arguments). The instruction's own text is in the user's source, so a finding about it can
point at the line where it is written.
"""

from __future__ import annotations

import ast
import re
from typing import Sequence

#: how far from the reported line an asm string's instruction may be written
WINDOW = 60


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.split("//", 1)[0]).strip()


def instruction_position(lines: Sequence[str], line: int, col: int, instruction: str) -> tuple[int, int]:
    """(line, col) of ``instruction`` written on the line of ``lines`` nearest ``line`` (comments
    aside); ``(line, col)`` unchanged when no line near it holds the instruction."""
    want = _normal(instruction)
    if not want or not (0 < line <= len(lines)):
        return line, col
    for d in range(0, WINDOW + 1):
        for cand in {line - d, line + d}:
            if 0 < cand <= len(lines) and want in _normal(lines[cand - 1]):
                text = lines[cand - 1]
                return cand, len(text) - len(text.lstrip()) + 1
    return line, col


def statement_spans(lines: Sequence[str]) -> list[tuple[int, int]]:
    """(first line, last line) of every statement of the source."""
    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError):
        return []
    return [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree) if isinstance(n, ast.stmt)]


def statement_range(spans: Sequence[tuple[int, int]], line: int) -> tuple[int, int]:
    """First and last line of the innermost statement holding ``line`` (the whole asm call: the
    compiler's line table may put its instructions on any of them)."""
    best = (line, line)
    for start, end in spans:
        if start <= line <= end and (best == (line, line) or end - start < best[1] - best[0]):
            best = (start, end)
    return best
