"""Per-kernel resource usage: registers, spills, local and shared memory.

Read from ptxas' verbose log (``ptxas -v``, which Triton runs when building the cubin; kernlint
captures it) and, when that log is unavailable, from ``cuobjdump --dump-resource-usage`` on the
cubin. Triton allocates shared memory dynamically (``extern .shared global_smem``), so the dynamic
size comes from the compile metadata (``shared``) and is added to any static shared memory.

ptxas' log looks like::

    ptxas info    : Compiling entry function 'matmul' for 'sm_80'
    ptxas info    : Function properties for matmul
        32 bytes stack frame, 48 bytes spill stores, 28 bytes spill loads
    ptxas info    : Used 255 registers, used 1 barriers, 32 bytes cumulative stack size, 408 bytes cmem[0]
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass


@dataclass
class ResourceUsage:
    registers: int = 0
    spill_store_bytes: int = 0
    spill_load_bytes: int = 0
    stack_frame_bytes: int = 0
    #: local memory per thread (stack frame / cuobjdump LOCAL)
    local_bytes: int = 0
    static_shared_bytes: int = 0
    dynamic_shared_bytes: int = 0
    barriers: int = 0
    #: "ptxas-log" or "cuobjdump" or "" (unknown)
    source: str = ""

    @property
    def shared_bytes(self) -> int:
        return self.static_shared_bytes + self.dynamic_shared_bytes

    @property
    def spills(self) -> bool:
        return self.spill_store_bytes > 0 or self.spill_load_bytes > 0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["shared_bytes"] = self.shared_bytes
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ResourceUsage":
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas_log(log: str, function: str | None = None) -> ResourceUsage | None:
    """Resource usage of ``function`` (or the only/first entry) from a ``ptxas -v`` log."""
    blocks: dict[str, list[str]] = {}
    current = None
    for line in log.splitlines():
        m = _ENTRY.search(line)
        if m:
            current = m.group(1)
            blocks[current] = []
        elif current is not None:
            blocks[current].append(line)
    if not blocks:
        return None
    name = function if function in blocks else next(iter(blocks))
    text = "\n".join(blocks[name])
    usage = ResourceUsage(source="ptxas-log")
    if m := _PROPS.search(text):
        usage.stack_frame_bytes, usage.spill_store_bytes, usage.spill_load_bytes = map(int, m.groups())
        usage.local_bytes = usage.stack_frame_bytes
    if m := _USED.search(text):
        usage.registers = int(m.group(1))
    if m := _BARRIERS.search(text):
        usage.barriers = int(m.group(1))
    if m := _SMEM.search(text):
        usage.static_shared_bytes = int(m.group(1))
    return usage


_RES_FUNC = re.compile(r"Function (\S+?):\s*\n\s*(.*)")


def parse_cuobjdump_resource_usage(text: str, function: str | None = None) -> ResourceUsage | None:
    """``cuobjdump --dump-resource-usage`` output -> usage (no spill byte counts there)."""
    found = {}
    for m in _RES_FUNC.finditer(text):
        fields = dict(re.findall(r"(\w+(?:\[\d+\])?):(\d+)", m.group(2)))
        found[m.group(1)] = fields
    if not found:
        return None
    fields = found.get(function) if function in found else next(iter(found.values()))
    return ResourceUsage(
        registers=int(fields.get("REG", 0)),
        stack_frame_bytes=int(fields.get("STACK", 0)),
        local_bytes=int(fields.get("LOCAL", 0)) or int(fields.get("STACK", 0)),
        static_shared_bytes=int(fields.get("SHARED", 0)),
        source="cuobjdump",
    )


def nvidia_tool(name: str) -> str | None:
    """Path of a CUDA binary tool: the copy shipped in Triton's wheel first, then ``PATH``."""
    try:
        import triton

        candidate = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", name)
        if os.path.exists(candidate):
            return candidate
    except ImportError:
        pass
    return shutil.which(name)


def cuobjdump_resource_usage(cubin: bytes, function: str | None = None) -> ResourceUsage | None:
    tool = nvidia_tool("cuobjdump")
    if tool is None:
        return None
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        name = f.name
    try:
        out = subprocess.run([tool, "--dump-resource-usage", name], capture_output=True, text=True,
                             timeout=60)
        return parse_cuobjdump_resource_usage(out.stdout, function)
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        os.unlink(name)
