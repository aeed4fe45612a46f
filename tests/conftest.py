import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


def pytest_collection_modifyitems(config, items):
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def corpus() -> Path:
    path = SHARED / "corpora" / "tritonbench"
    if not path.exists():
        pytest.skip("the TritonBench corpus is not beside this checkout")
    return path


@pytest.fixture
def kernlint_exe() -> str:
    exe = shutil.which("kernlint")
    assert exe, "kernlint is not installed on PATH"
    return exe


@pytest.fixture(autouse=True)
def _kernlint_bugs_raise(monkeypatch):
    """In-process, a kernlint bug raises instead of becoming a file's error record (a clean fixture
    must not pass because its analysis crashed); the tests of that record turn it off."""
    import kernlint.source.phase

    monkeypatch.setattr(kernlint.source.phase, "RAISE_INTERNAL_ERRORS", True)


@pytest.fixture(autouse=True)
def _no_source_cache(monkeypatch):
    """Every test lints afresh (a test that patches kernlint must not read what an earlier one
    kept); the cache's own tests turn it back on."""
    monkeypatch.setenv("KERNLINT_NO_CACHE", "1")


@pytest.fixture(autouse=True)
def _quiet_triton(monkeypatch):
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", os.environ.get("TRITON_DEFAULT_FP_FUSION", "1"))
