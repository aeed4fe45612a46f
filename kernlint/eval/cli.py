"""``kernlint eval``: the click command (the lead wires ``eval_command`` into the CLI group)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kernlint.eval import records, report_html, summary
from kernlint.eval.api import EvalOptions
from kernlint.eval.dataset import export
from kernlint.eval.device_share import SLOTS_PER_GPU
from kernlint.eval.policy import Policy
from kernlint.eval.problems import attach_tests, load_candidates, load_problems, mapping_report, select_problems
from kernlint.eval.runner import run_batch
from kernlint.eval.structure import StructureThresholds


def _ints(ctx, param, text: str) -> tuple[int, ...]:
    """``--seeds 0,1,2``: comma-separated integers."""
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected comma-separated integers, e.g. 0,1,2") from None


def _thresholds(ctx, param, items: tuple[str, ...]) -> StructureThresholds:
    """``--structure min_efficiency=0.3``: fields of :class:`StructureThresholds`."""
    fields = StructureThresholds.__dataclass_fields__
    values: dict = {}
    for item in items:
        name, _, text = item.partition("=")
        name = name.strip().replace("-", "_")
        if name not in fields or not text:
            raise click.BadParameter(f"{item!r}: expected NAME=VALUE with NAME one of {', '.join(fields)}")
        if text.lower() == "none":
            values[name] = None
        elif text.lower() in ("true", "false"):
            values[name] = text.lower() == "true"
        else:
            try:
                values[name] = float(text)
            except ValueError:
                raise click.BadParameter(f"{item!r}: {text!r} is not a number, true/false or none") from None
    return StructureThresholds(**values)


@click.command("eval")
@click.argument("problems", type=click.Path(exists=True))
@click.argument("candidates", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-o", "--out", "out_dir", type=click.Path(), default="kernlint-eval", show_default=True,
              help="Folder for records.jsonl, summary.json/.md, report.html and dataset.jsonl.")
@click.option("--tests", "tests_dir", type=click.Path(exists=True, file_okay=False), default=None,
              help="Folder of TritonBench test code kept apart from the references: <problem_id>.py "
                   "holds what follows the ##### line (a test_*() returning the result tensors).")
@click.option("--problem-ids", default=None,
              help="Evaluate only these problems, in this order: comma-separated ids or @FILE (one id per line).")
@click.option("--backend", type=click.Choice(["local", "ray"]), default="local", show_default=True)
@click.option("--ray-address", default=None, help="Ray cluster address (default: start a local one).")
@click.option("--workers", type=int, default=None, help="Parallel worker slots in all (default: --slots-per-gpu per GPU; 1 on CPU); "
              "slots beyond the GPUs share them round-robin.")
@click.option("--slots-per-gpu", type=click.IntRange(1, 64), default=SLOTS_PER_GPU, show_default=True,
              help="Worker slots sharing each GPU: they overlap starting, compiling and checking candidates and "
                   "take the GPU in turn for every timed or profiled measurement.")
@click.option("--seeds", default="0,1,2", show_default=True, callback=_ints, help="Input seeds, comma-separated.")
@click.option("--shape-variants", default="0,1", show_default=True, callback=_ints,
              help="0 = the problem as written; 1.. = non-power-of-two variants.")
@click.option("--timeout", type=float, default=300.0, show_default=True, help="Seconds per candidate.")
@click.option("--mem-limit-mb", type=int, default=8192, show_default=True, help="Address-space limit (CPU runs).")
@click.option("--rss-limit-mb", type=float, default=32768, show_default=True, help="Resident-memory watchdog.")
@click.option("--tolerance-scale", type=float, default=1.0, show_default=True)
@click.option("--no-timing", is_flag=True, help="Correctness and anti-cheat only.")
@click.option("--iters", type=int, default=50, show_default=True, help="Timed iterations (GPU).")
@click.option("--compile-baseline/--no-compile-baseline", default=None,
              help="Time torch.compile of the reference too (default: on GPU only).")
@click.option("--cutlass-baseline/--no-cutlass-baseline", default=None,
              help="Time GEMM-family references with their GEMMs on CUTLASS too (default: on GPU only; "
                   "needs kernlint[cutlass] and nvcc; kernels cached in $KERNLINT_CUTLASS_CACHE or ~/.cache/kernlint/cutlass).")
@click.option("--max-slowdown", type=float, default=0.05, show_default=True,
              help="Reject candidates slower than the reference (the problem's own module) by more than this fraction.")
@click.option("--min-occupancy", type=float, default=0.0, show_default=True)
@click.option("--max-library-share", type=float, default=0.5, show_default=True,
              help="library-fallback when library kernels take this share of the device time or of the FLOPs (above 1: off).")
@click.option("--fail-level", type=click.Choice(["note", "warning", "error", "none"]), default="error",
              show_default=True, help="Lint findings at or above this level count as cheating.")
@click.option("--profile/--no-profile", default=None,
              help="One ncu pass per candidate that passed correctness (default: on when timing on a GPU).")
@click.option("--structure", "structure_opts", multiple=True, callback=_thresholds, metavar="NAME=VALUE",
              help="A structural threshold, e.g. --structure min_efficiency=0.3 (none disables a check; "
                   "names: kernlint.eval.structure.StructureThresholds).")
@click.option("--include-correct", is_flag=True, help="Export correct-but-rejected candidates too.")
@click.option("--limit", type=int, default=None, help="Evaluate at most this many candidates.")
@click.option("--progress/--no-progress", default=True)
@click.option("--no-reuse", is_flag=True, help="Measure the reference's timing, baselines and null-model audit for every "
              "candidate, and start each candidate's executors only when its turn comes (default: once per problem "
              "and worker, the next candidate's executors started while one is judged).")
def eval_command(problems, candidates, out_dir, tests_dir, problem_ids, backend, ray_address, workers, slots_per_gpu,
                 seeds, shape_variants,
                 timeout, mem_limit_mb, rss_limit_mb, tolerance_scale, no_timing, iters, compile_baseline, cutlass_baseline,
                 max_slowdown, min_occupancy, max_library_share, fail_level, profile, structure_opts, include_correct, limit,
                 progress, no_reuse):
    """Evaluate generated kernels in CANDIDATES (folders, files or JSONLs of answers; several, e.g. one per
    model, make one batch that measures each problem's reference once) against PROBLEMS
    (KernelBench-style modules, TritonBench-style modules or a TritonBench-G JSON).

    Records are appended to OUT/records.jsonl as candidates finish; rerunning resumes."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    try:
        probs = load_problems(problems)
        if tests_dir:
            attach_tests(probs, tests_dir)
        # JSONL answers map to problems by row order, so candidates are read before any selection
        cands = [c for path in candidates for c in load_candidates(path, probs)]
        seen: dict[str, str] = {}
        for c in cands:
            if c.id in seen:
                raise ValueError(f"candidate id {c.id!r} is given twice ({seen[c.id]} and {c.origin}): "
                                 f"give each answer file once, under names of its own")
            seen[c.id] = c.origin
        for line in mapping_report(cands):
            click.echo(f"warning: {line}", err=True)
        if problem_ids:
            probs = select_problems(probs, problem_ids)
            order = {pid: i for i, pid in enumerate(probs)}
            cands = sorted((c for c in cands if c.problem_id in probs), key=lambda c: order[c.problem_id])
    except (ValueError, OSError, KeyError) as exc:
        raise click.UsageError(str(exc)) from exc
    if limit is not None:
        cands = cands[:limit]
    opts = EvalOptions(
        seeds=seeds, shape_variants=shape_variants, timeout_s=timeout,
        mem_limit_mb=mem_limit_mb, rss_limit_mb=rss_limit_mb, tolerance_scale=tolerance_scale,
        timing=not no_timing, iters=iters, compile_baseline=compile_baseline, cutlass_baseline=cutlass_baseline,
        policy=Policy(max_slowdown=max_slowdown, min_occupancy=min_occupancy,
                      max_library_share=None if max_library_share > 1 else max_library_share,
                      fail_level=None if fail_level == "none" else fail_level, structure=structure_opts),
        profile=profile, slots_per_gpu=slots_per_gpu,
    )
    rec_path = out / "records.jsonl"
    new = run_batch(probs, cands, rec_path, opts, backend=backend, workers=workers,
                    progress=progress, ray_address=ray_address, warm=not no_reuse)
    ids = {c.id for c in cands}
    recs = [r for r in records.latest(rec_path) if r.get("id") in ids]
    s = summary.summarize(recs)
    (out / "summary.json").write_text(json.dumps(s, indent=2, default=str))
    (out / "summary.md").write_text(summary.to_markdown(s))
    (out / "report.html").write_text(report_html.render(recs))
    n = export(recs, {c.id: c for c in cands}, out / "dataset.jsonl", include_correct)
    click.echo(f"{len(new)} evaluated now, {len(recs)} recorded; "
               + ", ".join([f"{k} {v}" for k, v in s["taxonomy"].items() if v]
                           + ([f"skipped {s['skipped']}"] if s["skipped"] else []))
               + f"; {n} exported to {out / 'dataset.jsonl'}")


def main() -> None:  # pragma: no cover - `python -m kernlint.eval.cli`
    eval_command()


if __name__ == "__main__":  # pragma: no cover
    main()
