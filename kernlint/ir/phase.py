"""The IR phase's one entry point: :func:`run_ir_phase`.

For each Triton kernel: decide the specializations, compile what the cache lacks in worker
processes, run the selected IR rules on each compiled artefact and return the findings, each
carrying the specialization it came from. TileLang kernels take the same path, lowered to CUDA and
compiled to PTX with nvcc instead (:mod:`kernlint.ir.tilelang`), once per set of factory arguments. Both the compiled artefacts and the findings drawn from
them are cached, so a warm run neither imports the user's modules nor starts a worker.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from kernlint.cache import DiskCache
from kernlint.ir.artifacts import CompiledKernel
from kernlint.ir.cache import DEFAULT_CACHE_DIR, artifact_key
from kernlint.ir.compile import DEFAULT_TIMEOUT_S, CompileJob, run_jobs
from kernlint.ir.discovery import helper_functions
from kernlint.ir.occupancy import parse_arch
from kernlint.ir.rulebase import IRRule
from kernlint.ir.specialize import DEFAULT_MAX_CONFIGS, specializations_for
from kernlint.ir.tilelang import (NOTICE_MISSING, NOTICE_NO_NVCC, LowerJob, nvcc_path, tilelang_available,
                                  tilelang_entries, toolchain_version)
from kernlint.model import FileError, Finding, Frontend, Kernel, Phase
from kernlint.source.discover import ModuleInfo
from kernlint.source.phase import contained, read_module, too_complex

DEFAULT_ARCH = "sm_90"


def ir_rules(select: Iterable[str] | None = None) -> list[type[IRRule]]:
    """The catalogue's IR rules, restricted to the codes in ``select`` when given."""
    from kernlint.registry import for_phase

    return [r for r in for_phase(Phase.IR, select) if issubclass(r, IRRule)]


@lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """Hash of the IR phase's code, the rule base and every IR rule's module: cached findings die
    with a change to any of them."""
    from kernlint import rule as rule_module
    from kernlint.registry import rule_files

    h = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for f in [*sorted(here.glob("*.py")), Path(rule_module.__file__), *rule_files(Phase.IR)]:
        try:
            h.update(f.read_bytes())
        except OSError:
            pass
    return h.hexdigest()[:16]


def _python_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*.py") if not any(part.startswith(".") for part in p.parts))
    return [path]


def _collect(paths_or_kernels: Sequence[str | os.PathLike | Kernel], modules: dict[str, ModuleInfo]
             ) -> dict[str, list[Kernel]]:
    """Triton and TileLang kernels by file; files found from paths are modelled once, into ``modules``."""
    by_path: dict[str, list[Kernel]] = {}
    for item in paths_or_kernels:
        if isinstance(item, Kernel):
            if item.frontend in (Frontend.TRITON, Frontend.TILELANG):
                by_path.setdefault(item.path, []).append(item)
            continue
        for f in _python_files(Path(item)):
            info = _module(str(f), modules)
            if info is not None and info.kernels:
                by_path.setdefault(str(f), []).extend(k.kernel for k in info.kernels)
    return by_path


def _module(path: str, modules: dict[str, ModuleInfo]) -> ModuleInfo | None:
    """The source phase's model of the file: the one handed over, else read and modelled once."""
    if path not in modules:
        try:
            source = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        info = read_module(path, source)
        if info is None:
            return None
        modules[path] = info
    return modules[path]


def _tilelang_jobs(path: str, info: ModuleInfo, names: set[str], capability: int, max_configs: int
                   ) -> list[tuple[LowerJob, int]]:
    """The lowering jobs of the TileLang kernels ``names`` of one file, with their ``def`` lines."""
    out = []
    for entry in tilelang_entries(info, max_configs=max_configs, path=path):
        if not entry.names & names:
            continue
        for spec in entry.specs:
            key = artifact_key(info.source, f"tilelang:{entry.factory}", spec.key() + toolchain_version(),
                               capability, path)
            out.append((LowerJob(path, entry.factory, spec, capability, key, entry), entry.def_line))
    return out


def _tilelang_notice() -> str | None:
    """Why TileLang kernels cannot be lowered here, or None when they can."""
    if not tilelang_available():
        return NOTICE_MISSING
    if nvcc_path() is None:
        return NOTICE_NO_NVCC
    return None


def _dedupe(findings: list[Finding]) -> list[Finding]:
    """One finding per (rule, place); the others' specializations are listed in its evidence."""
    kept: dict[tuple, Finding] = {}
    for f in findings:
        key = (f.rule, f.path, f.span.line, f.span.col, f.kernel)
        if key not in kept:
            kept[key] = f
        else:
            also = kept[key].evidence.setdefault("also_in_specializations", [])
            label = f.evidence.get("specialization_label")
            if label and label not in also:
                also.append(label)
    return list(kept.values())


def run_ir_phase(
    paths_or_kernels: Sequence[str | os.PathLike | Kernel],
    arch: str | int = DEFAULT_ARCH,
    select: Iterable[str] | None = None,
    cache_dir: str | os.PathLike | None = DEFAULT_CACHE_DIR,
    jobs: int = 0,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_configs: int = DEFAULT_MAX_CONFIGS,
    options: dict[str, dict[str, Any]] | None = None,
    stats: dict[str, Any] | None = None,
    modules: dict[str, ModuleInfo] | None = None,
    specialize: dict[str, dict[str, Any]] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[Finding]:
    """Compile every Triton kernel found (or given) and return the IR rules' findings.

    ``paths_or_kernels``: files, folders or :class:`Kernel` objects from the core's discovery.
    ``arch``: ``sm_80``, ``sm_86``, ``sm_89``, ``sm_90`` (default)... ``select``: rule codes to run
    (default: every IR rule). ``cache_dir``: on-disk cache (``None`` disables it). ``jobs``: worker
    processes (0: one per core). ``options``: per-rule options, e.g. ``{"KL304": {"threshold": 0.5}}``.
    ``modules``: the source phase's model of each file by path, parsed once (files not in it are
    read and modelled here).
    ``specialize``: kernel name -> ``NAME = value`` pairs to compile it with (the configuration's).
    ``stats``, when given, is filled with counts (kernels, specializations, compiled, cache hits)
    and ``notices``: phase parts skipped, e.g. TileLang kernels without the ``tilelang`` extra.
    ``on_progress(done, total)``: called as compilations finish.

    TileLang kernels are lowered to CUDA and compiled to PTX with nvcc (:mod:`kernlint.ir.tilelang`);
    without TileLang installed they are skipped with one notice.
    """
    capability = parse_arch(arch)
    rules = [cls(**(options or {}).get(cls.code, {})) for cls in ir_rules(select)]
    cache = DiskCache(cache_dir)
    rules_key = hashlib.sha256(
        repr(sorted((r.code, sorted(r.opts.items())) for r in rules)).encode() + _code_fingerprint().encode()
    ).hexdigest()[:16]
    counts: dict[str, Any] = {"kernels": 0, "specializations": 0, "compiled": 0, "findings_cache_hits": 0,
                              "artifact_cache_hits": 0, "failed": 0, "tilelang_kernels": 0}
    notices: list[str] = []
    errors: list[FileError] = []
    findings: list[Finding] = []
    pending: list[tuple[CompileJob | LowerJob, int]] = []

    #: (file, name on the GPU) -> kernel compiled under it -> the grid/block of each specialization
    #: (TileLang names kernels after their prim_func, usually ``main``, so two kernels of one file
    #: can share ``main_kernel``)
    launches: dict[tuple[str, str], dict[str, list]] = {}

    def note_symbol(job: CompileJob | LowerJob, record: dict | None) -> None:
        meta = (record or {}).get("metadata") or {}
        if meta.get("name"):
            launches.setdefault((job.path, meta["name"]), {}).setdefault(job.kernel, []).append(meta.get("launch"))

    def schedule(job: CompileJob | LowerJob, def_line: int) -> None:
        counts["specializations"] += 1
        cached = cache.get(f"{job.key}-{rules_key}", kind="findings")
        if cached is not None:
            counts["findings_cache_hits"] += 1
            findings.extend(Finding.from_dict(d) for d in cached["findings"])
            if isinstance(job, LowerJob):
                note_symbol(job, cache.get(job.key))
            return
        record = cache.get(job.key)
        note_symbol(job, record)
        if record is not None:
            counts["artifact_cache_hits"] += 1
            findings.extend(_check(rules, record, job, def_line, cache, rules_key))
        else:
            pending.append((job, def_line))

    tilelang_notice: list[str | None] = []  # decided once, at the first TileLang kernel
    modules = dict(modules or {})
    for path, kernels in _collect(paths_or_kernels, modules).items():
        with contained(path, errors):  # a kernlint bug on one file: its error record, the rest still compiled
            try:
                info = _module(path, modules)
                helpers = helper_functions(info) if info is not None else set()
            except RecursionError:
                info = None
            if info is None:
                continue
            source = info.source
            for kernel in kernels:
                if kernel.frontend is not Frontend.TRITON or kernel.name in helpers:
                    continue
                try:
                    specs, _problems = specializations_for(kernel, info, max_configs=max_configs,
                                                           configured=(specialize or {}).get(kernel.name))
                except RecursionError:
                    notices.append(too_complex(path, f"kernel {kernel.name}").replace("analyse", "specialize for the IR phase"))
                    continue
                if not specs:
                    continue
                counts["kernels"] += 1
                for spec in specs:
                    key = artifact_key(source, kernel.name, spec.key(), capability, path)
                    schedule(CompileJob(path, kernel.name, spec, capability, key), kernel.span.line)
            tl_names = {k.name for k in kernels if k.frontend is Frontend.TILELANG}
            if tl_names:
                if not tilelang_notice:
                    tilelang_notice.append(_tilelang_notice())
                if tilelang_notice[0]:
                    continue
                tl_jobs = _tilelang_jobs(path, info, tl_names, capability, max_configs)
                counts["tilelang_kernels"] += len({j.entry.factory for j, _ in tl_jobs})
                for job, def_line in tl_jobs:
                    schedule(job, def_line)
    if tilelang_notice and tilelang_notice[0]:
        notices.append(tilelang_notice[0])
    if pending:
        results = run_jobs([j for j, _ in pending], workers=jobs, timeout_s=timeout_s, on_progress=on_progress)
        for job, def_line in pending:
            record = results.get(job.key, {"ok": False, "stage": "crash", "error": "no result", "line": 0})
            note_symbol(job, record)
            counts["compiled"] += 1
            if not record.get("ok"):
                counts["failed"] += 1
            if record.get("ok") or record.get("stage") in ("compile", "import"):
                cache.put(job.key, record)
            findings.extend(_check(rules, record, job, def_line, cache, rules_key))
    for f in findings:
        sharing = launches.get((f.path, f.device_symbol or ""), {})
        if len(sharing) > 1:  # a profiler reports them under one name: only their launch shapes can tell them apart
            f.evidence["device_symbol_shared_by"] = sorted(sharing)
            f.evidence["device_symbol_launches"] = sharing
    if stats is not None:
        stats.update(counts)
        stats["notices"] = notices
        stats["errors"] = errors
    return sorted(_dedupe(findings), key=lambda f: f.sort_key)


def _check(rules: list[IRRule], record: dict, job: CompileJob | LowerJob, def_line: int, cache: DiskCache,
           rules_key: str) -> list[Finding]:
    compiled = CompiledKernel.from_record(record, job.path, job.kernel, job.spec, job.capability, def_line)
    out: list[Finding] = []
    for rule in rules:
        try:
            out.extend(rule.check(compiled))
        except Exception as e:  # noqa: BLE001 - one broken rule must not stop the phase
            out.append(Finding(
                rule=rule.code, path=job.path, span=compiled.span(def_line, 1),
                message=f"internal error in {rule.code} on {job.kernel}: {type(e).__name__}: {e}",
                level=rule.level, phase=Phase.IR, kernel=job.kernel,
                evidence={"internal_error": True, "specialization_label": job.spec.label},
            ))
    guessed = getattr(job.spec, "guessed", ())
    if guessed:
        for f in out:
            f.evidence["guessed"] = list(guessed)
            f.message += (f" (compiled with guessed {job.spec.guessed_values()}: no launch, autotune config or "
                          f"default in the module gives {'it' if len(guessed) == 1 else 'them'}; "
                          f"`# kernlint: specialize(...)` on the kernel sets the real values)")
    if record.get("ok") or record.get("stage") in ("compile", "import"):
        cache.put(f"{job.key}-{rules_key}", {"findings": [f.to_dict() for f in out]}, kind="findings")
    return out


def compiled_kernels(paths_or_kernels: Sequence[str | os.PathLike | Kernel], arch: str | int = DEFAULT_ARCH,
                     cache_dir: str | os.PathLike | None = DEFAULT_CACHE_DIR, jobs: int = 0,
                     max_configs: int = DEFAULT_MAX_CONFIGS) -> list[CompiledKernel]:
    """The compiled artefacts of the Triton kernels (for ``kernlint`` commands that print IR excerpts)."""
    capability = parse_arch(arch)
    cache = DiskCache(cache_dir)
    out: list[tuple[CompileJob, int, dict | None]] = []
    modules: dict[str, ModuleInfo] = {}
    for path, kernels in _collect(paths_or_kernels, modules).items():
        info = _module(path, modules)
        if info is None:
            continue
        for kernel in kernels:
            if kernel.frontend is not Frontend.TRITON:
                continue
            for spec in specializations_for(kernel, info, max_configs=max_configs)[0]:
                key = artifact_key(info.source, kernel.name, spec.key(), capability, path)
                out.append((CompileJob(path, kernel.name, spec, capability, key), kernel.span.line, cache.get(key)))
    missing = [j for j, _, r in out if r is None]
    results = run_jobs(missing, workers=jobs) if missing else {}
    compiled = []
    for job, def_line, record in out:
        if record is None:
            record = results.get(job.key, {"ok": False, "stage": "crash", "error": "no result"})
            if record.get("ok"):
                cache.put(job.key, record)
        compiled.append(CompiledKernel.from_record(record, job.path, job.kernel, job.spec, capability, def_line))
    return compiled


def attach_to_source_findings(source_findings: list[Finding], ir_findings: list[Finding]) -> list[Finding]:
    """Merge IR findings into source findings of the same category at the same line.

    Where the source phase already reported a defect (same path, line and category), the IR
    finding's evidence is attached to it (``evidence["ir"]``) instead of being reported twice.
    Returns the IR findings that remain.
    """
    from kernlint.catalogue import all_rules

    rules = all_rules()

    def category(code: str) -> str | None:
        rule = rules.get(code)
        return rule.category if rule else None

    index: dict[tuple, Finding] = {}
    for f in source_findings:
        index.setdefault((os.path.realpath(f.path), f.span.line, category(f.rule)), f)
    remaining = []
    for f in ir_findings:
        target = index.get((os.path.realpath(f.path), f.span.line, category(f.rule)))
        if target is None:
            remaining.append(f)
            continue
        target.evidence.setdefault("ir", []).append({"rule": f.rule, "message": f.message, **f.evidence})
        for k, v in f.measurements.items():
            target.measurements.setdefault(k, v)
    return remaining
