"""Suppression comments: ``# noqa: KL101``, ``# kernlint: ignore[KL101]`` and ``# kernlint: noqa``.

- ``# noqa`` / ``# noqa: KL101, KL102`` on any line of a finding's span silences it (bare ``noqa``
  silences every rule).
- ``# kernlint: ignore[KL101]`` alone on a line silences the next statement (all its lines).
- ``# kernlint: noqa`` anywhere silences the whole file; ``# kernlint: noqa: KL101`` only those codes.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from kernlint.model import Finding

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>KL\d{3}(?:[\s,]+KL\d{3})*))?", re.I)
_FILE_NOQA = re.compile(r"#\s*kernlint:\s*noqa(?::\s*(?P<codes>KL\d{3}(?:[\s,]+KL\d{3})*))?", re.I)
_IGNORE = re.compile(r"^\s*#\s*kernlint:\s*ignore\[(?P<codes>[^\]]*)\]\s*$", re.I)
ALL = "*"


def _codes(text: str | None) -> set[str]:
    if not text:
        return {ALL}
    return {c.upper() for c in re.findall(r"KL\d{3}", text, re.I)}


@dataclass
class Suppressions:
    file_codes: set[str] = field(default_factory=set)
    lines: dict[int, set[str]] = field(default_factory=dict)

    @classmethod
    def parse(cls, source: str) -> "Suppressions":
        sup = cls()
        if "noqa" not in source and "kernlint:" not in source:
            return sup
        lines = source.splitlines()
        pending: list[tuple[int, set[str]]] = []
        for i, line in enumerate(lines, start=1):
            if "#" not in line:
                continue
            m = _FILE_NOQA.search(line)
            if m:
                sup.file_codes |= _codes(m.group("codes"))
                continue
            m = _IGNORE.match(line)
            if m:
                pending.append((i, _codes(m.group("codes")) if m.group("codes").strip() else {ALL}))
                continue
            m = _NOQA.search(line)
            if m:
                sup.lines.setdefault(i, set()).update(_codes(m.group("codes")))
        if pending:
            statements = _logical_lines(source)
            for line, codes in pending:
                nxt = next(((s, e) for s, e in statements if s > line), None)
                if nxt:
                    for covered in range(nxt[0], nxt[1] + 1):
                        sup.lines.setdefault(covered, set()).update(codes)
        return sup

    def suppressed(self, finding: Finding) -> bool:
        if ALL in self.file_codes or finding.rule in self.file_codes:
            return True
        for line in range(finding.span.line, finding.span.end_line + 1):
            codes = self.lines.get(line)
            if codes and (ALL in codes or finding.rule in codes):
                return True
        return False


def _logical_lines(source: str) -> list[tuple[int, int]]:
    """(first, last) physical line of each logical line that holds code."""
    out = []
    start = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING):
                continue
            if tok.type == tokenize.NEWLINE:
                if start is not None:
                    out.append((start, tok.start[0]))
                start = None
            elif start is None:
                start = tok.start[0]
    except (tokenize.TokenError, SyntaxError):
        pass
    return out
