"""Fixtures for the IR phase tests (compiling needs Triton, not a GPU)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

try:  # installed: kernlint.rules is the top-level rules/ folder
    import kernlint.rules  # noqa: F401
except ImportError:  # a plain checkout: map it by hand
    spec = importlib.util.spec_from_file_location(
        "kernlint.rules", ROOT / "rules" / "__init__.py", submodule_search_locations=[str(ROOT / "rules")])
    module = importlib.util.module_from_spec(spec)
    sys.modules["kernlint.rules"] = module
    spec.loader.exec_module(module)
    import kernlint

    kernlint.rules = module

triton = pytest.importorskip("triton")


@pytest.fixture(scope="session")
def ir_cache(tmp_path_factory):
    """One artefact cache for the whole session: each example is compiled once."""
    return tmp_path_factory.mktemp("ir-cache")
