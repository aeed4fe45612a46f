"""``[tool.kernlint]`` in pyproject.toml, merged with command-line options."""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "build", "dist",
    "node_modules", "site-packages", ".eggs", ".mypy_cache", ".pytest_cache", ".ruff_cache",
)

KNOWN_KEYS = {
    "select", "ignore", "extend-select", "per-file-ignores", "exclude", "extend-exclude",
    "fail-level", "output-format", "ir", "arch", "specialize", "confirm", "autotune-limit",
    "occupancy-threshold",
}


class ConfigError(Exception):
    """Bad configuration: reported as a clear message with exit code 2."""


@dataclass
class Config:
    root: Path = field(default_factory=Path.cwd)
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    fail_level: str = "warning"
    output_format: str | None = None
    ir: bool | None = None
    arch: str | None = None
    autotune_limit: int = 4
    occupancy_threshold: float | None = None
    specialize: dict[str, dict] = field(default_factory=dict)
    confirm: dict = field(default_factory=dict)
    source: Path | None = None

    def relpath(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()

    def is_excluded(self, path: Path) -> bool:
        rel = self.relpath(path)
        parts = PurePosixPath(rel).parts
        if any(p in DEFAULT_EXCLUDE for p in parts[:-1]):
            return True
        for pattern in self.exclude:
            pattern = pattern.rstrip("/")
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, pattern + "/*") or any(
                fnmatch.fnmatch(p, pattern) for p in parts
            ):
                return True
        return False

    def ignored_for(self, rel: str) -> set[str]:
        out: set[str] = set()
        for pattern, codes in self.per_file_ignores.items():
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(PurePosixPath(rel).name, pattern):
                out |= {c.upper() for c in codes}
        return out


def _str_list(table: dict, key: str) -> list[str]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"[tool.kernlint] {key} must be a list of strings")
    return value


def find_pyproject(start: Path) -> Path | None:
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else [start.parent, *start.parent.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load(start: Path | None = None, explicit: Path | None = None) -> Config:
    path = explicit or find_pyproject(start or Path.cwd())
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    table = data.get("tool", {}).get("kernlint")
    config = Config(root=path.parent, source=path)
    if table is None:
        return config
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.kernlint] must be a table")
    unknown = set(table) - KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown [tool.kernlint] key(s): {', '.join(sorted(unknown))}")
    config.select = _str_list(table, "select") + _str_list(table, "extend-select")
    config.ignore = _str_list(table, "ignore")
    config.exclude = _str_list(table, "exclude") + _str_list(table, "extend-exclude")
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{path}: [tool.kernlint] per-file-ignores must be a table of glob = [codes]")
    for glob, codes in pfi.items():
        config.per_file_ignores[glob] = _str_list(pfi, glob)
    fail_level = table.get("fail-level", "warning")
    if fail_level not in ("note", "warning", "error"):
        raise ConfigError(f"{path}: fail-level must be note, warning or error")
    config.fail_level = fail_level
    config.output_format = table.get("output-format")
    config.ir = table.get("ir")
    config.arch = table.get("arch")
    limit = table.get("autotune-limit", 4)
    if not isinstance(limit, int) or limit < 1:
        raise ConfigError(f"{path}: autotune-limit must be a positive integer")
    config.autotune_limit = limit
    config.occupancy_threshold = table.get("occupancy-threshold")
    spec = table.get("specialize", {})
    if not isinstance(spec, dict):
        raise ConfigError(f"{path}: [tool.kernlint.specialize] must be a table")
    config.specialize = spec
    confirm = table.get("confirm", {})
    if not isinstance(confirm, dict):
        raise ConfigError(f"{path}: [tool.kernlint.confirm] must be a table")
    config.confirm = confirm
    return config
