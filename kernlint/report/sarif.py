"""SARIF 2.1.0 output built with sarif-om, serialized explicitly.

sarif-om fills every unset field with SARIF's default (``index: -1``, ``rank: -1.0``,
``language: "en-US"``...): those are left out, as the specification intends. ``level`` and ``kind``
are the exception, written even at their defaults (``"warning"``, ``"fail"``): code-scanning UIs
guess when they are missing. URIs are percent-encoded; a file under the project root is relative to
``%SRCROOT%``, any other an absolute ``file://`` URI.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from urllib.parse import quote

import attr
import sarif_om as so

from kernlint import __version__, catalogue
from kernlint.model import Finding, Level, RunResult

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/kernlint/kernlint"
SEVERITY = {Level.ERROR: "error", Level.WARNING: "warning", Level.NOTE: "recommendation"}


ALWAYS_WRITTEN = frozenset({"level", "kind"})


def _is_default(field, value) -> bool:
    default = field.default
    if isinstance(default, attr.Factory):
        default = default.factory()
    return default is not attr.NOTHING and value == default and type(value) is type(default)


def to_json(obj):
    if attr.has(type(obj)):
        out = {}
        for field in attr.fields(type(obj)):
            value = getattr(obj, field.name)
            if value is None or (field.name not in ALWAYS_WRITTEN and _is_default(field, value)):
                continue
            out[field.metadata.get("schema_property_name", field.name)] = to_json(value)
        return out
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json(v) for v in obj]
    return obj


def _truncate(text: str, limit: int = 1024) -> str:
    """At most ``limit`` characters, cut after the last whole sentence that fits (the full text is
    in ``help.markdown``)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", text[: limit + 1]) if m.end() <= limit]
    return text[: ends[-1]] if ends else text[: limit - 1] + "…"


def artifact_location(path: str, root: Path) -> so.ArtifactLocation:
    """A percent-encoded URI: relative to ``%SRCROOT%`` under the root, else an absolute file URI."""
    p = Path(path)
    full = p if p.is_absolute() else root / p
    try:
        rel = full.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return so.ArtifactLocation(uri=full.resolve().as_uri())
    return so.ArtifactLocation(uri=quote(rel.as_posix(), safe="/"), uri_base_id="%SRCROOT%")


def _first_paragraph(docs: str, heading: str) -> str:
    part = docs.split(heading, 1)[-1].split("\n## ", 1)[0]
    return part.strip()


def _descriptor(rule) -> so.ReportingDescriptor:
    full = _first_paragraph(rule.docs, "## What it does") + " " + _first_paragraph(rule.docs, "## Why is this bad?")
    return so.ReportingDescriptor(
        id=rule.code,
        name=rule.name,
        short_description=so.MultiformatMessageString(text=_truncate(rule.summary)),
        full_description=so.MultiformatMessageString(text=_truncate(full)),
        help=so.MultiformatMessageString(text=_truncate(rule.summary + " See `kernlint rule " + rule.code + "`.", 4096), markdown=rule.docs.strip()),
        help_uri=f"{INFO_URI}/blob/main/rules/README.md#{rule.code.lower()}",
        default_configuration=so.ReportingConfiguration(level=rule.level.value, enabled=True),
        properties={
            "tags": [rule.category, rule.phase.value, "gpu-kernel"],
            "precision": rule.precision,
            "problem.severity": SEVERITY[rule.level],
            "category": rule.category,
            "phase": rule.phase.value,
            "confirm": rule.confirm.to_dict(),
        },
    )


def _fingerprint(finding: Finding, line_text: str, seen: dict) -> str:
    """The rule, file, kernel and the finding's line text without its whitespace, not its line
    number: lines moving up or down keep the fingerprint. The n-th identical key gets ``:n``."""
    key = f"{finding.rule}\0{finding.path}\0{finding.kernel}\0{' '.join(line_text.split())}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    seen[digest] = seen.get(digest, 0) + 1
    return digest if seen[digest] == 1 else f"{digest}:{seen[digest]}"


def _line_text(root: Path, finding: Finding, cache: dict) -> str:
    if finding.path not in cache:
        try:
            cache[finding.path] = (root / finding.path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            cache[finding.path] = []
    lines = cache[finding.path]
    return lines[finding.span.line - 1] if 0 < finding.span.line <= len(lines) else ""


def _related_locations(f: Finding, root: Path) -> list[so.Location] | None:
    """Other lines a run saw the finding's defect at (the load of a load-modify-store race whose
    store the finding is on), as SARIF related locations in the finding's file."""
    out: list[so.Location] = []
    seen: set[int] = set()
    for e in f.evidence.get("dynamic", []):
        line = e.get("line") if isinstance(e, dict) else None
        if not isinstance(line, int) or f.span.contains_line(line) or line in seen:
            continue
        seen.add(line)
        what = ": ".join(str(x) for x in (e.get("kind"), e.get("note")) if x)
        out.append(so.Location(
            id=len(out),
            physical_location=so.PhysicalLocation(artifact_location=artifact_location(f.path, root),
                                                  region=so.Region(start_line=line)),
            message=so.Message(text=f"{what} (seen by {e.get('tool', 'a run')})"),
        ))
    return out or None


def build(result: RunResult, root: Path) -> dict:
    rules = catalogue.all_rules()
    used = sorted({f.rule for f in result.findings} | set(rules))
    index = {code: i for i, code in enumerate(used)}
    descriptors = [_descriptor(rules[code]) for code in used if code in rules]
    cache: dict = {}
    seen: dict = {}
    results = []
    for f in result.sorted_findings():
        region = so.Region(
            start_line=f.span.line,
            start_column=f.span.col,
            end_line=f.span.end_line,
            end_column=f.span.end_col,
        )
        results.append(
            so.Result(
                rule_id=f.rule,
                rule_index=index.get(f.rule, -1),
                level=f.level.value,
                kind="fail",
                message=so.Message(text=f.message),
                locations=[
                    so.Location(
                        physical_location=so.PhysicalLocation(
                            artifact_location=artifact_location(f.path, root),
                            region=region,
                        ),
                        logical_locations=[so.LogicalLocation(name=f.kernel, kind="function")] if f.kernel else None,
                    )
                ],
                related_locations=_related_locations(f, root),
                partial_fingerprints={"kernlint/v1": _fingerprint(f, _line_text(root, f, cache), seen)},
                properties={
                    "phase": f.phase.value,
                    "verdict": f.verdict.value,
                    "kernel": f.kernel,
                    "evidence": f.evidence,
                    "measurements": f.measurements,
                },
            )
        )
    notifications = [
        so.Notification(
            level="error",
            message=so.Message(text=e.message),
            locations=[
                so.Location(
                    physical_location=so.PhysicalLocation(
                        artifact_location=artifact_location(e.path, root),
                        region=so.Region(start_line=max(e.line, 1), start_column=max(e.col, 1)),
                    )
                )
            ],
        )
        for e in result.errors
    ]
    run = so.Run(
        tool=so.Tool(
            driver=so.ToolComponent(
                name="kernlint",
                version=__version__,
                semantic_version=__version__,
                information_uri=INFO_URI,
                rules=descriptors,
            )
        ),
        original_uri_base_ids={"%SRCROOT%": so.ArtifactLocation(uri=root.resolve().as_uri().rstrip("/") + "/")},
        column_kind="unicodeCodePoints",
        invocations=[
            so.Invocation(
                execution_successful=not result.errors,
                tool_execution_notifications=notifications or None,
                properties=_invocation_properties(result),
            )
        ],
        results=results,
    )
    log = so.SarifLog(version="2.1.0", schema_uri=SCHEMA, runs=[run])
    return to_json(log)


def _invocation_properties(result: RunResult) -> dict | None:
    props = {}
    if result.notices:
        props["notices"] = list(result.notices)
    if result.runs:
        props["dynamicRuns"] = list(result.runs)  # each tool process of --confirm, with its seconds
    return props or None


def render(result: RunResult, root: Path) -> str:
    return json.dumps(build(result, root), indent=2, sort_keys=False) + "\n"
