"""``kernlint check --ir``: compile the kernels the source phase discovered and add the IR findings."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from kernlint import catalogue
from kernlint.cache import cache_dir
from kernlint.config import Config
from kernlint.model import Phase, RunResult
from kernlint.source.discover import ModuleInfo


def add_ir_findings(result: RunResult, config: Config, codes: set[str], arch: str, jobs: int = 0,
                    modules: dict[str, ModuleInfo] | None = None, on_progress=None) -> None:
    from kernlint.ir.phase import attach_to_source_findings, run_ir_phase

    ir_codes = {c for c in codes if catalogue.all_rules()[c].phase is Phase.IR}
    if not ir_codes:
        return
    root = config.root
    # the phase loads the user's modules: hand it real paths, report repo-relative ones
    kernels = [replace(k, path=str((root / k.path).resolve())) for k in result.kernels if Path(root / k.path).is_file()]
    if not kernels:
        return
    options = {}
    if config.occupancy_threshold is not None:
        options["KL304"] = {"threshold": config.occupancy_threshold}
    stats: dict = {}
    ir_findings = run_ir_phase(
        kernels, arch=arch, select=sorted(ir_codes), cache_dir=str(cache_dir(root, "ir")),
        jobs=jobs or min(os.cpu_count() or 1, 8), max_configs=config.autotune_limit, options=options or None,
        stats=stats, modules=modules, specialize=config.specialize or None, on_progress=on_progress,
    )
    result.notices.extend(stats.get("notices", []))
    result.errors.extend(replace(e, path=config.relpath(Path(e.path))) for e in stats.get("errors", []))
    for f in ir_findings:
        f.path = config.relpath(Path(f.path))
    remaining = attach_to_source_findings(result.findings, ir_findings)
    result.findings.extend(remaining)
    result.notices.append(f"IR phase: {len(kernels)} kernels compiled for {arch}, {len(ir_findings)} IR findings")
