"""z3 checks are capped by their thread's CPU time (kernlint.engine.cpu_cap), so that an answer
does not follow the machine's load."""

import threading

import pytest
import z3

from kernlint.engine import cpu_cap, query

pytestmark = pytest.mark.skipif(not cpu_cap.available(), reason="no thread CPU clock on this platform")

# z3 does not factor: this runs until a cap or its budget stops it
BUDGET = 1_000_000


def _hard(ctx):
    solver = z3.SimpleSolver(ctx=ctx)
    x, y = z3.Int("x", ctx), z3.Int("y", ctx)
    solver.add(x * y == 10403, x > 1, y > 1)
    return solver


def _work(solver) -> int:
    return solver.statistics().get_key_value("rlimit count")


def test_a_check_stops_once_its_cpu_time_is_spent():
    ctx = z3.Context()
    solver = _hard(ctx)
    solver.set("rlimit", 50 * BUDGET)
    assert cpu_cap.check(solver, ctx, 0.001) == z3.unknown
    assert _work(solver) < 50 * BUDGET  # the cap stopped it, not the budget


def test_the_thread_cpu_clock_decides(monkeypatch):
    # a clock that never advances (a thread the machine's load keeps off the cores): no stop, however
    # long the check takes by the wall clock
    monkeypatch.setattr(cpu_cap, "cpu_seconds", lambda clock: 0.0)
    ctx = z3.Context()
    solver = _hard(ctx)
    solver.set("rlimit", BUDGET)
    assert cpu_cap.check(solver, ctx, 0.001) == z3.unknown
    assert _work(solver) >= BUDGET  # ran to its budget


def test_checks_of_other_threads_are_capped_each():
    results = {}

    def run(name):
        ctx = z3.Context()
        solver = _hard(ctx)
        solver.set("rlimit", 50 * BUDGET)
        results[name] = (cpu_cap.check(solver, ctx, 0.001), _work(solver))

    threads = [threading.Thread(target=run, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == z3.unknown and work < 50 * BUDGET for r, work in results.values())


def test_a_late_interrupt_does_not_reach_the_next_check():
    # the context of a finished check, interrupted afterwards: its next check is not cut short
    ctx = z3.Context()
    solver = z3.SimpleSolver(ctx=ctx)
    x = z3.Int("x", ctx)
    solver.add(x > 3)
    assert cpu_cap.check(solver, ctx, 1.0) == z3.sat
    ctx.interrupt()
    assert cpu_cap.check(solver, ctx, 1.0) == z3.sat


def test_the_engine_asks_under_the_cpu_cap(monkeypatch):
    capped = []
    real = cpu_cap.check
    monkeypatch.setattr(cpu_cap, "check", lambda s, c, limit: capped.append(limit) or real(s, c, limit))
    x = z3.Int("x")
    result, witness = query.Solving().solve([x >= 0], x > 5)
    assert result == z3.sat and witness.eval(x).as_long() > 5
    assert capped and all(limit == query.TIMEOUT_MS / 1000 for limit in capped)


def test_a_forked_child_caps_its_own_checks():
    import multiprocessing

    # the parent's watchdog is running (a check made here first); the child must start its own
    ctx = z3.Context()
    solver = _hard(ctx)
    solver.set("rlimit", BUDGET)
    cpu_cap.check(solver, ctx, 0.001)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        result, work = pool.apply(_capped_in_child)
    assert result == "unknown" and work < 50 * BUDGET


def _capped_in_child():
    ctx = z3.Context()
    solver = _hard(ctx)
    solver.set("rlimit", 50 * BUDGET)
    return str(cpu_cap.check(solver, ctx, 0.001)), _work(solver)
