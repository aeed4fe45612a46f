"""What the study reports (TritonBench-G, benchmarks/study/report.py; TritonBench-T,
benchmarks/study_t/report.py) share: reading the committed JSONL, the verdict of a record within a
study, tables with one column per model, confidence intervals and the SVG figures."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Iterable
from pathlib import Path

from kernlint.eval.report_html import COLORS


def load(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


def study_verdict(rec: dict, broken_references: set[str]) -> str:
    """The record's verdict; a reference that fails to load is the task's fault (records written
    before the worker said so carry it as a runtime error in stage load-reference), and so is one
    that fails its own test on the GPU (``broken_references``): such a task says nothing about its
    candidates."""
    if rec.get("stage") == "load-reference" or str(rec.get("error_kind")) == "reference-error":
        return "skipped"
    if rec["problem"] in broken_references:
        return "excluded"
    return rec["verdict"]


def first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:160]


def column_row(label: str, groups: dict[str, list], fn: Callable[[list], object]) -> str:
    """A markdown table row: ``label``, then ``fn`` of each group (the columns, in order)."""
    return f"| {label} | " + " | ".join(str(fn(rs)) for rs in groups.values()) + " |"


def column_header(groups: dict[str, list], first: str = "") -> list[str]:
    return [f"| {first} | " + " | ".join(groups) + " |", "|---|" + "---:|" * len(groups)]


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion k/n (95% for z = 1.96); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def share(k: int, n: int) -> str:
    """``k/n (p%, 95% CI lo-hi%)``."""
    if n == 0:
        return "0/0"
    lo, hi = wilson(k, n)
    return f"{k}/{n} ({k / n:.0%}, 95% CI {lo:.0%}-{hi:.0%})"


# --- figures -------------------------------------------------------------------------------------

PALETTE = ("#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a", "#c62828", "#00838f", "#9e9d24", "#5d4037", "#455a64")


def _svg(width: int, height: int, parts: Iterable[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif">'
            + "".join(parts) + "</svg>\n")


def _color(name: str, i: int) -> str:
    return COLORS.get(name, PALETTE[i % len(PALETTE)])


def stacked_bars_svg(rows: dict[str, dict[str, int]], order: list[str], colors: dict[str, str] | None = None,
                     width: int = 720, bar_h: int = 24, label_w: int = 210) -> str:
    """One horizontal bar per row, split into ``order``'s categories by share, with a legend."""
    colors = {k: (colors or {}).get(k) or _color(k, i) for i, k in enumerate(order)}
    plot_w = width - label_w - 50
    parts, y = [], 4
    for label, counts in rows.items():
        n = sum(counts.get(k, 0) for k in order)
        parts.append(f'<text x="0" y="{y + 16}" font-size="13">{html.escape(label)} ({n})</text>')
        x = float(label_w)
        for k in order:
            c = counts.get(k, 0)
            if not c:
                continue
            w = plot_w * c / n
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{colors[k]}">'
                         f'<title>{html.escape(k)}: {c}</title></rect>')
            if w > 18:
                parts.append(f'<text x="{x + w / 2:.1f}" y="{y + 16}" font-size="11" fill="#fff" '
                             f'text-anchor="middle">{c}</text>')
            x += w
        y += bar_h + 8
    y += 6
    for i, k in enumerate(order):
        col, row_ = i % 3, i // 3
        lx, ly = col * (width // 3), y + row_ * 18
        parts.append(f'<rect x="{lx}" y="{ly}" width="12" height="12" fill="{colors[k]}"/>'
                     f'<text x="{lx + 16}" y="{ly + 11}" font-size="12">{html.escape(k)}</text>')
    return _svg(width, y + ((len(order) + 2) // 3) * 18 + 4, parts)


def strip_svg(series: dict[str, list[float]], log2: bool, marks: dict[str, float], unit: str = "",
              lo: float | None = None, hi: float | None = None, width: int = 720, row_h: int = 30,
              label_w: int = 230) -> str:
    """One row of dots per series on a common axis (log2 when ``log2``), vertical lines at ``marks``
    (label -> value), each row's median as a bar; an empty series says so."""
    every = [v for vs in series.values() for v in vs if v > 0 or not log2]
    f = (lambda v: math.log2(v)) if log2 else (lambda v: v)
    if lo is None:
        lo = min([f(v) for v in every] + [f(m) for m in marks.values()] + ([-1.0] if log2 else [0.0]))
    if hi is None:
        hi = max([f(v) for v in every] + [f(m) for m in marks.values()] + ([1.0] if log2 else [1.0]))
    span = (hi - lo) or 1.0
    plot_w = width - label_w - 20

    def x(v: float) -> float:
        return label_w + plot_w * (min(hi, max(lo, f(v))) - lo) / span

    def fmt(v: float) -> str:
        return f"{v:.0%}" if unit == "%" else f"{v:.3g}{unit}"

    height = 24 + row_h * max(1, len(series)) + 34
    parts = [] if series else [f'<text x="0" y="{24 + row_h / 2 + 4:.1f}" font-size="13" fill="#777">no candidates yet</text>']
    for label, v in marks.items():
        parts.append(f'<line x1="{x(v):.1f}" y1="14" x2="{x(v):.1f}" y2="{height - 30}" stroke="#555" '
                     f'stroke-dasharray="4"/><text x="{x(v) + 3:.1f}" y="11" font-size="11">{html.escape(label)}</text>')
    for i, (label, vs) in enumerate(series.items()):
        y = 24 + i * row_h + row_h / 2
        vs = [v for v in vs if v > 0 or not log2]
        parts.append(f'<text x="0" y="{y + 4:.1f}" font-size="13">{html.escape(label)} ({len(vs)})</text>')
        if not vs:
            parts.append(f'<text x="{label_w}" y="{y + 4:.1f}" font-size="11" fill="#777">none measured yet</text>')
            continue
        color = PALETTE[i % len(PALETTE)]
        for j, v in enumerate(sorted(vs)):
            jitter = ((j * 7) % 5 - 2) * 2.5
            parts.append(f'<circle cx="{x(v):.1f}" cy="{y + jitter:.1f}" r="3.5" fill="{color}" fill-opacity="0.6">'
                         f'<title>{fmt(v)}</title></circle>')
        med = sorted(vs)[len(vs) // 2]
        parts.append(f'<line x1="{x(med):.1f}" y1="{y - 10:.1f}" x2="{x(med):.1f}" y2="{y + 10:.1f}" stroke="#000" '
                     f'stroke-width="2"><title>median {fmt(med)}</title></line>')
    axis_y = height - 26
    parts.append(f'<line x1="{label_w}" y1="{axis_y}" x2="{label_w + plot_w}" y2="{axis_y}" stroke="#000"/>')
    ticks = range(math.floor(lo), math.ceil(hi) + 1) if log2 else [lo + span * t / 4 for t in range(5)]
    for t in ticks:
        v = 2.0 ** t if log2 else t
        if lo <= f(v) <= hi:
            text = f"{v:g}x" if log2 else f"{v:.0%}" if unit == "%" else f"{v:g}"
            parts.append(f'<line x1="{x(v):.1f}" y1="{axis_y}" x2="{x(v):.1f}" y2="{axis_y + 4}" stroke="#000"/>'
                         f'<text x="{x(v):.1f}" y="{axis_y + 16}" font-size="11" text-anchor="middle">{text}</text>')
    return _svg(width, height, parts)


def write_outputs(text: str, svgs: dict[str, str], doc: Path, figures: Path) -> None:
    """The document and its figures, where the report's test expects them."""
    figures.mkdir(parents=True, exist_ok=True)
    for name, svg in svgs.items():
        (figures / name).write_text(svg)
    doc.write_text(text)
