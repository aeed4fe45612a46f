"""The command line as users drive it: exit codes, formats, stdin, files, configuration errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "fixtures" / "triton" / "vector_add_bad.py"
GOOD = ROOT / "fixtures" / "triton" / "vector_add_good.py"


def kl(*args, cwd=ROOT, input=None):
    return subprocess.run(
        [sys.executable, "-m", "kernlint", *map(str, args)], cwd=cwd, input=input, capture_output=True, text=True,
        timeout=300,
    )


def test_clean_exit_0():
    r = kl("check", GOOD)
    assert r.returncode == 0, r.stderr
    assert "All checks passed" in r.stdout


def test_findings_exit_1_with_concise_lines():
    r = kl("check", BAD)
    assert r.returncode == 1
    assert "fixtures/triton/vector_add_bad.py:14:9: KL101 " in r.stdout


def test_exit_zero_and_fail_level():
    assert kl("check", BAD, "--exit-zero").returncode == 0
    assert kl("check", BAD, "--fail-level", "error").returncode == 1


def test_unknown_rule_is_usage_error():
    r = kl("check", BAD, "--select", "KL999")
    assert r.returncode == 2 and "unknown rule" in r.stderr and "Traceback" not in r.stderr


def test_unknown_option_is_usage_error():
    r = kl("check", "--no-such-option")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_missing_path_is_error():
    r = kl("check", "does/not/exist.py")
    assert r.returncode == 2 and "no such file" in r.stdout


def test_syntax_error_reported_and_others_still_linted(tmp_path):
    (tmp_path / "a_broken.py").write_text("import triton\n@triton.jit\ndef k(:\n    pass\n")
    (tmp_path / "b_bad.py").write_text(BAD.read_text())
    (tmp_path / "c_latin1.py").write_bytes(b"# -*- coding: latin-1 -*-\nimport triton\nx = '\xe9'\n")
    (tmp_path / "d_binary.py").write_bytes(b"import triton\n\xff\xfe\x00garbage")
    r = kl("check", tmp_path, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "a_broken.py:3:" in r.stdout and "SyntaxError" in r.stdout
    assert "b_bad.py:14:9: KL101" in r.stdout
    assert "c_latin1.py" not in r.stdout
    assert "d_binary.py:1:1: error:" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr
    # with no finding the summary does not claim that everything passed
    r = kl("check", tmp_path / "a_broken.py", cwd=tmp_path)
    assert r.returncode == 2 and "All checks passed" not in r.stdout
    assert "not every file was checked" in r.stdout


def test_stdin_with_filename():
    r = kl("check", "-", "--stdin-filename", "kernels/add.py", input=BAD.read_text())
    assert r.returncode == 1
    assert "kernels/add.py:14:9: KL101" in r.stdout



def test_stdin_cannot_be_confirmed_without_a_command():
    r = kl("check", "-", "--confirm", input=BAD.read_text())
    assert r.returncode == 2 and "needs --run CMD" in r.stderr

def test_json_output():
    r = kl("check", BAD, "--output-format", "json")
    data = json.loads(r.stdout)
    assert [(f["rule"], f["line"], f["col"], f["phase"], f["verdict"]) for f in data["findings"]] == [
        ("KL101", 14, 9, "source", "suspected")
    ]
    assert data["kernels"][0]["name"] == "add_kernel" and data["kernels"][0]["frontend"] == "triton"


def test_sarif_to_file(tmp_path):
    out = tmp_path / ".sarif" / "kernlint.sarif"
    r = kl("check", BAD, "-o", out)
    assert r.returncode == 1
    assert r.stdout == ""
    log = json.loads(out.read_text())
    assert log["runs"][0]["results"][0]["ruleId"] == "KL101"


def test_github_annotations_escape():
    r = kl("check", BAD, "--output-format", "github")
    line = r.stdout.splitlines()[0]
    assert line.startswith("::error file=fixtures/triton/vector_add_bad.py,line=14,")
    assert ",col=9," in line and "title=KL101 out-of-bounds-load::" in line


def test_github_escaping_unit():
    from kernlint.report.github import escape_data, escape_property

    assert escape_data("a%b\nc\r") == "a%25b%0Ac%0D"
    assert escape_property("x:y,z") == "x%3Ay%2Cz"


def test_full_output_shows_source_and_caret():
    r = kl("check", BAD, "--output-format", "full")
    assert "y = tl.load(y_ptr + offsets)" in r.stdout and "^^^^" in r.stdout


def test_bad_config_is_exit_2(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.kernlint]\nselekt = ['KL1']\n")
    (tmp_path / "k.py").write_text(BAD.read_text())
    r = kl("check", "k.py", cwd=tmp_path)
    assert r.returncode == 2 and "unknown [tool.kernlint] key" in r.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.kernlint\n")
    r = kl("check", "k.py", cwd=tmp_path)
    assert r.returncode == 2 and "invalid TOML" in r.stderr


def test_config_select_and_per_file_ignores(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.kernlint]\nselect = ['KL1']\nper-file-ignores = { 'k.py' = ['KL101'] }\n"
    )
    (tmp_path / "k.py").write_text(BAD.read_text())
    assert kl("check", ".", cwd=tmp_path).returncode == 0


def test_rule_and_rules_commands():
    r = kl("rule", "KL101")
    assert r.returncode == 0 and "## What it does" in r.stdout and "memcheck" in r.stdout
    assert kl("rule", "out-of-bounds-store").returncode == 0
    r = kl("rule", "KL000")
    assert r.returncode == 2 and "unknown rule" in r.stderr
    data = json.loads(kl("rules", "--output-format", "json").stdout)
    assert {"KL101", "KL102", "KL103"} <= {d["code"] for d in data}
    assert all(d["category"] for d in data)


def test_console_script(kernlint_exe):
    r = subprocess.run([kernlint_exe, "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and "kernlint" in r.stdout


def test_the_source_phase_loads_no_numerics_or_compiler():
    # `kernlint check` runs in pre-commit and in front of every --confirm: the source phase must not
    # pay for numpy (lane evaluation), lark (PTX grammar), torch or triton, which only the IR and
    # dynamic phases need
    code = (
        "import sys\n"
        "from kernlint.cli import main\n"
        "try:\n"
        "    main(['check', 'fixtures/triton/block_ptr_bad.py', '--output-format', 'json'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('LOADED', sorted(m for m in ('numpy', 'lark', 'torch', 'triton') if m in sys.modules))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert '"rule": "KL109"' in r.stdout, r.stderr
    assert "LOADED []" in r.stdout


def test_a_kernlint_bug_on_one_file_is_that_files_error_and_the_others_keep_their_findings(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import kernlint.source.phase as source_phase
    from kernlint.cli import main

    (tmp_path / "a_trips.py").write_text(GOOD.read_text())
    (tmp_path / "b_bad.py").write_text(BAD.read_text())
    real = source_phase.interpret

    def interpret(info, kernel):  # a stand-in for any bug in the analysis, met on one file only
        if info.path.endswith("a_trips.py"):
            raise TypeError("'_Unknown' object is not iterable")
        return real(info, kernel)

    monkeypatch.setattr(source_phase, "interpret", interpret)
    monkeypatch.setattr(source_phase, "RAISE_INTERNAL_ERRORS", False)
    monkeypatch.delenv("KERNLINT_DEBUG", raising=False)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["check", ".", "--output-format", "json"])
    assert r.exit_code == 2, r.output
    report = json.loads(r.output)
    (error,) = report["errors"]
    assert error["path"] == "a_trips.py" and error["message"].startswith("internal error: TypeError: ")
    assert {f["path"] for f in report["findings"]} == {"b_bad.py"}
    assert any(f["rule"] == "KL101" for f in report["findings"])

    monkeypatch.setenv("KERNLINT_DEBUG", "1")  # the traceback stays reachable for the bug report
    r = CliRunner().invoke(main, ["check", "."])
    assert isinstance(r.exception, TypeError)


def test_in_the_test_suite_a_kernlint_bug_raises(monkeypatch):
    # so that a clean fixture can never pass because its analysis crashed (conftest sets this)
    import kernlint.source.phase as source_phase
    from kernlint.check import Options, enabled_rules, source_rules
    from kernlint.config import Config

    def interpret(info, kernel):
        raise TypeError("a bug")

    monkeypatch.setattr(source_phase, "interpret", interpret)
    rules = source_rules(enabled_rules(Config(), Options()))
    with pytest.raises(TypeError):
        source_phase.lint_text("a.py", GOOD.read_text(), rules)
