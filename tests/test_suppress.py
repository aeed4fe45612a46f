import pytest

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

def run(x):
    k[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64)
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


# --- the directive syntax (ruff's), read from comment tokens only ----------------------------


def _rules(tmp_path, text, **kw):
    return [f.rule for f in _check(tmp_path, text, **kw).findings]


def test_another_tools_code_does_not_make_noqa_bare(tmp_path):
    assert _rules(tmp_path, BUG.format(comment="  # noqa: E501")) == ["KL101"]
    assert _rules(tmp_path, BUG.format(comment="  # noqa: E501, KL101")) == []


def test_a_prefix_is_not_a_code(tmp_path):
    assert _rules(tmp_path, BUG.format(comment="  # noqa: KL1")) == ["KL101"]


def test_spaces_around_the_colon_keep_the_codes(tmp_path):
    assert _rules(tmp_path, BUG.format(comment="  # noqa : KL102")) == ["KL101"]
    assert _rules(tmp_path, BUG.format(comment="  # noqa : KL101")) == []
    assert _rules(tmp_path, BUG.format(comment="  #noqa:KL101,KL102")) == []


def test_a_colon_without_codes_is_no_directive(tmp_path):
    assert _rules(tmp_path, BUG.format(comment="  # noqa:")) == ["KL101"]


def test_noqa_is_case_insensitive_without_a_lowercase_one_elsewhere(tmp_path):
    assert "noqa" not in BUG
    assert _rules(tmp_path, BUG.format(comment="  # NOQA")) == []
    assert _rules(tmp_path, BUG.format(comment="  # NoQA: kl101")) == []


def test_directives_inside_strings_are_not_comments(tmp_path):
    docstring = '"""Docs that mention # kernlint: noqa in passing."""\n'
    assert _rules(tmp_path, docstring + BUG.format(comment="")) == ["KL101"]
    assert _rules(tmp_path, BUG.format(comment='; s = "# noqa"')) == ["KL101"]


def test_unused_noqa_is_off_by_default_and_reports_codes_that_silenced_nothing(tmp_path):
    text = BUG.format(comment="  # noqa: KL101, KL102")
    assert _rules(tmp_path, text) == []
    res = run_check([tmp_path / "k.py"], Config(root=tmp_path), Options(select=["KL1", "KL001"]))
    (unused,) = res.findings
    assert unused.rule == "KL001" and unused.evidence["unused_codes"] == ["KL102"] and unused.span.line == 8
    # an IR rule's code is not judged without the IR phase
    (tmp_path / "k.py").write_text(BUG.format(comment="  # noqa: KL101, KL303"))
    assert run_check([tmp_path / "k.py"], Config(root=tmp_path), Options(select=["KL1", "KL001"])).findings == []


# --- one filter after every phase -------------------------------------------------------------


def _fake_phase_finding(phase, rule, line):
    from kernlint.model import Finding, Level, Span

    def add(result, config, *args, **kwargs):
        result.findings.append(Finding(rule, "k.py", Span.point(line), f"{rule} from the {phase.value} phase",
                                       Level.ERROR, phase=phase))
    return add


def _phase_run(tmp_path, monkeypatch, phase, text, config=None, **opts):
    from kernlint.model import Phase

    (tmp_path / "k.py").write_text(text)
    if phase is Phase.IR:
        monkeypatch.setattr("kernlint.ir_glue.add_ir_findings", _fake_phase_finding(phase, "KL303", 6))
        options = Options(ir_arch="sm_90", **opts)
    else:
        monkeypatch.setattr("kernlint.confirm_glue.confirm_result", _fake_phase_finding(phase, "KL401", 6))
        options = Options(confirm={"run": None}, **opts)
    return [f.rule for f in run_check([tmp_path / "k.py"], config or Config(root=tmp_path), options).findings]


@pytest.mark.parametrize("phase", ["ir", "dynamic"])
def test_noqa_per_file_ignores_and_select_apply_to_every_phase(tmp_path, monkeypatch, phase):
    from kernlint.model import Phase

    phase = Phase(phase)
    code = "KL303" if phase is Phase.IR else "KL401"
    clean = BUG.format(comment="").replace("x_ptr + offs)", "x_ptr + offs, mask=offs < n)")
    assert _phase_run(tmp_path, monkeypatch, phase, clean) == [code]
    on_def = clean.replace("BLOCK: tl.constexpr):", "BLOCK: tl.constexpr):  # noqa: " + code)
    assert _phase_run(tmp_path, monkeypatch, phase, on_def) == []
    assert _phase_run(tmp_path, monkeypatch, phase, "# kernlint: noqa\n" + clean.replace("\n", "", 1)) == []
    pfi = Config(root=tmp_path, per_file_ignores={"k.py": [code]})
    assert _phase_run(tmp_path, monkeypatch, phase, clean, pfi) == []
    assert _phase_run(tmp_path, monkeypatch, phase, clean, ignore=[code[:3]]) == []
    assert _phase_run(tmp_path, monkeypatch, phase, clean, select=["KL1"]) == []


# --- every file named on the command line is read ----------------------------------------------


def test_named_files_that_cannot_be_read_are_errors_and_others_are_still_linted(tmp_path):
    (tmp_path / "binary.py").write_bytes(b"\x00\x01\xff\xfe" * 10)
    (tmp_path / "latin.py").write_bytes("x = 'caf\xe9'\n".encode("latin-1"))
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "k.py").write_text(BUG.format(comment=""))
    names = ["binary.py", "latin.py", "broken.py", "k.py"]
    res = run_check([tmp_path / n for n in names], Config(root=tmp_path), Options())
    assert sorted(e.path for e in res.errors) == ["binary.py", "broken.py", "latin.py"]
    assert [f.rule for f in res.findings] == ["KL101"]
    # found in a folder, a file that mentions no kernel framework is skipped
    assert run_check([tmp_path], Config(root=tmp_path), Options()).errors == []
