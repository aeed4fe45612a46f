"""Every snippet of the README, run as written (the repository URL replaced by a local clone where
a snippet fetches kernlint), or pointed at the test that exercises it. A snippet that is added or
changed without a test here fails `test_every_snippet_is_exercised`."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
URL = "https://github.com/kernlint/kernlint"
BLOCKS = [(m.group(1), m.group(2)) for m in re.finditer(r"```(\w+)\n(.*?)```", README, re.S)]

# the first line of each snippet -> the test that runs it
EXERCISED = {
    "git clone https://github.com/kernlint/kernlint": "test_quickstart_from_a_fresh_clone",
    "python3 -m pip install -e . && kernlint check fixtures/": "test_quickstart_from_a_fresh_clone",
    'python3 -m pip install "torch==2.13.0" -e ".[dev]"': "test_ci_runs_the_second_quickstart_command (and .ci/run)",
    "$ kernlint check kernels/ --ir": "test_missing_extra_message_is_the_one_printed",
    "$ kernlint check kernels/                 #": "test_using_it_commands",
    "$ kernlint check kernels/ --fix ": "test_fix_commands",
    "x = tl.load(x_ptr + offs)  # noqa: KL101": "test_suppression_forms",
    "[tool.kernlint]": "test_configuration_snippet_is_valid",
    "repos:": "test_pre_commit_snippet",
    "name: kernlint": "test_actions_workflow_uses_this_repository_action",
    '- run: pip install "kernlint @ git+': "test_annotations_snippet",
    'vim.lsp.start({ name = "kernlint"': "tests/test_server.py (the same `kernlint server` command over stdio)",
    "kernlint check . -o .sarif/kernlint.sarif": "test_editor_sarif_snippet",
}


def block(first_line: str) -> str:
    found = [text for _, text in BLOCKS if text.lstrip().startswith(first_line)]
    assert len(found) == 1, first_line
    return found[0]


def test_every_snippet_is_exercised():
    for lang, text in BLOCKS:
        first = text.strip().split("\n")[0]
        assert any(first.startswith(key) for key in EXERCISED), f"README snippet without a test: {first!r}"


def run(cmd, cwd, env=None, timeout=900):
    return subprocess.run(cmd, cwd=cwd, shell=isinstance(cmd, str), capture_output=True, text=True, env=env,
                          timeout=timeout, executable="/bin/bash" if isinstance(cmd, str) else None)


def kl(*args, cwd, input=None):
    return subprocess.run([sys.executable, "-m", "kernlint", *map(str, args)], cwd=cwd, input=input,
                          capture_output=True, text=True, timeout=600)


def clean_env(tmp_path) -> dict:
    """The environment of a fresh shell: no virtualenv of the test run, pip's cache off."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    venv_bin = str(Path(sys.prefix) / "bin")
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != venv_bin)
    env.update(HOME=str(tmp_path), PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


@pytest.fixture
def clone(tmp_path) -> Path:
    """The committed state of this checkout, cloned (what a user gets from the repository URL)."""
    if shutil.which("git") is None:
        pytest.skip("needs git")
    path = tmp_path / "src" / "kernlint"  # `git clone URL` names the folder after the repository
    subprocess.run(["git", "clone", "-q", str(ROOT), str(path)], check=True)
    # the snippets name the branch `main`: make it point at what was cloned, whichever branch that was
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "-B", "main", "HEAD"], check=True, capture_output=True)
    return path


@pytest.fixture
def project(tmp_path) -> Path:
    """A user's project as the README's examples picture it: a `kernels/` folder with a bug in add.py."""
    root = tmp_path / "project"
    (root / "kernels").mkdir(parents=True)
    shutil.copy(ROOT / "fixtures/triton/vector_add_bad.py", root / "kernels/add.py")
    shutil.copy(ROOT / "fixtures/triton/grid_tail_bad.py", root / "kernels/relu.py")
    shutil.copy(ROOT / "fixtures/triton/off_by_one_bad.py", root / "kernels/scale.py")
    return root


def console_commands(text: str) -> list[str]:
    return [line[2:].split("  #")[0].strip() for line in text.splitlines() if line.startswith("$ ")]


@pytest.mark.slow
def test_quickstart_from_a_fresh_clone(clone, tmp_path):
    setup = block("git clone").strip().replace(URL, str(clone))
    lint = block("python3 -m pip install -e .").strip()
    work = tmp_path / "user"
    work.mkdir()
    r = run(f"set -e; {setup}; {lint}", cwd=work, env=clean_env(tmp_path))
    assert r.returncode == 1, r.stdout + r.stderr  # the fixtures' planted bugs
    assert re.search(r"^Found \d+ findings in \d+ files, \d+ kernels\.$", r.stdout, re.M), r.stdout
    assert (work / "kernlint" / ".venv" / "bin" / "kernlint").exists()
    torch = run(". .venv/bin/activate && python -c 'import torch'", cwd=work / "kernlint", env=clean_env(tmp_path))
    assert torch.returncode != 0  # the light install: no torch


def test_ci_runs_the_second_quickstart_command():
    install, test = block('python3 -m pip install "torch==2.13.0"').strip().split(" && ")
    ci = (ROOT / ".ci" / "run").read_text().replace("pip install -q ", "pip install ")
    assert install in ci and test in ci


def test_missing_extra_message_is_the_one_printed(project):
    from test_light_install import BLOCKER

    command, message = block("$ kernlint check kernels/ --ir").strip().split("\n")
    args = shlex.split(command[2:])[1:]
    r = subprocess.run([sys.executable, "-c", BLOCKER, *args], cwd=project, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip() == message


def test_using_it_commands(project):
    text = block("$ kernlint check kernels/                 #")
    expected_first = next(line for line in text.splitlines() if line.startswith("kernels/add.py"))
    for command in console_commands(text):
        if command.startswith("kernlint eval"):
            continue  # kernlint eval on problems and answers: tests/eval/test_cli.py
        argv = shlex.split(command.split(" < ")[0])
        stdin = (project / command.split(" < ")[1]).read_text() if " < " in command else None
        r = kl(*argv[1:], cwd=project, input=stdin)
        assert r.returncode in (0, 1), (command, r.stdout, r.stderr)
        if command == "kernlint check kernels/":
            assert r.stdout.splitlines()[0] == expected_first.replace("...", "").rstrip() + r.stdout.splitlines()[0][
                len(expected_first.replace("...", "").rstrip()):]
            assert expected_first.endswith("...") and r.stdout.startswith(expected_first[:-3])
            assert re.search(r"^Found \d+ findings? in \d+ files, \d+ kernels\.$", r.stdout, re.M)


def test_fix_commands(project):
    for command in console_commands(block("$ kernlint check kernels/ --fix ")):
        r = kl(*shlex.split(command)[1:], "--exit-zero", cwd=project)
        assert r.returncode == 0, (command, r.stderr)
    text = "".join(p.read_text() for p in sorted((project / "kernels").glob("*.py")))
    assert "triton.cdiv(n, 256)" in text and "mask=offs < n" in text and "# noqa: KL101" in text
    assert kl("check", "kernels/", cwd=project).returncode == 0


def test_suppression_forms(tmp_path):
    from helpers import lint

    lines = [line.split("  (")[0].rstrip() for line in block("x = tl.load").strip().splitlines()]
    load, ignore_next, file_noqa = lines
    kernel = ("import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n"
              "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    {}\n    tl.store(x_ptr + offs, x)\n"
              "\n\ndef go():\n    k[(4,)](torch.empty(100), BLOCK=64)\n")  # a launch that overruns: a finding to silence
    plain = kernel.format("x = tl.load(x_ptr + offs)")
    from kernlint.check import Options, run_check
    from kernlint.config import Config

    def codes(text):
        return {f.rule for f in run_check([Path("-")], Config(root=tmp_path), Options(stdin_filename="k.py"),
                                          stdin=text.encode()).findings}

    assert "KL101" in codes(plain) and {f.rule for f in lint(plain).findings} >= {"KL101"}
    assert "KL101" not in codes(kernel.format(load.strip()))
    assert "KL101" not in codes(kernel.format(ignore_next.strip() + "\n    x = tl.load(x_ptr + offs)"))
    assert codes(file_noqa.strip() + "\n" + plain) == set()


def test_configuration_snippet_is_valid(project):
    (project / "pyproject.toml").write_text(block("[tool.kernlint]"))
    r = kl("check", "kernels/", cwd=project)
    assert r.returncode in (0, 1), r.stderr


@pytest.mark.slow
def test_pre_commit_snippet(clone, project, tmp_path):
    """The snippet as written, the URL replaced by a clone: `rev: main`, then `pre-commit autoupdate`
    pins the commit, and the hook runs."""
    snippet = block("repos:")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".pre-commit-config.yaml").write_text(snippet.replace(URL, str(clone)))
    subprocess.run(["git", "add", "."], cwd=project, check=True)
    env = {**clean_env(tmp_path), "PRE_COMMIT_HOME": str(tmp_path / "pc")}
    pre_commit = [sys.executable, "-m", "pre_commit"]
    assert run([*pre_commit, "validate-config"], cwd=project, env=env).returncode == 0
    r = run([*pre_commit, "autoupdate"], cwd=project, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    sha = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert f"rev: {sha}" in (project / ".pre-commit-config.yaml").read_text()
    r = run([*pre_commit, "run", "--all-files"], cwd=project, env=env)
    assert r.returncode == 1 and "kernels/add.py:14:9: KL101" in r.stdout, r.stdout + r.stderr


def test_actions_workflow_uses_this_repository_action():
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load(block("name: kernlint"))
    steps = workflow["jobs"]["kernlint"]["steps"]
    ours = [s for s in steps if s.get("uses", "").startswith("kernlint/kernlint@")]
    assert len(ours) == 1
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert set(ours[0].get("with", {})) <= set(action["inputs"])
    assert workflow["permissions"]["security-events"] == "write"


@pytest.mark.slow
def test_action_steps_run(project, tmp_path):
    """The action's own shell steps, run as the runner runs them (GITHUB_* files, the inputs as env)."""
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    inputs = {k: v.get("default", "") for k, v in action["inputs"].items()}
    env = clean_env(tmp_path)
    for name in ("GITHUB_PATH", "GITHUB_OUTPUT"):
        env[name] = str(tmp_path / name.lower())
        Path(env[name]).write_text("")
    env["RUNNER_TEMP"] = str(tmp_path / "runner")
    os.makedirs(env["RUNNER_TEMP"])
    for step in action["runs"]["steps"]:
        if "run" not in step or step.get("if"):
            continue
        step_env = dict(env)
        for key, value in step.get("env", {}).items():
            value = value.replace("${{ github.action_path }}", str(ROOT))
            step_env[key] = re.sub(r"\$\{\{ inputs\.([\w-]+) \}\}", lambda m: inputs[m.group(1)], value)
        extra_path = Path(env["GITHUB_PATH"]).read_text().split()
        step_env["PATH"] = os.pathsep.join([*extra_path, env["PATH"]])
        r = run(["bash", "-e", "-c", step["run"]], cwd=project, env=step_env)
        assert r.returncode == 0, (step["name"], r.stdout, r.stderr)
    assert "exit-code=1" in Path(env["GITHUB_OUTPUT"]).read_text()
    sarif = json.loads((project / inputs["sarif-file"]).read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"]


def test_annotations_snippet(project):
    line = block('- run: pip install "kernlint @ git+').strip()
    install, command = line.removeprefix("- run: ").split(" && ")
    assert install == f'pip install "kernlint @ git+{URL}"'
    r = kl(*shlex.split(command)[1:], cwd=project)
    assert r.returncode == 1 and "::error file=kernels/add.py,line=14" in r.stdout, r.stdout


def test_editor_sarif_snippet(project):
    r = kl(*shlex.split(block("kernlint check . -o").strip())[1:], cwd=project)
    assert r.returncode == 1, r.stderr
    sarif = json.loads((project / ".sarif" / "kernlint.sarif").read_text())
    assert sarif["runs"][0]["results"]
