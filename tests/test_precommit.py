"""The pre-commit manifest is valid and the hook runs from a checkout (try-repo)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _pre_commit():
    return [sys.executable, "-m", "pre_commit"]


def test_validate_manifest():
    r = subprocess.run([*_pre_commit(), "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_try_repo_smoke(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed by pre-commit")
    repo = tmp_path / "user"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    bad = (ROOT / "fixtures" / "triton" / "vector_add_bad.py").read_text()
    (repo / "add.py").write_text(bad)
    (repo / "clean.py").write_text((ROOT / "fixtures" / "triton" / "vector_add_good.py").read_text())
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    env = {"PRE_COMMIT_HOME": str(tmp_path / "cache"), "PATH": __import__("os").environ["PATH"],
           "HOME": str(tmp_path), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for key in ("PIP_FIND_LINKS", "PIP_CONSTRAINT", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_CONFIG_FILE",
                "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "TMPDIR", "XDG_CONFIG_DIRS"):
        if key in __import__("os").environ:
            env[key] = __import__("os").environ[key]
    r = subprocess.run(
        [*_pre_commit(), "try-repo", str(ROOT), "kernlint", "--all-files"],
        cwd=repo, capture_output=True, text=True, env=env, timeout=1500,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "add.py:14:9: KL101" in out
    assert "clean.py" not in out.split("kernlint", 1)[-1].replace("vector_add_good", "")
