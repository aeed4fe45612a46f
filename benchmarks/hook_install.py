"""What the pre-commit hook's environment costs: install time and size, from a fresh clone.

Usage: python benchmarks/hook_install.py [--repo PATH] [--baseline REV] [--out DIR]

1. ``git clone`` the repository (its committed HEAD) into a temporary folder, and with ``--baseline``
   a second clone checked out at REV: every step below runs for both, one after the other, so the
   two are compared on the same machine at the same time (ratios, not absolute numbers, are what
   carries over to another machine);
2. in a new git repository holding one kernel, a ``.pre-commit-config.yaml`` naming the clone and
   its commit as ``rev:`` (what a user writes, with the repository URL), then
   ``pre-commit run --all-files`` with an empty ``PRE_COMMIT_HOME``: the first run (creating the
   hook environment: kernlint and its dependencies installed, then the lint), and a second run
   (environment reused); the size of the hook environment on disk;
3. the same install without pre-commit: a fresh virtualenv and ``pip install CLONE``;
4. steps 2 and 3 again with every wheel downloaded beforehand (``pip download`` into a folder, then
   ``PIP_NO_INDEX=1 PIP_FIND_LINKS=folder``): the install alone, without the index's latency;
5. the pieces of that install, each on its own (from the downloaded wheels): the virtualenv
   pre-commit creates, pip's isolated build of kernlint (installing the build backend into a build
   environment, then the backend's hooks), the build environment alone, the dependencies alone,
   kernlint's wheel alone, and the first lint in the finished environment.

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
import tomllib
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S, GOAL_MB = 15.0, 200.0
FIRST_RUN = "`pre-commit run`, first run (creates the hook environment, then lints)"


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


def checked(cmd, ok=(0,), **kw) -> tuple[float, float]:
    wall, cpu, proc = timed(cmd, **kw)
    if proc.returncode not in ok:
        print(" ".join(map(str, cmd)), proc.stdout, proc.stderr, sep="\n", file=sys.stderr)
        raise SystemExit(2)
    return wall, cpu


class Revision:
    """One clone of the repository at one commit, and what its pyproject.toml asks pip for."""

    def __init__(self, label: str, path: Path):
        self.label, self.path = label, path
        self.sha = git(path, "rev-parse", "HEAD")
        project = tomllib.loads((path / "pyproject.toml").read_text())
        self.build_requires = project["build-system"]["requires"]
        self.backend = project["build-system"]["build-backend"]
        self.dependencies = project["project"]["dependencies"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=ROOT)
    ap.add_argument("--baseline", help="a commit to measure side by side with HEAD (e.g. the one before a change)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args()
    load_start = os.getloadavg()[0]
    results: dict[tuple[str, str], tuple[float, float, float | None]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run(["git", "clone", "-q", str(args.repo), str(tmp / "head")], check=True)
        revisions = []
        if args.baseline:
            subprocess.run(["git", "clone", "-q", str(args.repo), str(tmp / "base")], check=True)
            git(tmp / "base", "checkout", "-q", args.baseline)
            revisions.append(Revision("before", tmp / "base"))
        revisions.append(Revision("after" if args.baseline else "HEAD", tmp / "head"))
        user = tmp / "user"
        user.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=user, check=True)
        shutil.copy(ROOT / "fixtures" / "triton" / "vector_add_bad.py", user / "add.py")
        subprocess.run(["git", "add", "."], cwd=user, check=True)
        env = {**os.environ, "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        wheels = tmp / "wheels"
        for rev in revisions:
            checked([sys.executable, "-m", "pip", "download", "-q", "-d", str(wheels), str(rev.path), *rev.build_requires],
                    env=env)
        offline = {**env, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
        for source, source_env in (("from the package index", env), ("from downloaded wheels", offline)):
            for rev in revisions:
                work = tmp / f"{rev.label}-{source.replace(' ', '-')}"
                work.mkdir()
                hook_runs(rev, user, work, source_env, source, results)
            for rev in revisions:
                work = tmp / f"{rev.label}-{source.replace(' ', '-')}"
                venv = work / "venv"
                checked([sys.executable, "-m", "virtualenv", "-q", str(venv)], env=source_env)
                wall, cpu = checked([str(venv / "bin" / "pip"), "install", "-q", str(rev.path)], env=source_env)
                results[(f"fresh virtualenv, `pip install CLONE` {source}", rev.label)] = (wall, cpu, du_mb(venv))
        for rev in revisions:
            pieces(rev, user, tmp / f"{rev.label}-pieces", offline, results)
        packages = subprocess.run([str(tmp / f"{revisions[-1].label}-from-downloaded-wheels" / "venv" / "bin" / "pip"),
                                   "list", "--format=freeze"], capture_output=True, text=True, env=env).stdout.split()
    report(args, revisions, results, packages, load_start)
    return 0


def hook_runs(rev: Revision, user: Path, work: Path, env: dict, source: str, results: dict) -> None:
    """The first and second ``pre-commit run`` of the hook at ``rev``, with ``env`` for pip."""
    env = {**env, "PRE_COMMIT_HOME": str(work / "pc-home")}
    (user / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {rev.path}\n    rev: {rev.sha}\n    hooks:\n      - id: kernlint\n")
    run = [sys.executable, "-m", "pre_commit", "run", "--all-files"]
    first = checked(run, ok=(1,), cwd=user, env=env)  # 1: the kernel's finding
    second = checked(run, ok=(1,), cwd=user, env=env)
    size = sum(du_mb(p) for p in (work / "pc-home").glob("repo*/py_env-*"))
    results[(f"{FIRST_RUN} {source}", rev.label)] = (*first, size)
    results[(f"`pre-commit run`, second run (environment reused) {source}", rev.label)] = (*second, None)


def pieces(rev: Revision, user: Path, work: Path, env: dict, results: dict) -> None:
    """The install of step 4 taken apart: each piece timed on its own, from the downloaded wheels."""
    work.mkdir()
    venv, pip = work / "venv", str(work / "venv" / "bin" / "pip")
    results[("piece: `python -m virtualenv` (what pre-commit creates)", rev.label)] = (
        *checked([sys.executable, "-m", "virtualenv", "-q", str(venv)], env=env), None)
    results[(f"piece: the build environment alone (`pip install {' '.join(rev.build_requires)}` into a prefix)",
             rev.label)] = (*checked([pip, "install", "-q", "--ignore-installed", "--prefix", str(work / "build-env"),
                                      *rev.build_requires], env=env), du_mb(work / "build-env"))
    results[(f"piece: pip's isolated build of kernlint (`pip wheel --no-deps CLONE`: build environment, then "
             f"the hooks of `{rev.backend}`)", rev.label)] = (
        *checked([pip, "wheel", "-q", "--no-deps", "-w", str(work / "dist"), str(rev.path)], env=env), None)
    results[("piece: the dependencies alone (`pip install` of the core's dependencies)", rev.label)] = (
        *checked([pip, "install", "-q", *rev.dependencies], env=env), du_mb(venv))
    (wheel,) = (work / "dist").glob("kernlint-*.whl")
    results[("piece: kernlint's wheel alone (`pip install --no-deps`)", rev.label)] = (
        *checked([pip, "install", "-q", "--no-deps", str(wheel)], env=env), None)
    lint = [str(venv / "bin" / "kernlint"), "check", "add.py"]
    results[("piece: the first lint (`kernlint check`, the hook's file)", rev.label)] = (
        *checked(lint, ok=(1,), cwd=user, env=env), None)


def report(args, revisions: list[Revision], results: dict, packages: list[str], load_start: float) -> None:
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_end = os.getloadavg()[0]
    head = revisions[-1].label
    firsts = {step: value for (step, label), value in results.items() if label == head and step.startswith(FIRST_RUN)}
    best_step, (wall, cpu, mb) = min(firsts.items(), key=lambda kv: kv[1][0])
    ok = wall < GOAL_S and mb < GOAL_MB
    commits = ", ".join(f"{r.label} = {r.sha[:7]} (build backend `{r.backend}`)" for r in revisions)
    versions = " ".join(f"{name} {v}" for name, v in tool_versions())
    lines = [
        "# The pre-commit hook's environment: install time and size",
        "",
        f"Measured {date} by `python benchmarks/hook_install.py"
        + (f" --baseline {args.baseline}" if args.baseline else "") + f"` from fresh `git clone`s: {commits}; "
        f"{platform.python_implementation()} {platform.python_version()}, {versions}; {os.cpu_count()} CPUs, "
        f"load average {load_start:.1f} when it started and {load_end:.1f} when it finished; pip's cache "
        "disabled. Goal: under 15 s and 200 MB for the first hook run. "
        + ("Met" if ok else "**Not met**") + f" on wall time ({best_step}: {wall:.1f} s, {mb:.0f} MB); "
        f"its CPU time, what the install costs with a core to itself, was {cpu:.1f} s. With a load average "
        "near or above the number of CPUs, wall time mostly measures waiting for other jobs.",
        "",
    ]
    labels = [r.label for r in revisions]
    steps = list(dict.fromkeys(step for step, _ in results))
    header = "| step | " + " | ".join(f"{label} wall s | {label} CPU s | {label} MB" for label in labels)
    if len(labels) == 2:
        header += " | after / before, wall | after / before, CPU |"
    lines += [header, "| --- |" + " ---: |" * (3 * len(labels) + 2 * (len(labels) == 2))]
    for step in steps:
        cells = []
        for label in labels:
            w, c, m = results.get((step, label), (None, None, None))
            cells += ["" if w is None else f"{w:.1f}", "" if c is None else f"{c:.1f}", "" if m is None else f"{m:.0f}"]
        if len(labels) == 2:
            before, after = (results.get((step, label)) for label in labels)
            cells += [f"{after[i] / before[i]:.2f}" if before and after and before[i] else "" for i in (0, 1)]
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    lines += ["", f"Installed packages ({head}, {len(packages)}): " + ", ".join(f"`{p}`" for p in packages), ""]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "hook_install.md").write_text("\n".join(lines))
    print("\n".join(lines))


def tool_versions() -> list[tuple[str, str]]:
    from importlib.metadata import version

    return [(name, version(name)) for name in ("pip", "virtualenv", "pre-commit")]


if __name__ == "__main__":
    raise SystemExit(main())
