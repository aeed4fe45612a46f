"""The structure section of the HTML report: a roofline plot and one profile row per kernel."""

from __future__ import annotations

import html
import math

#: memory-only problems (no FLOPs counted) are drawn at this arithmetic intensity, the plot's left edge
MIN_INTENSITY = 1 / 64


def _points(recs: list[dict]) -> list[tuple[str, float, float, str]]:
    """(id, intensity, attained FLOP/s-equivalent, verdict) of every record with an efficiency."""
    out = []
    for r in recs:
        roof = (r.get("structure") or {}).get("roofline") or {}
        eff, c = roof.get("efficiency"), roof.get("ceilings") or {}
        if eff is None or not c:
            continue
        peak = c["half"] if "tensor" in roof.get("compute_roof", "") else c["fp32"]
        ai = max(MIN_INTENSITY, roof.get("arithmetic_intensity") or 0)
        out.append((r["id"], ai, eff * min(peak, ai * c["bandwidth"]), r.get("verdict", "")))
    return out


def roofline_svg(recs: list[dict], colors: dict[str, str], width: int = 560, height: int = 320) -> str:
    """Log-log roofline: attained performance against arithmetic intensity under the device's roofs.
    A point's height below the roof at its intensity is its efficiency."""
    pts = _points(recs)
    if not pts:
        return "<p>No roofline: no candidate was timed on a GPU with a known problem size.</p>"
    c = next((r["structure"]["roofline"]["ceilings"] for r in recs
              if ((r.get("structure") or {}).get("roofline") or {}).get("efficiency") is not None))
    x0, x1 = math.log10(MIN_INTENSITY), 4.0
    peaks = [c["fp32"], c["half"]]
    y1 = math.log10(max(peaks) * 2)
    y0 = min([math.log10(max(p[2], 1.0)) for p in pts] + [math.log10(c["bandwidth"] * MIN_INTENSITY)]) - 0.5

    def sx(ai: float) -> float:
        return 50 + (math.log10(ai) - x0) / (x1 - x0) * (width - 70)

    def sy(v: float) -> float:
        return height - 30 - (math.log10(max(v, 1.0)) - y0) / (y1 - y0) * (height - 50)

    parts = [f'<line x1="50" y1="{height - 30}" x2="{width - 20}" y2="{height - 30}" stroke="#000"/>',
             f'<line x1="50" y1="20" x2="50" y2="{height - 30}" stroke="#000"/>',
             f'<text x="{width / 2 - 80}" y="{height - 8}" font-size="11">arithmetic intensity (FLOP/byte)</text>',
             '<text x="4" y="14" font-size="11">FLOP/s</text>']
    for peak, label in ((c["fp32"], "fp32"), (c["half"], "bf16/fp16 tensor")):
        ridge = peak / c["bandwidth"]
        parts.append(f'<polyline fill="none" stroke="#888" points="{sx(MIN_INTENSITY):.1f},{sy(MIN_INTENSITY * c["bandwidth"]):.1f} '
                     f'{sx(ridge):.1f},{sy(peak):.1f} {sx(10 ** x1):.1f},{sy(peak):.1f}"/>')
        parts.append(f'<text x="{sx(10 ** x1) - 120:.1f}" y="{sy(peak) - 4:.1f}" font-size="10">{label} {peak / 1e12:.0f} TFLOP/s</text>')
    for cid, ai, perf, verdict in pts:
        parts.append(f'<circle cx="{sx(ai):.1f}" cy="{sy(perf):.1f}" r="4" fill="{colors.get(verdict, "#1565c0")}">'
                     f'<title>{html.escape(cid)}: {html.escape(verdict)}</title></circle>')
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">{"".join(parts)}</svg>'


def _num(v, fmt: str = "{:.3g}") -> str:
    return "" if v is None else fmt.format(v)


def profile_rows(recs: list[dict]) -> str:
    """One table row per kernel, for the specialization in use (static and measured)."""
    rows = []
    for r in sorted(recs, key=lambda r: r["id"]):
        s = r.get("structure") or {}
        prof = (s.get("profile") or {}).get("kernels") or {}
        eff = (s.get("roofline") or {}).get("efficiency")
        flaws = "; ".join(f["kind"] for f in s.get("flaws") or [])
        for k in s.get("kernels") or []:
            if not k.get("hot"):
                continue
            p = prof.get(k.get("device_symbol"), {})
            rules = ", ".join(sorted({f["rule"] for f in k.get("findings", [])}))
            cells = [r["id"], k["kernel"], f"{k.get('num_warps')}", _num(k.get("registers"), "{}"),
                     _num(k.get("spill_bytes"), "{}"), _num(k.get("shared_bytes"), "{}"), rules,
                     _num(p.get("achieved_occupancy"), "{:.0%}"), _num(p.get("bank_conflict_excess"), "{:.0%}"),
                     _num(p.get("sectors_per_request"), "{:.2f}"), _num(p.get("predicated_on_lane_ratio"), "{:.0%}"),
                     _num(p.get("dram_pct"), "{:.0f}%"), _num(p.get("sm_pct"), "{:.0f}%"),
                     _num(eff, "{:.0%}"), flaws]
            rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    if not rows:
        return "<p>No kernel launches captured.</p>"
    head = ["id", "kernel", "warps", "regs", "spill B", "smem B", "IR findings", "achieved occ.", "bank excess",
            "sectors/req", "lanes on", "DRAM", "SM", "efficiency", "flaws"]
    return "<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + "".join(rows) + "</table>"


def section(recs: list[dict], colors: dict[str, str], counts: dict[str, int]) -> str:
    failures = ", ".join(f"{k} {v}" for k, v in counts.items() if v) or "none"
    return (f"<h2>Structure</h2><p>Structural failures by kind: {html.escape(failures)}.</p>"
            f"<h3>Roofline</h3>{roofline_svg(recs, colors)}"
            "<p>Memory-only problems (no FLOPs counted) are drawn at the left edge; a point's distance below "
            "the roof at its intensity is its efficiency.</p>"
            f"<h3>Kernels as launched</h3>{profile_rows(recs)}")
