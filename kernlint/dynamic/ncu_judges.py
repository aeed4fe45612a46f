"""How ncu's numbers judge a finding, by the rule's category.

ncu counts per kernel launch, not per source line, so a verdict compares the kernel's counters with
what the finding claims: a bank-conflict finding predicts excess wavefronts per block (checked
against the count over the blocks launched), an uncoalesced access predicts sectors per request,
a low-occupancy finding predicts a theoretical occupancy and its limiter. Other categories compare
the rule's ``confirm.check`` metric with the leading comparison of its ``confirm.threshold``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from kernlint.dynamic import ncu
from kernlint.dynamic.verdicts import rule_category
from kernlint.model import Finding, Verdict

#: a bank-conflict prediction is confirmed when ncu counts at least this share of the predicted excess
#: wavefronts x blocks launched; more is consistent (a loop repeats the access), far fewer means the
#: kernel's conflicts are not the ones the model predicts for the line
CONFLICT_SHARE = 0.9
#: sectors per request below this multiple of the ideal: the kernel's accesses of that kind coalesce
COALESCED_RATIO = 1.25
#: predicted and measured theoretical occupancy this close agree
OCCUPANCY_TOLERANCE = 0.05


@dataclass
class Judgement:
    verdict: Verdict
    metric: str
    value: float | str | None
    measurements: dict = field(default_factory=dict)
    note: str | None = None


def judge(f: Finding, findings: Sequence[Finding], rows: Sequence[ncu.KernelMetrics], rule) -> Judgement | None:
    """The verdict for ``f`` from its kernel's profiled launches; None when ncu reported none of the
    metrics the rule needs."""
    category = rule_category(f.rule)
    if category == "uncoalesced" and f.measurements.get("bytes_per_lane"):
        return _uncoalesced(f, rows, rule)
    if category == "occupancy" and "theoretical_occupancy" in f.measurements:
        return _occupancy(f, rows)
    j = _threshold(f, rows, rule, category)
    if j is not None and category == "bank-conflict" and j.verdict is Verdict.CONFIRMED:
        _bank_conflict_share(j, f, findings, rows)
    return j


def check_metrics(rule) -> list[str]:
    return [m.strip() for m in rule.confirm.check.split(",") if m.strip()] if rule else []


def _values(rows, metric: str) -> list[float] | None:
    values = [r.metrics.get(metric) for r in rows]
    return values if values and all(isinstance(v, (int, float)) for v in values) else None


def _threshold(f: Finding, rows, rule, category: str | None) -> Judgement | None:
    names = check_metrics(rule)
    if category == "bank-conflict":  # loads, stores or both: only what the finding predicts
        ops = [op for op in ("ld", "st") if f.measurements.get(f"predicted_{op}_excess_per_block")]
        names = [m for m in names if any(m.endswith(f"_op_{op}.sum") for op in ops)] or names
    # a check may name several metrics (e.g. bank conflicts of loads and of stores): the worst counts
    found = [(r.metrics.get(m), m) for r in rows for m in names if isinstance(r.metrics.get(m), (int, float))]
    if not found:
        return None
    worst, metric = max(found)
    ok = ncu.meets(worst, rule.confirm.threshold)
    verdict = {True: Verdict.CONFIRMED, False: Verdict.REFUTED, None: Verdict.INCONCLUSIVE}[ok]
    return Judgement(verdict, metric, worst, {metric: worst})


def _bank_conflict_share(j: Judgement, f: Finding, findings: Sequence[Finding], rows) -> None:
    """ncu's conflicts over the kernel's launches against the excess wavefronts per block the static
    model predicts for every line of that kernel (one specialization's numbers per line) times the
    blocks launched; left as it is when a part is unknown."""
    op = "ld" if j.metric.endswith("_op_ld.sum") else "st" if j.metric.endswith("_op_st.sum") else None
    per_line: dict[tuple, float] = {}
    for g in findings:
        value = g.measurements.get(f"predicted_{op}_excess_per_block")
        same_kernel = (g.kernel, g.device_symbol) == (f.kernel, f.device_symbol)
        if rule_category(g.rule) == "bank-conflict" and same_kernel and value:
            key = (g.path, g.span.line, g.span.col)
            per_line[key] = max(per_line.get(key, 0), value)
    blocks, values = ncu.blocks_launched(rows), _values(rows, j.metric)
    if op is None or not per_line or not blocks or values is None:
        return
    measured, predicted = sum(values), sum(per_line.values()) * blocks
    j.measurements.update(blocks_launched=blocks, predicted_conflicts=predicted, measured_conflicts=measured,
                          measured_over_predicted=round(measured / predicted, 3))
    if measured < CONFLICT_SHARE * predicted:
        j.verdict = Verdict.INCONCLUSIVE
        j.note = (f"ncu counted {measured:g} conflicts, {measured / predicted:.0%} of the {predicted:g} predicted "
                  f"for {blocks} blocks: the kernel conflicts, but not as this line's model says")


def _uncoalesced(f: Finding, rows, rule) -> Judgement | None:
    op = {"load": "ld", "store": "st"}.get(f.measurements.get("access", "load"))
    if op is None:  # atomics, or loads and stores at one position: no single counter pair to read
        return None
    sectors = _values(rows, f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum")
    requests = _values(rows, f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum")
    if sectors is None or requests is None or not sum(requests):
        return None
    per_request = sum(sectors) / sum(requests)
    ideal = max(1.0, float(f.measurements["bytes_per_lane"]))  # 32 lanes x b bytes / 32-byte sectors
    ratio = per_request / ideal
    needed = (rule.options if rule else {}).get("min_ratio", 2.0)
    m = {"measured_sectors_per_request": round(per_request, 3), "ideal_sectors_per_request": ideal,
         "measured_sector_ratio": round(ratio, 3)}
    metric = f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum / l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"
    if ratio >= needed:
        return Judgement(Verdict.CONFIRMED, metric, round(per_request, 3), m)
    if ratio < COALESCED_RATIO:
        return Judgement(Verdict.REFUTED, metric, round(per_request, 3), m)
    return Judgement(Verdict.INCONCLUSIVE, metric, round(per_request, 3), m,
                     note=f"{ratio:.2f}x the ideal over all the kernel's global {op}s: other accesses may dilute it")


_LIMITS = ("registers", "shared_mem", "warps", "blocks")
_PREDICTED_LIMITER = {"registers": "registers", "shared_memory": "shared_mem", "warps": "warps", "blocks": "blocks"}


def _occupancy(f: Finding, rows) -> Judgement | None:
    """Theoretical occupancy from ncu's per-resource block limits (blocks resident per SM under each
    limit; the warp limit times the warps of a block is the SM's warp capacity)."""
    limits = {k: _values(rows, f"launch__occupancy_limit_{k}") for k in _LIMITS}
    if any(v is None for v in limits.values()):
        return None
    lims = {k: min(v) for k, v in limits.items()}
    if not lims["warps"]:
        return None
    blocks = min(lims.values())
    measured = blocks / lims["warps"]
    limiters = sorted(k for k, v in lims.items() if v == blocks)
    predicted = float(f.measurements["theoretical_occupancy"])
    claimed = _PREDICTED_LIMITER.get(str(f.measurements.get("limiter")), str(f.measurements.get("limiter")))
    m = {"measured_theoretical_occupancy": round(measured, 4), "measured_limiters": ",".join(limiters),
         **{f"launch__occupancy_limit_{k}": v for k, v in lims.items()}}
    metric = "launch__occupancy_limit_*"
    if measured > predicted + OCCUPANCY_TOLERANCE:
        return Judgement(Verdict.REFUTED, metric, round(measured, 4), m,
                         note=f"ncu's launch allows {measured:.0%} occupancy, not {predicted:.0%}")
    if abs(measured - predicted) <= OCCUPANCY_TOLERANCE and claimed in limiters:
        return Judgement(Verdict.CONFIRMED, metric, round(measured, 4), m)
    return Judgement(Verdict.INCONCLUSIVE, metric, round(measured, 4), m,
                     note=f"ncu: {measured:.0%} limited by {', '.join(limiters)}; "
                          f"predicted {predicted:.0%} by {claimed}")
