"""What the pre-commit hook's environment costs: install time and size, from a fresh clone.

Usage: python benchmarks/hook_install.py [--repo PATH] [--baseline REV] [--repeat N] [--out DIR]

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
   kernlint's wheel alone, and the first lint in the finished environment; then each core dependency
   alone (of HEAD), with what it pulls in.

With ``--repeat N`` steps 2 to 5 run N times, the revisions taking turns within each round; the table
shows the median of each step's wall and CPU seconds.

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
import statistics
import tomllib
from collections import defaultdict
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
    ap.add_argument("--repeat", type=int, default=1, help="rounds of measurements (medians are reported)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args()
    load_start, loads = os.getloadavg()[0], []
    # (step, revision) -> one (wall s, CPU s, MB or None) per round
    results: dict[tuple[str, str], list[tuple[float, float, float | None]]] = defaultdict(list)
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
        for round_ in range(args.repeat):
            for source, source_env in (("from the package index", env), ("from downloaded wheels", offline)):
                for rev in revisions:
                    hook_runs(rev, user, tmp / f"{round_}-{rev.label}-{source.replace(' ', '-')}", source_env, source,
                              results)
                for rev in revisions:
                    venv = tmp / f"{round_}-{rev.label}-{source.replace(' ', '-')}" / "venv"
                    checked([sys.executable, "-m", "virtualenv", "-q", str(venv)], env=source_env)
                    wall, cpu = checked([str(venv / "bin" / "pip"), "install", "-q", str(rev.path)], env=source_env)
                    results[(f"fresh virtualenv, `pip install CLONE` {source}", rev.label)].append((wall, cpu, du_mb(venv)))
            for rev in revisions:
                pieces(rev, user, tmp / f"{round_}-{rev.label}-pieces", offline, results)
            each_dependency(revisions[-1], tmp / f"{round_}-dependencies", offline, results)
            loads.append(os.getloadavg()[0])
        pip = tmp / f"0-{revisions[-1].label}-pieces" / "venv" / "bin" / "pip"
        packages = subprocess.run([str(pip), "list", "--format=freeze"], capture_output=True, text=True,
                                  env=env).stdout.split()
        pip_version = subprocess.run([str(pip), "--version"], capture_output=True, text=True, env=env).stdout.split()[1]
    report(args, revisions, results, packages, pip_version, load_start, loads)
    return 0


def hook_runs(rev: Revision, user: Path, work: Path, env: dict, source: str, results: dict) -> None:
    """The first and second ``pre-commit run`` of the hook at ``rev``, with ``env`` for pip."""
    work.mkdir()
    env = {**env, "PRE_COMMIT_HOME": str(work / "pc-home")}
    (user / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {rev.path}\n    rev: {rev.sha}\n    hooks:\n      - id: kernlint\n")
    run = [sys.executable, "-m", "pre_commit", "run", "--all-files"]
    first = checked(run, ok=(1,), cwd=user, env=env)  # 1: the kernel's finding
    second = checked(run, ok=(1,), cwd=user, env=env)
    size = sum(du_mb(p) for p in (work / "pc-home").glob("repo*/py_env-*"))
    results[(f"{FIRST_RUN} {source}", rev.label)].append((*first, size))
    results[(f"`pre-commit run`, second run (environment reused) {source}", rev.label)].append((*second, None))


def pieces(rev: Revision, user: Path, work: Path, env: dict, results: dict) -> None:
    """The install of step 4 taken apart: each piece timed on its own, from the downloaded wheels."""
    work.mkdir()
    venv, pip = work / "venv", str(work / "venv" / "bin" / "pip")

    def piece(step, cmd, ok=(0,), size=None, **kw):
        wall, cpu = checked(cmd, ok=ok, env=env, **kw)
        results[(f"piece: {step}", rev.label)].append((wall, cpu, size() if size else None))

    piece("`python -m virtualenv` (what pre-commit creates)", [sys.executable, "-m", "virtualenv", "-q", str(venv)])
    # as pip fills its isolated build environment: a subprocess, without byte-compiling
    piece("the build backend's requirements alone (`pip install --no-compile --prefix`, as for a build environment)",
          [pip, "install", "-q", "--no-compile", "--ignore-installed", "--prefix", str(work / "build-env"),
           *rev.build_requires], size=lambda: du_mb(work / "build-env"))
    piece("pip's isolated build of kernlint (`pip wheel --no-deps CLONE`: the build environment, then the "
          "backend's hooks)", [pip, "wheel", "-q", "--no-deps", "-w", str(work / "dist"), str(rev.path)])
    piece("the dependencies alone (`pip install` of the core's dependencies)", [pip, "install", "-q", *rev.dependencies],
          size=lambda: du_mb(venv))
    (wheel,) = (work / "dist").glob("kernlint-*.whl")
    piece("kernlint's wheel alone (`pip install --no-deps`)", [pip, "install", "-q", "--no-deps", str(wheel)])
    piece("the first lint (`kernlint check`, the hook's file)", [str(venv / "bin" / "kernlint"), "check", "add.py"],
          ok=(1,), cwd=user)


def each_dependency(rev: Revision, work: Path, env: dict, results: dict) -> None:
    """Which dependency the install's seconds and megabytes go to: each one alone (with what it pulls
    in) into a fresh virtualenv, from the downloaded wheels."""
    for i, requirement in enumerate(rev.dependencies):
        venv = work / str(i)
        checked([sys.executable, "-m", "virtualenv", "-q", str(venv)], env=env)
        empty = du_mb(venv)
        wall, cpu = checked([str(venv / "bin" / "pip"), "install", "-q", requirement], env=env)
        results[(f"dependency: `pip install {requirement}` alone (and what it pulls in)", rev.label)].append(
            (wall, cpu, du_mb(venv) - empty))


def report(args, revisions: list[Revision], results: dict, packages: list[str], pip_version: str,
           load_start: float, loads: list[float]) -> None:
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_end = os.getloadavg()[0]
    head = revisions[-1].label
    results = {key: median(rounds) for key, rounds in results.items()}
    firsts = {step[len(FIRST_RUN) + 1:]: value for (step, label), value in results.items()
              if label == head and step.startswith(FIRST_RUN)}
    ok = all(wall < GOAL_S and mb < GOAL_MB for wall, _, mb in firsts.values())
    measured = "; ".join(f"{source}: {wall:.1f} s wall, {cpu:.1f} CPU-s, {mb:.0f} MB"
                         for source, (wall, cpu, mb) in firsts.items())
    commits = ", ".join(f"{r.label} = {r.sha[:7]} (build backend `{r.backend}`)" for r in revisions)
    versions = f"pip {pip_version} (what virtualenv installs), " + ", ".join(f"{n} {v}" for n, v in tool_versions())
    lines = [
        "# The pre-commit hook's environment: install time and size",
        "",
        f"Measured {date} by `python benchmarks/hook_install.py"
        + (f" --baseline {args.baseline}" if args.baseline else "") + (f" --repeat {args.repeat}" if args.repeat > 1 else "")
        + f"` from fresh `git clone`s: {commits}; "
        + (f"medians of {args.repeat} rounds; " if args.repeat > 1 else "") +
        f"{platform.python_implementation()} {platform.python_version()}, {versions}; {os.cpu_count()} CPUs, "
        f"load average {load_start:.1f} when it started, {max(loads):.1f} at most after a round, {load_end:.1f} "
        "when it finished; pip's cache disabled. Goal: under 15 s and 200 MB for the hook's first run. "
        + ("Met" if ok else "**Not met**") + f" ({head}, first run {measured}). CPU seconds are what the "
        "install costs with a core to itself; with a load average near or above the number of CPUs, wall "
        "time also measures waiting for other jobs.",
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

    return [(name, version(name)) for name in ("virtualenv", "pre-commit")]


def median(rounds: list[tuple]) -> tuple:
    wall, cpu, mb = zip(*rounds)
    return statistics.median(wall), statistics.median(cpu), mb[-1]


if __name__ == "__main__":
    raise SystemExit(main())
