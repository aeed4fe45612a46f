from pathlib import Path

from kernlint.check import Options, run_check
from kernlint.config import Config
from tests.helpers import lint

BUG = '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs){comment}
'''


def _check(tmp_path: Path, text: str, config: Config | None = None, name: str = "k.py"):
    f = tmp_path / name
    f.write_text(text)
    config = config or Config(root=tmp_path)
    return run_check([f], config, Options())


def test_unsuppressed(tmp_path):
    assert [f.rule for f in _check(tmp_path, BUG.format(comment="")).findings] == ["KL101"]


def test_noqa_with_code(tmp_path):
    assert _check(tmp_path, BUG.format(comment="  # noqa: KL101")).findings == []


def test_noqa_with_other_code_keeps_finding(tmp_path):
    assert [f.rule for f in _check(tmp_path, BUG.format(comment="  # noqa: KL102")).findings] == ["KL101"]


def test_bare_noqa(tmp_path):
    assert _check(tmp_path, BUG.format(comment="  # noqa")).findings == []


def test_ignore_comment_covers_next_statement_only(tmp_path):
    text = BUG.format(comment="").replace(
        "    x = tl.load(x_ptr + offs)",
        "    # kernlint: ignore[KL101]\n    x = tl.load(\n        x_ptr + offs\n    )\n    y = tl.load(x_ptr + offs)",
    )
    found = _check(tmp_path, text).findings
    assert [(f.rule, f.span.line) for f in found] == [("KL101", 12)]


def test_file_level_noqa(tmp_path):
    assert _check(tmp_path, "# kernlint: noqa\n" + BUG.format(comment="")).findings == []
    only_other = _check(tmp_path, "# kernlint: noqa: KL103\n" + BUG.format(comment="")).findings
    assert [f.rule for f in only_other] == ["KL101"]


def test_per_file_ignores_and_select(tmp_path):
    config = Config(root=tmp_path, per_file_ignores={"gen_*.py": ["KL101"]})
    assert _check(tmp_path, BUG.format(comment=""), config, "gen_k.py").findings == []
    assert _check(tmp_path, BUG.format(comment=""), config, "k.py").findings
    res = run_check([tmp_path / "k.py"], Config(root=tmp_path), Options(select=["KL103"]))
    assert res.findings == []
    res = run_check([tmp_path / "k.py"], Config(root=tmp_path), Options(ignore=["KL1"]))
    assert res.findings == []


def test_exclude(tmp_path):
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "k.py").write_text(BUG.format(comment=""))
    config = Config(root=tmp_path, exclude=["vendor"])
    assert run_check([tmp_path], config, Options()).findings == []
    # a file named explicitly is linted unless --force-exclude
    assert run_check([tmp_path / "vendor" / "k.py"], config, Options()).findings
    assert run_check([tmp_path / "vendor" / "k.py"], config, Options(force_exclude=True)).findings == []


def test_lint_helper_agrees():
    assert [f.rule for f in lint(BUG.format(comment="")).findings] == ["KL101"]
