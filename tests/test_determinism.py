"""The same input gives the same findings, messages and witnesses whatever Python's string hash
seed (a fresh process draws a new one each run: a pre-commit hook or a SARIF upload must not flap)."""

import os
import subprocess
import sys

import pytest

from tests.conftest import SHARED

# kernels where one product or access is written twice, on two paths of a compile-time flag: which
# of them speaks for both once followed the iteration order of a set
FILES = [SHARED / "corpora" / "fla" / "fla" / "ops" / "atk" / name for name in ("chunk_atk_fwd.py", "chunk_atk_bwd.py")]


def _check(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run([sys.executable, "-m", "kernlint", "check", "--output-format", "concise", *map(str, FILES)],
                         capture_output=True, text=True, env=env, check=False)
    assert out.returncode in (0, 1), out.stderr
    return out.stdout


def test_findings_do_not_depend_on_the_hash_seed():
    if not all(p.exists() for p in FILES):
        pytest.skip("the fla corpus is not beside this checkout")
    first = _check("1")
    assert "KL104" in first
    assert _check("2") == first
    assert _check("3") == first
