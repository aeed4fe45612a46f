"""Command line: ``kernlint check``, ``kernlint rule``, ``kernlint rules`` (and the phases' commands).

Exit codes follow ruff: 0 clean, 1 findings at or above ``--fail-level``, 2 bad usage,
configuration or input (a file that cannot be read or parsed).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from kernlint import __version__, catalogue
from kernlint.config import ConfigError, load
from kernlint.extras import MissingExtra, explain, require
from kernlint.model import Level, Verdict
from kernlint.report import FORMATS, render

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(values: tuple[str, ...]) -> list[str]:
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


def _fail(message: str) -> None:
    click.echo(f"kernlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _require(feature: str) -> None:
    try:
        require(feature)
    except MissingExtra as exc:
        _fail(str(exc))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kernlint")
def main() -> None:
    """Static-plus-dynamic linter and evaluation harness for Triton and TileLang GPU kernels."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (comma-separated; ALL for every rule).")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable (comma-separated).")
@click.option("--output-format", type=click.Choice(FORMATS), default=None, help="Output format (default: concise).")
@click.option("-o", "--output", "output_file", type=click.Path(path_type=Path),
              help="Write the report to FILE (a .sarif or .json name picks that format unless --output-format says otherwise).")
@click.option("--fail-level", type=click.Choice(["note", "warning", "error"]), default=None,
              help="Lowest finding level that makes the exit code 1 (default: warning).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False),
              help="pyproject.toml to read [tool.kernlint] from (default: the nearest one).")
@click.option("--stdin-filename", help="The file name to report for source read from stdin ('-').")
@click.option("--force-exclude", is_flag=True, help="Apply exclude patterns to files named on the command line too.")
@click.option("--ir/--no-ir", default=None, help="Also compile kernels and lint TTIR/TTGIR/PTX (default: off).")
@click.option("--arch", default=None, help="Target GPU for the IR phase, e.g. sm_90 (default), sm_80.")
@click.option("--show-ir", is_flag=True, help="Print the IR excerpt behind each IR finding (the full format always does).")
@click.option("--confirm", "confirm_", is_flag=True,
              help="Confirm or refute each finding by running the kernels (compute-sanitizer/ncu on a GPU, "
                   "the exact-bounds interpreter without one).")
@click.option("--run", "run_cmd", default=None, help="Command that runs the kernels for --confirm (default: "
              "[tool.kernlint.confirm] command, else each file's run() or __main__).")
@click.option("--require-gpu", is_flag=True, help="With --confirm: fail (exit 2) when no GPU is available.")
@click.option("--confirm-mode", type=click.Choice(["discover", "judge"]), default=None,
              help="With --confirm: run every kernel file's entry point under the checkers (discover, the default; "
                   "[tool.kernlint.confirm] mode) or only judge the static findings (judge: faster).")
@click.option("--confirm-timeout", type=float, default=600.0, show_default=True, help="Seconds per confirming run.")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable on top of the selection.")
@click.option("--fix", is_flag=True, help="Apply the safe fixes (KL104 int64 widening, KL108 triton.cdiv) in place.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix: also apply the unsafe ones (a `<=` mask to `<`).")
@click.option("--add-noqa", is_flag=True, help="Add a `# noqa: CODE` comment to each line with a finding.")
@click.option("--statistics", is_flag=True, help="Print the number of findings per rule instead of the findings.")
@click.option("-q", "--quiet", is_flag=True, help="Print the findings only, without the summary line and notes.")
@click.option("--show-source", is_flag=True, help="Show the source lines of each finding (the full format).")
@click.option("--respect-gitignore/--no-respect-gitignore", default=True,
              help="Skip files that .gitignore ignores when walking folders (default: on).")
@click.option("-n", "--no-cache", is_flag=True, envvar="KERNLINT_NO_CACHE",
              help="Lint every file afresh: neither read nor write .kernlint_cache/source (env KERNLINT_NO_CACHE).")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0, show_default=True,
              help="Worker processes for the source phase (0: one per core when there are enough files; 1: none).")
def check(paths, select, ignore, output_format, output_file, fail_level, exit_zero, config_file, stdin_filename,
          force_exclude, ir, arch, show_ir, confirm_, run_cmd, require_gpu, confirm_timeout, confirm_mode=None,
          extend_select=(), fix=False, unsafe_fixes=False, add_noqa=False, statistics=False, quiet=False,
          show_source=False, respect_gitignore=True, no_cache=False, jobs=0) -> None:
    """Lint kernels in PATHS (files or folders; '-' reads stdin, as does --stdin-filename without PATHS)."""
    from kernlint.check import Options, run_check

    # as ruff: --stdin-filename without paths reads stdin
    paths = list(paths) or [Path("-") if stdin_filename else Path(".")]
    use_stdin = paths == [Path("-")]
    if Path("-") in paths and not use_stdin:
        _fail("'-' (stdin) cannot be combined with other paths")
    try:
        config = load(Path.cwd() if use_stdin else paths[0], config_file)
    except ConfigError as exc:
        _fail(str(exc))
    if use_stdin and confirm_ and not (run_cmd or config.confirm.get("command")):
        # the text on stdin (an editor's unsaved buffer) is not the file on disk: running that would judge other code
        _fail("--confirm with source from stdin needs --run CMD (or [tool.kernlint.confirm] command)")
    use_ir = ir if ir is not None else bool(config.ir)
    target = arch or config.arch or "sm_90"
    if use_ir:
        _require("--ir")
        from kernlint.ir.occupancy import parse_arch

        try:
            parse_arch(target)
        except (ValueError, KeyError) as exc:
            where = "--arch" if arch else f"{config.source}: [tool.kernlint] arch"
            _fail(f"{where} {target!r}: {exc}")
    if confirm_:
        _require("--confirm")
    options = Options(
        select=_codes(select) or None,
        extend_select=_codes(extend_select) or None,
        ignore=_codes(ignore) or None,
        force_exclude=force_exclude,
        stdin_filename=stdin_filename,
        ir_arch=target if use_ir else None,
        confirm={"run": run_cmd, "require_gpu": require_gpu, "timeout": confirm_timeout, "mode": confirm_mode}
        if confirm_ else None,
        respect_gitignore=respect_gitignore,
        jobs=jobs,
        cache=not no_cache,
    )
    gpu_required: tuple[type[Exception], ...] = ()
    if confirm_:
        from kernlint.dynamic.confirm import GpuRequired

        gpu_required = (GpuRequired,)
    stdin = sys.stdin.buffer.read() if use_stdin else None
    if use_stdin and force_exclude and stdin_filename and config.is_excluded(Path(stdin_filename)):
        # editors pipe every buffer through; an excluded one is passed over silently, as ruff does
        if fix:
            sys.stdout.buffer.write(stdin)
        sys.exit(EXIT_CLEAN)
    try:
        if fix or add_noqa:
            from kernlint.fixes import rewrite

            stdin, counts = rewrite(paths, config, options, stdin, fix=fix, unsafe=unsafe_fixes, add_noqa=add_noqa)
        from kernlint.progress import bar, wanted

        with bar(f"compiling for {target}", wanted(quiet) and use_ir) as on_progress:
            result = run_check(paths, config, options, stdin=stdin, on_ir_progress=on_progress)
        if fix:
            left = counts["unsafe_left"]
            result.notices.append(f"fixed {counts['fixed']} finding{'s' if counts['fixed'] != 1 else ''}"
                                  + (f"; {left} more with --unsafe-fixes" if left else ""))
        if add_noqa:
            result.notices.append(f"added {counts['noqa']} noqa comment{'s' if counts['noqa'] != 1 else ''}")
    except catalogue.UnknownRule as exc:
        _fail(f"unknown rule code or prefix {exc.args[0]!r} (see `kernlint rules`)")
    except gpu_required as exc:
        _fail(f"--require-gpu: {exc}")
    if show_ir and not use_ir:
        result.notices.append("--show-ir needs the IR phase: add --ir")
    by_suffix = {".sarif": "sarif", ".json": "json"}.get(output_file.suffix) if output_file else None
    fmt = output_format or by_suffix or config.output_format or "concise"
    if fmt not in FORMATS:
        _fail(f"unknown output format {fmt!r} in configuration")
    if show_source and fmt == "concise":
        fmt = "full"
    if statistics:
        from kernlint.report.text import statistics as rule_counts

        text = rule_counts(result)
    else:
        text = render(result, fmt, config.root, show_ir=show_ir)
    if quiet and fmt in ("concise", "full"):
        from kernlint.report.text import without_summary

        text = without_summary(text, result)
    if fix and use_stdin:  # the fixed text goes to stdout, the report to stderr (as ruff)
        sys.stdout.buffer.write(stdin)
        sys.stdout.flush()
        if output_file is None:
            click.echo(text, nl=False, err=True)
            text = None
    if output_file is not None:
        try:
            output_file.parent.mkdir(parents=True, exist_ok=True)
            output_file.write_text(text, encoding="utf-8")
        except OSError as exc:
            _fail(f"cannot write {output_file}: {exc.strerror or exc}")
        from kernlint.report.text import summary

        if not quiet:
            click.echo(summary(result), err=True)
    elif text is not None:
        click.echo(text, nl=False)
    if result.errors:
        sys.exit(EXIT_ERROR)
    threshold = Level(fail_level or config.fail_level)
    # a finding a GPU run refuted does not fail the run; it stays in the report with its verdict
    failing = [f for f in result.findings if f.level.rank >= threshold.rank and f.verdict is not Verdict.REFUTED]
    sys.exit(EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN)


@main.command("rule")
@click.argument("code")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rule_command(code: str, output_format: str) -> None:
    """Print the documentation of rule CODE (e.g. KL101 or out-of-bounds-load)."""
    try:
        rule = catalogue.get_rule(code)
    except catalogue.UnknownRule:
        _fail(f"unknown rule {code!r} (see `kernlint rules`)")
    if output_format == "json":
        meta = rule.metadata()
        meta["bad"] = list(rule.bad)
        meta["good"] = list(rule.good)
        click.echo(json.dumps(meta, indent=2))
        return
    click.echo(f"# {rule.name} ({rule.code})\n")
    click.echo(f"Category: {rule.category} · default level: {rule.level.value} · phase: {rule.phase.value}")
    confirm = rule.confirm
    how = f"{confirm.tool}" + (f" {confirm.check}" if confirm.check else "") + (f" ({confirm.threshold})" if confirm.threshold else "")
    click.echo(f"Confirmed on a GPU by: {how}\n")
    click.echo(rule.summary + "\n")
    click.echo(rule.docs.strip())


@main.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json", "markdown"]), default="text")
def rules_command(output_format: str) -> None:
    """List every rule with its code, name, category, level and phase."""
    rules = catalogue.all_rules()
    if output_format == "markdown":
        click.echo(catalogue.markdown(), nl=False)
        return
    if output_format == "json":
        click.echo(json.dumps([r.metadata() for r in rules.values()], indent=2))
        return
    for r in rules.values():
        click.echo(f"{r.code}  {r.name:<34} {r.category:<18} {r.level.value:<8} {r.phase.value:<8} {r.summary}")


@main.command("config")
@click.option("--schema", is_flag=True, help="Print the JSON schema of [tool.kernlint] (for editors and CI checks).")
@click.option("--markdown", is_flag=True, help="Print the keys as the README's Markdown table.")
@click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False),
              help="pyproject.toml to read (default: the nearest one).")
def config_command(schema: bool, markdown: bool, config_file: Path | None) -> None:
    """Print the configuration in effect (type-checked), or with --schema its JSON schema."""
    from dataclasses import asdict

    from kernlint.config import json_schema, markdown_table

    if markdown:
        click.echo(markdown_table(), nl=False)
        return
    if schema:
        click.echo(json.dumps(json_schema(), indent=2))
        return
    try:
        config = load(Path.cwd(), config_file)
    except ConfigError as exc:
        _fail(str(exc))
    values = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()}
    click.echo(json.dumps(values, indent=2))


@main.command("confirm")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--run", "run_cmd", default=None, help="Command that runs the kernels.")
@click.option("--require-gpu", is_flag=True, help="Fail (exit 2) when no GPU is available.")
@click.option("--confirm-mode", type=click.Choice(["discover", "judge"]), default=None,
              help="discover (default): run every kernel file's entry point; judge: only confirm the findings.")
@click.option("--output-format", type=click.Choice(FORMATS), default=None)
@click.option("-o", "--output", "output_file", type=click.Path(path_type=Path))
@click.pass_context
def confirm_command(ctx, paths, run_cmd, require_gpu, confirm_mode, output_format, output_file) -> None:
    """Lint PATHS and confirm or refute every finding with a run (same as `check --confirm`)."""
    ctx.invoke(check, paths=paths, confirm_=True, run_cmd=run_cmd, require_gpu=require_gpu,
               output_format=output_format, output_file=output_file, select=(), ignore=(), fail_level=None,
               exit_zero=False, config_file=None, stdin_filename=None, force_exclude=False, ir=None, arch=None,
               show_ir=False, confirm_mode=confirm_mode, confirm_timeout=600.0)


@main.command("server")
def server_command() -> None:
    """Run the language server (LSP over stdio) for editors: diagnostics as you type, quick fixes."""
    _require("server")
    from kernlint.server import serve

    serve()


def _register_optional_commands() -> None:
    """Commands of phases that live in their own packages."""
    import functools

    from kernlint.eval.cli import eval_command

    run_eval = eval_command.callback

    @functools.wraps(run_eval)
    def eval_with_its_extra(*args, **kwargs):
        _require("eval")  # here, not at import: `kernlint eval --help` works without the extra
        return run_eval(*args, **kwargs)

    eval_command.callback = eval_with_its_extra
    main.add_command(eval_command, "eval")


_register_optional_commands()


def entry() -> None:
    """Console entry: no traceback ever reaches the user unless KERNLINT_DEBUG is set."""
    try:
        main(standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo("kernlint: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001
        if os.environ.get("KERNLINT_DEBUG"):
            raise
        missing_extra = explain(exc) if isinstance(exc, ModuleNotFoundError) else None
        if missing_extra:
            click.echo(f"kernlint: error: {missing_extra}", err=True)
            sys.exit(EXIT_ERROR)
        click.echo(f"kernlint: internal error: {exc.__class__.__name__}: {exc} (set KERNLINT_DEBUG=1 for details)", err=True)
        sys.exit(EXIT_ERROR)
