"""Human output: ``concise`` (one line a finding) and ``full`` (with the source lines)."""

from __future__ import annotations

from pathlib import Path

from kernlint.model import Finding, RunResult, Verdict


def _verdict(f: Finding) -> str:
    if f.verdict is Verdict.SUSPECTED:
        return ""
    if f.verdict is Verdict.INCONCLUSIVE:  # say why: the user's next step depends on it
        notes = [e["note"] for e in f.evidence.get("dynamic", []) if isinstance(e, dict) and e.get("note")]
        if notes:
            return f" [inconclusive: {notes[-1][:160]}]"
    return f" [{f.verdict.value}]"


def ir_excerpt(f: Finding) -> list[str]:
    """The compiler output behind an IR finding (its specialization, then the IR lines)."""
    if not f.evidence.get("excerpt"):
        return []
    head = f"  {f.evidence.get('ir', 'ir')} ({f.evidence.get('specialization_label', '')}):"
    return [head, *(f"    {line}" for line in f.evidence["excerpt"][:12])]


def concise(result: RunResult, root: Path, show_ir: bool = False) -> str:
    lines = [f"{e.path}:{e.line}:{e.col}: error: {e.message}" for e in result.errors]
    for f in result.sorted_findings():
        lines.append(f"{f.path}:{f.span.line}:{f.span.col}: {f.rule} {f.message}{_verdict(f)}")
        if show_ir:
            lines += ir_excerpt(f)
    lines += [f"note: {n}" for n in result.notices]
    lines.append(summary(result))
    return "\n".join(lines) + "\n"


def summary(result: RunResult) -> str:
    n = len(result.findings)
    errors = f", {len(result.errors)} file error{'s' if len(result.errors) != 1 else ''}" if result.errors else ""
    scope = f"{result.files} file{'s' if result.files != 1 else ''}, {len(result.kernels)} kernels{errors}"
    if n == 0 and result.errors:
        return f"No findings, but not every file was checked ({scope})."
    if n == 0:
        return f"All checks passed ({scope})."
    return f"Found {n} finding{'s' if n != 1 else ''} in {result.files} files, {len(result.kernels)} kernels{errors}."


def full(result: RunResult, root: Path) -> str:
    cache: dict[str, list[str]] = {}
    out = [f"{e.path}:{e.line}:{e.col}: error: {e.message}" for e in result.errors]
    for f in result.sorted_findings():
        if f.path not in cache:
            try:
                cache[f.path] = (root / f.path).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                cache[f.path] = []
        lines = cache[f.path]
        out.append(f"{f.path}:{f.span.line}:{f.span.col}: {f.rule} [{f.level.value}] {f.message}{_verdict(f)}")
        if f.kernel:
            out.append(f"  in kernel `{f.kernel}` ({f.phase.value} phase)")
        first = max(f.span.line - 1, 1)
        last = min(f.span.end_line + 1, len(lines))
        width = len(str(last))
        for n in range(first, last + 1):
            if n - 1 >= len(lines):
                break
            out.append(f"  {n:>{width}} | {lines[n - 1]}")
            if n == f.span.line:
                end = f.span.end_col if f.span.end_line == n else len(lines[n - 1]) + 1
                out.append(f"  {'':>{width}} | {' ' * (f.span.col - 1)}{'^' * max(end - f.span.col, 1)}")
        for key, value in f.measurements.items():
            out.append(f"  measured {key} = {value}")
        out += ir_excerpt(f)
        out.append("")
    out += [f"note: {n}" for n in result.notices]
    out.append(summary(result))
    return "\n".join(out) + "\n"


def statistics(result: RunResult) -> str:
    """``--statistics``: findings per rule, most frequent first (as ruff)."""
    from collections import Counter

    from kernlint import catalogue

    rules = catalogue.all_rules()
    counts = Counter(f.rule for f in result.findings)
    lines = [f"{e.path}:{e.line}:{e.col}: error: {e.message}" for e in result.errors]
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        name = rules[code].name if code in rules else ""
        lines.append(f"{n:>5}\t{code}\t{name}")
    return "\n".join(lines) + "\n" if lines else ""


def without_summary(text: str, result: RunResult) -> str:
    """``--quiet``: the report less its closing summary line and notes."""
    tail = [summary(result), *(f"note: {n}" for n in result.notices)]
    lines = text.rstrip("\n").split("\n")
    while lines and lines[-1] in tail:
        lines.pop()
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""
