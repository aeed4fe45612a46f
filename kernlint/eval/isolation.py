"""The sandbox of the executors that run problem and candidate code: fresh interpreter, scrubbed
environment, an empty private working directory (also HOME and TMPDIR), time limit, memory limit,
no network. Whatever happens inside (exception, segfault, abort, hang, memory blow-up, an exit
before answering, garbage on the channel) comes back as a classified result; nothing propagates
to the caller, and nothing an executor writes is taken as a verdict."""

from __future__ import annotations

import ctypes
import functools
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from kernlint.eval import wire



#: environment variables a worker keeps; everything else (tokens, credentials...) is dropped
KEEP_ENV = ("PATH", "LANG", "LC_ALL", "TERM", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH",
            "TRITON_INTERPRET", "TRITON_CACHE_DIR", "TRITON_PTXAS_PATH", "TRITON_LIBCUDA_PATH",
            "TORCHINDUCTOR_CACHE_DIR", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NVIDIA_VISIBLE_DEVICES",
            "CUDA_VISIBLE_DEVICES", "VIRTUAL_ENV", "CONDA_PREFIX", "TMPDIR")
#: proxies pointing at a closed local port: HTTP clients that honour them cannot reach anything
DEAD_PROXY = "http://127.0.0.1:9"


def nccl_env() -> dict[str, str]:
    """NCCL's NVLink multicast (NVLS) stays off in every process kernlint starts for a judge: the
    multi-GPU hosts it runs on turn it off, and a candidate that uses NCCL must not turn it back on
    by a scrubbed environment (a value the judge's own environment sets is kept)."""
    return {"NCCL_NVLS_ENABLE": os.environ.get("NCCL_NVLS_ENABLE", "0")}


def worker_env(extra: dict[str, str] | None = None, home: str | None = None) -> dict[str, str]:
    env = {k: os.environ[k] for k in KEEP_ENV if k in os.environ}
    pkg_root = str(Path(__file__).resolve().parents[2])
    # the worker must import what the parent imports (kernlint and its dependencies, wherever they are)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, os.environ.get("PYTHONPATH", "")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if "TRITON_INTERPRET" not in env and not _device_visible():
        env["TRITON_INTERPRET"] = "1"  # no GPU: Triton's interpreter runs the kernels on CPU tensors
    env["PYTHONHASHSEED"] = "0"
    env.update(nccl_env())
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        env[k] = DEAD_PROXY
    env["no_proxy"] = env["NO_PROXY"] = ""
    env["HF_HUB_OFFLINE"] = "1"
    env.setdefault("OMP_NUM_THREADS", "1")
    if home:
        env["HOME"] = home
    env.update(extra or {})
    return env


@functools.cache
def _device_visible() -> bool:
    """Whether the driver sees a GPU: asked once per process (the answer does not change in a batch)."""
    from kernlint.dynamic.confirm import cuda_available

    return cuda_available()


_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded here: a forked child must not run the loader
_PR_SET_PDEATHSIG = 1


def _limits(mem_limit_mb: int | None, cpu_seconds: int | None):
    parent = os.getpid()

    def apply():
        os.setsid()
        # an executor dies with the judge that started it: a judge killed mid-batch leaves no
        # candidate running (a hang would spin until its CPU limit)
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the judge died before the line above
            os._exit(1)
        if mem_limit_mb:
            lim = int(mem_limit_mb) * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        if cpu_seconds:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


#: threads one executor may run at once: far above what torch, Triton, CUDA and a compile pool
#: start, far below what exhausts a machine (RLIMIT_NPROC does not hold for root)
THREAD_LIMIT = 1024


def _rss_mb_and_threads(pid: int) -> tuple[float, int]:
    rss, threads = 0.0, 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return rss, threads


class Process:
    """One sandboxed executor (:mod:`kernlint.eval.worker`): requests go to its stdin, answers come
    back on the pipe that was its stdout; its prints and errors go to a separate log pipe.

    The sandbox: a fresh interpreter in its own session, the environment scrubbed
    (:func:`worker_env`), an empty working directory that is also its HOME and TMPDIR, nothing on
    its command line or in its environment that names a file of the judge's, address-space, CPU
    and core limits, watchdogs on its resident memory and thread count, the network blocked
    in-process (and proxies pointed at a closed port), and a candidate's writes outside its folder
    blocked (:func:`kernlint.eval.guards.block_writes_outside`).
    """

    def __init__(self, root: Path, name: str, env: dict[str, str] | None, mem_limit_mb: int | None,
                 cpu_seconds: int, rss_limit_mb: float | None = None, wrapper: list[str] | None = None) -> None:
        """``wrapper``: a command the executor runs under (ncu's argv, for a profile pass)."""
        self.name, self.rss_limit_mb = name, rss_limit_mb
        self.env, self.mem_limit_mb, self.cpu_seconds = env, mem_limit_mb, cpu_seconds
        self.dir = root / name
        self.dir.mkdir(mode=0o700)
        e = worker_env(env, home=str(self.dir))
        e["TMPDIR"] = str(self.dir)
        self.proc = subprocess.Popen([*(wrapper or []), sys.executable, "-m", "kernlint.eval.worker"], cwd=self.dir, env=e,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     preexec_fn=_limits(mem_limit_mb, cpu_seconds), bufsize=0)
        self.log: list[bytes] = []

        def drain():
            for chunk in iter(lambda: self.proc.stderr.read(4096), b""):
                if sum(map(len, self.log)) < 64 * 1024:
                    self.log.append(chunk)

        self.reader = threading.Thread(target=drain, daemon=True)
        self.reader.start()

    def request(self, header: dict, values: dict | None = None, texts: dict | None = None,
                deadline: float | None = None) -> tuple[dict, dict, dict]:
        """Send one request, wait for its answer (until ``deadline``, time.monotonic()); raises
        :class:`Gone` when the process died, closed its channel, sent garbage or ran out of time."""
        self.send(header, values, texts)
        return self.answer(deadline)

    def send(self, header: dict, values: dict | None = None, texts: dict | None = None) -> None:
        """Send a request without waiting (:meth:`answer` reads its answer): the process works
        on it while the caller does something else."""
        frame = wire.encode(header, values, texts)
        try:
            wire.write(self.proc.stdin.fileno(), frame)
        except (BrokenPipeError, OSError) as exc:
            raise Gone(self, "closed") from exc

    def answer(self, deadline: float | None = None) -> tuple[dict, dict, dict]:
        """The answer to the request sent last (see :meth:`request`)."""
        fd = self.proc.stdout.fileno()
        while not select.select([fd], [], [], 0.2)[0]:  # the watchdogs, while it works
            if deadline is not None and time.monotonic() > deadline:
                raise Gone(self, "timeout")
            rss, threads = _rss_mb_and_threads(self.proc.pid)
            if self.rss_limit_mb and rss > self.rss_limit_mb:
                raise Gone(self, "out-of-memory")
            if threads > THREAD_LIMIT:
                raise Gone(self, "thread-limit")
        try:
            return wire.read(fd, deadline)
        except wire.WireError as exc:
            raise Gone(self, str(exc)) from exc

    def stop(self) -> int | None:
        self.close_requests()
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()
        return self.proc.returncode

    def close_requests(self) -> None:
        """No more requests: the executor leaves its loop and exits (:meth:`stop` waits for it)."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def kill(self) -> int | None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        return self.proc.returncode

    def log_text(self) -> str:
        self.reader.join(timeout=2)
        return b"".join(self.log).decode(errors="replace")


#: why a watchdog stopped an executor that was still running
WATCHDOG_KINDS = ("timeout", "out-of-memory", "thread-limit")


class Gone(Exception):
    """An executor stopped answering: ``why`` is closed, a watchdog's kind or a frame error."""

    def __init__(self, process: Process, why: str) -> None:
        super().__init__(why)
        self.process, self.why = process, why

    def kind(self) -> tuple[str, str]:
        """(error_kind, detail) after the process was reaped."""
        proc = self.process.proc
        rc = proc.poll()
        if rc is None and self.why not in WATCHDOG_KINDS:
            try:  # it broke the channel and may be on its way out: let it finish
                rc = proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                rc = None
        killed = rc is None
        if killed:
            rc = self.process.kill()
        if self.why == "thread-limit":
            return self.why, f"more than {THREAD_LIMIT} threads at once; killed (exit code {rc})"
        if self.why in WATCHDOG_KINDS:
            return self.why, f"exit code {rc}"
        log = self.process.log_text()
        if not killed and rc == wire.HARNESS_FAILED:
            return "harness-error", f"exit code {rc}: the executor's own imports failed"
        if not killed and rc is not None and rc < 0:
            sig = signal.Signals(-rc).name
            return ("out-of-memory" if sig == "SIGKILL" else "crash"), f"exit code {rc}, signal {sig}"
        if "MemoryError" in log or "std::bad_alloc" in log:
            return "out-of-memory", f"exit code {rc}"
        if self.why != "closed":
            return "crash", f"exit code {rc}; it sent a frame the harness cannot read ({self.why})"
        return "crash", f"exit code {rc}; it exited without answering"


class Executors:
    """The reference and the candidate executor of one job, each a fresh :class:`Process` in its own
    folder of a private temporary directory that is removed with them."""

    def __init__(self, env: dict[str, str] | None, mem_limit_mb: int | None, cpu_seconds: int,
                 rss_limit_mb: float | None) -> None:
        self.params = self.sandbox(env, mem_limit_mb, cpu_seconds, rss_limit_mb)
        self.tmp = tempfile.TemporaryDirectory(prefix="kernlint-eval-")
        root = Path(self.tmp.name)
        os.chmod(root, 0o700)
        self.ref = Process(root, "reference", env, mem_limit_mb, cpu_seconds, rss_limit_mb)
        self.cand = Process(root, "candidate", env, mem_limit_mb, cpu_seconds, rss_limit_mb)

    @staticmethod
    def sandbox(env: dict[str, str] | None, *limits) -> tuple:
        """What a job asks of its executors' sandbox: a spare fits a job that asks the same."""
        return (tuple(sorted((env or {}).items())), *limits)

    def fresh(self) -> bool:
        """Both still waiting for their first request (neither died while it started)."""
        return self.ref.proc.poll() is None and self.cand.proc.poll() is None

    def close(self) -> None:
        live = [p for p in (self.ref, self.cand) if p.proc.poll() is None]
        for p in live:  # both exit at once, not one after the other
            p.close_requests()
        for p in live:
            p.stop()
        self.tmp.cleanup()


class Spares:
    """Executors started ahead of their job (one worker slot's): while one candidate is judged, the
    pair for the next one starts and imports torch, Triton and the executor's modules, so a job
    finds its executors ready. Each candidate still gets two fresh interpreters of its own, in the
    same sandbox as :func:`run_job` starts them with (nothing in a spare has seen an earlier job);
    a spare started with other limits or environment is discarded, not reused."""

    def __init__(self) -> None:
        self.next: Executors | None = None
        self.used = 0
        #: whether another job will follow this one (set by the batch): no spare for after the last
        self.more = True

    def take(self, env: dict[str, str] | None, mem_limit_mb: int | None, cpu_seconds: int,
             rss_limit_mb: float | None) -> tuple[Executors, bool]:
        """(the executors for this job, whether they were started ahead); starts the next pair."""
        args = (env, mem_limit_mb, cpu_seconds, rss_limit_mb)
        got, self.next = self.next, None
        ahead = got is not None and got.params == Executors.sandbox(*args) and got.fresh()
        if got is not None and not ahead:
            got.close()
        if ahead:
            self.used += 1
        else:
            got = Executors(*args)
        if self.more:
            self.next = Executors(*args)
        return got, ahead

    def close(self) -> None:
        if self.next is not None:
            self.next.close()
            self.next = None


def run_job(job: dict, timeout_s: float = 300.0, mem_limit_mb: int | None = 8192,
            env: dict[str, str] | None = None, rss_limit_mb: float | None = None,
            spares: Spares | None = None, cache=None, share=None) -> dict:
    """Judge one job (:mod:`kernlint.eval.judge`) with a reference and a candidate executor, each
    in its own sandbox; return the judge's result, or a classified failure (``error_kind``:
    timeout, crash, out-of-memory) when the candidate's process did not answer.

    ``mem_limit_mb`` caps each executor's address space (RLIMIT_AS). CUDA reserves far more
    virtual memory than it uses, so on GPU jobs pass ``None`` and rely on ``rss_limit_mb`` (a
    watchdog on the resident set) plus the device memory fraction the executors set.

    ``spares``: the worker slot's executors started ahead (:class:`Spares`); ``cache``: its values
    of the problem measured for earlier candidates (:class:`kernlint.eval.reuse.ProblemCache`);
    ``share``: the lock of the GPU it shares with other slots (:mod:`kernlint.eval.device_share`).
    """
    from kernlint.eval import judge

    t0 = time.monotonic()
    cpu = int(timeout_s) + 30
    if spares is not None:
        ex, ahead = spares.take(env, mem_limit_mb, cpu, rss_limit_mb)
    else:
        ex, ahead = Executors(env, mem_limit_mb, cpu, rss_limit_mb), False
    try:
        result = judge.judge_job(job, ex.ref, ex.cand, deadline=t0 + timeout_s, cache=cache, share=share)
        if result.get("error_kind") == "harness-error":  # once more, with executors of its own
            ex.close()
            ex, ahead = Executors(env, mem_limit_mb, cpu, rss_limit_mb), False
            result = judge.judge_job(job, ex.ref, ex.cand, deadline=time.monotonic() + timeout_s, cache=cache,
                                     share=share)
            result["retried"] = "an executor's own imports failed the first time"
    finally:
        ex.close()
    result["returncode"] = ex.cand.proc.returncode
    result["executors_started_ahead"] = ahead
    result["wall_s"] = round(time.monotonic() - t0, 3)
    result["log_tail"] = ex.cand.log_text()[-2000:]
    return result
