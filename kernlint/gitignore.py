"""Files that git ignores (.gitignore at every level, .git/info/exclude, the global excludes file),
asked of git itself so the rules are git's exactly. Outside a work tree, or without git, nothing is
ignored."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def ignored(files: list[Path]) -> set[Path]:
    if not files or shutil.which("git") is None:
        return set()
    out: set[Path] = set()
    by_dir: dict[Path, list[Path]] = {}
    for f in files:
        by_dir.setdefault(f.resolve().parent, []).append(f)
    # one `git check-ignore` per work tree: group the folders by the repository that holds them
    by_repo: dict[Path, list[Path]] = {}
    for folder, group in by_dir.items():
        top = _toplevel(folder)
        if top is not None:
            by_repo.setdefault(top, []).extend(group)
    for top, group in by_repo.items():
        text = "\0".join(str(f.resolve()) for f in group) + "\0"
        proc = subprocess.run(["git", "-C", str(top), "check-ignore", "-z", "--stdin"], input=text,
                              capture_output=True, text=True)
        if proc.returncode not in (0, 1):
            continue
        hits = {p for p in proc.stdout.split("\0") if p}
        out |= {f for f in group if str(f.resolve()) in hits}
    return out


_TOPLEVEL: dict[Path, Path | None] = {}


def _toplevel(folder: Path) -> Path | None:
    """The work tree holding ``folder``: the nearest folder with a ``.git`` entry (a folder, or a
    file for worktrees and submodules), as git finds it."""
    if folder not in _TOPLEVEL:
        if (folder / ".git").exists():
            _TOPLEVEL[folder] = folder
        else:
            _TOPLEVEL[folder] = None if folder.parent == folder else _toplevel(folder.parent)
    return _TOPLEVEL[folder]


def drop_ignored(files: list[Path], named: list[Path]) -> list[Path]:
    """``files`` found by walking folders, less those git ignores; a file named on the command line
    is always kept (as ruff)."""
    explicit = {p.resolve() for p in named if p.is_file()}
    walked = [f for f in files if f.resolve() not in explicit]
    drop = ignored(walked)
    return [f for f in files if f not in drop]
