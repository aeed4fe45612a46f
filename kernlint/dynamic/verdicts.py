"""Turn tool records (as :class:`~kernlint.dynamic.evidence.Evidence`) into verdicts on findings.

Rules of the game:

- a finding is *confirmed* when a record of its rule's category sits on a line of its span;
- *refuted* when the tool judged that line (the kernel ran, the line executed, the tool did not
  fail) and found nothing there; never an int32 overflow, which a run shows only at the sizes that
  wrap it (it stays inconclusive unless the invalid access it causes is seen);
- *inconclusive* when the tool failed, the kernel never ran, or the line never executed;
- a verdict already *confirmed* by another tool is never weakened;
- a record that no finding predicted becomes a new finding of the phase ``dynamic``
  (KL401 out-of-bounds, KL402 race) when its category has such a rule, else a notice.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Callable, Iterable

from kernlint.dynamic.evidence import TOOL_FAILURE, Evidence, same_file
from kernlint.model import Finding, Level, Phase, Span, Verdict

#: category -> rule code of the dynamic-only rule that reports what no static rule predicted
DYNAMIC_RULE_OF_CATEGORY = {"out-of-bounds": "KL401", "race": "KL402", "uninitialized-read": "KL403"}

#: category of a finding -> the category of the records its defect shows up as, anywhere in its kernel
#: (an int32 offset that wraps is seen as the invalid access it causes, at the load or store)
CONFIRMED_THROUGH = {"int-overflow": "out-of-bounds"}

#: tool-failure messages that describe the program, not a failing tool
RUN_STOPPED_PREFIXES = ("programs wait on each other",)

#: () -> was this finding's line executed?  True / False (kernel ran, line did not) / None (unknown)
Executed = Callable[[Finding], "bool | None"]


def rule_category(code: str) -> str | None:
    """The catalogue category of a rule code, or None when the catalogue does not know it."""
    try:
        from kernlint.catalogue import get_rule

        return get_rule(code).category
    except Exception:
        return None


def _refutes(code: str) -> bool:
    """Whether a clean run refutes a finding of rule ``code`` (its :class:`~kernlint.rule.Confirmation`)."""
    try:
        from kernlint.catalogue import get_rule

        return get_rule(code).confirm.refutes
    except Exception:
        return True


def _merge(into: dict, measurements: dict) -> None:
    for key, value in measurements.items():
        if key not in into:
            into[key] = value
        elif isinstance(value, (int, float)) and isinstance(into[key], (int, float)):
            into[key] = max(into[key], value) if key.startswith(("max_", "racing_", "programs")) \
                else into[key] + value
        elif isinstance(value, str) and isinstance(into[key], str) and value not in into[key].split(","):
            into[key] = f"{into[key]},{value}"


def matches(ev: Evidence, f: Finding, root: str | None) -> bool:
    """Whether the evidence is at the finding's lines, or about the launch the finding is at
    (``launch_site``: ``path:line`` of the launch a record of the whole launch is about)."""
    site_path, _, site_line = str(ev.detail.get("launch_site") or "").rpartition(":")
    if site_line.isdigit() and f.span.contains_line(int(site_line)) and same_file(site_path, f.path, root):
        return True
    if ev.line is None:
        return False
    # ``debug_line_range``: where the compiler's line table may put the finding's instruction, when
    # the finding points at one line of it (an inline-PTX instruction where it is written)
    lo, hi = f.evidence.get("debug_line_range") or (f.span.line, f.span.end_line)
    if not (f.span.contains_line(ev.line) or lo <= ev.line <= hi):
        return False
    return same_file(ev.path, f.path, root)


def apply_evidence(
    findings: list[Finding],
    evidence: Iterable[Evidence],
    *,
    tool: str,
    categories: set[str],
    executed: Executed,
    failure: str | None = None,
    root: str | None = None,
    category_of: Callable[[str], str | None] = rule_category,
) -> tuple[list[Finding], list[Finding], list[str]]:
    """Judge ``findings`` whose category is in ``categories`` with ``evidence`` from ``tool``.

    Returns (the findings with verdicts, new dynamic findings, notices). Findings of other
    categories pass through unchanged.
    """
    evidence = [e for e in evidence]
    defects = [e for e in evidence if e.category != TOOL_FAILURE]
    failures = [e for e in evidence if e.category == TOOL_FAILURE]
    used: set[int] = set()
    out: list[Finding] = []
    for f in findings:
        cat = category_of(f.rule)
        if cat not in categories:
            out.append(f)
            continue
        hits = [i for i, e in enumerate(defects) if e.category == cat and matches(e, f, root)]
        tool_failed_here = failure or next(
            (e.detail.get("message", e.kind) for e in failures if cat in e.detail.get("categories", (cat,)) and (
                (e.kernel and f.device_symbol and e.kernel == f.device_symbol) or (e.line and matches(e, f, root)))),
            None)
        evidence_list = f.evidence.setdefault("dynamic", [])
        if hits:
            used.update(hits)
            verdict = Verdict.CONFIRMED
            for i in hits:
                _merge(f.measurements, defects[i].measurements)
                evidence_list.append({"tool": tool, "kind": defects[i].kind, **defects[i].detail})
        elif tool_failed_here:
            verdict = Verdict.INCONCLUSIVE
            # the run, not the tool, stopped the kernel (programs that wait on each other): say so plainly
            own_words = tool_failed_here.startswith(RUN_STOPPED_PREFIXES)
            evidence_list.append({"tool": tool, "note": tool_failed_here if own_words else f"the tool failed: {tool_failed_here}"})
        else:
            ran = executed(f)
            if ran and not _refutes(f.rule):
                verdict = Verdict.INCONCLUSIVE
                evidence_list.append({"tool": tool, "note": "the line ran and the tool saw no violation, which this "
                                      "rule's defect may not cause (it can stay inside the tensor)"})
            elif ran and cat in CONFIRMED_THROUGH:
                # a wrapped offset shows only at the sizes that wrap it (past 2**31 elements): a run at
                # smaller sizes says nothing about it
                verdict = Verdict.INCONCLUSIVE
                evidence_list.append({"tool": tool, "note": "the line ran and the tool saw no violation, at "
                                      "sizes that may not reach the witness's (an int32 offset wraps only there)"})
            elif ran:
                verdict = Verdict.REFUTED
                evidence_list.append({"tool": tool, "note": "the line ran and the tool saw no violation"})
            else:
                verdict = Verdict.INCONCLUSIVE
                why = "the line never executed" if ran is False else "the kernel never ran"
                evidence_list.append({"tool": tool, "note": why})
        if f.verdict == Verdict.CONFIRMED and verdict != Verdict.CONFIRMED:
            pass  # another tool confirmed it: keep that
        elif f.verdict == Verdict.REFUTED and verdict == Verdict.INCONCLUSIVE:
            pass
        else:
            f.verdict = verdict
        out.append(f)

    for f in out:
        through = CONFIRMED_THROUGH.get(category_of(f.rule))
        if through not in categories or f.verdict == Verdict.CONFIRMED or not f.device_symbol:
            continue
        # the same access may also confirm a finding at its own line (an unmasked load): both are true
        hits = [i for i, e in enumerate(defects) if e.category == through
                and e.kernel == f.device_symbol and _wrapped(e) and (not e.path or same_file(e.path, f.path, root))]
        if hits:
            used.update(hits)
            f.verdict = Verdict.CONFIRMED
            for i in hits:
                _merge(f.measurements, defects[i].measurements)
                f.evidence.setdefault("dynamic", []).append(
                    {"tool": tool, "kind": defects[i].kind, "note": "the invalid access the wrapped offset causes",
                     **defects[i].detail})

    # The other access of a race already confirmed in the same kernel (the load of a load-modify-store,
    # whose store the finding is on), or overlapping writes at a line whose out-of-bounds store is
    # confirmed (a row's tail running into the next row), are the same defect, not a new one.
    for i, e in enumerate(defects):
        if i in used or e.category != "race" or not e.kernel:
            continue
        twin = next((f for f in out if f.device_symbol == e.kernel and f.verdict == Verdict.CONFIRMED and (
            category_of(f.rule) == "race" or (e.line and matches(e, f, root)))), None)
        if twin is not None:
            used.add(i)
            twin.evidence.setdefault("dynamic", []).append(
                {"tool": tool, "kind": e.kind, "note": "the other access of the same race", **e.detail})
    new, notices = _unpredicted([e for i, e in enumerate(defects) if i not in used], tool, root)
    for e in failures:
        notices.append(f"{tool}: {e.kind} in kernel {e.kernel or '?'}: {e.detail.get('message', '')}".rstrip(": "))
    return out, new, notices


def _wrapped(e: Evidence) -> bool:
    """An access far outside its tensor, as a wrapped 32-bit offset puts it: 2 GiB or more past the
    end, or before the start by a distance that, with the tensor's own size, spans 2 GiB or more (a
    wrap subtracts 2**32 elements from an offset of 2**31 or more; an index of -1 into a small tensor,
    a few bytes before it, is no wrap). A tool that does not measure the distance cannot tell:
    accepted."""
    m = e.measurements
    if "max_bytes_before_start" not in m and "max_bytes_past_end" not in m:
        return True
    before = m.get("max_bytes_before_start", 0)
    if before > 0 and ("tensor_bytes" not in m or before + m["tensor_bytes"] >= 2**31):
        return True
    return m.get("max_bytes_past_end", 0) >= 2**31


def _relative(path: str | None, root: str | None) -> str:
    if not path:
        return "<unknown>"
    base = root or os.getcwd()
    try:
        rel = os.path.relpath(path, base)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _unpredicted(evidence: list[Evidence], tool: str, root: str | None) -> tuple[list[Finding], list[str]]:
    groups: dict[tuple, list[Evidence]] = defaultdict(list)
    for e in evidence:
        groups[(e.category, e.path, e.line, e.kernel)].append(e)
    new: list[Finding] = []
    notices: list[str] = []
    for (cat, path, line, kernel), evs in sorted(groups.items(), key=lambda kv: (str(kv[0][1]), kv[0][2] or 0)):
        code = DYNAMIC_RULE_OF_CATEGORY.get(cat)
        kinds = sorted({e.kind for e in evs})
        if cat == "uninitialized-read" and all(e.detail.get("config") for e in evs):
            # one config's run writing less than another's confirms a grid finding at the launch; alone it
            # may be a workspace sized for the largest config, which only some configs use: not a finding
            notices.append(f"{tool}: {describe(cat, kinds, kernel, evs[0].measurements, tool)} at {path}:{line}")
            continue
        if code is None or not line:
            notices.append(f"{tool}: {', '.join(kinds)} in kernel {kernel or '?'} at {path}:{line}")
            continue
        measurements: dict = {}
        for e in evs:
            _merge(measurements, e.measurements)
        message = describe(cat, kinds, kernel, measurements, tool)
        new.append(Finding(
            rule=code,
            path=_relative(path, root),
            span=Span.point(line),
            message=message,
            level=_level(code),
            phase=Phase.DYNAMIC,
            verdict=Verdict.CONFIRMED,
            kernel=kernel,
            evidence={"dynamic": [{"tool": tool, "kind": e.kind, **e.detail} for e in evs]},
            measurements=measurements,
        ))
    return new, notices


def _level(code: str) -> Level:
    try:
        from kernlint.catalogue import get_rule

        return get_rule(code).level
    except Exception:
        return Level.ERROR


def describe(category: str, kinds: list[str], kernel: str | None, m: dict, tool: str) -> str:
    where = f" in `{kernel}`" if kernel else ""
    if category == "out-of-bounds":
        what = " and ".join(k.replace("oob-", "").replace("invalid-", "") for k in kinds)
        size = ""
        if m.get("max_bytes_past_end"):
            size = f", up to {m['max_bytes_past_end']} bytes past the end"
        elif m.get("max_bytes_before_start"):
            size = f", up to {m['max_bytes_before_start']} bytes before the start"
        tensor = f" of `{m['tensor']}`" if m.get("tensor") else ""
        count = f": {m['oob_accesses']} lanes" if m.get("oob_accesses") else ""
        return f"out-of-bounds {what}{tensor}{where}{count}{size} (seen by {tool})"
    if category == "race":
        progs = f" between {m['racing_programs']} programs" if m.get("racing_programs") else ""
        tensor = f" on `{m['tensor']}`" if m.get("tensor") else ""
        kind = "read of data another program writes" if kinds == ["race-read"] else "non-atomic write race"
        return f"{kind}{tensor}{where}{progs} (seen by {tool})"
    if category == "uninitialized-read":
        tensor = f" of `{m['tensor']}`" if m.get("tensor") else ""
        if m.get("unwritten_elements") and m.get("config"):
            return (f"{m['unwritten_elements']} of {m['output_elements']} elements{tensor} that another config of "
                    f"the autotuned launch writes were not written by its run with {m['config']}{where} (seen by {tool})")
        if m.get("unwritten_elements"):
            return (f"{m['unwritten_elements']} of {m['output_elements']} elements{tensor} were never written by "
                    f"any launch{where} (seen by {tool})")
        return f"read of uninitialized memory{tensor}{where} (seen by {tool})"
    return f"{', '.join(kinds)}{where} (seen by {tool})"
