"""The bounds engine's answers near its budget, and so its findings, follow z3's version: the one
installed must be the one pyproject pins (the one the snapshots and the triage were made with)."""

import re
import tomllib
from pathlib import Path

import z3

ROOT = Path(__file__).resolve().parents[1]


def test_installed_z3_is_the_pinned_version():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = [m.group(1) for d in deps if (m := re.fullmatch(r"z3-solver==([\d.]+)", d.strip()))]
    assert len(pins) == 1, f"z3-solver is not pinned to one version: {deps}"
    assert z3.get_version_string() == pins[0]
