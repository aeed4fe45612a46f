"""The lock of a GPU shared by worker slots (processes): measurements alone, work together, and a
waiting measurement is not starved by work arriving after it."""

import multiprocessing as mp
import os
import time
from pathlib import Path

import pytest

from kernlint.eval.device_share import DeviceShare
from kernlint.eval.problems import Candidate
from kernlint.eval.runner import Slot, _run_slot_processes

CTX = mp.get_context("fork")


def _hammer(share: DeviceShare, marker: str, rounds: int, errors) -> None:
    """Alternate measurements and work; a measurement must find nobody inside, work no measurement."""
    for i in range(rounds):
        with share.exclusive():
            if os.path.exists(marker) or os.path.exists(marker + ".work"):
                errors.put("a measurement overlapped another slot")
            Path(marker).touch()
            time.sleep(0.002)
            os.unlink(marker)
        with share.shared():
            if os.path.exists(marker):
                errors.put("work overlapped a measurement")
            time.sleep(0.001)


def test_measurements_of_different_slots_never_overlap(tmp_path):
    share = DeviceShare(tmp_path, "0", 3)
    errors = CTX.Queue()
    procs = [CTX.Process(target=_hammer, args=(share, str(tmp_path / "inside"), 40, errors)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    assert errors.empty(), errors.get()


def _hold_shared(share: DeviceShare, inside, both) -> None:
    with share.shared():
        inside.release()
        both.wait(20)  # until the other slot is inside too


def test_work_of_different_slots_overlaps(tmp_path):
    share = DeviceShare(tmp_path, "0", 2)
    inside, both = CTX.Semaphore(0), CTX.Event()
    procs = [CTX.Process(target=_hold_shared, args=(share, inside, both)) for _ in range(2)]
    for p in procs:
        p.start()
    assert inside.acquire(timeout=20) and inside.acquire(timeout=20)  # both held it shared at once
    both.set()
    for p in procs:
        p.join(20)


def _log_when(share: DeviceShare, mode: str, log: str, asking, hold_s: float) -> None:
    asking.set()
    with getattr(share, mode)():
        with open(log, "a") as f:
            f.write(mode + "\n")
        time.sleep(hold_s)


def test_a_waiting_measurement_goes_before_work_that_asks_after_it(tmp_path):
    share = DeviceShare(tmp_path, "0", 3)
    log = str(tmp_path / "log")
    first, writer_asks, late_asks = CTX.Event(), CTX.Event(), CTX.Event()
    holder = CTX.Process(target=_log_when, args=(share, "shared", log, first, 1.0))
    holder.start()
    first.wait(20)
    time.sleep(0.2)
    writer = CTX.Process(target=_log_when, args=(share, "exclusive", log, writer_asks, 0.2))
    writer.start()
    writer_asks.wait(20)
    time.sleep(0.3)  # the measurement is waiting for the work in flight
    late = CTX.Process(target=_log_when, args=(share, "shared", log, late_asks, 0.0))
    late.start()
    for p in (holder, writer, late):
        p.join(30)
    assert Path(log).read_text().split() == ["shared", "exclusive", "shared"]


def test_the_time_a_slot_waited_is_counted(tmp_path):
    share = DeviceShare(tmp_path, "0", 2)
    first = CTX.Event()
    holder = CTX.Process(target=_log_when, args=(share, "shared", str(tmp_path / "log"), first, 0.5))
    holder.start()
    first.wait(20)
    time.sleep(0.1)
    with share.exclusive():
        pass
    holder.join(20)
    assert share.waited["exclusive"] > 0.05 and share.waited["shared"] == 0.0


def test_a_slot_cannot_turn_shared_into_exclusive_and_may_nest(tmp_path):
    share = DeviceShare(tmp_path, "0", 1)
    with share.exclusive():
        with share.exclusive(), share.shared():
            assert share.mode() == "exclusive"
    with share.shared():
        with pytest.raises(RuntimeError, match="cannot take it exclusively"):
            with share.exclusive():
                pass
    assert share.mode() is None


def _judge_or_die(index, slots, slot, problems, opts, warm, tasks, results) -> None:
    """A stand-in slot process: the candidate named ``die`` kills its slot."""
    while (c := tasks.get()) is not None:
        results.send(("start", c.id))
        if c.id == "die":
            os._exit(3)
        results.send(("record", {"id": c.id, "verdict": "passed"}))
    results.send(("done", None))


def test_a_slot_process_that_dies_loses_no_record(tmp_path):
    cands = [Candidate(id=i, problem_id="p", source="") for i in ("a", "b", "die", "c", "d", "e")]
    got: list[dict] = []
    _run_slot_processes([Slot({}), Slot({})], cands, {}, None, False, got.append, target=_judge_or_die)
    by_id = {r["id"]: r for r in got}
    assert sorted(by_id) == ["a", "b", "c", "d", "die", "e"] and len(got) == 6
    assert by_id["die"]["verdict"] == "skipped"
    assert by_id["die"]["reasons"] == ["harness-error: the worker slot's process stopped (exit code 3)"]
