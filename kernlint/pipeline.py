"""``kernlint check``: discover -> source -> IR -> dynamic -> one filter -> report.

Selection (select/ignore/extend-select), per-file-ignores and suppression comments are applied
once, by :func:`apply_filters`, after every phase has run, to every finding whichever phase
produced it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kernlint import catalogue
from kernlint.config import Config
from kernlint.registry import for_phase
from kernlint.cache import cache_dir
from kernlint.model import FileError, Finding, Level, Phase, RunResult, Span
from kernlint.source.discover import ModuleInfo
from kernlint.source.files import FileInput, lint_files
from kernlint.source.phase import contained
from kernlint.source.suppress import Suppressions

#: the rule that reports ``# noqa: KL...`` codes that silenced nothing (off unless selected)
UNUSED_NOQA = "KL001"


@dataclass
class Options:
    select: list[str] | None = None
    ignore: list[str] | None = None
    force_exclude: bool = False
    stdin_filename: str | None = None
    #: run the IR phase for this target (None: do not)
    ir_arch: str | None = None
    #: run the dynamic phase: ``{"run": cmd | None, "require_gpu": bool, "timeout": s, "mode": "discover" |
    #: "judge" | None}`` (None: do not)
    confirm: dict | None = None
    respect_gitignore: bool = True
    #: codes or prefixes enabled on top of the selection (``--extend-select``)
    extend_select: list[str] | None = None
    #: worker processes for the source phase (0: one per core where the run is large enough; 1: none)
    jobs: int = 0
    #: keep and reuse each file's source findings in ``.kernlint_cache/source`` (``--no-cache``: off)
    cache: bool = False


@dataclass
class _FileState:
    """What the filter needs of each file: its suppression comments (None: it has none)."""

    suppressions: dict[str, Suppressions] = field(default_factory=dict)
    #: the source phase's model of each file with kernels, by real path, for the IR phase
    modules: dict[str, ModuleInfo] = field(default_factory=dict)


def collect_files(paths: list[Path], config: Config, force_exclude: bool
                  ) -> tuple[list[tuple[Path, bool]], list[FileError]]:
    """The files to lint, each with whether it was named on the command line (those are always
    read; files found in folders are skipped when they mention no kernel framework)."""
    files: list[tuple[Path, bool]] = []
    errors: list[FileError] = []
    seen: set[Path] = set()
    for path in paths:
        if not path.exists():
            errors.append(FileError(str(path), "no such file or directory"))
            continue
        if path.is_file():
            if force_exclude and config.is_excluded(path):
                continue
            candidates = [(path, True)]
        else:
            candidates = [(sub, False) for sub in sorted(path.rglob("*.py"))
                          if sub.is_file() and not config.is_excluded(sub)]
        for c, named in candidates:
            key = c.resolve()
            if key not in seen:
                seen.add(key)
                files.append((c, named))
    return files, errors


def input_files(paths: list[Path], config: Config, options: Options
                ) -> tuple[list[tuple[Path, bool]], list[FileError]]:
    """The files a run lints: :func:`collect_files`, less what .gitignore ignores unless told not to
    (files named on the command line are always linted)."""
    files, errors = collect_files(paths, config, options.force_exclude)
    if options.respect_gitignore:
        from kernlint.gitignore import drop_ignored

        kept = set(drop_ignored([f for f, _ in files], named=paths))
        files = [(f, named) for f, named in files if f in kept]
    return files, errors


def enabled_rules(config: Config, options: Options) -> set[str]:
    select = options.select or config.select or None
    ignore = [*(config.ignore or []), *(options.ignore or [])]
    extend = [*(config.extend_select or []), *(options.extend_select or [])]
    return catalogue.select_codes(select, ignore, extend=extend or None)


def source_rules(codes: set[str]):
    return [rule() for rule in for_phase(Phase.SOURCE, codes)]


def run_check(paths: list[Path], config: Config, options: Options, stdin: bytes | None = None,
              on_ir_progress=None) -> RunResult:
    """Lint ``paths`` (or ``stdin``) through every phase the options ask for; ``on_ir_progress(done,
    total)`` is called as the IR phase's compilations finish."""
    codes = enabled_rules(config, options)
    result = RunResult()
    state = _FileState()
    if stdin is not None:
        name = options.stdin_filename or "-"
        inputs = [(name, Path(name), stdin, True)]
    else:
        files, errors = input_files(paths, config, options)
        result.errors.extend(errors)
        inputs = [(config.relpath(f), f, None, named) for f, named in files]
    # the IR phase compiles from the module models, and the dynamic phase reads the findings'
    # evidence as the engine made it: both are served by a fresh source phase
    keep_models = options.ir_arch is not None
    cached = options.cache and not keep_models and options.confirm is None and stdin is None
    linted = lint_files([FileInput(*i) for i in inputs], source_rules(codes), codes, jobs=options.jobs,
                        cache_dir=cache_dir(config.root, "source") if cached else None, keep_models=keep_models)
    for one in linted:
        file_result, info = one.result, one.info
        if one.suppressions is not None:
            state.suppressions[one.display] = one.suppressions
        if info is not None and info.kernels:
            key = str((config.root / one.display).resolve())
            with contained(one.display, file_result.errors):  # facts no source rule asked for are built here
                info.facts  # noqa: B018
                state.modules[key] = info
            if key not in state.modules:
                file_result.kernels = []  # nothing to compile from a file kernlint could not model
        result.extend(file_result)
    if options.ir_arch is not None:
        from kernlint.ir_glue import add_ir_findings

        add_ir_findings(result, config, codes, options.ir_arch, modules=state.modules, on_progress=on_ir_progress)
    if options.confirm is not None:
        from kernlint.confirm_glue import confirm_result

        confirm_result(result, config, options.confirm.get("run"), bool(options.confirm.get("require_gpu")),
                       float(options.confirm.get("timeout", 600.0)), options.confirm.get("mode"))
    phases = {Phase.SOURCE} | ({Phase.IR} if options.ir_arch else set()) | ({Phase.DYNAMIC} if options.confirm else set())
    apply_filters(result, config, codes, state.suppressions, phases)
    return result


def apply_filters(result: RunResult, config: Config, codes: set[str], suppressions: dict[str, Suppressions],
                  phases: set[Phase]) -> None:
    """Drop findings of rules not enabled, ignored for their file, or silenced by a comment; then,
    when KL001 is enabled, report ``# noqa: KL...`` codes that silenced nothing in this run."""
    def kept(f: Finding) -> bool:
        if f.rule not in codes or f.rule in config.ignored_for(f.path):
            return False
        sup = suppressions.get(f.path)
        return sup is None or not sup.suppressed(f)

    findings = [f for f in result.findings if kept(f)]
    if UNUSED_NOQA in codes:
        findings += [f for f in _unused_noqa(suppressions, codes, phases) if kept(f)]
    result.findings = findings


def _unused_noqa(suppressions: dict[str, Suppressions], codes: set[str], phases: set[Phase]) -> list[Finding]:
    """Codes a directive names that silenced nothing, among rules of the phases that ran (as ruff's
    RUF100, a code of a rule that is not enabled is unused too, and said so)."""
    rules = catalogue.all_rules()
    level = rules[UNUSED_NOQA].level if UNUSED_NOQA in rules else Level.WARNING
    out = []
    for path, sup in sorted(suppressions.items()):
        for directive in sup.directives:
            unused = sorted(c for c in directive.codes - directive.used if c in rules and rules[c].phase in phases)
            if not unused:
                continue
            off = [c for c in unused if c not in codes]
            detail = ", ".join(c for c in unused if c in codes)
            if off:
                detail += ("; " if detail else "") + f"non-enabled: {', '.join(off)}"
            out.append(Finding(
                rule=UNUSED_NOQA, path=path, span=Span(directive.line, directive.col, directive.line, directive.col + 6),
                message=f"unused `noqa` directive ({detail}): no such finding on this line",
                level=level, phase=Phase.SOURCE, evidence={"unused_codes": unused},
            ))
    return out
