"""compute-sanitizer: command lines for memcheck, racecheck, synccheck and initcheck, and parsing
of their text reports into :class:`SanitizerRecord` s.

One process runs one tool (the sanitizer takes a single ``--tool``), over the whole user command,
restricted to the kernels with findings (``--kernel-name regex:``) and optionally to some launches
(``--launch-skip`` / ``--launch-count``). Triton kernels carry line info by default, so reports
point at the Python source line (``at kernel+0x1b0 in /path/file.py:25``; older releases wrote
``at 0x1b0 in /path/file.py:25:kernel``): both forms are parsed.

Limits to keep in mind: memcheck sees Triton's out-of-bounds accesses only with PyTorch's caching
allocator off (``PYTORCH_NO_CUDA_MEMORY_CACHING=1``, set here) and misses over-reads that stay
inside an allocation's granularity unless ``--padding`` is given; racecheck covers shared memory
only; a sanitizer that fails on a kernel (an internal error, an invalid program counter, an
illegal instruction) yields records of kind ``tool-failure``: inconclusive, never a confirmation.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from typing import Any, Sequence

from kernlint.dynamic.evidence import Evidence

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
MEMCHECK_ENV = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}


def find_sanitizer() -> str | None:
    return shutil.which("compute-sanitizer")


def kernel_regex(kernels: Sequence[str]) -> str:
    """``--kernel-name`` value matching exactly these kernels (mangled or not)."""
    names = sorted({re.escape(k) for k in kernels if k})
    if not names:
        return ""
    return "regex:^(" + "|".join(names) + ")($|[^A-Za-z0-9_])"


def sanitizer_command(
    tool: str,
    command: Sequence[str],
    *,
    kernels: Sequence[str] = (),
    launch_skip: int | None = None,
    launch_count: int | None = None,
    padding: int | None = None,
    log_file: str | None = None,
    xml: bool = False,
    print_limit: int = 1000,
    executable: str = "compute-sanitizer",
) -> tuple[list[str], dict[str, str]]:
    """(argv, extra environment) for one sanitizer tool over ``command``."""
    if tool not in TOOLS:
        raise ValueError(f"unknown compute-sanitizer tool {tool!r}; expected one of {TOOLS}")
    argv = [executable, "--tool", tool, "--target-processes", "all", "--print-limit", str(print_limit),
            "--error-exitcode", "0"]
    env: dict[str, str] = {}
    if tool == "memcheck":
        env.update(MEMCHECK_ENV)
        if padding:
            argv += ["--padding", str(padding)]
    if tool == "racecheck":
        argv += ["--racecheck-report", "analysis"]
    argv += sanitizer_kernel_filter(kernels)
    if launch_skip:
        argv += ["--launch-skip", str(launch_skip)]
    if launch_count:
        argv += ["--launch-count", str(launch_count)]
    if log_file:
        argv += ["--log-file", log_file]
        if xml:
            argv += ["--xml", "yes"]  # XML goes to the log file; text parsing stays the default
    return argv + list(command), env


def sanitizer_kernel_filter(kernels: Sequence[str]) -> list[str]:
    """compute-sanitizer's kernel filter (``kns=``: kernel-name substring). Several kernels: no
    filter (every kernel is checked; correct, slower), since one filter names one kernel."""
    names = sorted({k for k in kernels if k})
    if len(names) == 1:
        return ["--kernel-name", f"kns={names[0]}"]
    return []


@dataclass
class SanitizerRecord:
    tool: str
    kind: str
    message: str
    kernel: str | None = None
    access_size: int | None = None
    address: int | None = None
    space: str | None = None  # global / shared / local
    path: str | None = None
    line: int | None = None
    block: tuple[int, int, int] | None = None
    thread: tuple[int, int, int] | None = None
    #: memcheck's "N bytes after/before the nearest allocation at A of size S"
    bytes_after: int | None = None
    bytes_before: int | None = None
    allocation_size: int | None = None
    hazards: int | None = None
    other: list[dict[str, Any]] = field(default_factory=list)  # racecheck's other accesses

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def to_evidence(self) -> Evidence:
        m: dict[str, Any] = {}
        if self.kind in ("invalid-read", "invalid-write", "invalid-atomic", "misaligned-access"):
            m["sanitizer_errors"] = 1
            if self.bytes_after is not None:
                m["max_bytes_past_end"] = self.bytes_after + (self.access_size or 0)
            if self.bytes_before is not None:
                m["max_bytes_before_start"] = self.bytes_before
        elif self.kind == "shared-race":
            m["shared_hazards"] = self.hazards or 1
        elif self.kind == "barrier-error":
            m["barrier_errors"] = 1
        elif self.kind == "uninitialized-read":
            m["uninitialized_reads"] = 1
        detail = {"message": self.message, "kernel": self.kernel, "address": self.address,
                  "block": self.block, "thread": self.thread, "sanitizer": self.tool}
        return Evidence(f"compute-sanitizer {self.tool}", self.kind, self.kernel, self.path, self.line, m, detail)


_PREFIX = re.compile(r"^=+ ?")
_INVALID = re.compile(r"^Invalid (__\w+__) (read|write|atomic)\w* of size (\d+)(?: bytes)?", re.I)
_MISALIGNED = re.compile(r"^Misaligned (?:Shared or Local )?(?:address|access)", re.I)
_UNINIT = re.compile(r"^Uninitialized (__\w+__) memory read of size (\d+)(?: bytes)?", re.I)
_RACE = re.compile(r"^(Error|Warning|Info): Race reported between (\w+) access at (.+?)(?: \[(\d+) hazards?\])?$", re.I)
_RACE_AND = re.compile(r"^and (\w+) access at (.+?)(?: \[(\d+) hazards?\])?$", re.I)
_HAZARD = re.compile(r"^(?:ERROR|WARNING|INFO): Potential (\w+) hazard detected at (__\w+__) (0x[0-9a-f]+)", re.I)
_BARRIER = re.compile(r"^(Barrier error detected.*|Invalid arguments.*|.*barrier.*error.*)$", re.I)
_FAILURE = re.compile(
    r"^(Invalid (?:program counter|PC)|Illegal instruction|Illegal address|Hardware Exception.*|"
    r"Internal Sanitizer Error.*|Error: .*(?:unsupported|not supported|failed).*|"
    r"Unspecified launch failure|Warp (?:Illegal|Misaligned|Out-of-range).*|.*Out-of-range Address.*|"
    r"Malformed.*)", re.I)
_AT_NEW = re.compile(r"^at (?P<kernel>[^\s+]+)(?:\+0x[0-9a-f]+)?(?: in (?P<loc>.+))?$", re.I)
_AT_OLD = re.compile(r"^at 0x[0-9a-f]+ in (?P<loc>.+)$", re.I)
_BY = re.compile(r"^by thread \((\d+),(\d+),(\d+)\) in block \((\d+),(\d+),(\d+)\)", re.I)
_ADDRESS = re.compile(r"^(?:Address|Access (?:at|to)) (0x[0-9a-f]+)", re.I)
#: (compute-sanitizer 2025 writes the numbers with thousands separators: "2,147,481,088 bytes")
_NEAREST = re.compile(r"^and is ([\d,]+) bytes (after|before) the nearest allocation at 0x[0-9a-f]+ of size ([\d,]+)",
                      re.I)
_SUMMARY = re.compile(r"^(?:ERROR|RACECHECK) SUMMARY: (\d+)", re.I)
_LOC = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?::(?P<kernel>.+))?$")


def _location(text: str) -> tuple[str | None, int | None, str | None]:
    """``/p/f.py:25`` or ``/p/f.py:25:kernel(args)`` or ``kernel+0x10 in /p/f.py:25``."""
    text = text.strip()
    kernel = None
    m = re.match(r"^(?P<k>[^\s+]+)\+0x[0-9a-f]+ in (?P<rest>.+)$", text, re.I)
    if m:
        kernel, text = m.group("k"), m.group("rest")
    elif re.match(r"^0x[0-9a-f]+ in ", text, re.I):
        text = text.split(" in ", 1)[1]
    m = _LOC.match(text)
    if not m:
        return None, None, kernel or (text if text and " " not in text else None)
    return m.group("path"), int(m.group("line")), kernel or m.group("kernel")


def _kernel_name(name: str | None) -> str | None:
    if not name:
        return None
    return name.split("(")[0].strip() or None


@dataclass
class SanitizerReport:
    tool: str
    records: list[SanitizerRecord]
    error_summary: int | None  # None: the summary line never came (the tool or the program died)

    @property
    def completed(self) -> bool:
        return self.error_summary is not None


def parse_report(text: str, tool: str = "memcheck") -> SanitizerReport:
    """Parse compute-sanitizer's text output (the ``=========`` lines; other lines are ignored)."""
    records: list[SanitizerRecord] = []
    current: SanitizerRecord | None = None
    summary = None
    for raw in text.splitlines():
        if not raw.startswith("="):
            continue
        line = _PREFIX.sub("", raw).strip()
        if not line:
            current = None
            continue
        m = _SUMMARY.match(line)
        if m:
            summary = int(m.group(1)) if summary is None else summary + int(m.group(1))
            current = None
            continue
        if line.startswith(("COMPUTE-SANITIZER", "Saved host backtrace", "Host Frame", "Device Frame")):
            continue
        new = _start_record(line, tool)
        if new is not None:
            records.append(new)
            current = new
            continue
        if current is None:
            continue
        _continue_record(current, line)
    for r in records:
        r.kernel = _kernel_name(r.kernel)
    return SanitizerReport(tool, records, summary)


def _start_record(line: str, tool: str) -> SanitizerRecord | None:
    m = _INVALID.match(line)
    if m:
        kind = {"read": "invalid-read", "write": "invalid-write"}.get(m.group(2).lower(), "invalid-atomic")
        return SanitizerRecord(tool, kind, line, access_size=int(m.group(3)), space=m.group(1).strip("_"))
    if _MISALIGNED.match(line):
        return SanitizerRecord(tool, "misaligned-access", line)
    m = _UNINIT.match(line)
    if m:
        return SanitizerRecord(tool, "uninitialized-read", line, access_size=int(m.group(2)),
                               space=m.group(1).strip("_"))
    m = _RACE.match(line)
    if m:
        path, lineno, kernel = _location(m.group(3))
        return SanitizerRecord(tool, "shared-race", line, kernel=kernel, path=path, line=lineno, space="shared",
                               hazards=int(m.group(4)) if m.group(4) else None)
    m = _HAZARD.match(line)
    if m:
        return SanitizerRecord(tool, "shared-race", line, space=m.group(2).strip("_"), address=int(m.group(3), 16))
    if _FAILURE.match(line):
        return SanitizerRecord(tool, "tool-failure", line)
    if tool == "synccheck" and _BARRIER.match(line):
        return SanitizerRecord(tool, "barrier-error", line)
    if line.lower().startswith("barrier error"):
        return SanitizerRecord(tool, "barrier-error", line)
    return None


def _continue_record(r: SanitizerRecord, line: str) -> None:
    m = _RACE_AND.match(line)
    if m and r.kind == "shared-race":
        path, lineno, kernel = _location(m.group(2))
        r.other.append({"access": m.group(1), "path": path, "line": lineno, "kernel": _kernel_name(kernel),
                        "hazards": int(m.group(3)) if m.group(3) else None})
        if m.group(3):
            r.hazards = (r.hazards or 0) + int(m.group(3))
        return
    m = _AT_OLD.match(line)
    if m:
        path, lineno, kernel = _location(m.group("loc"))
        r.path, r.line, r.kernel = path or r.path, lineno or r.line, kernel or r.kernel
        return
    m = _AT_NEW.match(line)
    if m:
        r.kernel = r.kernel or m.group("kernel")
        if m.group("loc"):
            path, lineno, _ = _location(m.group("loc"))
            r.path, r.line = path or r.path, lineno or r.line
        return
    m = _BY.match(line)
    if m:
        r.thread = tuple(int(x) for x in m.groups()[:3])
        r.block = tuple(int(x) for x in m.groups()[3:])
        return
    m = _ADDRESS.match(line)
    if m:
        r.address = int(m.group(1), 16)
        return
    m = _NEAREST.match(line)
    if m:
        n = int(m.group(1).replace(",", ""))
        if m.group(2).lower() == "after":
            r.bytes_after = n
        else:
            r.bytes_before = n
        r.allocation_size = int(m.group(3).replace(",", ""))
        return
    if r.kind == "shared-race" and (line.startswith("Write Thread") or line.startswith("Read Thread")):
        loc = line.split(" at ", 1)[-1]
        path, lineno, kernel = _location(loc)
        if r.line is None:
            r.path, r.line, r.kernel = path, lineno, kernel
        else:
            r.other.append({"access": line.split()[0], "path": path, "line": lineno, "kernel": _kernel_name(kernel)})
