"""`pip install kernlint` carries the source phase only: it must run with torch, Triton and the
other extras' packages impossible to import, and a feature that needs an extra must name it."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "triton", "numpy", "lark", "rich", "tilelang", "tvm", "ray", "pygls", "lsprotocol")

# Installed before kernlint is imported: any import of a heavy package (or a submodule) fails as if
# the package were not installed.
BLOCKER = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {HEAVY!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by the test)", name=name)
        return None
sys.meta_path.insert(0, Block())
for name in list(sys.modules):
    if name.split('.')[0] in {HEAVY!r}:
        del sys.modules[name]
sys.argv = ['kernlint', *sys.argv[1:]]
from kernlint.cli import entry
entry()
"""


def kl(*args, blocked=True):
    cmd = [sys.executable, "-c", BLOCKER, *map(str, args)] if blocked else [sys.executable, "-m", "kernlint", *map(str, args)]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_source_phase_runs_without_the_extras_and_finds_the_same():
    blocked = kl("check", "fixtures/triton", "fixtures/tilelang", "--output-format", "json")
    assert blocked.returncode == 1, blocked.stderr
    assert "Traceback" not in blocked.stderr
    full = kl("check", "fixtures/triton", "fixtures/tilelang", "--output-format", "json", blocked=False)

    def found(out: str) -> list:
        # the findings themselves; the size of a witness the solver shrinks within its budget may differ
        return sorted((f["rule"], f["path"], f["line"], f["col"], f["level"])
                      for f in json.loads(out)["findings"])

    assert found(blocked.stdout) == found(full.stdout) and found(full.stdout)


def test_sarif_output_needs_no_extra():
    r = kl("check", "fixtures/triton/vector_add_bad.py", "--output-format", "sarif")
    assert r.returncode == 1 and '"version": "2.1.0"' in r.stdout, r.stderr


def test_ir_without_its_extra_names_the_extra():
    r = kl("check", "fixtures/triton/vector_add_bad.py", "--ir")
    assert r.returncode == 2
    assert "kernlint[ir]" in r.stderr and "Traceback" not in r.stderr


def test_confirm_without_its_extra_names_the_extra():
    r = kl("check", "fixtures/triton/vector_add_bad.py", "--confirm")
    assert r.returncode == 2
    assert "kernlint[gpu]" in r.stderr and "Traceback" not in r.stderr


def test_eval_without_its_extra_names_the_extra_but_its_help_works(tmp_path):
    assert kl("eval", "--help").returncode == 0
    (tmp_path / "c.jsonl").write_text("")
    r = kl("eval", tmp_path, tmp_path / "c.jsonl", "-o", tmp_path / "out")
    assert r.returncode == 2
    assert "kernlint[eval]" in r.stderr and "Traceback" not in r.stderr


def test_server_without_its_extra_names_the_extra():
    r = kl("server")
    assert r.returncode == 2
    assert "kernlint[lsp]" in r.stderr and "Traceback" not in r.stderr


def test_the_ir_hook_installs_the_ir_extra():
    """pre-commit cannot name an extra of the hook's own repository: the kernlint-ir hook lists the
    `ir` extra's packages, and must list exactly them."""
    import tomllib

    yaml = __import__("pytest").importorskip("yaml")
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["ir"]
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert sorted(hooks["kernlint-ir"]["additional_dependencies"]) == sorted(extra)
    assert "additional_dependencies" not in hooks["kernlint"]


@pytest.mark.slow
def test_the_wheel_ships_the_package_with_rules_as_kernlint_rules(tmp_path):
    """What `pip install kernlint` (and the pre-commit hook) gets: every file of kernlint/ (data files the
    code reads included), and the top-level rules/ as kernlint/rules/ (its generated README aside)."""
    import os
    import zipfile

    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    (wheel,) = tmp_path.glob("kernlint-*.whl")
    shipped = {n for n in zipfile.ZipFile(wheel).namelist() if ".dist-info/" not in n}

    def files(folder: str, as_: str) -> set[str]:
        return {f"{as_}/{(Path(d) / n).relative_to(ROOT / folder).as_posix()}"
                for d, dirs, names in os.walk(ROOT / folder) if "__pycache__" not in Path(d).parts
                for n in names if not n.endswith(".pyc")}

    assert shipped == files("kernlint", "kernlint") | (files("rules", "kernlint/rules") - {"kernlint/rules/README.md"})
    assert "kernlint/dynamic/interp_site/sitecustomize.py" in shipped  # the interpreter check's site hook
