"""CPU fallback of the dynamic phase: exact bounds and write overlap on Triton's interpreter.

``run_interpreted`` runs the user's entry point in a subprocess with ``TRITON_INTERPRET=1`` and the
instrumentation of :mod:`kernlint.dynamic.interp_hook`; ``confirm_findings`` turns what it saw into
verdicts on out-of-bounds and race findings, and into new KL401/KL402 findings for what no static
rule predicted.

What this method sees and what it does not:

- it judges every unmasked lane against the exact byte range of every tensor passed to the
  launch, so over-reads that stay inside an allocator's granularity (invisible to memcheck) are
  caught; an access that lands inside *another* argument tensor is not out of bounds to it;
- it sees races between programs on global memory (writes of one address by two programs, a
  plain write of an address another program updates atomically, and reads of an address another
  program of the launch writes, unless atomics order the read after the write in the run:
  the last-arriver ticket), which no sanitizer reports; it
  cannot see races *within* a program (a Triton program is one logical thread of tensor ops) nor
  ordering bugs between launches;
- the interpreter runs the programs one after another, in order: what depends on timing (a
  spin-wait for another program) is judged as if uncontended;
- it only runs what the entry point runs, at the sizes the entry point uses: a line that never
  executed is *inconclusive*, never refuted.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from kernlint.dynamic.evidence import Evidence, same_file
from kernlint.dynamic.interp_hook import OUT_DIR_ENV, WAIT_MESSAGE
from kernlint.dynamic.verdicts import apply_evidence, matches, rule_category
from kernlint.model import Finding

TOOL = "interpreter"
#: the categories of the findings the interpreter judges; ``uninitialized-read`` only for a rule
#: whose confirmation names the interpreter (a grid that leaves outputs unwritten, KL108), not one
#: only a sanitizer sees (shared memory read before it is written)
CATEGORIES = {"out-of-bounds", "race", "atomic", "uninitialized-read"}
_BY_CONFIRMATION = {"uninitialized-read"}
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_SITE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interp_site")


@dataclass
class InterpRecord:
    """One violation at one source line in one launch (kinds: oob-read, oob-write, race-write,
    race-read), or what one atomic's updates were (atomic-exclusive: each address updated by one
    program only; atomic-shared)."""

    kind: str
    kernel: str
    path: str
    line: int
    op: str = ""
    stack: list[str] = field(default_factory=list)
    launch: int = 0
    grid: list[int] | None = None
    programs: list[list[int]] = field(default_factory=list)
    program_count: int = 0
    address: int | None = None
    tensor: str | None = None
    tensor_start: int | None = None
    tensor_bytes: int | None = None
    #: out of bounds: lanes outside every tensor, and how far the worst one went
    lanes: int = 0
    bytes_past_end: int = 0
    bytes_before_start: int = 0
    #: races: distinct bytes involved, offset of the first one in its tensor
    bytes: int = 0
    offset_bytes: int | None = None
    #: atomics: addresses updated by more than one program
    shared_bytes: int = 0
    #: unwritten outputs: elements no kernel wrote, of how many, the first of them
    elements: int = 0
    total_elements: int = 0
    first_element: int | None = None
    #: ``path:line`` of the launch whose outputs were left unwritten
    launch_site: str = ""
    #: the autotuner's config whose run left them unwritten where another config's run wrote them
    config: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "InterpRecord":
        names = cls.__dataclass_fields__.keys()
        return cls(**{k: v for k, v in d.items() if k in names})

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def to_evidence(self) -> Evidence:
        if self.kind.startswith("oob"):
            m = {"oob_accesses": self.lanes, "max_bytes_past_end": self.bytes_past_end,
                 "max_bytes_before_start": self.bytes_before_start, "oob_programs": self.program_count}
        elif self.kind == "unwritten-output":
            m = {"unwritten_elements": self.elements, "output_elements": self.total_elements}
            if self.config:
                m["config"] = self.config
        elif self.kind.startswith("atomic"):
            m = {"atomic_programs": self.program_count, "atomic_bytes": self.bytes, "shared_bytes": self.shared_bytes}
        else:
            m = {"racing_programs": self.program_count, "race_bytes": self.bytes}
        if self.tensor:
            m["tensor"] = self.tensor
        if self.kind.startswith("oob") and self.tensor_bytes is not None:
            m["tensor_bytes"] = self.tensor_bytes
        detail = {"kernel": self.kernel, "line": self.line, "launch": self.launch, "grid": self.grid,
                  "programs": self.programs, "address": self.address, "tensor": self.tensor}
        if self.kind == "unwritten-output":
            detail = {"kernel": self.kernel, "line": self.line, "launch": self.launch, "grid": self.grid,
                      "tensor": self.tensor, "first_unwritten_element": self.first_element,
                      "launch_site": self.launch_site, **({"config": self.config} if self.config else {})}
        return Evidence(TOOL, self.kind, self.kernel, self.path, self.line, m, detail)


@dataclass
class InterpResult:
    """What one instrumented run saw."""

    command: list[str]
    returncode: int | None
    seconds: float
    launches: list[dict] = field(default_factory=list)
    records: list[InterpRecord] = field(default_factory=list)
    output_tail: str = ""
    #: why nothing could be judged (the process did not start, timed out, ...), else None
    failure: str | None = None

    @property
    def kernels_ran(self) -> set[str]:
        return {launch["kernel"] for launch in self.launches}

    def failed_launches(self) -> list[Evidence]:
        """A launch the interpreter itself could not finish: its kernel was not judged; one whose
        writes were too many to track: its races and atomics were not judged."""
        out = [Evidence(TOOL, "tool-failure", launch["kernel"], launch.get("kernel_path"), None,
                        detail={"message": _launch_failure(launch["error"])})
               for launch in self.launches if not launch.get("completed") and launch.get("error")]
        out += [Evidence(TOOL, "tool-failure", launch["kernel"], launch.get("kernel_path"), None,
                         detail={"message": "too many bytes written to track which program wrote which",
                                 "categories": ["race", "atomic"]})
                for launch in self.launches if launch.get("race_tracking_truncated")]
        return out

    def executed_sites(self) -> list[tuple[str, str, int]]:
        """(kernel, path, line) of every memory access of every launch that ran to the end."""
        out = []
        for launch in self.launches:
            if not launch.get("completed"):
                continue
            for site in launch.get("sites", []):
                out.append((launch["kernel"], site["path"], site["line"]))
                for frame in site.get("stack", [])[1:]:
                    path, _, line = frame.rpartition(":")
                    out.append((launch["kernel"], path, int(line)))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "command": self.command, "returncode": self.returncode, "seconds": self.seconds,
            "launches": self.launches, "records": [r.to_dict() for r in self.records],
            "output_tail": self.output_tail, "failure": self.failure,
        }


def _command_for(target, entry: str, args: Sequence[str]) -> tuple[list[str], bool]:
    """(argv, instrument via sitecustomize) for a file, ``module:function``, callable or command."""
    if callable(target):
        module = getattr(target, "__module__", None)
        qualname = getattr(target, "__qualname__", "")
        if not module or "<" in qualname or "." in qualname:
            raise ValueError("a callable must be a module-level function importable by name")
        if module == "__main__":
            path = getattr(sys.modules["__main__"], "__file__", None)
            if not path:
                raise ValueError("cannot re-run a function of an interactive __main__")
            return [sys.executable, "-m", "kernlint.dynamic.interp_runner", "--entry", qualname,
                    os.path.abspath(path), *args], False
        target = f"{module}:{qualname}"
    if isinstance(target, (list, tuple)):
        return [str(t) for t in target], True
    target = str(target)
    if target.endswith(".py") or os.path.isfile(target):
        return [sys.executable, "-m", "kernlint.dynamic.interp_runner", "--entry", entry,
                os.path.abspath(target), *args], False
    if ":" in target and " " not in target:
        return [sys.executable, "-m", "kernlint.dynamic.interp_runner", "--entry", entry, target, *args], False
    return shlex.split(target), True  # a shell-like command line: ``pytest tests/x.py -k add``


def run_interpreted(
    target: str | Sequence[str] | Callable,
    args: Sequence[str] = (),
    *,
    entry: str = "run",
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600.0,
) -> InterpResult:
    """Run ``target`` under Triton's interpreter with exact-bounds/write-overlap instrumentation.

    ``target``: a Python file (calls its ``entry`` function, default ``run()``, or runs its
    ``__main__`` block when it has none), ``"package.module:function"``, a module-level function,
    or a command (a list, or a string with spaces: ``"pytest tests/test_add.py -k small"``), whose
    Python processes are instrumented through ``sitecustomize``.
    """
    argv, via_site = _command_for(target, entry, args)
    with tempfile.TemporaryDirectory(prefix="kernlint-interp-") as out_dir:
        run_env = dict(os.environ if env is None else env)
        run_env["TRITON_INTERPRET"] = "1"
        run_env[OUT_DIR_ENV] = out_dir
        paths = [_PACKAGE_ROOT]
        if via_site:
            paths.insert(0, _SITE_DIR)
        if run_env.get("PYTHONPATH"):
            paths.append(run_env["PYTHONPATH"])
        run_env["PYTHONPATH"] = os.pathsep.join(paths)
        started = time.perf_counter()
        failure = None
        try:
            proc = subprocess.run(argv, cwd=cwd, env=run_env, capture_output=True, text=True, timeout=timeout)
            returncode, output = proc.returncode, (proc.stdout or "") + (proc.stderr or "")
        except subprocess.TimeoutExpired as e:
            returncode, output = None, _text(e.stdout) + _text(e.stderr)
            failure = f"timed out after {timeout:g} s"
        except OSError as e:
            returncode, output = None, ""
            failure = f"could not start {argv[0]!r}: {e}"
        seconds = time.perf_counter() - started
        launches = _read_lines(out_dir)
    unwritten = [line for line in launches if line.get("type") == "unwritten"]
    launches = [line for line in launches if line.get("type", "launch") == "launch"]
    records = [InterpRecord.from_dict(r) for launch in launches for r in launch.get("records", [])]
    sites = {launch.get("index"): launch.get("launch_site", "") for launch in launches}
    records += [InterpRecord.from_dict({**u, "launch_site": sites.get(u.get("launch"), "")}) for u in unwritten]
    if failure is None and not launches and returncode not in (0, None):
        failure = f"exited with {returncode} before any kernel ran"
    return InterpResult(argv, returncode, round(seconds, 3), launches, records, output[-4000:], failure)


def _text(b) -> str:
    if b is None:
        return ""
    return b.decode(errors="replace") if isinstance(b, bytes) else b


def _launch_failure(error: str) -> str:
    if WAIT_MESSAGE in error:  # the watchdog stopped a program spinning on another: not the tool's fault
        return WAIT_MESSAGE + " (the interpreter runs programs one after another: " + \
            error.split(WAIT_MESSAGE + ": ", 1)[-1].rstrip("')\"")[:300] + ")"
    return f"the interpreter failed on this kernel: {error}"[:500]


def _read_lines(out_dir: str) -> list[dict]:
    launches = []
    for name in sorted(os.listdir(out_dir)):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(out_dir, name), encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if line:
                    try:
                        launches.append(json.loads(line))
                    except json.JSONDecodeError:
                        continue  # a line cut by a killed process
    return launches


def confirm_findings(
    findings: list[Finding],
    result: InterpResult | Sequence[InterpRecord],
    *,
    root: str | None = None,
    category_of: Callable[[str], str | None] = rule_category,
) -> list[Finding]:
    """Verdicts for out-of-bounds and race findings from an instrumented run, plus new KL401/KL402
    findings (phase dynamic, confirmed) for violations no finding predicted.

    With a bare list of records (no run information) a finding without a record is inconclusive.
    """
    findings, new, _ = judge(findings, result, root=root, category_of=category_of)
    return findings + new


def judge(
    findings: list[Finding],
    result: InterpResult | Sequence[InterpRecord],
    *,
    root: str | None = None,
    category_of: Callable[[str], str | None] = rule_category,
) -> tuple[list[Finding], list[Finding], list[str]]:
    """Like :func:`confirm_findings`, keeping new findings and notices apart."""
    failed: list[Evidence] = []
    if isinstance(result, InterpResult):
        records, failure = result.records, result.failure
        sites = result.executed_sites()
        kernels = result.kernels_ran
        failed = result.failed_launches()
    else:
        records, failure, sites, kernels = list(result), None, None, set()

    def executed(f: Finding) -> bool | None:
        if sites is None:
            return None
        in_file = [(k, p, ln) for k, p, ln in sites if same_file(p, f.path, root)]
        if any(f.span.contains_line(ln) for _, _, ln in in_file):
            return True
        if (f.kernel and f.kernel in kernels) or in_file:
            return False
        return None

    # an atomic's updates are evidence only for a finding about that atomic (KL110): one a program
    # needs (atomic-shared), or one nobody flagged, is no defect
    atomic_findings = [f for f in findings if category_of(f.rule) == "atomic"]
    evidence = [e for e in (r.to_evidence() for r in records)
                if not e.kind.startswith("atomic")
                or (e.kind == "atomic-exclusive" and any(matches(e, f, root) for f in atomic_findings))]
    return apply_evidence(findings, evidence + failed, tool=TOOL, categories=CATEGORIES,
                          executed=executed, failure=failure, root=root, category_of=_judged_here(category_of))


def _judged_here(category_of: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """``category_of``, None for a rule of a category the interpreter judges only where the rule's
    confirmation names it."""
    def category(code: str) -> str | None:
        cat = category_of(code)
        if cat in _BY_CONFIRMATION:
            try:
                from kernlint.catalogue import get_rule

                confirm = get_rule(code).confirm
            except Exception:  # noqa: BLE001 - a code the catalogue does not know: not judged here
                return None
            if TOOL not in (getattr(confirm, "tool", ""), getattr(confirm, "fallback", "")):
                return None
        return cat

    return category


def main(argv: list[str] | None = None) -> int:
    """``python -m kernlint.dynamic.interp_check TARGET [ARGS...]``: print the records as JSON."""
    import argparse

    parser = argparse.ArgumentParser(prog="kernlint.dynamic.interp_check")
    parser.add_argument("--entry", default="run")
    parser.add_argument("target")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    result = run_interpreted(ns.target, ns.args, entry=ns.entry)
    json.dump(result.to_dict(), sys.stdout, indent=2)
    print()
    return 1 if result.records else (2 if result.failure else 0)


if __name__ == "__main__":
    sys.exit(main())
