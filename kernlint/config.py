"""``[tool.kernlint]`` in pyproject.toml, merged with command-line options.

Every key is declared once, in :data:`KEYS`: its type, default and documentation. That one table
type-checks the file (a wrong type exits 2 naming the file, the key and the type expected), and
produces the JSON schema ``kernlint config --schema`` prints and the README's table.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable

from kernlint.report import FORMATS

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "build", "dist",
    "node_modules", "site-packages", ".eggs", ".mypy_cache", ".pytest_cache", ".ruff_cache",
)

#: a rule code or prefix as select/ignore take them (``KL1``, ``KL101``, ``ALL``)
CODE_PREFIX = r"^(ALL|[Kk][Ll][0-9]{0,3})$"
#: a full rule code, as per-file-ignores name them
CODE = r"^[Kk][Ll][0-9]{1,3}$"
ARCH = r"^sm_[0-9]{2,3}a?$"


class ConfigError(Exception):
    """Bad configuration: reported as a clear message with exit code 2."""


@dataclass(frozen=True)
class Key:
    """One ``[tool.kernlint]`` key: the JSON-schema type it takes and what it means."""

    name: str
    schema: dict
    doc: str
    default: Any = None
    #: a table of sub-keys (``confirm``), each a Key
    table: tuple["Key", ...] = ()

    @property
    def attr(self) -> str:
        return self.name.replace("-", "_")


def _strings(pattern: str | None = None) -> dict:
    item: dict = {"type": "string"}
    if pattern:
        item["pattern"] = pattern
    return {"type": "array", "items": item}


KEYS: tuple[Key, ...] = (
    Key("select", _strings(CODE_PREFIX), "Rule codes or prefixes to enable (`ALL` for every rule); "
        "default: every rule that is on by default.", []),
    Key("extend-select", _strings(CODE_PREFIX), "Codes or prefixes enabled on top of `select` or the "
        "defaults (e.g. `[\"KL001\"]` for the unused-noqa rule).", []),
    Key("ignore", _strings(CODE_PREFIX), "Codes or prefixes to disable.", []),
    Key("per-file-ignores", {"type": "object", "additionalProperties": _strings(CODE)},
        "Glob (matched against the root-relative path or the file name) -> codes disabled in those files.", {}),
    Key("exclude", _strings(), "Globs or folder names never linted when found in a folder (files named on the "
        "command line still are, unless `--force-exclude`).", []),
    Key("extend-exclude", _strings(), "More excludes, added to `exclude`.", []),
    Key("fail-level", {"type": "string", "enum": ["note", "warning", "error"]},
        "Lowest finding level that makes the exit code 1.", "warning"),
    Key("output-format", {"type": "string", "enum": list(FORMATS)},
        "Report format when `--output-format` is not given.", None),
    Key("ir", {"type": "boolean"}, "Run the IR phase (compile every kernel, lint TTIR/TTGIR/PTX) without `--ir`.",
        None),
    Key("arch", {"type": "string", "pattern": ARCH}, "Target GPU of the IR phase (`sm_80`, `sm_90`...).", None),
    Key("autotune-limit", {"type": "integer", "minimum": 1}, "At most this many autotune configs (or launches) "
        "of a kernel are compiled by the IR phase.", 4),
    Key("occupancy-threshold", {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "KL304 reports a theoretical occupancy below this fraction.", None),
    Key("specialize", {"type": "object", "additionalProperties": {
        "type": "object", "additionalProperties": {"type": ["integer", "number", "boolean", "string"]}}},
        "Kernel name -> `NAME = value` pairs the IR phase compiles it with (as a `# kernlint: specialize(...)` "
        "comment on the kernel; `num_warps`/`num_stages` set the launch options).", {}),
    Key("confirm", {"type": "object"}, "The dynamic phase (`--confirm`).", {}, table=(
        Key("command", {"type": "string"}, "Command that runs the kernels (default: each file's `run()` or "
            "`__main__`).", None),
    )),
)


@dataclass
class Config:
    root: Path = field(default_factory=Path.cwd)
    select: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
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


# ------------------------------------------------------------------------------ type checks


def _describe(schema: dict) -> str:
    """The type a schema asks for, in words (for error messages)."""
    kind = schema.get("type")
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    if kind == "array":
        item = schema["items"]
        what = "rule codes" if item.get("pattern") == CODE else (
            "rule codes or prefixes" if item.get("pattern") == CODE_PREFIX else "strings")
        return f"a list of {what}"
    if kind == "object":
        return "a table"
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "integer":
        return "an integer" + (f" >= {schema['minimum']}" if "minimum" in schema else "")
    if kind == "number":
        return "a number in (0, 1]" if "exclusiveMinimum" in schema else "a number"
    if kind == "boolean":
        return "true or false"
    if kind == "string":
        return "a string" + (" such as 'sm_90'" if schema.get("pattern") == ARCH else "")
    return str(kind)


_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def _valid(value: Any, schema: dict) -> bool:
    kinds = schema["type"] if isinstance(schema.get("type"), list) else [schema.get("type")]
    if not any(_TYPES[k](value) for k in kinds):
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if "pattern" in schema and not re.match(schema["pattern"], value):
        return False
    if "minimum" in schema and value < schema["minimum"]:
        return False
    if "maximum" in schema and value > schema["maximum"]:
        return False
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        return False
    if "items" in schema and not all(_valid(v, schema["items"]) for v in value):
        return False
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict) and not all(_valid(v, extra) for v in value.values()):
        return False
    return True


def check_table(table: dict, keys: tuple[Key, ...], where: str, path: Path) -> dict[str, Any]:
    """The table's values by attribute name, each type-checked (ConfigError naming file, key and type)."""
    known = {k.name: k for k in keys}
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ConfigError(f"{path}: unknown {where} key(s): {', '.join(unknown)} "
                          f"(known: {', '.join(sorted(known))})")
    out = {}
    for name, value in table.items():
        key = known[name]
        if not _valid(value, key.schema):
            raise ConfigError(f"{path}: {where} {name} must be {_describe(key.schema)}, got {value!r}")
        if key.table:
            value = check_table(value, key.table, f"[{where.strip('[]')}.{name}]", path)
        out[key.attr] = value
    return out


def json_schema() -> dict:
    """The JSON schema of ``[tool.kernlint]``, from :data:`KEYS`."""
    def prop(key: Key) -> dict:
        schema = dict(key.schema, description=key.doc)
        if key.default not in (None, [], {}):
            schema["default"] = key.default
        if key.table:
            schema["properties"] = {k.name: prop(k) for k in key.table}
            schema["additionalProperties"] = False
        return schema

    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "[tool.kernlint]",
        "description": "kernlint's configuration in pyproject.toml",
        "type": "object",
        "properties": {k.name: prop(k) for k in KEYS},
        "additionalProperties": False,
    }


def markdown_table() -> str:
    """The keys as a Markdown table (the README's configuration section)."""
    rows = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    for key in KEYS:
        for k, prefix in [(key, "")] + [(sub, f"{key.name}.") for sub in key.table]:
            default = "" if k.default in (None, [], {}) else f"`{k.default!r}`".replace("'", '"')
            rows.append(f"| `{prefix}{k.name}` | {_describe(k.schema)} | {default} | {k.doc} |")
    return "\n".join(rows) + "\n"


# ------------------------------------------------------------------------------ loading


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
    tool = data.get("tool", {})
    table = tool.get("kernlint") if isinstance(tool, dict) else None
    config = Config(root=path.parent, source=path)
    if table is None:
        return config
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.kernlint] must be a table")
    values = check_table(table, KEYS, "[tool.kernlint]", path)
    config.exclude = values.pop("exclude", []) + values.pop("extend_exclude", [])
    for attr, value in values.items():
        setattr(config, attr, value)
    return config
