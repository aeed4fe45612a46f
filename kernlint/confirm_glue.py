"""``kernlint check --confirm``: run the kernels and hand the static findings to the dynamic phase.

Two modes (``--confirm-mode``, or ``[tool.kernlint.confirm] mode``):

- ``discover`` (the default): every checked file that defines a kernel and has an entry point
  (``run()`` or a ``__main__`` block) is run under the checkers, whether or not a static finding
  asks for it; what the runs see at lines no finding covers comes back as KL401/KL402/KL403;
- ``judge``: only files with findings are run, only under the tools their rules name (faster; a
  bug the static phase missed is not looked for).

``--run CMD`` (or ``[tool.kernlint.confirm] command``) replaces the per-file entry points by one
command for all findings; ``--run FILE.py`` runs that file with the current Python. A command
that does not start, or exits non-zero with nothing found to explain it, is an error (exit 2).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from kernlint.config import Config
from kernlint.model import FileError, Finding, Frontend, RunResult

MODES = ("discover", "judge")
_SHARED = re.compile(r"\balloc_shared\b")
_BARRIER = re.compile(r"\b(debug_barrier|sync_threads|__syncthreads)\b")


@dataclass
class Target:
    run: str | list[str]  # a file (its run() or __main__) or an argv
    label: str  # how errors name it
    findings: list[Finding] = field(default_factory=list)
    features: frozenset[str] = frozenset()


def features_of(path: Path, frontends: set[str] = frozenset()) -> frozenset[str]:
    """What decides the tools: shared memory (racecheck), barriers (synccheck), and no Triton
    kernel at all (``no-triton``: Triton's interpreter has nothing to run)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    found = {name for name, pattern in (("shared", _SHARED), ("barrier", _BARRIER)) if pattern.search(text)}
    if frontends and Frontend.TRITON.value not in frontends:
        found.add("no-triton")
    return frozenset(found)


def command_argv(command: str) -> list[str]:
    """A command line as argv; a lone ``FILE.py`` runs with the current Python, as a script."""
    if command.endswith(".py") and " " not in command.strip():
        return [sys.executable, os.path.abspath(command)]
    return shlex.split(command)


def targets(result: RunResult, config: Config, run: str | None, discover: bool) -> tuple[list[Target], list[str]]:
    """What to run for which findings: one user command for all, or each file's own entry point
    (with ``discover``, also every kernel file that has one). Returns (targets, notices)."""
    from kernlint.dynamic.interp_runner import has_entry_point

    kernel_files = sorted({k.path for k in result.kernels})
    frontends: dict[str, set[str]] = {}
    for k in result.kernels:
        frontends.setdefault(k.path, set()).add(getattr(k.frontend, "value", str(k.frontend)))
    command = run or config.confirm.get("command")
    if command:
        feats = [features_of(config.root / p, frontends.get(p, set())) for p in kernel_files]
        feats = frozenset().union(*feats) - ({"no-triton"} if any("no-triton" not in f for f in feats) else set()) \
            if feats else frozenset()
        return [Target(command_argv(command), f"--run {command}" if run else "[tool.kernlint.confirm] command",
                       list(result.findings), feats)], []
    by_file: dict[str, Target] = {}
    for f in result.findings:
        path = config.root / f.path
        by_file.setdefault(f.path, Target(str(path), f.path, features=features_of(path, frontends.get(f.path, set())))
                           ).findings.append(f)
    without_entry = []
    if discover:
        for rel in kernel_files:
            if rel in by_file:
                continue
            path = config.root / rel
            if has_entry_point(str(path)):
                by_file[rel] = Target(str(path), rel, features=features_of(path, frontends.get(rel, set())))
            else:
                without_entry.append(rel)
    notices = []
    if without_entry:
        notices.append(f"dynamic phase: {len(without_entry)} file(s) define kernels but have no run() or __main__ "
                       f"and were not run (give --run CMD): {', '.join(without_entry[:5])}"
                       + (", ..." if len(without_entry) > 5 else ""))
    return list(by_file.values()), notices


def confirm_result(result: RunResult, config: Config, run: str | None, require_gpu: bool, timeout: float,
                   mode: str | None = None) -> None:
    """Replace the findings by their judged copies and add what the runs found that no rule predicted."""
    from kernlint.dynamic.confirm import confirm

    mode = mode or config.confirm.get("mode") or "discover"
    if mode not in MODES:
        result.errors.append(FileError(str(config.source or "pyproject.toml"),
                                       f"[tool.kernlint.confirm] mode must be one of {', '.join(MODES)}, not {mode!r}"))
        return
    discover = mode == "discover"
    if not result.findings and not discover:
        result.notices.append("dynamic phase: nothing to confirm" + (" (the --run command was not started)" if run else ""))
        return
    todo, notices = targets(result, config, run, discover)
    result.notices.extend(notices)
    if not todo:
        result.notices.append("dynamic phase: no kernel file with an entry point to run")
        return
    def one(target: Target):
        return confirm(target.findings, target.run, require_gpu=require_gpu, cwd=str(config.root),
                       timeout=timeout, discover=discover, features=target.features)

    # files are independent: their runs (interpreter processes, or sanitizer processes sharing the
    # GPU) go side by side, a few at a time
    jobs = min(len(todo), os.cpu_count() or 1, 4)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        outcomes = list(pool.map(one, todo))
    judged: list[Finding] = []
    for target, outcome in zip(todo, outcomes):
        judged.extend(outcome.findings)
        judged.extend(_relative(outcome.new_findings, config.root))
        result.notices.extend(n for n in outcome.notices if n not in result.notices)
        result.runs.extend(outcome.steps)
        result.errors.extend(FileError(target.label, message) for message in outcome.errors)
    result.findings = judged


def _relative(findings: list[Finding], root: Path) -> list[Finding]:
    for f in findings:
        try:
            f.path = Path(f.path).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return findings
