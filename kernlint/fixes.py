"""Automatic fixes for the mechanical rules, as ruff's ``--fix`` / ``--unsafe-fixes``.

A fix is computed from a finding (its span and evidence) and the file's text alone, apart from how
the rule detected it, so a rule's detection can change without touching its fix. Edits carry 1-based
lines and columns with an exclusive end column, like :class:`kernlint.model.Span`.

- KL104 ``row * stride`` -> ``row.to(tl.int64) * stride`` (one int64 operand makes the product int64)
- KL108 ``n // BLOCK`` in a grid -> ``triton.cdiv(n, BLOCK)``
- KL101/KL102 a mask ``offs <= n`` -> ``offs < n`` (unsafe: it changes which lanes run, which the
  finding says is wanted but a person should read)

The fixers read the finding's span and its evidence (``grid``, ``products``, ``mask``/``problems``),
never its message; ``tests/test_fixes.py`` fails when a rule stops giving what its fixer reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import libcst as cst

from kernlint.model import Finding, Span


@dataclass(frozen=True)
class Edit:
    span: Span
    text: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    safe: bool = True


class _Text:
    """Line/column <-> offset over one file's text."""

    def __init__(self, source: str):
        self.source = source
        self.starts = [0]
        for m in re.finditer("\n", source):
            self.starts.append(m.end())

    def offset(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col - 1

    def position(self, offset: int) -> tuple[int, int]:
        line = max(i for i, s in enumerate(self.starts) if s <= offset)
        return line + 1, offset - self.starts[line] + 1

    def span(self, start: int, end: int) -> Span:
        return Span(*self.position(start), *self.position(end))

    def slice(self, span: Span) -> tuple[int, int]:
        return self.offset(span.line, span.col), self.offset(span.end_line, span.end_col)


def _module_alias(source: str, module: str) -> str | None:
    """The name ``module`` is bound to at module level (``import triton.language as tl`` -> ``tl``)."""
    if module == "triton" and re.search(r"^import triton\s*(#.*)?$", source, re.M):
        return "triton"
    m = re.search(rf"^import {re.escape(module)} as (\w+)\s*(#.*)?$", source, re.M)
    if m:
        return m.group(1)
    if "." in module:
        pkg, name = module.rsplit(".", 1)
        m = re.search(rf"^from {re.escape(pkg)} import {name}(?: as (\w+))?\s*(#.*)?$", source, re.M)
        if m:
            return m.group(1) or name
    return None


def _widen_product(finding: Finding, source: str) -> Fix | None:
    """The product is the finding's span, or the first of its evidence's ``products`` found on
    the span's lines."""
    tl = _module_alias(source, "triton.language")
    if tl is None:
        return None
    text = _Text(source)
    start, end = text.slice(finding.span)
    candidates = [(start, end)]
    lines_start, lines_end = text.offset(finding.span.line, 1), text.offset(finding.span.end_line, 1)
    lines_end = source.find("\n", lines_end) % (len(source) + 1)
    for product in finding.evidence.get("products", ()):
        at = source.find(product, lines_start, lines_end)
        if at >= 0:
            candidates.append((at, at + len(product)))
    for start, end in candidates:
        try:
            expr = cst.parse_expression(source[start:end].strip())
        except cst.ParserSyntaxError:
            continue
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
            break
    else:
        return None
    start += len(source[start:end]) - len(source[start:end].lstrip())
    left = cst.Module([]).code_for_node(expr.left)
    atom = isinstance(expr.left, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))
    widened = f"{left}.to({tl}.int64)" if atom else f"({left}).to({tl}.int64)"
    return Fix(f"Widen `{left}` to int64", (Edit(text.span(start, start + len(left)), widened),))


def _cdiv_grid(finding: Finding, source: str) -> Fix | None:
    grid = finding.evidence.get("grid")
    if not grid:
        return None
    text = _Text(source)
    start, end = text.slice(finding.span)
    at = source.find(grid, start, end)
    if at < 0:
        return None
    try:
        expr = cst.parse_expression(grid)
    except cst.ParserSyntaxError:
        return None
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.FloorDivide)):
        return None
    code = cst.Module([]).code_for_node
    edits = []
    triton = _module_alias(source, "triton")
    if triton is None:
        triton = "triton"
        first_import = re.search(r"^(?:import|from) ", source, re.M)
        at_line = text.position(first_import.start())[0] if first_import else 1
        edits.append(Edit(Span(at_line, 1, at_line, 1), "import triton\n"))
    edits.insert(0, Edit(text.span(at, at + len(grid)), f"{triton}.cdiv({code(expr.left)}, {code(expr.right)})"))
    return Fix(f"Size the grid with `{triton}.cdiv`", tuple(edits))


def _exclusive_mask(finding: Finding, source: str) -> Fix | None:
    """The one ``<=`` of the mask: in the access's ``mask=`` text, or in the last assignment of the
    named mask before the access; none when there are several (which one is meant is not known)."""
    mask = finding.evidence.get("mask")
    ev = finding.evidence
    # the engine's witness reaches exactly the first element past the end: the one lane `<` drops
    one_past = ev.get("address") is not None and ev.get("address") == ev.get("bound")
    if not mask or not ("inclusive" in ev.get("problems", ()) or one_past):
        return None
    text = _Text(source)
    start, end = text.slice(finding.span)
    if not re.fullmatch(r"[A-Za-z_]\w*", mask):
        region = (start, end)
    else:
        assigns = [a for a in re.finditer(rf"^[ \t]*{mask}[ \t]*=(?!=)[^\n]*", source, re.M) if a.end() <= start]
        if not assigns:
            return None
        region = assigns[-1].span()
    hits = list(re.compile(r"<=").finditer(source, *region))
    if len(hits) != 1:
        return None
    at = hits[0].start()
    return Fix("Use `<` in the mask", (Edit(text.span(at, at + 2), "<"),), safe=False)


FIXERS: dict[str, Callable[[Finding, str], Fix | None]] = {
    "KL104": _widen_product,
    "KL108": _cdiv_grid,
    "KL101": _exclusive_mask,
    "KL102": _exclusive_mask,
}


def fix_for(finding: Finding, source: str) -> Fix | None:
    fixer = FIXERS.get(finding.rule)
    return fixer(finding, source) if fixer else None


def apply(source: str, fixes: list[Fix]) -> tuple[str, int]:
    """``source`` with the fixes whose edits do not overlap an earlier fix's; and how many applied.
    The same edit made by two findings (two accesses sharing one mask) is applied once."""
    text = _Text(source)
    taken: list[tuple[int, int]] = []
    chosen: dict[tuple[int, int, str], None] = {}
    applied = 0
    for fix in fixes:
        ranges = [(*text.slice(e.span), e.text) for e in fix.edits]
        if all(r in chosen for r in ranges):
            applied += 1
            continue
        if any(s < te and ts < e or (s == e == ts == te) for s, e, _ in ranges for ts, te in taken if (s, e, _) not in chosen):
            continue
        for r in ranges:
            chosen[r] = None
            taken.append(r[:2])
        applied += 1
    out = source
    for s, e, new in sorted(chosen, key=lambda r: (r[0], r[1]), reverse=True):
        out = out[:s] + new + out[e:]
    return out, applied


def fixable(finding: Finding, source: str, unsafe: bool) -> Fix | None:
    fix = fix_for(finding, source)
    return fix if fix is not None and (fix.safe or unsafe) else None


def fix_text(display: str, source: str, lint: Callable[[str, str], list[Finding]], unsafe: bool,
             passes: int = 10) -> tuple[str, int]:
    """Apply fixes and re-lint until nothing fixable is left (a fix can uncover the next finding):
    the fixed text and the number of fixes applied. ``lint(display, text)`` returns the findings."""
    total = 0
    for _ in range(passes):
        fixes = [fx for f in lint(display, source) if (fx := fixable(f, source, unsafe)) is not None]
        if not fixes:
            break
        new, applied = apply(source, fixes)
        if new == source:
            break
        source, total = new, total + applied
    return source, total


def _comment_lines(source: str) -> set[int]:
    """Lines whose end is outside a string: where a ``# noqa`` comment can go."""
    import io
    import tokenize

    lines = set(range(1, source.count("\n") + 2))
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.STRING or getattr(tokenize, "FSTRING_MIDDLE", None) == tok.type:
                lines -= set(range(tok.start[0], tok.end[0]))
    except (tokenize.TokenError, SyntaxError):
        pass
    return lines


_NOQA_CODES = re.compile(r"#\s*noqa(?P<colon>:\s*(?P<codes>KL\d{3}(?:[\s,]+KL\d{3})*))?", re.I)


def add_noqa_comments(source: str, findings: list[Finding]) -> tuple[str, int]:
    """``source`` with a ``# noqa: CODE`` comment (the syntax the README documents) on a line of
    each finding; codes already there are kept and extended. Returns the text and how many comments
    it added or extended."""
    ends_ok = _comment_lines(source)
    lines = source.split("\n")
    wanted: dict[int, set[str]] = {}
    for f in findings:
        line = next((n for n in range(f.span.end_line, len(lines) + 1)
                     if n in ends_ok and not lines[n - 1].rstrip().endswith("\\")), None)
        if line is not None:
            wanted.setdefault(line, set()).add(f.rule)
    changed = 0
    for line, codes in wanted.items():
        text = lines[line - 1]
        m = _NOQA_CODES.search(text)
        if m and not m.group("colon"):
            continue  # a bare `# noqa` already silences everything
        if m:
            have = re.findall(r"KL\d{3}", m.group("codes"), re.I)
            new = sorted({c.upper() for c in have} | codes)
            if len(new) == len(set(have)):
                continue
            text = text[:m.start()] + "# noqa: " + ", ".join(new) + text[m.end():]
        else:
            text = text.rstrip() + "  # noqa: " + ", ".join(sorted(codes))
        lines[line - 1] = text
        changed += 1
    return "\n".join(lines), changed


def rewrite(paths, config, options, stdin: bytes | None, fix: bool, unsafe: bool, add_noqa: bool
            ) -> tuple[bytes | None, dict[str, int]]:
    """``--fix`` and ``--add-noqa``: rewrite each file in place (or the text from stdin, returned),
    linting with the same selection and suppressions as the run that reports afterwards. Also
    returns the counts: fixes applied, noqa comments written, files changed, unsafe fixes left."""
    from pathlib import Path

    from kernlint.check import Options, input_files, run_check

    def lint(display: str, text: str) -> list[Finding]:
        one = Options(**{**options.__dict__, "stdin_filename": display})
        return run_check([Path("-")], config, one, stdin=text.encode("utf-8")).findings

    counts = {"fixed": 0, "noqa": 0, "files": 0, "unsafe_left": 0}

    def rewritten(display: str, text: str) -> str:
        if fix:
            text, n = fix_text(display, text, lint, unsafe)
            counts["fixed"] += n
            if not unsafe:
                counts["unsafe_left"] += sum(fix_for(f, text) is not None for f in lint(display, text))
        if add_noqa:
            text, n = add_noqa_comments(text, lint(display, text))
            counts["noqa"] += n
        return text

    if stdin is not None:
        text = stdin.decode("utf-8", errors="surrogateescape")
        return rewritten(options.stdin_filename or "-", text).encode("utf-8", errors="surrogateescape"), counts
    files, _ = input_files(paths, config, options)
    for path, _named in files:
        try:
            raw = path.read_bytes()
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # the reporting run says why the file cannot be read
        new = rewritten(config.relpath(path), text)
        if new != text:
            path.write_bytes(new.encode("utf-8"))
            counts["files"] += 1
    return None, counts
