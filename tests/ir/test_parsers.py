"""PTX and TTIR/TTGIR readers on real compiler output (compiled here, never hand-written)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from kernlint.ir import lanes, mlir, ptx
from kernlint.ir.compile import compile_job
from kernlint.ir.resources import cuobjdump_resource_usage, parse_ptxas_log
from kernlint.ir.specialize import specializations_for

SOURCE = '''import triton
import triton.language as tl


@triton.jit
def _load_helper(ptr, offs, n):
    return tl.load(ptr + offs, mask=offs < n, other=0.0)


@triton.jit
def kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = _load_helper(x_ptr, offs, n)
    y = tl.load(y_ptr + offs, mask=offs < n)
    total = tl.sum(x * y, axis=0)
    tl.store(out_ptr + offs, x + y + total, mask=offs < n)
'''
HELPER_LOAD_LINE, CALL_LINE, DEF_LINE = 7, 14, 11


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    path = tmp_path_factory.mktemp("src") / "kern.py"
    path.write_text(SOURCE)
    (spec,), _ = specializations_for("kernel", SOURCE)
    rec = compile_job({"path": str(path), "kernel": "kernel", "spec": spec.to_dict(),
                       "constexprs": spec.constexprs, "capability": 90, "key": "k"})
    assert rec["ok"], rec.get("error")
    rec["path"] = str(path)
    return rec


def _instruction_lines(text: str) -> int:
    code = ptx.code_part(text)
    n = 0
    for line in code.splitlines():
        s = line.split("//")[0].strip()
        if s.endswith(";") and not s.startswith(".") and not s.startswith("{") and "(" not in s[:1]:
            n += s.count(";")
    return n


def test_ptx_instructions_locs_and_files(record):
    text = record["asm"]["ptx"]
    module = ptx.parse(text)
    assert module.target.startswith("sm_90")
    assert record["path"] in module.files.values()
    insts = list(module.instructions())
    # every statement ending in ';' in the code section is one instruction record
    assert len(insts) == _instruction_lines(text)
    opcodes = {i.opcode for i in insts}
    assert {"ld", "st", "mov", "ret"} <= opcodes
    loads = [i for i in insts if i.opcode == "ld" and i.state_space == "global"]
    assert loads and all(i.loc is not None for i in loads)
    lines = {i.loc.line for i in loads if i.loc.file == record["path"]}
    assert HELPER_LOAD_LINE in lines or CALL_LINE in lines
    inlined = [i for i in insts if i.loc and i.loc.inlined_at]
    helper = {i.loc.inlined_at[1] for i in inlined if i.loc.file == record["path"] and i.loc.line == HELPER_LOAD_LINE}
    assert helper == {CALL_LINE}
    guarded = [i for i in insts if i.guard]
    assert guarded and all(re.fullmatch(r"%p\d+", i.guard) for i in guarded)
    assert all(i.operands[-1].kind == "address" for i in loads)
    assert len(module.functions[0].params) >= 4


def test_mlir_loads_masks_and_callsite_locations(record):
    for stage in ("ttir", "ttgir"):
        module = mlir.parse(record["asm"][stage])
        loads = list(module.find("tt.load"))
        assert len(loads) == 2
        assert all(len(op.operands) >= 2 for op in loads)  # both masked
        helper = [op for op in loads if len(op.frames) > 1]
        assert len(helper) == 1
        assert [f[1] for f in helper[0].frames] == [HELPER_LOAD_LINE, CALL_LINE]
        (store,) = list(module.find("tt.store"))
        assert store.frames[0][1] == 17 and len(store.operands) == 3
        names = {p.name for p in mlir.producers(module, store.operands[0])}
        assert {"tt.make_range", "tt.get_program_id", "tt.addptr"} <= names
    ttgir = mlir.parse(record["asm"]["ttgir"])
    assert ttgir.num_warps == 4 and any(k.startswith("#blocked") for k in ttgir.layouts)


def test_ptxas_log_agrees_with_cuobjdump(record, tmp_path):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kernlint.ir.loader import load_kernel

    fn = load_kernel(record["path"], "kernel")
    ck = triton.compile(ASTSource(fn, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                       "BLOCK": "constexpr"}, {(4,): 64}), target=GPUTarget("cuda", 90, 32))
    dumped = cuobjdump_resource_usage(ck.asm["cubin"], "kernel")
    assert dumped is not None and dumped.registers > 0
    assert record["resources"]["source"] == "ptxas-log"
    assert record["resources"]["registers"] > 0
    assert parse_ptxas_log("nothing here") is None


def test_lane_evaluation_of_contiguous_block(record):
    module = ptx.parse(record["asm"]["ptx"])
    ev = lanes.evaluate(module, 4)[0]
    loads = [a for a in ev.accesses if a.space == "global" and a.kind == "ld"]
    assert loads and all(a.addresses is not None for a in loads)
    for a in loads:
        sectors, ideal = lanes.global_sectors(a.addresses, a.active, a.bytes_per_thread)
        assert sectors == ideal  # offs = pid * BLOCK + arange: fully coalesced
    # BLOCK=64 with 128 threads: the mask offs < n is known per lane; replicated lanes are inactive or equal
    assert any(not a.active.all() for a in loads) or all(a.active.all() for a in loads)


def test_bank_model_counts_a_known_pattern():
    # 32 threads, 4-byte accesses with a stride of 32 words: all in bank 0 -> 32 wavefronts
    addrs = np.arange(32, dtype=np.int64) * 128
    total, ideal, _ = lanes.shared_wavefronts(addrs, np.ones(32, bool), 4, "ld")
    assert (total, ideal) == (32, 1)
    # same word for every thread: broadcast, one wavefront
    total, ideal, _ = lanes.shared_wavefronts(np.zeros(32, np.int64), np.ones(32, bool), 4, "ld")
    assert (total, ideal) == (1, 1)
    # 16-byte accesses, consecutive: 4 quarter-warp phases, no conflict
    total, ideal, _ = lanes.shared_wavefronts(np.arange(32, dtype=np.int64) * 16, np.ones(32, bool), 16, "st")
    assert (total, ideal) == (4, 4)


def test_stripped_module_keeps_its_own_annotation_semantics(tmp_path):
    # kernlint's modules use postponed annotations; the user's code must not inherit them (TileLang
    # evaluates a prim_func's annotations, which may name the factory's arguments, at definition)
    from kernlint.ir.loader import load_module

    path = tmp_path / "annotated.py"
    path.write_text("def f(x: int) -> float:\n    return x\n")
    module = load_module(path, stripped=True)
    assert module.f.__annotations__ == {"x": int, "return": float}
