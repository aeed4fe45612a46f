"""Nsight Compute: one ``ncu`` command collecting exactly the metrics the findings need, and
parsing of its CSV (``--csv --page raw``: one row per kernel launch, one column per metric; the
``details`` page's long form, one row per metric, is parsed too).

``--clock-control none`` keeps the GPU's own clocks (the numbers a user's run sees);
``--kernel-name regex:`` limits profiling to the kernels with findings. Which metric confirms
which rule is in each rule's catalogue entry (``confirm.tool == "ncu"``, ``confirm.check`` the
metric, ``confirm.threshold`` e.g. ``"> 0"``). In Triton, data-dependent control flow mostly shows
as predicated-off lanes (``smsp__thread_inst_executed_pred_on_per_inst_executed.ratio``), not as
divergent branches.
"""

from __future__ import annotations

import csv
import io
import math
import operator
import re
import shutil
from dataclasses import dataclass, field
from typing import Sequence

from kernlint.dynamic.sanitizer import kernel_regex

#: the metrics the issue's rule categories need, by category (a rule's own ``confirm.check`` wins)
METRICS_BY_CATEGORY = {
    "bank-conflict": (
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    ),
    "divergence": (
        "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
        "smsp__thread_inst_executed_per_inst_executed.ratio",
        "smsp__sass_average_branch_targets_threads_uniform.pct",
    ),
    "occupancy": (
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "sm__maximum_warps_per_active_cycle_pct",
        "launch__occupancy_limit_registers",
        "launch__occupancy_limit_shared_mem",
        "launch__occupancy_limit_warps",
        "launch__occupancy_limit_blocks",
        "launch__registers_per_thread",
    ),
    "spill": (
        "launch__registers_per_thread",
        "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
        "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
    ),
    "uncoalesced": (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    ),
}
#: always collected: what every verdict reports beside its own metric
BASE_METRICS = ("gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed")


METRIC_NAME = re.compile(r"^[a-z0-9]+__[A-Za-z0-9_.]+$")


def find_ncu() -> str | None:
    return shutil.which("ncu")


def metrics_for(categories: Sequence[str] = (), checks: Sequence[str] = ()) -> list[str]:
    """The union of the metrics named by rules' ``confirm.check`` and their categories' defaults."""
    out: list[str] = list(BASE_METRICS)
    for c in checks:
        for metric in re.split(r"[,\s]+", c):
            # one name ncu does not know fails the whole pass, so prose never reaches --metrics
            if METRIC_NAME.match(metric) and metric not in out:
                out.append(metric)
    for cat in categories:
        for metric in METRICS_BY_CATEGORY.get(cat, ()):
            if metric not in out:
                out.append(metric)
    return out


def ncu_command(
    command: Sequence[str],
    metrics: Sequence[str],
    *,
    kernels: Sequence[str] = (),
    launch_skip: int | None = None,
    launch_count: int | None = None,
    executable: str = "ncu",
) -> list[str]:
    argv = [executable, "--clock-control", "none", "--csv", "--target-processes", "all",
            "--metrics", ",".join(metrics)]
    regex = kernel_regex(kernels)
    if regex:
        argv += ["--kernel-name", regex]
    if launch_skip:
        argv += ["--launch-skip", str(launch_skip)]
    if launch_count:
        argv += ["--launch-count", str(launch_count)]
    return argv + list(command)


@dataclass
class KernelMetrics:
    kernel: str
    launch_id: str = ""
    grid: str = ""
    block: str = ""
    metrics: dict[str, float | str] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)


def _number(text: str) -> float | str:
    t = text.strip().replace(",", "")
    try:
        return float(t)
    except ValueError:
        return text.strip()


def _csv_start(text: str) -> str:
    """Drop ncu's ``==PROF==`` lines and the program's own output before the CSV header."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith('"ID"') or line.startswith("ID,"):
            return "\n".join(lines[i:])
    return ""


def parse_csv(text: str) -> list[KernelMetrics]:
    """One :class:`KernelMetrics` per profiled launch, in order."""
    body = _csv_start(text)
    if not body:
        return []
    rows = list(csv.reader(io.StringIO(body)))
    header = rows[0]
    if "Metric Name" in header and "Metric Value" in header:
        return _parse_long(header, rows[1:])
    col = {name: i for i, name in enumerate(header)}
    units_row = rows[1] if len(rows) > 1 and (not rows[1] or rows[1][0] == "") else None
    data = rows[2:] if units_row is not None else rows[1:]
    fixed = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
             "Grid Size", "Device", "CC", "Section Name", "Estimated Speedup", "Estimated Speedup Type"}
    out = []
    for row in data:
        if len(row) < len(header):
            continue
        km = KernelMetrics(
            kernel=_short(row[col["Kernel Name"]]) if "Kernel Name" in col else "?",
            launch_id=row[col["ID"]] if "ID" in col else "",
            grid=row[col["Grid Size"]] if "Grid Size" in col else "",
            block=row[col["Block Size"]] if "Block Size" in col else "",
        )
        for name, i in col.items():
            if name in fixed:
                continue
            km.metrics[name] = _number(row[i])
            if units_row is not None and i < len(units_row) and units_row[i]:
                km.units[name] = units_row[i]
        out.append(km)
    return out


def _parse_long(header: list[str], rows: list[list[str]]) -> list[KernelMetrics]:
    col = {name: i for i, name in enumerate(header)}
    by_id: dict[str, KernelMetrics] = {}
    for row in rows:
        if len(row) < len(header):
            continue
        key = row[col["ID"]]
        km = by_id.get(key)
        if km is None:
            km = by_id[key] = KernelMetrics(_short(row[col["Kernel Name"]]), key,
                                            row[col.get("Grid Size", 0)], row[col.get("Block Size", 0)])
        name = row[col["Metric Name"]]
        km.metrics[name] = _number(row[col["Metric Value"]])
        if "Metric Unit" in col:
            km.units[name] = row[col["Metric Unit"]]
    return list(by_id.values())


def _dims(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in re.findall(r"\d+", text))


def row_shape(row: KernelMetrics) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(grid, block) of a profiled launch, from ncu's ``Grid Size`` and ``Block Size`` columns."""
    return _dims(row.grid), _dims(row.block)


def launch_shape(config: dict | None) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(grid, block) of a kernel compiled with a fixed launch (TileLang); None when a dimension is unknown."""
    if not config or not config.get("grid") or not config.get("block"):
        return None
    dims = list(config["grid"]) + list(config["block"])
    if any(not isinstance(d, int) for d in dims):
        return None
    return tuple(config["grid"]), tuple(config["block"])


def blocks_launched(rows: Sequence[KernelMetrics]) -> int | None:
    """Thread blocks over these launches, from ncu's ``Grid Size`` column (None when one lacks it)."""
    total = 0
    for r in rows:
        dims = _dims(r.grid)
        if not dims:
            return None
        total += math.prod(dims)
    return total or None


def _short(name: str) -> str:
    return name.split("(")[0].strip()


# the leading comparison of a catalogue threshold ("> 0, and at least 90% of ..."): what follows is
# judged by code for the rule's category (ncu_judges) or is prose
_THRESHOLD = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(%?)")
_OPS = {">": operator.gt, "<": operator.lt, ">=": operator.ge, "<=": operator.le, "==": operator.eq,
        "!=": operator.ne}


def meets(value: float | str | None, threshold: str) -> bool | None:
    """Does a metric value meet a catalogue threshold like ``"> 0"``? None when not judgeable."""
    if not isinstance(value, (int, float)):
        return None
    m = _THRESHOLD.match(threshold or "")
    if not m:
        return None
    return _OPS[m.group(1)](value, float(m.group(2)))
