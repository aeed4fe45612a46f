"""Output formats: concise, full, json, sarif, github."""

from __future__ import annotations

import json
from pathlib import Path

from kernlint import __version__
from kernlint.model import RunResult

FORMATS = ("concise", "full", "json", "sarif", "github")


def render_json(result: RunResult, root: Path) -> str:
    return json.dumps(
        {
            "version": __version__,
            "files": result.files,
            "kernels": [k.to_dict() for k in result.kernels],
            "findings": [f.to_dict() for f in result.sorted_findings()],
            "errors": [e.to_dict() for e in result.errors],
            "notices": result.notices,
            "runs": result.runs,
        },
        indent=2,
    ) + "\n"


def render(result: RunResult, fmt: str, root: Path, show_ir: bool = False) -> str:
    if fmt == "concise":
        from kernlint.report.text import concise

        return concise(result, root, show_ir)
    if fmt == "full":
        from kernlint.report.text import full

        return full(result, root)
    if fmt == "json":
        return render_json(result, root)
    if fmt == "sarif":
        from kernlint.report.sarif import render as sarif

        return sarif(result, root)
    if fmt == "github":
        from kernlint.report.github import render as github

        return github(result, root)
    raise ValueError(f"unknown output format {fmt!r}")
