"""Fixtures for the IR phase tests (compiling needs Triton, not a GPU)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

triton = pytest.importorskip("triton")


@pytest.fixture(scope="session")
def ir_cache(tmp_path_factory):
    """One artefact cache for the whole session: each example is compiled once."""
    return tmp_path_factory.mktemp("ir-cache")
