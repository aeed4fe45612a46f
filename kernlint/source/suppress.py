"""Suppression comments, read from the module's comment tokens only (never from strings).

- ``# noqa`` on any line of a finding's span silences it; ``# noqa: KL101, KL102`` (ruff's syntax:
  ``noqa`` in any case, spaces around the colon allowed, codes separated by commas or spaces)
  silences only the kernlint codes it names: another tool's codes (``# noqa: E501``) and
  prefixes (``KL1``) silence nothing of kernlint's.
- ``# kernlint: ignore[KL101]`` alone on a line silences the next statement (all its lines);
  ``# kernlint: ignore[]`` every rule there.
- ``# kernlint: noqa`` silences the whole file; ``# kernlint: noqa: KL101`` only those codes.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from kernlint.model import Finding

ALL = "*"
_CODE = r"[A-Za-z]+[0-9]+"
_CODES = rf"(?P<codes>{_CODE}(?:(?:\s*,\s*|\s+){_CODE})*)"
#: ``# noqa`` then, optionally, ``: CODES``; a colon without codes is not a directive at all
_NOQA = re.compile(rf"#\s*noqa(?![\w-])(?:\s*:\s*(?:{_CODES}|(?P<bad>\S?)))?", re.I)
_FILE_NOQA = re.compile(rf"^#\s*kernlint\s*:\s*noqa(?![\w-])(?:\s*:\s*(?:{_CODES}|(?P<bad>\S?)))?", re.I)
_IGNORE = re.compile(r"^#\s*kernlint\s*:\s*ignore\[(?P<codes>[^\]]*)\]\s*$", re.I)
_KL = re.compile(r"^KL\d{3}$")
#: cheap test before tokenizing: a file without these words has no directive
_ANY = re.compile(r"noqa|kernlint\s*:", re.I)


@dataclass
class Directive:
    """One ``# noqa: KL...`` comment: where it is and which kernlint codes it names."""

    line: int
    col: int
    codes: set[str]
    used: set[str] = field(default_factory=set)


def _kernlint_codes(text: str | None) -> set[str]:
    return {c.upper() for c in re.split(r"[\s,]+", text or "") if _KL.match(c.upper())}


@dataclass
class Suppressions:
    file_codes: set[str] = field(default_factory=set)
    lines: dict[int, set[str]] = field(default_factory=dict)
    #: ``# noqa: KL...`` directives that name codes, for the unused-noqa rule
    directives: list[Directive] = field(default_factory=list)
    _by_line: dict[int, list[Directive]] = field(default_factory=dict)

    @classmethod
    def parse(cls, source: str) -> "Suppressions":
        sup = cls()
        if not _ANY.search(source):
            return sup
        pending: list[tuple[int, set[str]]] = []
        for tok in _comments(source):
            line, col = tok.start
            text = tok.string
            m = _FILE_NOQA.match(text)
            if m:
                if m.group("bad") is None:
                    sup.file_codes |= _kernlint_codes(m.group("codes")) if m.group("codes") else {ALL}
                continue
            m = _IGNORE.match(text)
            if m:
                if tok.line[:col].strip() == "":
                    codes = _kernlint_codes(m.group("codes")) if m.group("codes").strip() else {ALL}
                    pending.append((line, codes))
                continue
            m = _NOQA.search(text)
            if m is None or m.group("bad") is not None:
                continue
            if m.group("codes") is None:
                sup.lines.setdefault(line, set()).add(ALL)
                continue
            codes = _kernlint_codes(m.group("codes"))
            sup.lines.setdefault(line, set()).update(codes)
            if codes:
                directive = Directive(line, col + 1 + m.start(), codes)
                sup.directives.append(directive)
                sup._by_line.setdefault(line, []).append(directive)
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
        hit = False
        for line in range(finding.span.line, finding.span.end_line + 1):
            codes = self.lines.get(line)
            if codes and (ALL in codes or finding.rule in codes):
                hit = True
                for directive in self._by_line.get(line, ()):
                    if finding.rule in directive.codes:
                        directive.used.add(finding.rule)
        return hit


def _comments(source: str):
    """The module's comment tokens (a tokenizer error ends the list where it happened)."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                yield tok
    except (tokenize.TokenError, SyntaxError):
        return


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
