"""The keys of compiled artefacts (and of the findings drawn from them) in the on-disk cache
(:class:`kernlint.cache.DiskCache`).

The key hashes everything the artefacts depend on: the kernel's file contents and path (debug
info names it), the kernel name, the specialization, Triton's version, the target architecture and
this cache's format version.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache

#: bump when the stored format or what is stored changes
FORMAT_VERSION = "2"  # 2: TileLang records carry the launch shape (grid, block)
DEFAULT_CACHE_DIR = os.path.join(".kernlint_cache", "ir")


@lru_cache(maxsize=1)
def triton_version() -> str:
    try:
        from importlib.metadata import version

        return version("triton")
    except Exception:  # noqa: BLE001 - no triton: the phase reports that elsewhere
        return "none"


def artifact_key(source: str, kernel: str, spec_key: str, capability: int, path: str = "") -> str:
    """The path is part of the key because the artefacts' debug info names the file."""
    h = hashlib.sha256()
    real = os.path.realpath(path) if path else ""
    for part in (FORMAT_VERSION, triton_version(), str(capability), real, kernel, spec_key, source):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()
