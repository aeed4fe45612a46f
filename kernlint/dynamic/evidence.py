"""What every dynamic tool's record boils down to, so one function can turn records into verdicts.

A record (interpreter, compute-sanitizer, ncu) says: this *kind* of defect happened in this kernel,
at this source line, with these numbers. ``category`` is one of the rule categories of
:data:`kernlint.model.CATEGORIES`, or ``tool-failure`` (the tool could not judge the kernel: never
evidence for a defect).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

TOOL_FAILURE = "tool-failure"

#: record kind -> rule category
CATEGORY_OF_KIND = {
    # interpreter
    "oob-read": "out-of-bounds",
    "oob-write": "out-of-bounds",
    "race-write": "race",
    "race-read": "race",
    "atomic-exclusive": "atomic",  # an atomic whose every address only one program updates
    "unwritten-output": "uninitialized-read",  # output elements no kernel wrote (read later as garbage)
    # compute-sanitizer memcheck
    "invalid-read": "out-of-bounds",
    "invalid-write": "out-of-bounds",
    "invalid-atomic": "out-of-bounds",
    "misaligned-access": "out-of-bounds",
    # racecheck / synccheck / initcheck
    "shared-race": "race",
    "shared-hazard": "race",
    "barrier-error": "sync",
    "sync-error": "sync",
    "uninitialized-read": "uninitialized-read",
    # the tool itself failed on the kernel, or the program died of a device error
    "tool-failure": TOOL_FAILURE,
}


@dataclass
class Evidence:
    tool: str
    kind: str
    kernel: str | None
    path: str | None
    line: int | None
    measurements: dict[str, Any] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def category(self) -> str:
        return CATEGORY_OF_KIND.get(self.kind, TOOL_FAILURE)


def same_file(record_path: str | None, finding_path: str, root: str | None = None) -> bool:
    """True when a tool's path (often absolute) names the finding's file (often repo-relative)."""
    if not record_path:
        return False
    a = os.path.normpath(record_path)
    b = os.path.normpath(finding_path)
    if os.path.isabs(a) and not os.path.isabs(b):
        full = os.path.normpath(os.path.join(root or os.getcwd(), b))
        if os.path.realpath(full) == os.path.realpath(a):
            return True
        return a.endswith(os.sep + b)
    if os.path.isabs(a) and os.path.isabs(b):
        return os.path.realpath(a) == os.path.realpath(b)
    return a == b or a.endswith(os.sep + b) or b.endswith(os.sep + a)
