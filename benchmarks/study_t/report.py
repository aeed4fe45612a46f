"""docs/study-tritonbench-t.md and its figures from the committed JSONL of the TritonBench-T study.

    python benchmarks/study_t/report.py [docs/study-t]

Reads, in the folder: records.jsonl (``kernlint eval`` on the GPU, merged by collect.py, one
``model`` field per record) and, when present, reference_checks.jsonl (each task's reference
against its own test: task, ok, verdict, reasons). Nothing else: the document is a function of
the committed JSONL (and of the seeded task order in benchmarks/study_t/tasks.txt, for progress).
"""

from __future__ import annotations

import statistics
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "study"))
from kernlint.eval.summary import CORRECT  # noqa: E402
from kernlint.ir.occupancy import parse_arch, theoretical_occupancy  # noqa: E402
from study_common import (column_header, column_row, first_line, load, share, stacked_bars_svg,  # noqa: E402
                          strip_svg, study_verdict, wilson, write_outputs)

DOC = ROOT / "docs" / "study-tritonbench-t.md"
FOLDER = ROOT / "docs" / "study-t"
TASKS = ROOT / "benchmarks" / "study_t" / "tasks.txt"
NEEDED = 320  # the first sample: 80 tasks x 4 models
#: the occupancy floor when the record does not give one (the judge's ``min_achieved_occupancy``)
OCCUPANCY_FLOOR = 0.25

SLOWER_EAGER = "slower than eager PyTorch"
SLOWER_COMPILE = "slower than torch.compile"
LOW_OCCUPANCY = "low occupancy"
NOT_TIMED = "correct, not timed"
PASSED = "passed the strict checks"
#: a judged candidate's study category: the first that applies
CATEGORIES = ("did-not-compile", "cheating", "runtime-error", "wrong", NOT_TIMED, SLOWER_EAGER, SLOWER_COMPILE,
              LOW_OCCUPANCY, PASSED)
COLORS = {NOT_TIMED: "#bdbdbd", SLOWER_EAGER: "#f9a825", SLOWER_COMPILE: "#8d6e63", LOW_OCCUPANCY: "#ef6c00",
          PASSED: "#2e7d32"}
NOT_JUDGED = ("skipped", "excluded")


# --- what one record says ------------------------------------------------------------------------

def speedup(rec: dict, base: str) -> tuple[float | None, str]:
    """(baseline time / candidate time, timer). First the device time of the kernels that the test's
    calls of the task's function launch (CUPTI, without the test's input creation: ``kernels.within``),
    then that of every kernel of the test call, when both sides have it; else the judge's ratio of
    CUDA-event medians (``speedup.vs_<base>``); ``base`` is ``reference`` (eager PyTorch) or
    ``torch_compile``."""
    t = rec.get("timings") or {}
    kernels = [(t.get(side) or {}).get("kernels") or {} for side in ("candidate", base)]
    for timer, scope in (("cupti-calls", lambda k: k.get("within") or {}), ("cupti", lambda k: k)):
        cand, other = (scope(k).get("median_ms") for k in kernels)
        if cand and other:
            return other / cand, timer
    sp = (rec.get("speedup") or {}).get(f"vs_{base}")
    return (sp, "events") if sp else (None, "")


def slower_limit(rec: dict) -> float:
    """Below this speedup a candidate is slower than a baseline: the policy's tolerance (5%)."""
    return 1.0 / (1.0 + float((rec.get("policy") or {}).get("max_slowdown", 0.05)))


def occupancy_floor(rec: dict) -> float:
    floor = ((rec.get("policy") or {}).get("structure") or {}).get("min_achieved_occupancy")
    return OCCUPANCY_FLOOR if floor is None else float(floor)


def theoretical_occupancy_of(rec: dict) -> float | None:
    """The lowest theoretical occupancy of the candidate's hot kernels from the IR phase's facts
    (registers, warps, shared memory of each specialization as launched: ``structure.kernels``),
    else the census' (``metrics.min_occupancy``)."""
    kernels = (rec.get("structure") or {}).get("kernels") or []
    hot = [k for k in kernels if k.get("hot")] or kernels
    occs = []
    for k in hot:
        if not (k.get("registers") and k.get("num_warps")):
            continue
        try:
            cap = parse_arch(k.get("target") or "sm_90")
        except ValueError:
            continue
        occs.append(theoretical_occupancy(cap, int(k["num_warps"]), int(k["registers"]),
                                          int(k.get("shared_bytes") or 0)).occupancy)
    if occs:
        return min(occs)
    return (rec.get("metrics") or {}).get("min_occupancy")


def achieved_occupancy_of(rec: dict) -> float | None:
    """The lowest achieved occupancy ncu measured over the candidate's kernels (``structure.profile``)."""
    prof = (((rec.get("structure") or {}).get("profile") or {}).get("kernels") or {}).values()
    occs = [p["achieved_occupancy"] for p in prof if p.get("achieved_occupancy") is not None]
    return min(occs) if occs else None


def occupancy_check(rec: dict) -> tuple[bool | None, str]:
    """(passes, on what). Where ncu profiled the kernels, the judge's rule decides: a ``low-occupancy``
    structural flaw (achieved occupancy below the floor while latency-bound, for kernels of at least
    the policy's ``min_kernel_us``). Otherwise the theoretical occupancy of the hot kernels against
    the same floor. None: neither is in the record."""
    flaws = (rec.get("structure") or {}).get("flaws") or []
    if any(f.get("kind") == "low-occupancy" for f in flaws):
        return False, "achieved"
    if achieved_occupancy_of(rec) is not None:
        return True, "achieved"
    occ = theoretical_occupancy_of(rec)
    if occ is None:
        return None, ""
    return occ >= occupancy_floor(rec), "theoretical"


def category(rec: dict, broken: set[str]) -> str:
    """The candidate's study category (:data:`CATEGORIES`, or skipped / excluded)."""
    v = study_verdict(rec, broken)
    if v in NOT_JUDGED or v not in CORRECT:
        return v
    eager, _ = speedup(rec, "reference")
    if eager is None:
        return NOT_TIMED
    if eager < slower_limit(rec):
        return SLOWER_EAGER
    compiled, _ = speedup(rec, "torch_compile")
    if compiled is not None and compiled < slower_limit(rec):
        return SLOWER_COMPILE
    if occupancy_check(rec)[0] is False:
        return LOW_OCCUPANCY
    return PASSED


def ir_findings(rec: dict) -> list[dict]:
    """The IR phase's findings on the kernels as launched (``structure.kernels[].findings``), each once."""
    seen, out = set(), []
    for k in (rec.get("structure") or {}).get("kernels") or []:
        for f in k.get("findings") or []:
            key = (f.get("rule"), f.get("line"), f.get("message"))
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def rules(findings: list[dict]) -> str:
    c = Counter(f.get("rule", "?") for f in findings)
    return ", ".join(f"{r}" + (f"x{n}" if n > 1 else "") for r, n in sorted(c.items())) or "-"


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.0%}"


# --- the document --------------------------------------------------------------------------------

def seeded_tasks() -> list[str]:
    return [t.strip() for t in TASKS.read_text().splitlines() if t.strip() and not t.startswith("#")] \
        if TASKS.exists() else []


def render(folder: Path) -> tuple[str, dict[str, str]]:
    """The document's text and its figures (file name -> SVG), from the JSONL in ``folder``."""
    recs = load(folder / "records.jsonl")
    refs = {r["task"]: r for r in load(folder / "reference_checks.jsonl")}
    broken = {t for t, r in refs.items() if not r["ok"] and r.get("verdict") != "skipped"}
    models = sorted({r["model"] for r in recs})
    cat = {r["id"]: category(r, broken) for r in recs}
    by = {"all": recs, **{m: [r for r in recs if r["model"] == m] for m in models}}
    judged = {m: [r for r in rs if cat[r["id"]] not in NOT_JUDGED] for m, rs in by.items()}

    def frac(pred):
        return lambda rs: share(sum(1 for r in rs if pred(r)), len(rs))

    def count(pred):
        return lambda rs: sum(1 for r in rs if pred(r))

    def correct(r):
        return r["verdict"] in CORRECT

    def beats(base):
        return lambda r: correct(r) and (speedup(r, base)[0] or 0.0) > 1.0

    headline = [*column_header(judged),
                column_row("judged candidates", judged, len),
                column_row("compile (verdict other than did-not-compile)", judged,
                           frac(lambda r: r["verdict"] != "did-not-compile")),
                column_row("correct (every seed and shape within tolerance)", judged, frac(correct)),
                column_row("beat eager PyTorch (correct, speedup > 1)", judged, frac(beats("reference"))),
                column_row("beat torch.compile (correct, speedup > 1)", judged, frac(beats("torch_compile"))),
                column_row("pass the occupancy check (correct, checked, not low)", judged,
                           frac(lambda r: correct(r) and occupancy_check(r)[0] is True)),
                column_row(f"**{PASSED}** (correct, not slower than either baseline, occupancy not low)", judged,
                           frac(lambda r: cat[r["id"]] == PASSED))]

    fail = {m: (sum(cat[r["id"]] != PASSED for r in rs), len(rs)) for m, rs in judged.items()}
    correct_rs = {m: [r for r in rs if correct(r)] for m, rs in judged.items()}
    fail_correct = {m: (sum(cat[r["id"]] != PASSED for r in rs), len(rs)) for m, rs in correct_rs.items()}
    claim = [*column_header(judged),
             column_row("fail the strict checks (of judged candidates)", fail, lambda kn: share(*kn)),
             column_row("&nbsp;&nbsp;of the correct ones: slower than a baseline or low occupancy", fail_correct,
                        lambda kn: share(*kn))]
    k_all, n_all = fail["all"]
    lo, hi = wilson(k_all, n_all)
    verdict_line = ("No candidate judged yet: the claim is not tested." if not n_all else
                    f"Measured: {k_all} of {n_all} judged first-attempt candidates ({k_all / n_all:.0%}, 95% Wilson "
                    f"interval {lo:.0%}-{hi:.0%}) fail the strict checks. The claim of ~70% is "
                    + ("inside" if lo <= 0.70 <= hi else "above" if hi < 0.70 else "below")
                    + " the interval" + ("" if lo <= 0.70 <= hi else " (the claim does not hold on this sample)")
                    + (f"; {NEEDED - n_all} more judged candidates are needed for the first sample of {NEEDED}."
                       if n_all < NEEDED else "."))

    cats = [*column_header(by), column_row("candidates in the records", by, len),
            column_row("skipped: the reference fails to load or to run its own test (in the run)", by,
                       count(lambda r: cat[r["id"]] == "skipped")),
            column_row("excluded: the reference fails its own test (reference check)", by,
                       count(lambda r: cat[r["id"]] == "excluded"))]
    cats += [column_row(c, by, count(lambda r, c=c: cat[r["id"]] == c)) for c in CATEGORIES]
    cats += [column_row("&nbsp;&nbsp;correct ones the judge calls structurally flawed (spills, conflicts, ...)", by,
                        count(lambda r: r["verdict"] == "structurally-flawed")),
             column_row("&nbsp;&nbsp;correct ones without a torch.compile time", by,
                        count(lambda r: correct(r) and speedup(r, "torch_compile")[0] is None)),
             column_row("answer rows not confirmed by their instruction (`mapping` not `checked`)", by,
                        count(lambda r: r.get("mapping") not in (None, "checked")))]

    timers = {base: Counter(speedup(r, base)[1] or "none" for r in correct_rs["all"])
              for base in ("reference", "torch_compile")}

    # static findings, per category
    groups = {c: [r for r in recs if cat[r["id"]] == c] for c in (*CATEGORIES, *NOT_JUDGED)}
    groups = {c: rs for c, rs in groups.items() if rs}
    lint_table = ["| category | candidates | with source-phase findings | source-phase findings | "
                  "of which error-level | eval-phase findings (hack rules) | IR-phase findings |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
    for c, rs in groups.items():
        lint = [f for r in rs for f in r.get("lint_findings") or []]
        lint_table.append(f"| {c} | {len(rs)} | {sum(bool(r.get('lint_findings')) for r in rs)} | {len(lint)} | "
                          f"{sum(f.get('level') == 'error' for f in lint)} | "
                          f"{sum(len(r.get('findings') or []) for r in rs)} | {sum(len(ir_findings(r)) for r in rs)} |")
    rule_counts = Counter(f.get("rule") for r in recs
                          for f in (r.get("lint_findings") or []) + (r.get("findings") or []) + ir_findings(r))
    degenerate = sorted({r["problem"] for r in recs if r.get("task_degenerate")})

    # references
    ref_rows = []
    for task in sorted({r["problem"] for r in recs if cat[r["id"]] == "skipped"}):
        rec = next(r for r in recs if r["problem"] == task and cat[r["id"]] == "skipped")
        ref_rows.append(f"- `{task}`: in the run, {first_line(rec.get('error') or '; '.join(rec.get('reasons', [])))}")
    ref_rows += [f"- `{t}`: reference check, {r.get('verdict')}: {first_line('; '.join(r.get('reasons', [])))}"
                 for t, r in sorted(refs.items()) if t in broken]

    # progress
    order = seeded_tasks()
    covered = {m: {r["problem"] for r in by[m]} for m in models}
    prefix = 0
    for t in order:
        if not models or not all(t in covered[m] for m in models):
            break
        prefix += 1

    # figures: a bar per model and all; a row of dots per model
    per_model = {m: correct_rs[m] for m in models}

    def speeds(base):
        return {m: [s for r in rs if (s := speedup(r, base)[0])] for m, rs in per_model.items()}

    svgs = {
        "verdicts.svg": stacked_bars_svg({m: Counter(cat[r["id"]] for r in rs) for m, rs in judged.items()},
                                         list(CATEGORIES), COLORS),
        "speedup_eager.svg": strip_svg(speeds("reference"), log2=True, marks={"1x (eager)": 1.0}),
        "speedup_compile.svg": strip_svg(speeds("torch_compile"), log2=True, marks={"1x (torch.compile)": 1.0}),
        "occupancy.svg": strip_svg({f"{m} {kind}": [v for v in (fn(r) for r in rs) if v is not None]
                                    for m, rs in per_model.items()
                                    for kind, fn in (("theoretical", theoretical_occupancy_of),
                                                     ("achieved", achieved_occupancy_of))},
                                   log2=False, marks={f"floor {OCCUPANCY_FLOOR:.0%}": OCCUPANCY_FLOOR},
                                   unit="%", lo=0.0, hi=1.0),
    }

    def median_of(values: list, fmt: str = ".2f") -> str:
        values = [v for v in values if v is not None]
        return format(statistics.median(values), fmt) if values else "-"

    def speeds_of(rs, base):
        return [s for r in rs if (s := speedup(r, base)[0])]

    speed_table = [*column_header(correct_rs), column_row("correct candidates", correct_rs, len)]
    for base, name in (("reference", "eager PyTorch"), ("torch_compile", "torch.compile")):
        speed_table += [
            column_row(f"timed against {name}", correct_rs, lambda rs, b=base: len(speeds_of(rs, b))),
            column_row(f"&nbsp;&nbsp;median speedup over {name} (x)", correct_rs,
                       lambda rs, b=base: median_of(speeds_of(rs, b))),
            column_row(f"&nbsp;&nbsp;faster than {name}", correct_rs,
                       lambda rs, b=base: sum(s > 1.0 for s in speeds_of(rs, b))),
            column_row(f"&nbsp;&nbsp;more than 5% slower than {name}", correct_rs,
                       lambda rs, b=base: sum(1 for r in rs if (s := speedup(r, b)[0]) and s < slower_limit(r)))]
    occ_table = [*column_header(correct_rs), column_row("correct candidates", correct_rs, len),
                 column_row("judged on achieved occupancy (ncu)", correct_rs,
                            count(lambda r: occupancy_check(r)[1] == "achieved")),
                 column_row("judged on theoretical occupancy (IR phase)", correct_rs,
                            count(lambda r: occupancy_check(r)[1] == "theoretical")),
                 column_row("neither in the record", correct_rs, count(lambda r: occupancy_check(r)[0] is None)),
                 column_row("low occupancy", correct_rs, count(lambda r: occupancy_check(r)[0] is False)),
                 column_row("median theoretical occupancy", correct_rs,
                            lambda rs: median_of([theoretical_occupancy_of(r) for r in rs], ".0%")),
                 column_row("median achieved occupancy", correct_rs,
                            lambda rs: median_of([achieved_occupancy_of(r) for r in rs], ".0%"))]

    listing = ["| candidate | model | category | vs eager | vs torch.compile | timers | theoretical occ. | "
               "achieved occ. | source-phase findings | eval-phase findings | IR-phase findings |",
               "|---|---|---|---:|---:|---|---:|---:|---|---|---|"]
    for r in sorted(recs, key=lambda r: (r["problem"], r["model"], r["id"])):
        (eager, t_eager), (compiled, t_compiled) = speedup(r, "reference"), speedup(r, "torch_compile")
        timer = f"{t_eager or '-'}/{t_compiled or '-'}" if eager or compiled else "-"
        listing.append(f"| `{r['id']}` | {r['model']} | {cat[r['id']]} | {_x(eager)} | "
                       f"{_x(compiled)} | {timer} | {_pct(theoretical_occupancy_of(r))} | "
                       f"{_pct(achieved_occupancy_of(r))} | {rules(r.get('lint_findings') or [])} | "
                       f"{rules(r.get('findings') or [])} | {rules(ir_findings(r))} |")

    n_judged = len(judged["all"])
    out = [
        "# TritonBench-T study: do first-attempt LLM Triton kernels survive strict latency and occupancy checks?",
        "",
        "Every count, share and figure below is computed by `benchmarks/study_t/report.py` from the JSONL",
        "committed in `docs/study-t/` (the records of `kernlint eval` on the GPU, merged by",
        "`benchmarks/study_t/collect.py`); a test checks that this file is exactly what the script makes of",
        "them. The method and the limits are written by hand, in the script.",
        "",
        "## Progress",
        "",
        f"- Judged candidates: **{n_judged} of the {NEEDED} needed** for the first sample (80 tasks x 4 models);"
        f" records: {len(recs)}, over {len({r['problem'] for r in recs})} tasks and {len(models)} models"
        + (f" ({', '.join(f'{m} {len(by[m])}' for m in models)})" if models else "") + ".",
        f"- Tasks of the seeded order (`benchmarks/study_t/tasks.txt`, {len(order)} listed) whose answers from every"
        f" model are in: the first {prefix}.",
        "- Answer rows map to their tasks by index; the check of that mapping (by description and by the",
        "  wrapper's name) is in [study-t/mapping.md](study-t/mapping.md).",
        "",
        "## The claim: ~70% of first-attempt candidates fail strict latency and occupancy checks",
        "",
        "A candidate passes the strict checks when it is correct, not slower than eager PyTorch, not slower",
        "than torch.compile, and its occupancy is not low (definitions below). Shares with their 95% Wilson",
        "score interval.",
        "",
        *claim,
        "",
        verdict_line,
        "",
        "## Per model",
        "",
        *headline,
        "",
        "![study categories per model](study-t/verdicts.svg)",
        "",
        "### Categories",
        "",
        "Each judged candidate is counted once, in the first category that applies, in this order.",
        "",
        *cats,
        "",
        "## Speed against eager PyTorch and torch.compile",
        "",
        "Correct candidates only; timer of the comparison with eager PyTorch: "
        + (", ".join(f"{k} {v}" for k, v in sorted(timers["reference"].items())) or "none")
        + "; with torch.compile: " + (", ".join(f"{k} {v}" for k, v in sorted(timers["torch_compile"].items()))
                                      or "none") + " (cupti-calls: the device time of the kernels the test's calls of the task's function launch; "
                                      "cupti: of every kernel of the test call, its input creation too; events: the call's CUDA events).",
        "",
        *speed_table,
        "",
        "![speedup over eager PyTorch, correct candidates](study-t/speedup_eager.svg)",
        "",
        "![speedup over torch.compile, correct candidates](study-t/speedup_compile.svg)",
        "",
        "## Occupancy",
        "",
        "Correct candidates only; occupancy as a share of the SM's warp slots (lowest over a candidate's kernels).",
        "",
        *occ_table,
        "",
        "![theoretical and achieved occupancy of the correct candidates' kernels](study-t/occupancy.svg)",
        "",
        "## Static findings of the candidates",
        "",
        "Source-phase findings (`lint_findings`: the rules of `kernlint check`), eval-phase findings",
        "(`findings`: the hack rules the judge runs) and IR-phase findings on the kernels as launched",
        "(`structure.kernels[].findings`) of every candidate, by category.",
        "",
        *lint_table,
        "",
        "Findings by rule (the three phases, all candidates): "
        + (", ".join(f"{k} {v}" for k, v in sorted(rule_counts.items())) or "none") + ".",
        "",
        "## References excluded",
        "",
        "A task whose reference does not run its own test is the task's fault: its candidates are not judged.",
        "",
        *(ref_rows or ["- none so far"]),
        "",
        "Tasks where a null model (zeros, the input, ...) passes the tolerance, so that a correct verdict says",
        "little (`task_degenerate`): " + (", ".join(f"`{t}`" for t in degenerate) or "none") + ".",
        "",
        "## Method",
        "",
        "- Tasks: a seeded shuffle of the 166 TritonBench-T tasks (`benchmarks/study_t/tasks.py`), evaluated as",
        "  a growing prefix; candidates: the answers of GPT-4o, Claude 3.5 Sonnet (2024-06-20), DeepSeek-R1",
        "  and Qwen2.5-72B-Instruct in the corpus (the largest ```python block of each answer), first attempt,",
        "  no repair.",
        "- Each candidate runs the reference's test code (`test_<name>()` after the `#####` line) under",
        "  `kernlint eval` on an H200: candidate and PyTorch reference on the same inputs, 2 seeds, every",
        "  returned tensor compared with dtype tolerances, NaN-poisoned allocator, null models; static hack",
        "  rules and runtime checks (cheating). Command: `bash benchmarks/study_t/run_gpu.sh CORPUS OUT [N]`,",
        "  then `python benchmarks/study_t/collect.py OUT` and `python benchmarks/study_t/report.py`.",
        "- Speed: baseline time / candidate time per test call, from the kernels' device time (CUPTI: the",
        "  sum of kernel durations, L2 flushed, median over 20 calls). `cupti-calls` counts only the kernels",
        "  launched inside the test's calls of the task's function (between two mark kernels the harness",
        "  launches on the stream around each call), so the test's input creation (`torch.randn`, ...) is",
        "  left out; `cupti` counts every kernel of the test call, and is used for both sides whenever one",
        "  side lacks `cupti-calls`; else the judge's CUDA-event medians of the call (`timers` column of the",
        "  listing). Baselines: the reference in eager PyTorch and torch.compile",
        "  of the task's function, called by the same test. *Slower than* a baseline: speedup below",
        "  1/(1 + the policy's `max_slowdown`), i.e. more than 5% slower; *beat*: speedup above 1.",
        "- Occupancy: theoretical from the IR phase's facts of each hot kernel as launched (registers,",
        "  warps, shared memory; `structure.kernels`), achieved from ncu (`structure.profile`). *Low",
        f"  occupancy*: the judge's `low-occupancy` flaw where ncu ran (achieved below the policy's floor,",
        f"  {OCCUPANCY_FLOOR:.0%} by default, while latency-bound, for kernels of at least 10 us), else a",
        "  theoretical occupancy below that floor (the computation and threshold of rule KL304).",
        "- *Compile*: the verdict is not `did-not-compile` (Triton compiles at the first launch, so a",
        "  candidate that fails before launching counts as compiled); *correct*: the judge's verdict is",
        "  passed, structurally-flawed, slower-than-baseline or low-occupancy.",
        "",
        "## Limits",
        "",
        "- First attempts only, one answer per task and model; the answers were generated by the benchmark's",
        "  authors, with their prompt. Answers run as given, followed by the task's test, as the benchmark's own",
        "  harness runs them: an answer that misses an import (`Tensor`, `Optional` in an annotation) or still",
        "  holds a line of the generation template (`{{ code }}`, in some of Claude's rows) fails to load and",
        "  counts as did-not-compile.",
        "- The records were judged on code (da05fc9) whose whole-test kernel sum also counted the",
        "  profiler's device annotations of the task-call ranges (host gaps included); that sum is not",
        "  a comparison timer here (every correct candidate is compared by `cupti-calls`), but the",
        "  judge's check that CUDA events enclose the kernels called three honest candidates",
        "  (`log1p`, `sqrt`, `mul_relu` tasks) forged timers: those three tasks were judged again with",
        "  the fix (all four models) and their records replaced.",
        "- The tests are the benchmark's: their shapes are small, so many kernels are launch-bound and the",
        "  CUPTI and event timers can disagree (the event timer includes the Python launch path).",
        "- The occupancy floor applied to theoretical occupancy is a judgement, not a measurement: a kernel",
        "  with large tiles can be fast at low occupancy; where ncu measured, the latency-bound condition",
        "  guards against that.",
        "- CUTLASS is not a baseline here (no recipe for these tasks); torch's eager operators already call",
        "  cuBLAS/cuDNN where they apply.",
        "",
        "## Every candidate",
        "",
        *listing,
        "",
    ]
    return "\n".join(out), svgs


def main(folder: Path = FOLDER) -> str:
    text, svgs = render(folder)
    write_outputs(text, svgs, DOC, folder)
    return text


if __name__ == "__main__":
    print(main(Path(sys.argv[1]) if len(sys.argv) > 1 else FOLDER))
