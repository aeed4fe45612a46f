"""A content-addressed on-disk cache of compiled artefacts (and of the findings drawn from them).

The key hashes everything the artefacts depend on: the kernel's file contents and path (debug
info names it), the kernel name,
the specialization, Triton's version, the target architecture and this cache's format version.
Entries are gzip-compressed JSON files written atomically (write to a temporary file, rename), so
concurrent runs (pre-commit, editor, CI) never read a half-written entry.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

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


class ArtifactCache:
    def __init__(self, directory: str | os.PathLike | None):
        self.directory = Path(directory) if directory else None
        self.hits = 0
        self.misses = 0

    def _path(self, key: str, kind: str) -> Path:
        assert self.directory is not None
        return self.directory / key[:2] / f"{key}.{kind}.json.gz"

    def get(self, key: str, kind: str = "artifact") -> dict[str, Any] | None:
        if self.directory is None:
            return None
        path = self._path(key, kind)
        try:
            with gzip.open(path, "rt", encoding="utf-8") as f:
                value = json.load(f)
        except (OSError, ValueError, EOFError):
            if kind == "artifact":
                self.misses += 1
            return None
        if kind == "artifact":
            self.hits += 1
        return value

    def put(self, key: str, value: dict[str, Any], kind: str = "artifact") -> None:
        if self.directory is None:
            return
        path = self._path(key, kind)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as f:
                f.write(json.dumps(value).encode("utf-8"))
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only or full disk only costs speed
