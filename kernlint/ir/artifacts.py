"""What an IR rule is given: one kernel compiled for one specialization, parsed on demand."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from kernlint.ir import mlir
from kernlint.ir.asm_lines import instruction_position, statement_range, statement_spans
from kernlint.ir.occupancy import Occupancy, theoretical_occupancy
from kernlint.ir.resources import ResourceUsage
from kernlint.ir.specialize import Specialization
from kernlint.model import Span

if TYPE_CHECKING:
    from kernlint.ir import lanes, ptx

#: integer parameter values for the two lane evaluations (conclusions must hold for both)
INT_PARAM_VALUES = (1024, 3072)


@dataclass
class CompiledKernel:
    path: str
    kernel: str
    spec: Specialization
    capability: int
    ok: bool
    asm: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    resources: ResourceUsage | None = None
    #: when not ok: stage (import | compile | timeout | crash), message and location in ``path``
    error: str = ""
    error_stage: str = ""
    error_line: int = 0
    error_col: int = 0
    kernel_line: int = 1
    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_record(cls, record: dict[str, Any], path: str, kernel: str, spec: Specialization,
                    capability: int, kernel_line: int = 1) -> "CompiledKernel":
        res = record.get("resources")
        return cls(path, kernel, spec, capability, bool(record.get("ok")), record.get("asm", {}),
                   record.get("metadata", {}), ResourceUsage.from_dict(res) if res else None,
                   record.get("error", ""), record.get("stage", ""), int(record.get("line") or 0),
                   int(record.get("col") or 0), kernel_line)

    # -- parsed artefacts ---------------------------------------------------------------------
    @cached_property
    def ptx(self) -> ptx.PtxModule:
        from kernlint.ir import ptx  # the PTX grammar (lark) loads with the first kernel checked

        return ptx.parse(self.asm.get("ptx", ""))

    @cached_property
    def ttir(self) -> mlir.MlirModule:
        return mlir.parse(self.asm.get("ttir", ""))

    @cached_property
    def ttgir(self) -> mlir.MlirModule:
        return mlir.parse(self.asm.get("ttgir", ""))

    @property
    def num_warps(self) -> int:
        return int(self.metadata.get("num_warps") or self.spec.num_warps)

    @cached_property
    def lane_evaluations(self) -> tuple[lanes.Evaluation, lanes.Evaluation]:
        """The kernel's first function evaluated with integer parameters set to each of
        :data:`INT_PARAM_VALUES`."""
        from kernlint.ir import lanes  # numpy: loaded only when an IR rule evaluates lanes

        a, b = (lanes.evaluate(self.ptx, self.num_warps, default_int=v) for v in INT_PARAM_VALUES)
        return a[0], b[0]

    @cached_property
    def occupancy(self) -> Occupancy | None:
        if self.resources is None:
            return None
        return theoretical_occupancy(self.capability, self.num_warps, self.resources.registers,
                                     self.resources.shared_bytes)

    # -- mapping back to the user's source ----------------------------------------------------
    def _same_file(self, file: str) -> bool:
        try:
            return os.path.realpath(file) == os.path.realpath(self.path) or (
                not os.path.isabs(file) and os.path.basename(file) == os.path.basename(self.path))
        except (OSError, ValueError):
            return False

    def user_frame(self, frames) -> tuple[int, int, list[str]]:
        """(line, col, call chain) of the innermost frame in the kernel's own file."""
        chain = [f"{os.path.basename(f)}:{ln}:{c}" for f, ln, c in frames]
        for f, ln, c in frames:
            if self._same_file(f) and ln > 0:
                if self.metadata.get("frontend") == "tilelang":
                    # ``#line`` carries no column: the statement's own start
                    c = self._indent(ln) + 1
                return ln, max(c, 1), chain
        return self.kernel_line, 1, chain

    def instruction_frame(self, inst) -> tuple[int, int, list[str], tuple[int, int]]:
        """:meth:`user_frame` of a PTX instruction, moved to the line where inline PTX writes it,
        and the lines of its statement, any of which the line table may give it."""
        line, col, chain = self.user_frame(inst.loc.frames() if inst.loc else [])
        line, col = instruction_position(self._source_lines, line, col, inst.text())
        return line, col, chain, statement_range(self._statement_spans, line)

    @cached_property
    def _statement_spans(self) -> list[tuple[int, int]]:
        return statement_spans(self._source_lines)

    @cached_property
    def _source_lines(self) -> list[str]:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as fh:
                return fh.read().splitlines()
        except OSError:
            return []

    def _indent(self, line: int) -> int:
        text = self._source_lines
        if 0 < line <= len(text):
            return len(text[line - 1]) - len(text[line - 1].lstrip())
        return 0

    def span(self, line: int, col: int) -> Span:
        text = self._source_lines
        end = len(text[line - 1].rstrip()) + 1 if 0 < line <= len(text) else col + 1
        return Span(line, col, line, max(end, col + 1))
