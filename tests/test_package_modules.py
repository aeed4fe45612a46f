"""kernlint's own modules: no top-level function or class is defined twice in one module (the
second silently replaces the first for every caller, as a baseline's ``build`` once replaced the
kernel builder of the same name)."""

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def redefined(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    names = Counter(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
    return [f"{path.relative_to(ROOT)}: {name}" for name, k in names.items() if k > 1]


def test_no_module_defines_a_top_level_name_twice():
    paths = sorted((ROOT / "kernlint").rglob("*.py")) + sorted((ROOT / "rules").rglob("*.py"))
    assert len(paths) > 50
    assert [r for p in paths for r in redefined(p)] == []


def test_a_second_definition_is_seen(tmp_path):
    f = ROOT / "kernlint" / "_probe_redefinition.py"
    try:
        f.write_text("def build(a):\n    pass\n\n\ndef build(a, b):\n    pass\n")
        assert redefined(f) == ["kernlint/_probe_redefinition.py: build"]
    finally:
        f.unlink()
