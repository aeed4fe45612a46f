"""KL205 against the CUDA TileLang generates: the IR phase's lowering (TileLang in a CUDA target
context on the CPU, ``#line`` directives pinned to the user's statements) shows the overrun the
source rule reports, at the same lines, and no access at all where the rule stays silent because
the branch is compiled out. Needs the tilelang extra and nvcc."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernlint.check import Options, run_check
from kernlint.config import load
from kernlint.source.phase import read_module
from kernlint.ir.tilelang import LowerJob, lower_job, nvcc_path, tilelang_available, tilelang_entries

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "tilelang"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not tilelang_available() or nvcc_path() is None, reason="needs the tilelang extra and nvcc"),
]

_LINE = re.compile(r'^\s*#line\s+(\d+)\s')
_LOCAL_ARRAY = re.compile(r"^\s*(?:float|double|half_t|bfloat16_t|int|signed char|uchar|char)\s+(\w+)\[(\d+)\];")


def _lowered_cuda(path: Path) -> str:
    (entry,) = tilelang_entries(read_module(str(path), path.read_text()))
    job = LowerJob(str(path), entry.factory, entry.specs[0], 90, "test", entry)
    record = lower_job(job.to_wire())
    assert record["ok"], record.get("error")
    return record["asm"]["cuda"]


def _constant_overruns(cuda: str) -> dict[int, set[str]]:
    """Python line -> per-thread arrays indexed at a constant past their declared size there."""
    sizes: dict[str, int] = {}
    line, out = 0, {}
    for text in cuda.splitlines():
        m = _LINE.match(text)
        if m:
            line = int(m.group(1))
            continue
        decl = _LOCAL_ARRAY.match(text)
        if decl:
            sizes[decl.group(1)] = int(decl.group(2))
            continue
        for name, index in re.findall(r"\b(\w+)\[(\d+)\]", text):
            if name in sizes and int(index) >= sizes[name]:
                out.setdefault(line, set()).add(name)
    return out


def _kl205_lines(path: Path) -> set[int]:
    result = run_check([path], load(ROOT), Options())
    return {f.span.line for f in result.findings if f.rule == "KL205"}


def test_the_generated_cuda_overruns_where_kl205_says_and_has_no_access_where_it_is_silent():
    bad, good = FIXTURES / "compiled_out_branch_bad.py", FIXTURES / "compiled_out_branch_good.py"
    reported = _kl205_lines(bad)
    assert reported and _constant_overruns(_lowered_cuda(bad)) == {line: {"partial"} for line in reported}
    assert _kl205_lines(good) == set()
    assert "partial" not in _lowered_cuda(good)  # the branch is not generated at all
