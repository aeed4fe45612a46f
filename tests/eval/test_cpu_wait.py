"""The executor's wait for a CPU, read from the kernel, and what of it the judge's clock drops."""
import os
import subprocess
import sys
import time

import pytest

from kernlint.eval import cpu_wait
from kernlint.eval.cpu_wait import Sample, waited_ms

SPIN = "import time\nt = time.perf_counter()\nwhile time.perf_counter() - t < {s}: pass\n"


def test_wait_is_dropped_only_up_to_the_time_off_cpu():
    before = Sample(wait_ns=0, cpu_ns=0)
    # honest and loaded: 10 ms of wall, 4 on a CPU, 6 waiting for one
    assert waited_ms(before, Sample(wait_ns=6_000_000, cpu_ns=4_000_000), 10.0) == pytest.approx(6.0)
    # the executor's own threads kept the cores busy while its main thread waited: nothing dropped
    assert waited_ms(before, Sample(wait_ns=6_000_000, cpu_ns=14_000_000), 10.0) == 0.0
    # no counters: nothing dropped
    assert waited_ms(None, Sample(0, 0), 10.0) == 0.0
    assert waited_ms(before, None, 10.0) == 0.0


def test_no_counters_for_a_process_that_is_gone():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    assert cpu_wait.sample(p.pid) is None


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_a_process_sharing_its_core_is_seen_waiting():
    cpu = sorted(os.sched_getaffinity(0))[0]
    spin = [sys.executable, "-c", SPIN.format(s=1.5)]
    first = subprocess.Popen(spin)
    if cpu_wait.sample(first.pid) is None:
        first.kill()
        pytest.skip("the kernel reports no scheduler statistics here")
    hogs = [subprocess.Popen(spin) for _ in range(2)]
    try:
        for p in (first, *hogs):
            os.sched_setaffinity(p.pid, {cpu})
        time.sleep(0.2)
        before, t0 = cpu_wait.sample(first.pid), time.perf_counter()
        time.sleep(0.6)
        wall = (time.perf_counter() - t0) * 1e3
        waited = waited_ms(before, cpu_wait.sample(first.pid), wall)
    finally:
        for p in (first, *hogs):
            p.kill()
            p.wait()
    # three spinners on one core: each runs about a third of the time and waits the rest
    assert 0.3 * wall < waited < wall
