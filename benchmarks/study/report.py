"""docs/study-tritonbench.md from the committed JSONL of the study (nothing else is read).

    python benchmarks/study/report.py [docs/study]

Inputs in the folder: records.jsonl (``kernlint eval`` on the GPU), confirmations.jsonl (the
dynamic phase on the candidates' static findings, GPU), static_findings.jsonl (source phase),
reference_checks.jsonl (each task's reference evaluated against itself on the GPU, self_check.py).
"""

from __future__ import annotations

import re
import statistics
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from kernlint.eval.census import occupancy  # noqa: E402
from kernlint.eval.policy import TAXONOMY  # noqa: E402
from kernlint.eval.report_html import bar_svg  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from confirm_findings import RULES as CONFIRM_RULES  # noqa: E402  (the rules whose findings run on the GPU)
from study_common import column_row, first_line, load, study_verdict, write_outputs  # noqa: E402

MODELS = ("gpt-4o", "claude-3-5-sonnet")
#: the candidate cannot be called the way the task's wrapper is called (what TritonBench calls
#: "call accuracy"): wrong arity or keywords, missing names, a different return shape
INTERFACE = re.compile(r"(TypeError: .*(argument|positional|keyword|takes|missing))|NameError: name '\w+' is not defined"
                       r"|ValueError: (too many|not enough) values to unpack|has no attribute 'apply'")


def model_of(rec: dict) -> str:
    return rec["id"].split("/", 1)[1]


def render(folder: Path) -> tuple[str, dict[str, str]]:
    """The document's text and its figures (file name -> SVG), from the JSONL in ``folder``."""
    recs = load(folder / "records.jsonl")
    conf = load(folder / "confirmations.jsonl")
    lint = {r["id"]: r for r in load(folder / "static_findings.jsonl")}
    refs = {r["task"]: r for r in load(folder / "reference_checks.jsonl")}
    broken = {t for t, r in refs.items() if not r["ok"] and r["verdict"] != "skipped"}

    def verdict(rec: dict) -> str:
        return study_verdict(rec, broken)

    cols = ["all", *MODELS]
    by = {m: [r for r in recs if m == "all" or model_of(r) == m] for m in cols}
    tasks = sorted({r["problem"] for r in recs})
    skipped_tasks = sorted({r["problem"] for r in recs if verdict(r) == "skipped"})

    def row(label: str, fn) -> str:
        return column_row(label, by, fn)

    def count(pred):
        return lambda rs: sum(1 for r in rs if pred(r))

    judged = {m: [r for r in by[m] if verdict(r) not in ("skipped", "excluded")] for m in cols}
    lines = ["| | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols),
             row("candidates evaluated on the GPU", len),
             row("skipped: the reference itself does not load", count(lambda r: verdict(r) == "skipped")),
             row("excluded: the reference fails its own test on the GPU", count(lambda r: verdict(r) == "excluded"))]
    for v in TAXONOMY:
        lines.append(row(v, count(lambda r, v=v: verdict(r) == v)))
        if v == "runtime-error":
            lines.append(row("&nbsp;&nbsp;of which the call of the task's wrapper fails (interface)",
                             count(lambda r: verdict(r) == "runtime-error" and INTERFACE.search(r.get("error") or ""))))
            lines.append(row("&nbsp;&nbsp;of which illegal memory access",
                             count(lambda r: r.get("error_kind") == "illegal-address")))
    lines.append(row("pass rate (of judged)", lambda rs: f"{sum(verdict(r) == 'passed' for r in rs)}/"
                     f"{sum(verdict(r) not in ('skipped', 'excluded') for r in rs)}"))

    # TritonBench's criterion (identical printed results) against kernlint's verdict
    tb = {m: [r for r in judged[m] if r["correctness"].get("tritonbench_stdout_match")] for m in cols}
    tb_rejected = {m: [r for r in tb[m] if verdict(r) != "passed"] for m in cols}
    kl_only = {m: [r for r in judged[m] if verdict(r) == "passed" and not r["correctness"].get("tritonbench_stdout_match")]
               for m in cols}

    # slower than the reference / compiled-kernel occupancy
    def speed(r):
        return (r.get("speedup") or {}).get("vs_reference")

    occ_rows = []
    for r in recs:
        occs = [occupancy(k.get("n_regs"), k.get("num_warps"), k.get("shared"))
                for k in (r.get("metrics") or {}).get("kernels", [])]
        occs = [o for o in occs if o is not None]
        if occs:
            occ_rows.append((r["id"], min(occs)))

    # static findings and what the GPU made of them
    lint_rows = [lint[r["id"]] for r in recs if r["id"] in lint]
    with_err = {m: sum(1 for x in lint_rows if (m == "all" or x["model"] == m)
                       and any(f["level"] == "error" for f in x["findings"])) for m in cols}
    n_find = {m: sum(len(x["findings"]) for x in lint_rows if m == "all" or x["model"] == m) for m in cols}
    cv = Counter(c.get("verdict", "error") for c in conf)
    why = Counter((c.get("notes") or ["-"])[0].split(":")[0] for c in conf if c.get("verdict") == "inconclusive")
    rec_by_id = {r["id"]: r for r in recs}
    judged_table = []  # the findings the GPU confirmed or refuted, beside their candidate's verdict
    for c in conf:
        if c.get("verdict") not in ("confirmed", "refuted"):
            continue
        rec = rec_by_id.get(f"{c['task']}/{c['model']}")
        measured = ", ".join(f"{k}={v}" for k, v in sorted((c.get("measurements") or {}).items()))
        judged_table.append(f"| `{c['task']}/{c['model']}` | {c['rule']} | {c['line']} | {c['verdict']} | "
                            f"{', '.join(c.get('tools', []))} | {measured} | {verdict(rec) if rec else '-'} |")
    if judged_table:
        judged_table[:0] = ["", "| candidate | rule | line | GPU verdict | tools | measured | candidate's eval verdict |",
                            "|---|---|---:|---|---|---|---|"]
    conf_cands = {(c["task"], c["model"]) for c in conf}
    confirmed_cands = {(c["task"], c["model"]) for c in conf if c.get("verdict") == "confirmed"}
    unconfirmed = [x for x in lint_rows if any(f["rule"] in CONFIRM_RULES for f in x["findings"])
                   and (x["task"], x["model"]) not in conf_cands]

    svgs = {f"taxonomy_{m}.svg": bar_svg(Counter(verdict(r) for r in by[m])) for m in cols}

    unchecked = sorted(set(tasks) - set(refs))
    passed = [r for r in recs if verdict(r) == "passed"]
    slower = [r for r in recs if verdict(r) == "slower-than-baseline"]
    out = [
        "# TritonBench-G study: `kernlint eval` on GPT-4o and Claude 3.5 Sonnet kernels",
        "",
        "Every count, rate and timing below is computed by `benchmarks/study/report.py` from the JSONL files",
        "committed in `docs/study/` (records of `kernlint eval`, the references evaluated against themselves,",
        "the dynamic phase on static findings, the source phase's findings); a test checks that this file is",
        "exactly what the script makes of them. The method and the limits are written by hand.",
        "",
        "## What was run",
        "",
        f"- Tasks: the first {len(tasks)} of a seeded shuffle of the 184 TritonBench-G tasks (seed in",
        "  `benchmarks/study/tasks.py`, list in `benchmarks/study/tasks.txt`); a later session grows the prefix.",
        "- Candidates: the GPT-4o and Claude 3.5 Sonnet answers to the simple instructions (the ```python",
        f"  block of each answer): {len(recs)} candidates.",
        "- The references carry no test code, so each task got one (`benchmarks/study/tritonbench_tests/`):",
        "  it calls the reference's public wrapper, as TritonBench's own tests do, on at least two shapes",
        "  (non-powers of two where the reference allows), returning the result tensors. Candidate and",
        "  reference run the same test with the same seeds (2 seeds, candidate -> reference -> candidate),",
        "  outputs NaN-poisoned allocator, tolerances scaled to the output, null-model audit, timing with",
        "  CUDA events over the whole test function.",
        "- Device: NVIDIA H200, torch 2.11, triton 3.6.0, one worker per GPU, 90 s per candidate.",
        "",
        "Commands (a machine with a GPU; CORPUS = the folder with TritonBench_G_v1.json and the two",
        "`*_simp.jsonl` answer files):",
        "",
        "```",
        "bash benchmarks/study/run_gpu.sh CORPUS OUT             # kernlint eval, records in OUT/eval",
        "python benchmarks/study/candidates.py CORPUS OUT/cands",
        "python benchmarks/study/self_check.py --corpus CORPUS --tasks-file benchmarks/study/tasks.txt \\",
        "    --workers 8 --out OUT/ref --records docs/study/reference_checks.jsonl   # references vs themselves;",
        "    # the tasks already in --records are skipped, so each session checks what is left",
        "python benchmarks/study/confirm_findings.py OUT/cands OUT/confirm   # --confirm on static findings",
        "python benchmarks/study/lint_candidates.py OUT/cands docs/study/static_findings.jsonl",
        "python benchmarks/study/report.py docs/study             # this file",
        "```",
        "",
        "## Failure taxonomy",
        "",
        *lines,
        "",
        f"![taxonomy, both models](study/taxonomy_all.svg)",
        "",
        f"Tasks whose reference does not load on triton 3.6 (it imports `triton.ops`, removed from Triton): "
        f"{', '.join(skipped_tasks) or 'none'}; their candidates are not judged.",
        "",
        "## TritonBench's own criterion against kernlint",
        "",
        "TritonBench counts a candidate correct when it prints the same results as the reference. Recorded",
        "here as `tritonbench_stdout_match` (the printed result dict of the first seed identical).",
        "",
        "| | " + " | ".join(cols) + " |",
        "|---|" + "---:|" * len(cols),
        "| identical printed results (TritonBench would pass) | " + " | ".join(str(len(tb[m])) for m in cols) + " |",
        "| of those, rejected by kernlint | " + " | ".join(str(len(tb_rejected[m])) for m in cols) + " |",
        "| passed by kernlint although the printed results differ | " + " | ".join(str(len(kl_only[m])) for m in cols) + " |",
        "",
        *[f"- `{r['id']}`: TritonBench passes, kernlint says **{verdict(r)}** ({'; '.join(r['reasons'])[:160]})"
          for r in tb_rejected["all"]],
        *[f"- `{r['id']}`: kernlint passes (within tolerance, {r['correctness'].get('passed')} seeds), the printed "
          f"digits differ" for r in kl_only["all"]],
        *(["", "(\"the torch reference\" in reasons recorded before the wording was corrected is the task's own "
               "reference module, here a Triton kernel.)"]
          if any("torch reference" in "; ".join(r["reasons"]) for r in tb_rejected["all"]) else []),
        "",
        "## Speed and occupancy",
        "",
        f"- Correct candidates: {len(passed) + len(slower)}; speedup over the reference (median of the whole",
        "  test function, CUDA events): " + ", ".join(f"`{r['id']}` {speed(r):.3f}x" for r in passed + slower if speed(r)),
        f"- Slower than the reference by more than 5% (the policy): {len(slower)}. TritonBench tasks have no",
        "  PyTorch module, so the reference is the task's own Triton kernel; there is no torch.compile baseline.",
        f"- Theoretical occupancy of the compiled kernels (registers, warps, shared memory from the records):"
        f" {len(occ_rows)} candidates with compiled kernels recorded; lowest: "
        + (", ".join(f"`{i}` {o:.0%}" for i, o in sorted(occ_rows, key=lambda x: x[1])[:3]) or "none")
        + ". With the default policy (no occupancy floor) none is rejected for occupancy.",
        "",
        "## Static findings and what the GPU made of them",
        "",
        "| | " + " | ".join(cols) + " |",
        "|---|" + "---:|" * len(cols),
        "| source-phase findings (all levels) | " + " | ".join(str(n_find[m]) for m in cols) + " |",
        "| candidates with an error-level finding | " + " | ".join(str(with_err[m]) for m in cols) + " |",
        "",
        f"The dynamic phase (`kernlint check --confirm` on the candidate followed by the task's test, on the",
        f"GPU, within the session's time) judged {len(conf)} out-of-bounds/race findings of {len(conf_cands)} candidates:"
        f" {cv.get('confirmed', 0)} confirmed, {cv.get('refuted', 0)} refuted, {cv.get('inconclusive', 0)} inconclusive."
        f" Why inconclusive: " + ", ".join(f"{k} ({v})" for k, v in why.most_common()) + ".",
        f"Candidates with such findings not yet run through the dynamic phase (GPU time ran out): "
        f"{len(unconfirmed)}. Candidates carrying a confirmed finding: {len(confirmed_cands)}. A finding can only be confirmed or refuted",
        "when its kernel runs, and most flagged candidates fail before their kernel launches (the call of",
        "the task's wrapper does not match, or the kernel does not compile).",
        *judged_table,
        "",
        "## The references against themselves",
        "",
        f"Each task's reference was evaluated as its own candidate on the GPU (`benchmarks/study/self_check.py`,",
        f"same test, seeds and checks as the candidates, outputs NaN-poisoned so unwritten elements show):",
        f"{len(refs)} of {len(tasks)} tasks checked within the session's GPU time, {sum(r['ok'] for r in refs.values())}"
        f" pass. Failing:",
        "",
        *[f"- `{t}`: {r['verdict']}: {first_line('; '.join(r['reasons'])).removeprefix(r['verdict'] + ': ')}"
          for t, r in sorted(refs.items()) if not r["ok"]],
        "",
        f"A task whose reference fails its own test is excluded (its candidates are not judged); one whose reference",
        f"does not load is skipped. Not yet checked: {len(unchecked)} tasks. Verdicts other than a failure to",
        f"compile or run that rest on an unchecked reference: "
        + (", ".join(f"`{r['id']}` {verdict(r)}" for r in recs if r["problem"] in unchecked
                     and verdict(r) in ("passed", "wrong", "slower-than-baseline", "cheating")) or "none") + ".",
        "",
        "## Limits of this run",
        "",
        "- References known to be unreliable from reading them (CPU checks in `benchmarks/study/self_check.py`",
        "  and by the authors of the test code): `relu_triton_kernel` (only program 0 stores: outputs past 1024",
        "  elements are never written), `chunk_retention` (backward reads an uninitialized buffer; its test",
        "  compares the forward only), `cross_entropy2` (writes part of its outputs; its test compares that",
        "  part), `softmax_optimize` (NaN rows for widths below 4096 that are not powers of two; its test",
        "  avoids them), `mixed_sparse_attention` (spurious softmax mass with fewer than 8 blocks per row; its",
        "  test uses 8), `chunk_gated_attention` and `chunk_bwd_dqkg` (wrong at ragged chunk/feature sizes; their",
        "  tests avoid them), `mul_exponent_compensator` (1-D inputs only), `rotary_transform` (an integer",
        "  offset is shifted by the sequence length).",
        "- `pow_scalar_tensor`'s test includes a float16 case, for which the reference's libdevice `pow` does",
        "  not compile: the task is excluded above until the test is revised and re-run.",
        "- `rms_rbe_matmul`'s reference ignores `use_rbe` (no rotary step): candidates that apply it would be",
        "  judged wrong against it.",
        "- Timing covers the whole test function, input creation included.",
        "- Answers whose wrapper has a different name or signature fail like in TritonBench (its call",
        "  accuracy); kernlint does not try to adapt calls.",
    ]
    return "\n".join(out) + "\n", svgs


def main(folder: Path) -> str:
    text, svgs = render(folder)
    write_outputs(text, svgs, ROOT / "docs" / "study-tritonbench.md", folder)
    return text


if __name__ == "__main__":
    print(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "study"))
