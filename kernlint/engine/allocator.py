"""The C allocator's settings while z3 contexts come and go.

Each kernel's queries get a z3 context of their own (:class:`kernlint.engine.query.Solving`), and
making one allocates a few megabytes. With glibc's default settings that memory goes back to the
operating system when the context is deleted (blocks above the mmap threshold are unmapped, a free
heap top above the trim threshold is trimmed), so every next context faults it in afresh: about
8 ms a context instead of 1.5, a tenth of the source phase on kernels the engine queries. Keeping
up to 64 MiB of freed memory in the process lets the next context reuse it.
"""

from __future__ import annotations

import ctypes
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_set = False


def keep_freed_memory() -> None:
    """Raise glibc's mmap and trim thresholds, once per process (elsewhere: nothing)."""
    global _set
    if _set:
        return
    _set = True
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    mallopt(_M_TRIM_THRESHOLD, 64 << 20)
