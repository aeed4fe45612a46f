"""Run one job in its own subprocess: fresh interpreter, scrubbed environment, temporary working
directory, time limit, memory limit, no network. Whatever happens inside (exception, segfault,
abort, hang, memory blow-up) comes back as a result dict; nothing propagates to the caller."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path



#: environment variables a worker keeps; everything else (tokens, credentials...) is dropped
KEEP_ENV = ("PATH", "LANG", "LC_ALL", "TERM", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH",
            "TRITON_INTERPRET", "TRITON_CACHE_DIR", "TRITON_PTXAS_PATH", "TRITON_LIBCUDA_PATH",
            "TORCHINDUCTOR_CACHE_DIR", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NVIDIA_VISIBLE_DEVICES",
            "CUDA_VISIBLE_DEVICES", "VIRTUAL_ENV", "CONDA_PREFIX", "TMPDIR")
#: proxies pointing at a closed local port: HTTP clients that honour them cannot reach anything
DEAD_PROXY = "http://127.0.0.1:9"


def worker_env(extra: dict[str, str] | None = None, home: str | None = None) -> dict[str, str]:
    env = {k: os.environ[k] for k in KEEP_ENV if k in os.environ}
    pkg_root = str(Path(__file__).resolve().parents[2])
    # the worker must import what the parent imports (kernlint and its dependencies, wherever they are)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, os.environ.get("PYTHONPATH", "")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if "TRITON_INTERPRET" not in env:
        from kernlint.dynamic.confirm import cuda_available

        if not cuda_available():
            env["TRITON_INTERPRET"] = "1"  # no GPU: Triton's interpreter runs the kernels on CPU tensors
    env["PYTHONHASHSEED"] = "0"
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        env[k] = DEAD_PROXY
    env["no_proxy"] = env["NO_PROXY"] = ""
    env["HF_HUB_OFFLINE"] = "1"
    env.setdefault("OMP_NUM_THREADS", "1")
    if home:
        env["HOME"] = home
    env.update(extra or {})
    return env


def _limits(mem_limit_mb: int | None, cpu_seconds: int | None):
    def apply():
        os.setsid()
        if mem_limit_mb:
            lim = int(mem_limit_mb) * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        if cpu_seconds:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_job(job: dict, timeout_s: float = 300.0, mem_limit_mb: int | None = 8192,
            env: dict[str, str] | None = None, rss_limit_mb: float | None = None) -> dict:
    """Run ``job`` in ``python -m kernlint.eval.worker``; return the worker's result, or a
    classified failure (``error_kind``: timeout, crash, out-of-memory) if it did not finish.

    ``mem_limit_mb`` caps the address space (RLIMIT_AS). CUDA reserves far more virtual memory
    than it uses, so on GPU jobs pass ``None`` and rely on ``rss_limit_mb`` (a watchdog on the
    resident set) plus the device memory fraction the worker sets.
    """
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kernlint-eval-") as tmp:
        tmpdir = Path(tmp)
        (tmpdir / "home").mkdir()
        job_path, result_path = tmpdir / "job.json", tmpdir / "result.json"
        job_path.write_text(json.dumps(job))
        run_dir = tmpdir / "work"
        run_dir.mkdir()
        e = worker_env(env, home=str(tmpdir / "home"))
        e["TMPDIR"] = str(tmpdir)
        cmd = [sys.executable, "-m", "kernlint.eval.worker", str(job_path), str(result_path)]
        proc = subprocess.Popen(cmd, cwd=run_dir, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                preexec_fn=_limits(mem_limit_mb, int(timeout_s) + 30))
        kind = None
        out_chunks: list[bytes] = []
        import threading

        def drain():
            for chunk in iter(lambda: proc.stdout.read(4096), b""):
                if sum(map(len, out_chunks)) < 64 * 1024:
                    out_chunks.append(chunk)

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        while True:
            try:
                proc.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() - t0 > timeout_s:
                kind = "timeout"
            elif rss_limit_mb and _rss_mb(proc.pid) > rss_limit_mb:
                kind = "out-of-memory"
            if kind:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
                break
        reader.join(timeout=2)
        output = b"".join(out_chunks).decode(errors="replace")
        result: dict = {}
        if result_path.exists():
            try:
                result = json.loads(result_path.read_text())
            except json.JSONDecodeError:
                result = {}
        rc = proc.returncode
        if kind is None and result.get("stage") != "done":
            if rc is not None and rc < 0:
                sig = signal.Signals(-rc).name
                kind = "out-of-memory" if sig == "SIGKILL" else "crash"
                result["signal"] = sig
            elif "MemoryError" in output or "std::bad_alloc" in output:
                kind = "out-of-memory"
            else:
                kind = "crash"
        if kind:
            last = result.get("stage", "start")
            result.update(status="error", error_kind=kind,
                          error=f"{kind} in stage {last!r} (exit code {rc})" + (
                              f", signal {result['signal']}" if "signal" in result else ""))
            result.setdefault("stage_final", last)
        result["returncode"] = rc
        result["wall_s"] = round(time.monotonic() - t0, 3)
        result["log_tail"] = output[-2000:]
        return result
