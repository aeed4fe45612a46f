"""The one data model every phase shares: kernels, findings, verdicts and run results.

Spans are 1-based for lines and columns with an exclusive end column, which is what SARIF's
``region`` and editors expect.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, asdict
from typing import Any


class Frontend(str, enum.Enum):
    TRITON = "triton"
    TILELANG = "tilelang"


class Phase(str, enum.Enum):
    SOURCE = "source"
    IR = "ir"
    DYNAMIC = "dynamic"
    EVAL = "eval"


class Verdict(str, enum.Enum):
    SUSPECTED = "suspected"
    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"


class Level(str, enum.Enum):
    """SARIF levels, ordered by severity."""

    NOTE = "note"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return {"note": 0, "warning": 1, "error": 2}[self.value]


CATEGORIES = (
    "out-of-bounds",
    "int-overflow",
    "race",
    "atomic",
    "sync",
    "uninitialized-read",
    "wrong-identity",
    "bank-conflict",
    "divergence",
    "spill",
    "occupancy",
    "uncoalesced",
    "reward-hack",
    "api-misuse",
    "suppression",
)


@dataclass(frozen=True, order=True)
class Span:
    """1-based line and column; ``end_col`` is exclusive."""

    line: int
    col: int
    end_line: int
    end_col: int

    @classmethod
    def point(cls, line: int, col: int = 1) -> "Span":
        return cls(line, col, line, col + 1)

    def contains_line(self, line: int) -> bool:
        return self.line <= line <= self.end_line


@dataclass
class Param:
    name: str
    annotation: str | None = None
    constexpr: bool = False
    default: str | None = None


@dataclass
class Decorator:
    """A decorator as written, e.g. ``triton.autotune`` with its keyword arguments' source."""

    name: str
    args: list[str] = field(default_factory=list)
    kwargs: dict[str, str] = field(default_factory=dict)
    #: for ``triton.heuristics({...})`` written out as a dict literal: each name it sets, in order ->
    #: the names its function reads of the mapping it is given (``args["n"]``)
    reads: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Kernel:
    path: str
    name: str
    frontend: Frontend
    span: Span
    params: list[Param] = field(default_factory=list)
    decorators: list[Decorator] = field(default_factory=list)
    #: ``triton.autotune`` configs as source text of each ``triton.Config(...)``.
    autotune_configs: list[str] = field(default_factory=list)
    #: the name of a ``**meta`` parameter: Triton binds it as one parameter of that name (without a
    #: default), not as the launch's other keywords
    var_keyword: str | None = None

    @property
    def constexprs(self) -> list[str]:
        return [p.name for p in self.params if p.constexpr]

    @property
    def heuristics(self) -> list[str]:
        """Names bound by ``triton.heuristics({...})``."""
        return list(dict.fromkeys(name for d in self.decorators for name in d.reads))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["frontend"] = self.frontend.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Kernel":
        return cls(
            path=d["path"], name=d["name"], frontend=Frontend(d["frontend"]), span=Span(**d["span"]),
            params=[Param(**p) for p in d["params"]], decorators=[Decorator(**x) for x in d["decorators"]],
            autotune_configs=list(d["autotune_configs"]),
            var_keyword=d.get("var_keyword"),
        )


@dataclass(frozen=True)
class HostValue:
    """A host-side value a launch passes, resolved without running the module.

    ``how`` says where it came from (``literal``, ``assignment``, ``module constant``, ``tuple
    unpacking``, ``helper``, ``default`` ...). ``guessed`` marks a value that could not be resolved
    and was chosen by kernlint (a specialization's fallback): a finding resting on it says so.
    """

    value: Any
    how: str = "literal"
    guessed: bool = False


@dataclass(frozen=True)
class TensorExtent:
    """What the host code shows about the tensor behind a pointer argument.

    ``expr`` is the argument as written (``x.view(-1)``), ``root`` the tensor variable it derives
    from (``x``), ``shape`` the dimensions' source text when an allocation (``torch.empty((M, N))``,
    ``torch.empty_like(y)``) or view shows them, ``numel`` the element count as text when known
    (``M * N``), ``derived`` the steps between root and argument (``slice``, ``view``,
    ``contiguous``...), ``same_size_as`` tensors the wrapper asserts or allocates with the same size.
    """

    expr: str
    root: str | None = None
    shape: tuple[str, ...] | None = None
    numel: str | None = None
    derived: tuple[str, ...] = ()
    same_size_as: tuple[str, ...] = ()
    #: the element type the host code gives it (``torch.int32``), where it does
    dtype: str | None = None

    @property
    def known(self) -> bool:
        return self.shape is not None or self.numel is not None


@dataclass(frozen=True)
class BoundArg:
    """One kernel parameter at one launch: the host expression bound to it and what is known of it."""

    param: str
    text: str
    value: HostValue | None = None
    tensor: TensorExtent | None = None
    #: the host expression itself (a libcst node of the module's tree)
    node: Any = field(default=None, compare=False, repr=False)

    @property
    def resolved(self) -> bool:
        return self.value is not None and not self.value.guessed


@dataclass
class Launch:
    """``kernel[grid](args...)``: where, with which grid, and each parameter's bound argument."""

    kernel: str
    path: str
    span: Span
    grid_text: str
    #: the grid's elements when it resolves to a tuple (a literal, a name bound to one, a lambda's body)
    grid: tuple[BoundArg, ...] | None = None
    args: dict[str, BoundArg] = field(default_factory=dict)
    #: launch options passed as keywords: ``num_warps``, ``num_stages``...
    options: dict[str, BoundArg] = field(default_factory=dict)
    #: the function the launch stands in (None at module level)
    caller: str | None = None
    #: positions after a ``*args`` argument are unknown
    starred: bool = False
    #: keywords spread from a mapping (``**extra``): a parameter the launch does not name may be among them
    spread: bool = False
    #: why the call cannot bind its arguments (more positional arguments than the kernel has
    #: parameters, or one parameter given twice; "" where it can): it raises before the kernel
    #: runs, so its arguments say nothing of the kernel's values
    misfit: str = ""
    #: character offset of the launch in the module's text
    offset: int = -1
    #: the host code's state at the launch (:class:`kernlint.facts.HostScope`): bindings, asserts, branches
    scope: Any = field(default=None, compare=False, repr=False)
    #: the lines of the definitions the launch may call (a module can define one kernel name in several
    #: functions, or in the branches of an ``if``); empty: any of that name
    target_lines: tuple[int, ...] = ()

    def calls(self, kernel: "Kernel") -> bool:
        """Whether this launch may call that definition of its kernel's name."""
        return not self.target_lines or kernel.span.line in self.target_lines

    def value(self, param: str) -> HostValue | None:
        arg = self.args.get(param) or self.options.get(param)
        return arg.value if arg is not None else None


@dataclass
class ModuleFacts:
    """Everything kernlint knows about one module, found once from its parsed tree."""

    path: str
    kernels: list[Kernel] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    #: module-level names whose value resolves (``BLOCK = 128``, ``CFG = {"BLOCK": 64}``)
    constants: dict[str, HostValue] = field(default_factory=dict)

    def launches_of(self, kernel: "str | Kernel") -> list[Launch]:
        """The launches of a kernel: given by name, of every definition of that name."""
        if isinstance(kernel, str):
            return self._index()[0].get(kernel, [])
        return [launch for launch in self._index()[0].get(kernel.name, []) if launch.calls(kernel)]

    def launch_at(self, offset: int, kernel: str) -> Launch | None:
        """The launch of ``kernel`` that starts at this character offset of the module's text (an
        alias of several kernels starts a launch of each at one offset)."""
        return self._index()[1].get((offset, kernel))

    def _index(self) -> tuple[dict[str, list[Launch]], dict[tuple[int, str], Launch]]:
        if getattr(self, "_by_kernel", None) is None or self._indexed != len(self.launches):
            by_kernel: dict[str, list[Launch]] = {}
            for launch in self.launches:
                by_kernel.setdefault(launch.kernel, []).append(launch)
            self._by_kernel, self._by_offset = by_kernel, {(launch.offset, launch.kernel): launch for launch in self.launches}
            self._indexed = len(self.launches)
        return self._by_kernel, self._by_offset

    def kernel(self, name: str) -> Kernel | None:
        return next((k for k in self.kernels if k.name == name), None)


@dataclass
class Finding:
    rule: str
    path: str
    span: Span
    message: str
    level: Level
    phase: Phase = Phase.SOURCE
    verdict: Verdict = Verdict.SUSPECTED
    kernel: str | None = None
    #: free-form evidence: IR excerpts, the specialization compiled, sanitizer records...
    evidence: dict[str, Any] = field(default_factory=dict)
    #: numbers measured on a GPU or computed by a model (name -> value).
    measurements: dict[str, float | int | str] = field(default_factory=dict)

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.span.line, self.span.col, self.rule)

    @property
    def device_symbol(self) -> str | None:
        """The kernel's name on the GPU, the one sanitizers and profilers report: Triton keeps the
        function's name, TileLang compiles under a generated one (``main_kernel``)."""
        return self.evidence.get("device_symbol") or self.kernel

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "path": self.path,
            "line": self.span.line,
            "col": self.span.col,
            "end_line": self.span.end_line,
            "end_col": self.span.end_col,
            "message": self.message,
            "level": self.level.value,
            "phase": self.phase.value,
            "verdict": self.verdict.value,
            "kernel": self.kernel,
            "evidence": self.evidence,
            "measurements": self.measurements,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Finding":
        return cls(
            rule=d["rule"],
            path=d["path"],
            span=Span(d["line"], d["col"], d["end_line"], d["end_col"]),
            message=d["message"],
            level=Level(d["level"]),
            phase=Phase(d["phase"]),
            verdict=Verdict(d["verdict"]),
            kernel=d.get("kernel"),
            evidence=d.get("evidence", {}),
            measurements=d.get("measurements", {}),
        )


@dataclass
class FileError:
    """A file that could not be read or parsed: reported with its location, never a traceback."""

    path: str
    message: str
    line: int = 1
    col: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    files: int = 0
    #: phases that ran, and notices for those skipped (e.g. no GPU).
    notices: list[str] = field(default_factory=list)
    #: the dynamic phase's tool processes: tool, argv, findings judged, seconds
    runs: list[dict] = field(default_factory=list)

    def extend(self, other: "RunResult") -> None:
        self.findings.extend(other.findings)
        self.errors.extend(other.errors)
        self.kernels.extend(other.kernels)
        self.files += other.files
        self.notices.extend(other.notices)
        self.runs.extend(other.runs)

    def sorted_findings(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: f.sort_key)
