"""Batch evaluation: a local pool (worker slots sharing each visible GPU; N workers on CPU) or Ray, records
appended as candidates finish, resume by skipping ids already recorded, a rich progress bar."""

from __future__ import annotations

import multiprocessing as mp
from multiprocessing import connection
import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable

from kernlint.eval import isolation, records
from kernlint.eval.api import EvalOptions, evaluate_candidate
from kernlint.eval.device_share import DeviceShare, Unshared
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


def worker_slots(gpus: list[str], workers: int | None, per_gpu: int = 1) -> list[dict[str, str]]:
    """The environment of each local worker: which GPU it sees (none without GPUs). ``workers``
    slots (default: ``per_gpu`` per GPU) share the GPUs round-robin."""
    if not gpus:
        return [{} for _ in range(max(1, workers or 1))]
    n = workers or len(gpus) * max(1, per_gpu)
    return [{"CUDA_VISIBLE_DEVICES": gpus[i % len(gpus)]} for i in range(max(1, n))]


def interleaved(candidates: list[Candidate]) -> list[Candidate]:
    """Candidates of different problems in turn: slots working at once judge different problems, so
    a problem's values measured for one candidate are there for its next (:mod:`kernlint.eval.reuse`)."""
    by_problem: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_problem.setdefault(c.problem_id, []).append(c)
    queues = list(by_problem.values())
    out = []
    while queues:
        out += [q.pop(0) for q in queues]
        queues = [q for q in queues if q]
    return out


@dataclass
class Slot:
    """What one worker slot judges with: its GPU's environment, the lock of the GPU it shares with
    other slots, and the problem values cached for that GPU."""
    env: dict[str, str]
    share: Any = None
    cache: ProblemCache | None = None


def _judge_queue(take: Callable[[], Candidate | None], more: Callable[[], bool], problems: dict[str, Problem],
                 opts: EvalOptions, slot: Slot, warm: bool, emit: Callable[[str, Any], None]) -> None:
    """One slot's loop: judge candidates until ``take`` has none; ``emit("start", id)`` before and
    ``emit("record", rec)`` after each."""
    slot_opts = replace(opts, env={**opts.env, **slot.env}, cuda=bool(slot.env) if opts.cuda is None else opts.cuda)
    spares = isolation.Spares() if warm else None
    try:
        while (c := take()) is not None:
            emit("start", c.id)
            prob = problems.get(c.problem_id)
            if spares is not None:
                spares.more = more()
            try:
                rec = (evaluate_candidate(prob, c, slot_opts, spares, slot.cache, slot.share) if prob
                       else _missing_problem_record(c))
            except Exception as exc:  # the harness itself failed on this candidate: record it
                rec = _harness_error(c, f"{type(exc).__name__}: {exc}")
            emit("record", rec)
    finally:
        if spares is not None:
            spares.close()


def _harness_error(c: Candidate, why: str) -> dict:
    return {**_missing_problem_record(c), "reasons": [f"harness-error: {why}"]}


def slot_cores(cores: list[int], index: int, slots: int) -> list[int]:
    """The CPU cores of slot ``index`` of ``slots``: its share of ``cores``, disjoint from the other
    slots' while there are cores enough (then one each, in turn)."""
    if len(cores) < slots:
        return [cores[index % len(cores)]]
    return cores[index * len(cores) // slots:(index + 1) * len(cores) // slots]


def _slot_process(index: int, slots: int, slot: Slot, problems: dict[str, Problem], opts: EvalOptions, warm: bool,
                  tasks, results) -> None:
    """A slot's own process (imports done once for all its candidates; each candidate's code still
    runs in fresh executors): candidates from ``tasks``, records to ``results`` (its end of a pipe:
    a message is in the pipe once sent, whatever happens to this process after).

    Slot ``index`` of ``slots`` and its executors run on cores of their own: a neighbour's compile (nvcc, inductor's
    workers) would otherwise slow the host side of a measured call, which the GPU lock cannot keep
    out (on the H200 a 4.5 us kernel's events read 17 us instead of 7 us, its kernel time the same)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, slot_cores(sorted(os.sched_getaffinity(0)), index, slots))
    _judge_queue(tasks.get, lambda: not tasks.empty(), problems, opts, slot, warm,
                 lambda kind, x: results.send((kind, x)))
    results.send(("done", None))


def run_local(problems: dict[str, Problem], candidates: list[Candidate], out_path: str | Path,
              opts: EvalOptions, workers: int | None = None,
              on_record: Callable[[dict], None] | None = None, warm: bool = True) -> list[dict]:
    """Evaluate candidates one at a time per slot. With GPUs a slot sees one GPU through
    CUDA_VISIBLE_DEVICES: ``opts.slots_per_gpu`` slots per GPU by default (``workers`` in all),
    which hold their GPU shared while they work and exclusively while they measure
    (:mod:`kernlint.eval.device_share`). Without GPUs: ``workers`` slots. One slot runs in this
    process; more run in processes of their own, one per slot, and this process writes the records.

    ``warm``: each slot starts the next candidate's executors while the current one is judged
    (:class:`kernlint.eval.isolation.Spares`) and the slots of a GPU measure the reference's values
    once per problem (:mod:`kernlint.eval.reuse`)."""
    envs = worker_slots(visible_gpus(), workers, opts.slots_per_gpu)
    out: list[dict] = []

    def keep(rec: dict) -> None:
        records.append(out_path, rec)
        out.append(rec)
        if on_record:
            on_record(rec)

    if len(envs) == 1:
        todo = list(candidates)
        _judge_queue(lambda: todo.pop(0) if todo else None, lambda: bool(todo), problems, opts,
                     Slot(envs[0], Unshared(), ProblemCache() if warm else None), warm,
                     lambda kind, x: keep(x) if kind == "record" else None)
        return out
    with tempfile.TemporaryDirectory(prefix="kernlint-slots-") as locks, mp.get_context("spawn").Manager() as manager:
        devices = [e.get("CUDA_VISIBLE_DEVICES", "cpu") for e in envs]
        shares = {d: DeviceShare(locks, d, devices.count(d)) if d != "cpu" else Unshared() for d in set(devices)}
        caches = {d: ProblemCache(manager.dict(), manager.Lock()) if warm else None for d in set(devices)}
        slots = [Slot(e, shares[d], caches[d]) for e, d in zip(envs, devices)]
        _run_slot_processes(slots, interleaved(list(candidates)), problems, opts, warm, keep)
    return out


def _run_slot_processes(slots: list[Slot], todo: list[Candidate], problems: dict[str, Problem], opts: EvalOptions,
                        warm: bool, keep: Callable[[dict], None], target: Callable = None) -> None:
    """The slots as processes (``target``: :func:`_slot_process`); a slot process that dies has its
    candidate recorded as a harness error and the others go on with the rest."""
    ctx = mp.get_context("spawn")
    tasks = ctx.Queue()
    for c in todo:
        tasks.put(c)
    for _ in slots:
        tasks.put(None)
    by_id = {c.id: c for c in todo}
    pipes = [ctx.Pipe(duplex=False) for _ in slots]
    procs = [ctx.Process(target=target or _slot_process,
                         args=(i, len(slots), s, problems, opts, warm, tasks, pipes[i][1]), daemon=True)
             for i, s in enumerate(slots)]
    for p in procs:
        p.start()
    for _, sender in pipes:
        sender.close()  # the slot's copy is the only one: its pipe ends when the slot does
    live = {pipes[i][0]: i for i in range(len(procs))}
    inflight: dict[int, str] = {}
    try:
        while live:
            for conn in connection.wait(list(live)):
                i = live[conn]
                try:
                    kind, x = conn.recv()
                except EOFError:  # the slot's process is gone
                    del live[conn]
                    procs[i].join(5)
                    lost = inflight.pop(i, None)
                    if lost is not None:
                        keep(_harness_error(by_id[lost], f"the worker slot's process stopped "
                                                         f"(exit code {procs[i].exitcode})"))
                    continue
                if kind == "start":
                    inflight[i] = x
                elif kind == "record":
                    inflight.pop(i, None)
                    keep(x)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join(timeout=5)


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
        ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": isolation.nccl_env()}, **kwargs)
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
