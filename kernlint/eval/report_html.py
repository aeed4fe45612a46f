"""A self-contained HTML report with inline SVG plots (no plotting library needed)."""

from __future__ import annotations

import html
import math

from kernlint.eval import structure_report
from kernlint.eval.policy import BASELINES
from kernlint.eval.summary import CORRECT, summarize

COLORS = {"passed": "#2e7d32", "library-fallback": "#8d6e63", "structurally-flawed": "#d84315", "slower-than-baseline": "#f9a825", "low-occupancy": "#ef6c00",
          "wrong": "#c62828", "cheating": "#6a1b9a", "runtime-error": "#455a64",
          "did-not-compile": "#9e9e9e", "skipped": "#bdbdbd"}


def bar_svg(counts: dict[str, int], width: int = 520, bar_h: int = 22) -> str:
    top = max(counts.values()) if counts and max(counts.values()) > 0 else 1
    rows = []
    for i, (k, v) in enumerate(counts.items()):
        w = int((width - 200) * v / top)
        y = i * (bar_h + 6)
        rows.append(f'<text x="0" y="{y + 15}" font-size="13">{html.escape(k)}</text>'
                    f'<rect x="170" y="{y}" width="{w}" height="{bar_h}" fill="{COLORS.get(k, "#1565c0")}"/>'
                    f'<text x="{175 + w}" y="{y + 15}" font-size="13">{v}</text>')
    h = len(counts) * (bar_h + 6)
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h}">{"".join(rows)}</svg>'


def histogram_svg(values: list[float], width: int = 520, height: int = 200, bins: int = 12) -> str:
    """Histogram of log2(speedup)."""
    if not values:
        return "<p>No speedups measured.</p>"
    logs = [math.log2(v) for v in values if v > 0]
    lo, hi = min(logs + [-1.0]), max(logs + [1.0])
    step = (hi - lo) / bins or 1.0
    counts = [0] * bins
    for x in logs:
        counts[min(bins - 1, int((x - lo) / step))] += 1
    top = max(counts) or 1
    bw = (width - 40) / bins
    parts = []
    for i, c in enumerate(counts):
        h = (height - 40) * c / top
        x = 30 + i * bw
        color = "#2e7d32" if lo + (i + 0.5) * step >= 0 else "#c62828"
        parts.append(f'<rect x="{x:.1f}" y="{height - 20 - h:.1f}" width="{bw - 2:.1f}" height="{h:.1f}" fill="{color}"/>')
    parts.append(f'<text x="30" y="{height - 4}" font-size="11">{2 ** lo:.2g}x</text>')
    parts.append(f'<text x="{width - 60}" y="{height - 4}" font-size="11">{2 ** hi:.2g}x</text>')
    x1 = 30 + (0 - lo) / step * bw
    parts.append(f'<line x1="{x1:.1f}" y1="10" x2="{x1:.1f}" y2="{height - 20}" stroke="#000" stroke-dasharray="4"/>')
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">{"".join(parts)}</svg>'


def _times(x: float | None) -> str:
    return "" if x is None else f"{x:.2f}x"


BASELINE_NAMES = {"reference": "the reference (torch eager, cuBLAS)", "torch_compile": "torch.compile", "cutlass": "CUTLASS"}


def baseline_table(recs: list[dict]) -> str:
    """Per baseline: how many correct candidates were compared with it, their geometric-mean
    speedup and how many beat it."""
    rows = []
    for b in BASELINES:
        sps = [sp for r in recs if r.get("verdict") in CORRECT
               and (sp := (r.get("speedup") or {}).get(f"vs_{b}")) and sp > 0]
        geo = _times(math.exp(sum(map(math.log, sps)) / len(sps)) if sps else None) or "-"
        rows.append(f"<tr><td>{BASELINE_NAMES[b]}</td><td>{len(sps)}</td><td>{geo}</td>"
                    f"<td>{sum(sp > 1 for sp in sps)}</td></tr>")
    return ("<table><tr><th>baseline</th><th>candidates timed against it</th><th>geomean speedup</th>"
            f"<th>faster than it</th></tr>{''.join(rows)}</table>")


def render(recs: list[dict], title: str = "kernlint eval") -> str:
    s = summarize(recs)
    verdicts = dict(s["taxonomy"])
    if s["skipped"]:
        verdicts["skipped"] = s["skipped"]
    speedups = [r["speedup"]["vs_reference"] for r in recs
                if r.get("verdict") in CORRECT
                and (r.get("speedup") or {}).get("vs_reference")]
    metric_rows = "".join(
        f"<tr><td>{k}</td><td>{'-' if s.get(k) is None else f'{s[k]:.3f}'}</td></tr>"
        for k in ("pass_rate", "correct_rate", "fast_0", "fast_1", "fast_1.5", "fast_2", "geomean_speedup", "mean_reward"))
    rows = []
    for r in sorted(recs, key=lambda r: r["id"]):
        sps = r.get("speedup") or {}
        cells = "".join(f"<td>{_times(sps.get('vs_' + b))}</td>" for b in BASELINES)
        rows.append(
            f"<tr><td>{html.escape(r['id'])}</td><td style='color:{COLORS.get(r['verdict'], '#000')}'>"
            f"{html.escape(r['verdict'])}</td>{cells}"
            f"<td>{html.escape('; '.join(r.get('reasons', []))[:400])}</td></tr>")
    cpu_note = ""
    if any("cpu-perf-counter" in t for t in s["timers"]):
        cpu_note = "<p><b>Note:</b> some timings use the CPU perf_counter fallback (smoke test only).</p>"
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:3px 8px;font-size:13px}}</style>
</head><body><h1>{html.escape(title)}</h1>
<p>{s['evaluated']} candidates evaluated, {s['skipped']} skipped. Degenerate tasks: {html.escape(', '.join(s['degenerate_tasks']) or 'none')}.</p>
{cpu_note}
<h2>Failure taxonomy</h2>{bar_svg(verdicts)}
<h2>Speedup over the reference (correct candidates)</h2>{histogram_svg(speedups)}
<h2>Metrics</h2><table>{metric_rows}</table>
{structure_report.section(recs, COLORS, s["structural_failures"])}
<h2>Speedup over each baseline (correct candidates)</h2>{baseline_table(recs)}
<h2>Candidates</h2><table><tr><th>id</th><th>verdict</th>{''.join(f"<th>vs {BASELINE_NAMES[b]}</th>" for b in BASELINES)}<th>reasons</th></tr>{''.join(rows)}</table>
</body></html>
"""
