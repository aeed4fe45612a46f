"""`--fix` / `--unsafe-fixes` / `--add-noqa`: each fix removes its finding, the fixed file still
compiles for sm_90 (Triton's AOT compiler on the CPU, through the IR phase), and a second run has
nothing left to fix."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernlint import fixes
from kernlint.model import Finding, Level, Span
from helpers import lint

ROOT = Path(__file__).resolve().parents[1]
FIXED_BY_SAFE = {"KL104", "KL108"}
FIXED_BY_UNSAFE = FIXED_BY_SAFE | {"KL101", "KL102"}


def kl(*args, cwd, input=None):
    return subprocess.run([sys.executable, "-m", "kernlint", *map(str, args)], cwd=cwd, input=input,
                          capture_output=True, text=True, timeout=600)


def findings(path: Path, cwd: Path, *extra) -> list[dict]:
    r = kl("check", path, "--output-format", "json", "--no-respect-gitignore", *extra, cwd=cwd)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)["findings"]


def fixable_fixtures() -> list[Path]:
    """Every fixture with a finding that has a fix (found by linting, not listed by hand)."""
    out = []
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        if "eval" in path.parts:
            continue
        source = path.read_text()
        for f in lint(source, str(path)).findings:
            if fixes.fix_for(f, source) is not None:
                out.append(path)
                break
    return out


FIXABLE = fixable_fixtures()


def test_there_are_fixtures_for_every_fix():
    codes = set()
    for path in FIXABLE:
        source = path.read_text()
        codes |= {f.rule for f in lint(source, str(path)).findings if fixes.fix_for(f, source)}
    assert codes >= FIXED_BY_UNSAFE, codes


@pytest.mark.parametrize("fixture", FIXABLE, ids=lambda p: p.name)
def test_fix_round_trip(fixture, tmp_path):
    target = tmp_path / fixture.name
    shutil.copy(fixture, target)
    for helper in fixture.parent.glob("_*.py"):  # modules the fixture imports
        shutil.copy(helper, tmp_path / helper.name)
    before = findings(target, tmp_path)
    safe = kl("check", target, "--fix", "--exit-zero", cwd=tmp_path)
    assert safe.returncode == 0, safe.stderr
    after_safe = findings(target, tmp_path)
    assert not [f for f in after_safe if f["rule"] in FIXED_BY_SAFE and fixes.fix_for(Finding.from_dict(f), target.read_text())]
    r = kl("check", target, "--fix", "--unsafe-fixes", "--exit-zero", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    fixed = target.read_text()
    after = findings(target, tmp_path)
    assert fixed != fixture.read_text()
    # nothing fixable is left, and only fixable findings went away
    assert not [f for f in after if fixes.fix_for(Finding.from_dict(f), fixed)]
    gone = {(f["rule"], f["line"]) for f in before} - {(f["rule"], f["line"]) for f in after}
    assert {rule for rule, _ in gone} <= FIXED_BY_UNSAFE
    # a second --fix changes nothing
    kl("check", target, "--fix", "--unsafe-fixes", "--exit-zero", cwd=tmp_path)
    assert target.read_text() == fixed
    # the fixed kernels still compile for sm_90
    ir = kl("check", target, "--ir", "--select", "KL300", "--output-format", "json", cwd=tmp_path)
    report = json.loads(ir.stdout)
    assert not report["findings"], report["findings"]
    assert f"IR phase: {len(report['kernels'])} kernel" in " ".join(report["notices"]), report["notices"]


def test_fix_from_stdin_writes_the_fixed_text_to_stdout():
    source = (ROOT / "fixtures/triton/grid_tail_bad.py").read_text()
    r = kl("check", "--stdin-filename", "grid_tail_bad.py", "--fix", cwd=ROOT, input=source)
    assert "triton.cdiv(n, 256)" in r.stdout and "n // 256" not in r.stdout
    assert r.returncode == 0, r.stderr


def test_unsafe_fix_needs_the_flag():
    source = (ROOT / "fixtures/triton/off_by_one_bad.py").read_text()
    r = kl("check", "--stdin-filename", "x.py", "--fix", cwd=ROOT, input=source)
    assert r.stdout == source and r.returncode == 1


def test_cdiv_fix_adds_the_import_when_missing():
    source = ("import triton.language as tl\nfrom triton import jit\n\n@jit\ndef k(x_ptr, n, BLOCK: tl.constexpr):\n"
              "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
              "    tl.store(x_ptr + offs, 1.0, mask=offs < n)\n\ndef go(x):\n    k[(x.numel() // 64,)](x, x.numel(), BLOCK=64)\n")
    found = [f for f in lint(source).findings if f.rule == "KL108"]
    assert found
    new, applied = fixes.apply(source, [fixes.fix_for(found[0], source)])
    assert applied == 1
    assert new.startswith("import triton\nimport triton.language as tl\n")
    assert "k[(triton.cdiv(x.numel(), 64),)]" in new
    assert not [f for f in lint(new).findings if f.rule == "KL108"]


def test_add_noqa_silences_each_finding_with_the_documented_syntax(tmp_path):
    target = tmp_path / "m.py"
    shutil.copy(ROOT / "fixtures/triton/off_by_one_bad.py", target)
    r = kl("check", target, "--add-noqa", "--exit-zero", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    text = target.read_text()
    assert "mask=offs <= n, other=0.0)  # noqa: KL101\n" in text
    assert "mask=offs <= n)  # noqa: KL102\n" in text
    assert findings(target, tmp_path) == []
    kl("check", target, "--add-noqa", cwd=tmp_path)
    assert target.read_text() == text


def test_add_noqa_extends_an_existing_comment_and_avoids_strings():
    f = lambda rule, line: Finding(rule, "m.py", Span(line, 1, line, 2), "m", Level.ERROR)  # noqa: E731
    source = 'x = 1  # noqa: KL101\ny = """a\nb"""\nz = (1 +\n     2)\n'
    new, n = fixes.add_noqa_comments(source, [f("KL102", 1), f("KL101", 2), f("KL103", 4)])
    assert n == 3
    assert new.split("\n")[0] == "x = 1  # noqa: KL101, KL102"
    assert new.split("\n")[2] == 'b"""  # noqa: KL101'
    assert new.split("\n")[3] == "z = (1 +  # noqa: KL103"
