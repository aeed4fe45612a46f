"""What a rule is: a small class with its metadata, docs and examples (Fixit style).

Rule classes live in the top-level ``rules/`` folder (installed as ``kernlint.rules``), one module
per rule. The catalogue (``kernlint.catalogue``) collects them. A rule's phase says which part of
the pipeline calls it:

- ``source``: subclasses :class:`kernlint.source.rulebase.SourceRule`, fed by the one batched
  libcst pass (kernel dataflow events).
- ``ir``: subclasses :class:`kernlint.ir.rulebase.IRRule`, fed compiled artefacts.
- ``dynamic``: only produced by the GPU/interpreter run (no static check).
- ``eval``: subclasses :class:`kernlint.eval.rulebase.EvalRule`, fed one candidate module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterable

from kernlint.model import CATEGORIES, Level, Phase

if TYPE_CHECKING:
    from kernlint.model import Finding

_CODE = re.compile(r"^KL\d{3}$")
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
#: a line in an example that must yield the rule ends with this marker comment
EXPECT_MARK = re.compile(r"#\s*expect:\s*(KL\d{3}(?:\s*,\s*KL\d{3})*)")


@dataclass(frozen=True)
class Confirmation:
    """How a GPU (or interpreter) run confirms or refutes a finding of this rule.

    ``tool`` is one of ``compute-sanitizer``, ``ncu``, ``interpreter``, ``differential``,
    ``eval`` or ``none``; ``check`` names the sanitizer tool or the ncu metric; ``threshold``
    states when the metric confirms (e.g. ``"> 0"``).
    """

    tool: str
    check: str = ""
    threshold: str = ""
    env: tuple[tuple[str, str], ...] = ()
    fallback: str = ""
    description: str = ""
    #: whether a run that reaches the line and shows nothing refutes the finding (False where the
    #: defect may stay inside the tensor, where no checker sees it)
    refutes: bool = True

    def to_dict(self) -> dict:
        return {
            "tool": self.tool,
            "check": self.check,
            "threshold": self.threshold,
            "env": dict(self.env),
            "fallback": self.fallback,
            "description": self.description,
            "refutes": self.refutes,
        }


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    category: ClassVar[str]
    level: ClassVar[Level] = Level.WARNING
    phase: ClassVar[Phase] = Phase.SOURCE
    precision: ClassVar[str] = "high"  # SARIF precision: very-high | high | medium | low
    confirm: ClassVar[Confirmation] = Confirmation("none")
    #: False: runs only when ``select``/``extend-select`` names it (or a prefix of it)
    default_enabled: ClassVar[bool] = True
    #: one sentence, shown in listings and as SARIF shortDescription
    summary: ClassVar[str]
    #: markdown with the sections "What it does", "Why is this bad?", "Example", "Use instead"
    docs: ClassVar[str]
    #: bad examples: each marks the offending lines with ``# expect: KLnnn``
    bad: ClassVar[tuple[str, ...]] = ()
    #: good examples: yield nothing
    good: ClassVar[tuple[str, ...]] = ()

    def check(self, subject) -> Iterable[Finding]:
        """The rule's findings on one subject of its phase, typed by the phase's base class: a
        kernel's interpreted state (source), a :class:`~kernlint.ir.artifacts.CompiledKernel` (IR),
        a :class:`~kernlint.eval.rulebase.CandidateModule` (eval)."""
        raise NotImplementedError

    @classmethod
    def validate(cls) -> list[str]:
        """Problems with the class's metadata (the catalogue test asserts there are none)."""
        problems = []
        if not _CODE.match(getattr(cls, "code", "")):
            problems.append(f"{cls.__name__}: code must look like KL101")
        if not _NAME.match(getattr(cls, "name", "")):
            problems.append(f"{cls.__name__}: name must be kebab-case")
        if getattr(cls, "category", None) not in CATEGORIES:
            problems.append(f"{cls.__name__}: category {getattr(cls, 'category', None)!r} unknown")
        docs = getattr(cls, "docs", "")
        for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
            if section not in docs:
                problems.append(f"{cls.__name__}: docs lack '{section}'")
        if not getattr(cls, "summary", ""):
            problems.append(f"{cls.__name__}: summary missing")
        elif len(cls.summary) > 1024:
            problems.append(f"{cls.__name__}: summary longer than 1024 characters")
        if cls.phase in (Phase.SOURCE, Phase.IR, Phase.EVAL) and not (cls.bad and cls.good):
            problems.append(f"{cls.__name__}: needs bad and good examples")
        for example in cls.bad:
            if cls.code not in " ".join(EXPECT_MARK.findall(example)):
                problems.append(f"{cls.__name__}: a bad example marks no '# expect: {cls.code}' line")
        return problems

    @classmethod
    def metadata(cls) -> dict:
        return {
            "code": cls.code,
            "name": cls.name,
            "category": cls.category,
            "level": cls.level.value,
            "phase": cls.phase.value,
            "precision": cls.precision,
            "summary": cls.summary,
            "confirm": cls.confirm.to_dict(),
            "docs": cls.docs.strip(),
        }


def expected_lines(example: str) -> dict[int, set[str]]:
    """Map 1-based line -> rule codes an example's ``# expect:`` markers ask for."""
    out: dict[int, set[str]] = {}
    for lineno, line in enumerate(example.splitlines(), start=1):
        m = EXPECT_MARK.search(line)
        if m:
            out[lineno] = {c.strip() for c in m.group(1).split(",")}
    return out
