"""kernlint's on-disk cache (``.kernlint_cache/``): what a phase found, kept under a key of all it
depends on, so that an unchanged input is not analysed again."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def cache_dir(root: Path, phase: str) -> Path:
    """``ROOT/.kernlint_cache/PHASE``; the cache folder carries its own ``.gitignore`` (as ruff's does),
    so it never shows up in ``git status``."""
    top = root / ".kernlint_cache"
    try:
        top.mkdir(exist_ok=True)
        ignore = top / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Automatically created by kernlint.\n*\n")
    except OSError:
        pass  # a read-only tree: the phases then run without a cache
    return top / phase


class DiskCache:
    """Entries of gzip-compressed JSON under their key, written atomically (a temporary file renamed):
    concurrent runs (pre-commit, editor, CI) never read a half-written entry. ``kind`` tells apart
    what one key holds (an artefact, the findings drawn from it, a file's source findings)."""

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
        payload = json.dumps(value).encode("utf-8")  # a value JSON cannot hold raises here, before any file
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as f:
                f.write(payload)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only or full disk only costs speed
