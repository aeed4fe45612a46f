"""Per-candidate JSONL records: appended as candidates finish, read back to resume."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Iterator

_LOCK = threading.Lock()


def append(path: str | Path, record: dict) -> None:
    line = json.dumps(record, default=str, sort_keys=True) + "\n"
    with _LOCK:
        with open(path, "a") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())


def read(path: str | Path) -> Iterator[dict]:
    p = Path(path)
    if not p.exists():
        return
    with p.open() as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a killed run: that candidate is redone


def done_ids(path: str | Path) -> set[str]:
    return {r["id"] for r in read(path) if "id" in r and "verdict" in r}


def latest(path: str | Path) -> list[dict]:
    """One record per id (the last written)."""
    by_id: dict[str, dict] = {}
    for r in read(path):
        by_id[r.get("id")] = r
    return list(by_id.values())
