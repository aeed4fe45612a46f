"""``kernlint check --confirm``: hand the static findings to the dynamic phase, per run target."""

from __future__ import annotations

import shlex
from pathlib import Path

from kernlint.config import Config
from kernlint.model import Finding, RunResult


def targets(result: RunResult, config: Config, run: str | None) -> dict[str, list[Finding]]:
    """What to run for which findings: one user command for all, or each file's own entry point."""
    command = run or config.confirm.get("command")
    if command:
        return {command: list(result.findings)}
    by_file: dict[str, list[Finding]] = {}
    for f in result.findings:
        by_file.setdefault(str(config.root / f.path), []).append(f)
    return by_file


def confirm_result(result: RunResult, config: Config, run: str | None, require_gpu: bool, timeout: float) -> None:
    """Replace the findings by their judged copies and add what the runs found that no rule predicted."""
    from kernlint.dynamic.confirm import confirm

    if not result.findings:
        result.notices.append("dynamic phase: nothing to confirm" + (" (the --run command was not started)" if run else ""))
        return
    judged: list[Finding] = []
    for target, findings in targets(result, config, run).items():
        argv = shlex.split(target) if run or config.confirm.get("command") else target
        outcome = confirm(findings, argv, require_gpu=require_gpu, cwd=str(config.root), timeout=timeout)
        judged.extend(outcome.findings)
        judged.extend(_relative(outcome.new_findings, config.root))
        result.notices.extend(outcome.notices)
        result.runs.extend(outcome.steps)
    result.findings = judged


def _relative(findings: list[Finding], root: Path) -> list[Finding]:
    for f in findings:
        try:
            f.path = Path(f.path).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return findings
