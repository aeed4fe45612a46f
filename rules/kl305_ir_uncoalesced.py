"""KL305: global loads/stores whose lanes touch many more 32-byte sectors than the data needs."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from kernlint.ir.artifacts import CompiledKernel
from kernlint.ir.rulebase import IRRule
from kernlint.model import Finding, Level
from kernlint.rule import Confirmation


class UncoalescedAccess(IRRule):
    code = "KL305"
    name = "uncoalesced-access"
    category = "uncoalesced"
    level = Level.WARNING
    precision = "high"
    options = {"min_ratio": 2.0}
    confirm = Confirmation(
        "ncu", check="l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,"
                     "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        threshold="sectors per request of the kernel's loads (or stores, as the line does) >= min_ratio x the ideal "
                  "(bytes per lane: 4 for 4-byte lanes); below 1.25x refutes",
        description="ncu's sectors per request show how many 32-byte sectors each warp access touches.",
    )
    summary = ("Global accesses whose per-lane addresses (evaluated from the PTX) spread a warp's request "
               "over at least twice the 32-byte sectors its data needs: strided, uncoalesced lanes.")
    docs = """
## What it does
Evaluates the PTX address arithmetic of every ``ld.global``/``st.global`` for each thread of a
block, with integer arguments set to two different multiples of 16, and counts the distinct 32-byte
sectors each warp touches against the ideal for the bytes it moves: per load, the distinct sectors of
its instructions (a load split into scalar pieces, as Triton emits when a mask's alignment is
unknown, touches its sectors once per piece, but the pieces after the first hit L1); per store
instruction, since stores write through to L2. Lines where both evaluations need at
least ``min_ratio`` (default 2) times the ideal are reported.

## Why is this bad?
DRAM and L2 move whole sectors: when consecutive lanes read addresses far apart, each 4-byte value
costs a 32-byte sector, an 8x waste of bandwidth for fp32.

## Example
```python
offs = pid * BLOCK + tl.arange(0, BLOCK)
x = tl.load(x_ptr + offs * STRIDE)      # lanes STRIDE elements apart
```

## Use instead
Make the fastest-varying index of the tile the contiguous one in memory (load the tile with its
contiguous axis as the last axis, then ``tl.trans`` in registers), or change the data layout.
"""
    bad = (
        '''import triton
import triton.language as tl


@triton.jit
def gather_column(x_ptr, y_ptr, n, BLOCK: tl.constexpr, STRIDE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * STRIDE, mask=offs < n)  # expect: KL305
    tl.store(y_ptr + offs, x, mask=offs < n)
''',
    )
    good = (
        '''import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x, mask=offs < n)
''',
    )

    @staticmethod
    def sectors(accesses: list, kinds: set[str]) -> tuple[int, int]:
        """A load's sibling instructions re-read their sectors from L1 (a vector split into scalar
        pieces when a mask's alignment is unknown): its distinct sectors count. Every store
        instruction writes its sectors through to L2: they count per instruction."""
        from kernlint.ir.lanes import global_sectors, line_sectors  # numpy: loaded once kernels are checked

        if kinds == {"load"}:
            return line_sectors(accesses)
        per_inst = [global_sectors(*a) for a in accesses]
        return sum(t for t, _ in per_inst), sum(i for _, i in per_inst)

    def check(self, compiled: CompiledKernel) -> Iterable[Finding]:
        if not compiled.ok or "ptx" not in compiled.asm:
            return
        ev_a, ev_b = compiled.lane_evaluations
        per_line: dict[tuple[int, int], dict] = defaultdict(
            lambda: {"a": [], "b": [], "insts": [], "chain": [], "bytes": 0, "kinds": set()})
        for acc_a, acc_b in zip(ev_a.accesses, ev_b.accesses):
            if acc_a.space != "global" or acc_a.addresses is None or acc_b.addresses is None:
                continue
            loc = acc_a.inst.loc
            line, col, chain = compiled.user_frame(loc.frames() if loc else [])
            rec = per_line[(line, col)]
            rec["a"].append((acc_a.addresses, acc_a.active, acc_a.bytes_per_thread))
            rec["b"].append((acc_b.addresses, acc_b.active, acc_b.bytes_per_thread))
            rec["insts"].append(acc_a.inst.text())
            rec["chain"] = chain
            rec["bytes"] = acc_a.bytes_per_thread
            rec["kinds"].add({"ld": "load", "st": "store"}.get(acc_a.kind, acc_a.kind))
        for rec in per_line.values():
            rec["a"], rec["b"] = self.sectors(rec["a"], rec["kinds"]), self.sectors(rec["b"], rec["kinds"])
        ratio = self.opts["min_ratio"]
        for (line, col), rec in sorted(per_line.items()):
            (ta, ia), (tb, ib) = rec["a"], rec["b"]
            if not ia or not ib or ta < ratio * ia or tb < ratio * ib:
                continue
            yield self.finding(
                compiled, line, col,
                f"uncoalesced global access: warps touch {ta} 32-byte sectors per block where {ia} would "
                f"hold the data ({ta / ia:.1f}x) [{compiled.spec.label}]",
                ir="ptx", excerpt=rec["insts"], chain=rec["chain"],
                measurements={"predicted_sectors_per_block": ta, "ideal_sectors_per_block": ia,
                              "sector_ratio": round(ta / ia, 2), "bytes_per_lane": rec["bytes"],
                              "access": "/".join(sorted(rec["kinds"]))},
            )
