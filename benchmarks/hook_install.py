"""What the pre-commit hook's environment costs: install time and size, from a fresh clone.

Usage: python benchmarks/hook_install.py [--repo PATH] [--out DIR]

1. ``git clone`` the repository (its committed HEAD) into a temporary folder;
2. in a new git repository holding one kernel, a ``.pre-commit-config.yaml`` naming the clone and
   its commit as ``rev:`` (what a user writes, with the repository URL), then
   ``pre-commit run --all-files`` with an empty ``PRE_COMMIT_HOME``: the first run (creating the
   hook environment: kernlint and its dependencies installed, then the lint), and a second run
   (environment reused); the size of the hook environment on disk;
3. the same install without pre-commit: a fresh virtualenv and ``pip install CLONE``;
4. steps 2 and 3 again with every wheel downloaded beforehand (``pip download`` into a folder, then
   ``PIP_NO_INDEX=1 PIP_FIND_LINKS=folder``): the install alone, without the index's latency.

pip's download cache is disabled, so every run fetches its wheels from the configured package index.
Both wall and CPU seconds (user + system of the child processes) are reported: on a shared machine
the wall time includes waiting for other jobs and for the index. Results go to
``DIR/hook_install.md`` with the date.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S, GOAL_MB = 15.0, 200.0


def du_mb(path: Path) -> float:
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            p = Path(dirpath) / name
            if not p.is_symlink():
                total += p.stat().st_size
    return total / 2**20


def timed(cmd, **kw) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall seconds, CPU seconds of the children, the finished process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=ROOT)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args()
    rows, packages = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        clone = tmp / "kernlint"
        subprocess.run(["git", "clone", "-q", str(args.repo), str(clone)], check=True)
        commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        user = tmp / "user"
        user.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=user, check=True)
        shutil.copy(ROOT / "fixtures" / "triton" / "vector_add_bad.py", user / "add.py")
        subprocess.run(["git", "add", "."], cwd=user, check=True)
        env = {**os.environ, "PRE_COMMIT_HOME": str(tmp / "pc-home"), "PIP_NO_CACHE_DIR": "1",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        wheels = tmp / "wheels"
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", str(wheels), str(clone), "setuptools>=70.1"],
                       check=True, env={**os.environ, "PIP_NO_CACHE_DIR": "1"}, capture_output=True)
        offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
        for label, extra_env in (("from the package index", {}), ("from downloaded wheels", offline)):
            rows += measure(clone, user, tmp / label.replace(" ", "-"), {**env, **extra_env}, label, packages)
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()[0]
    best = min((r for r in rows if r[3] is not None and "pre-commit" in r[0]), key=lambda r: r[1])
    ok = best[1] < GOAL_S and best[3] < GOAL_MB
    lines = [
        "# The pre-commit hook's environment: install time and size",
        "",
        f"Measured {date} by `python benchmarks/hook_install.py` from a fresh `git clone` of commit {commit}; "
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{load:.1f} when it finished; pip's cache disabled. Goal: under 15 s and 200 MB for the first hook run. "
        + ("Met" if ok else "**Not met**") + f" on wall time ({best[0]}: {best[1]:.1f} s, {best[3]:.0f} MB); "
        f"its CPU time, what the install costs with a core to itself, was {best[2]:.1f} s. With a load average "
        "above the number of CPUs, wall time mostly measures waiting for other jobs.",
        "",
        "| step | wall seconds | CPU seconds | size on disk (MB) |",
        "| --- | ---: | ---: | ---: |",
        *(f"| {name} | {wall:.1f} | {cpu:.1f} | {'' if mb is None else f'{mb:.0f}'} |" for name, wall, cpu, mb in rows),
        "",
        f"Installed packages ({len(packages)}): " + ", ".join(f"`{p}`" for p in packages),
        "",
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "hook_install.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


def measure(clone: Path, user: Path, work: Path, env: dict, label: str, packages: list[str]) -> list[tuple]:
    """The first and second hook run and a plain virtualenv install, with ``env`` for pip."""
    work.mkdir()
    env = {**env, "PRE_COMMIT_HOME": str(work / "pc-home")}
    rows = []
    sha = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    (user / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {clone}\n    rev: {sha}\n    hooks:\n      - id: kernlint\n")
    run = [sys.executable, "-m", "pre_commit", "run", "--all-files"]
    *first, proc = timed(run, cwd=user, env=env)
    if proc.returncode != 1 or "KL101" not in proc.stdout:
        print(proc.stdout, proc.stderr, file=sys.stderr)
        raise SystemExit(2)
    *second, _ = timed(run, cwd=user, env=env)
    size = sum(du_mb(p) for p in (work / "pc-home").glob("repo*/py_env-*"))
    rows.append((f"`pre-commit run` {label}, first run (creates the hook environment, then lints)", *first, size))
    rows.append((f"`pre-commit run` {label}, second run (environment reused)", *second, None))

    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    *t_venv_pip, proc = timed([str(venv / "bin" / "pip"), "install", "-q", str(clone)], env=env)
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        raise SystemExit(2)
    packages[:] = subprocess.run([str(venv / "bin" / "pip"), "list", "--format=freeze"], capture_output=True,
                              text=True, env=env).stdout.split()
    rows.append((f"fresh virtualenv, `pip install CLONE` {label}", *t_venv_pip, du_mb(venv)))
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
