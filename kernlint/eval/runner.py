"""Batch evaluation: a local pool (one worker per visible GPU; N workers on CPU) or Ray, records
appended as candidates finish, resume by skipping ids already recorded, a rich progress bar."""

from __future__ import annotations

import os
import queue
import threading
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable

from kernlint.eval import isolation, records
from kernlint.eval.api import EvalOptions, evaluate_candidate
from kernlint.eval.problems import Candidate, Problem
from kernlint.eval.reuse import ProblemCache


def visible_gpus() -> list[str]:
    try:
        import torch

        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:
        n = 0
    if not n:
        return []
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [x.strip() for x in env.split(",") if x.strip()] if env else [str(i) for i in range(n)]
    return ids[:n]


def _missing_problem_record(c: Candidate) -> dict:
    return {"id": c.id, "problem": c.problem_id, "origin": c.origin, "verdict": "skipped",
            "reasons": [f"no-problem: no problem named {c.problem_id!r}"], "reward": 0.0,
            "findings": [], "timings": {}, "metrics": {}, "speedup": {}, "correctness": {}}


def pending(candidates: Iterable[Candidate], out_path: str | Path) -> list[Candidate]:
    done = records.done_ids(out_path)
    return [c for c in candidates if c.id not in done]


def worker_slots(gpus: list[str], workers: int | None) -> list[dict[str, str]]:
    """The environment of each local worker: which GPU it sees (none without GPUs)."""
    if not gpus:
        return [{} for _ in range(max(1, workers or 1))]
    return [{"CUDA_VISIBLE_DEVICES": gpus[i % len(gpus)]} for i in range(max(1, workers or len(gpus)))]


def run_local(problems: dict[str, Problem], candidates: list[Candidate], out_path: str | Path,
              opts: EvalOptions, workers: int | None = None,
              on_record: Callable[[dict], None] | None = None, warm: bool = True) -> list[dict]:
    """Evaluate candidates one at a time per slot. With GPUs a slot sees one GPU through
    CUDA_VISIBLE_DEVICES: one slot per GPU by default; ``workers`` beyond the GPU count share the
    GPUs round-robin (fine for correctness-only runs, not for timing). Without GPUs: ``workers``.

    ``warm``: each slot starts the next candidate's executors while the current one is judged
    (:class:`kernlint.eval.isolation.Spares`) and measures the reference's values once per problem
    (:mod:`kernlint.eval.reuse`)."""
    slots = worker_slots(visible_gpus(), workers)
    gpus = [s["CUDA_VISIBLE_DEVICES"] for s in slots if s]
    todo: queue.Queue = queue.Queue()
    for c in candidates:
        todo.put(c)
    out: list[dict] = []
    lock = threading.Lock()

    def slot_loop(env_extra: dict) -> None:
        slot_opts = replace(opts, env={**opts.env, **env_extra}, cuda=bool(gpus) if opts.cuda is None else opts.cuda)
        spares, cache = (isolation.Spares(), ProblemCache()) if warm else (None, None)
        try:
            slot_jobs(slot_opts, spares, cache)
        finally:
            if spares is not None:
                spares.close()

    def slot_jobs(slot_opts: EvalOptions, spares: isolation.Spares | None, cache: ProblemCache | None) -> None:
        while True:
            try:
                c = todo.get_nowait()
            except queue.Empty:
                return
            prob = problems.get(c.problem_id)
            if spares is not None:
                spares.more = not todo.empty()
            try:
                rec = evaluate_candidate(prob, c, slot_opts, spares, cache) if prob else _missing_problem_record(c)
            except Exception as exc:  # the harness itself failed on this candidate: record it
                rec = {**_missing_problem_record(c), "reasons": [f"harness-error: {type(exc).__name__}: {exc}"]}
            records.append(out_path, rec)
            with lock:
                out.append(rec)
            if on_record:
                on_record(rec)

    threads = [threading.Thread(target=slot_loop, args=(s,), daemon=True) for s in slots]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def run_ray(problems: dict[str, Problem], candidates: list[Candidate], out_path: str | Path,
            opts: EvalOptions, workers: int | None = None, address: str | None = None,
            on_record: Callable[[dict], None] | None = None) -> list[dict]:
    """The same evaluation as Ray tasks (one GPU each when the cluster has GPUs). Records are
    written by the driver as tasks complete, so resume works the same way."""
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise RuntimeError("the ray backend needs the 'ray' extra (pip install 'kernlint[ray]')") from exc
    started = False
    if not ray.is_initialized():
        kwargs = {"address": address} if address else {"num_cpus": max(1, workers or 1)}
        ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False, **kwargs)
        started = True
    try:
        gpus = int(ray.cluster_resources().get("GPU", 0))

        @ray.remote(num_gpus=1 if gpus else 0, num_cpus=1, max_retries=0)
        def remote_eval(prob: Problem, cand: Candidate, o: EvalOptions) -> dict:
            return evaluate_candidate(prob, cand, o)

        o = replace(opts, cuda=bool(gpus) if opts.cuda is None else opts.cuda)
        refs = {}
        out: list[dict] = []
        for c in candidates:
            prob = problems.get(c.problem_id)
            if prob is None:
                rec = _missing_problem_record(c)
                records.append(out_path, rec)
                out.append(rec)
                continue
            refs[remote_eval.remote(prob, c, o)] = c
        pending_refs = list(refs)
        while pending_refs:
            ready, pending_refs = ray.wait(pending_refs, num_returns=1)
            for r in ready:
                try:
                    rec = ray.get(r)
                except Exception as exc:
                    c = refs[r]
                    rec = {**_missing_problem_record(c), "reasons": [f"harness-error: {type(exc).__name__}: {exc}"]}
                records.append(out_path, rec)
                out.append(rec)
                if on_record:
                    on_record(rec)
        return out
    finally:
        if started:
            ray.shutdown()


def run_batch(problems: dict[str, Problem], candidates: list[Candidate], out_path: str | Path,
              opts: EvalOptions, backend: str = "local", workers: int | None = None,
              progress: bool = False, ray_address: str | None = None, warm: bool = True) -> list[dict]:
    """Evaluate the candidates not yet in ``out_path``; return the new records."""
    todo = pending(candidates, out_path)
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    bar = None
    on_record = None
    if progress and todo:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(TextColumn("[bold]eval"), BarColumn(), MofNCompleteColumn(),
                       TextColumn("{task.fields[last]}"), TimeRemainingColumn())
        task = bar.add_task("eval", total=len(todo), last="")
        bar.start()

        def on_record(rec: dict) -> None:
            bar.update(task, advance=1, last=f"{rec['id']}: {rec['verdict']}")

    try:
        if backend == "ray":
            return run_ray(problems, todo, out_path, opts, workers, ray_address, on_record)
        return run_local(problems, todo, out_path, opts, workers, on_record, warm)
    finally:
        if bar is not None:
            bar.stop()
