"""ruff's habits on `kernlint check`: --statistics, --quiet, --show-source, --extend-select, stdin
without '-', --force-exclude on stdin, .gitignore."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "fixtures" / "triton" / "off_by_one_bad.py"


def kl(*args, cwd=ROOT, input=None):
    return subprocess.run([sys.executable, "-m", "kernlint", *map(str, args)], cwd=cwd, input=input,
                          capture_output=True, text=True, timeout=300)


def test_statistics_counts_per_rule():
    r = kl("check", BAD, ROOT / "fixtures/dynamic/oob_no_mask_bad.py", "--statistics")
    assert r.returncode == 1
    assert r.stdout.splitlines() == ["    3\tKL101\tout-of-bounds-load", "    2\tKL102\tout-of-bounds-store"]


def test_quiet_drops_the_summary_only():
    loud, quiet = kl("check", BAD), kl("check", BAD, "-q")
    assert loud.stdout.startswith(quiet.stdout) and "Found 2 findings" in loud.stdout
    assert "Found" not in quiet.stdout and quiet.stdout.count("\n") == 2 and quiet.returncode == 1
    assert kl("check", ROOT / "fixtures/triton/off_by_one_good.py", "--quiet").stdout == ""


def test_show_source_prints_the_lines():
    r = kl("check", BAD, "--show-source")
    assert "mask=offs <= n, other=0.0)" in r.stdout and "^" in r.stdout


def test_extend_select_adds_to_the_configured_selection(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nselect = ["KL101"]\n')
    shutil.copy(BAD, tmp_path / "m.py")
    assert {line.split()[1] for line in kl("check", "m.py", "-q", cwd=tmp_path).stdout.splitlines()} == {"KL101"}
    both = kl("check", "m.py", "-q", "--extend-select", "KL102", cwd=tmp_path).stdout.splitlines()
    assert {line.split()[1] for line in both} == {"KL101", "KL102"}
    (tmp_path / "pyproject.toml").write_text("[tool.kernlint]\n")
    unknown = kl("check", "m.py", "--extend-select", "KL999", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown rule" in unknown.stderr


def test_stdin_filename_without_dash_reads_stdin(tmp_path):
    r = kl("check", "--stdin-filename", "kernels/m.py", cwd=tmp_path, input=BAD.read_text())
    assert r.returncode == 1 and "kernels/m.py:10:9: KL101" in r.stdout


def test_force_exclude_skips_excluded_stdin(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\nexclude = ["third_party"]\n')
    args = ("check", "--stdin-filename", "third_party/m.py")
    assert kl(*args, cwd=tmp_path, input=BAD.read_text()).returncode == 1
    skipped = kl(*args, "--force-exclude", cwd=tmp_path, input=BAD.read_text())
    assert skipped.returncode == 0 and skipped.stdout == ""


def test_gitignored_files_are_skipped_unless_asked(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("needs git")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("generated/\n")
    (tmp_path / "generated").mkdir()
    shutil.copy(BAD, tmp_path / "generated" / "gen.py")
    shutil.copy(BAD, tmp_path / "src.py")
    walked = kl("check", ".", cwd=tmp_path)
    assert "src.py:10:9" in walked.stdout and "gen.py" not in walked.stdout
    assert "generated/gen.py:10:9" in kl("check", ".", "--no-respect-gitignore", cwd=tmp_path).stdout
    # a file named on the command line is linted even when ignored
    assert "generated/gen.py:10:9" in kl("check", "generated/gen.py", cwd=tmp_path).stdout


def _run_on_a_terminal(argv, cwd) -> str:
    pty = pytest.importorskip("pty")
    import os

    pid, fd = pty.fork()
    if pid == 0:  # the child: stdout and stderr are the terminal
        os.chdir(cwd)
        os.execv(sys.executable, [sys.executable, "-m", "kernlint", *argv])
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out.decode("utf-8", errors="replace")


def test_progress_bar_on_a_terminal_only(tmp_path):
    pytest.importorskip("triton")
    shutil.copy(ROOT / "fixtures/triton/off_by_one_good.py", tmp_path / "k.py")
    on_terminal = _run_on_a_terminal(["check", "k.py", "--ir"], tmp_path)
    assert "compiling for sm_90" in on_terminal and "IR phase: 1 kernels compiled" in on_terminal
    shutil.rmtree(tmp_path / ".kernlint_cache")
    piped = kl("check", "k.py", "--ir", cwd=tmp_path)
    assert "compiling for" not in piped.stdout + piped.stderr and "IR phase: 1 kernels compiled" in piped.stdout
    assert (tmp_path / ".kernlint_cache" / ".gitignore").read_text().endswith("*\n")
