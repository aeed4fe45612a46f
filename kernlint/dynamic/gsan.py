"""Triton's global-memory race sanitizer (GSan) as a further witness for races on a GPU.

Newer Tritons ship it (``triton.tools.gsan``, ``triton.knobs.compilation.instrumentation_mode =
"gsan"`` with its memory pool); older ones (3.6) do not: :func:`available` says which, by feature
detection, and the dynamic phase says so in a notice. GSan stops a kernel at the first race it
sees with a device assertion (``file:line: ... block: [x,y,z], thread: [...] Assertion `Write
after write race detected` failed.``); those lines are the records.
"""

from __future__ import annotations

import importlib.util
import re
import sys

from kernlint.dynamic.evidence import Evidence

TOOL = "gsan"
_ASSERT = re.compile(
    r"^(?P<path>[^:\n]+):(?P<line>\d+):[^\n]*?block: \[(?P<block>[\d, ]+)\][^\n]*?Assertion `(?P<what>(?:Read|Write) "
    r"after (?:read|write) race detected)` failed", re.M)


def available() -> bool:
    try:
        return importlib.util.find_spec("triton.tools.gsan") is not None and \
            importlib.util.find_spec("triton.experimental.gsan") is not None
    except (ImportError, ValueError):
        return False


def command(path: str, entry: str = "run") -> list[str]:
    """Run a file's entry point natively with GSan instrumentation (see ``interp_runner --gsan``)."""
    return [sys.executable, "-m", "kernlint.dynamic.interp_runner", "--gsan", "--entry", entry, path]


def parse(text: str) -> list[Evidence]:
    out, seen = [], set()
    for m in _ASSERT.finditer(text):
        key = (m.group("path"), m.group("line"), m.group("what"))
        if key in seen:
            continue
        seen.add(key)
        kind = "race-read" if m.group("what").startswith("Read") else "race-write"
        block = [int(b) for b in m.group("block").split(",")]
        out.append(Evidence(TOOL, kind, None, m.group("path"), int(m.group("line")), {"racing_programs": 2},
                            {"line": int(m.group("line")), "programs": [block], "note": m.group("what")}))
    return out
