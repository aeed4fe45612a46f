"""Evaluate a PTX kernel's integer arithmetic for every thread of one block.

The evaluator walks the instructions once, in program order, keeping for each register a vector
with one value per thread (``%tid.x`` = 0..T-1 for T = 32 x num_warps; Triton launches 1-D blocks)
or "unknown" (data loaded from memory, shuffles...). Block and grid indices are 0, pointer
parameters get distinct 4 KB-aligned base addresses and integer parameters the values given (the
IR phase evaluates twice with different values and keeps only conclusions that hold for both).
Loops are not iterated: a loop-carried register holds its value on entry (the first iteration),
which is what the lane-to-lane *pattern* of an address depends on.

The result is, per memory instruction, the address of every thread and which threads are active
(from the guard predicate when it is computable), and, per predicated branch, the predicate of
every thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kernlint.ir.ptx import Instruction, Operand, PtxFunction, PtxModule

Vec = np.ndarray

_WIDTH = {"8": 8, "16": 16, "32": 32, "64": 64, "128": 128}
_ELEM_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
               "b32": 4, "u32": 4, "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8,
               "b128": 16, "f16x2": 4, "bf16x2": 4}
POINTER_BASE_STRIDE = 1 << 32


@dataclass
class MemoryAccess:
    inst: Instruction
    space: str  # shared | global | local | generic
    kind: str  # ld | st | ldmatrix | stmatrix | cp.async | atom | red
    bytes_per_thread: int
    addresses: Vec | None  # one per thread, None when not computable
    active: Vec  # bool per thread


@dataclass
class BranchPredicate:
    inst: Instruction
    values: Vec | None  # bool per thread (after negation), None when unknown
    target: str


@dataclass
class Evaluation:
    threads: int
    accesses: list[MemoryAccess] = field(default_factory=list)
    branches: list[BranchPredicate] = field(default_factory=list)
    #: registers whose value depends on the thread index (per-thread values differ)
    thread_dependent: set[str] = field(default_factory=set)


def _type_of(inst: Instruction) -> str:
    for m in reversed(inst.modifiers):
        if m in _ELEM_BYTES or m == "pred":
            return m
    return "b32"


def _bits(t: str) -> int:
    if t == "pred":
        return 1
    digits = "".join(ch for ch in t if ch.isdigit())
    return int(digits) if digits else 32


def _wrap(v: Vec, bits: int, signed: bool) -> Vec:
    if bits >= 64:
        return v.astype(np.int64)
    mask = (1 << bits) - 1
    v = v.astype(np.int64) & mask
    if signed:
        v = np.where(v >= (1 << (bits - 1)), v - (1 << bits), v)
    return v


def access_bytes(inst: Instruction) -> int:
    n = 1
    for m in inst.modifiers:
        if m in ("v2", "v4", "v8"):
            n = int(m[1])
    return n * _ELEM_BYTES.get(_type_of(inst), 4)


class LaneEvaluator:
    def __init__(self, module: PtxModule, func: PtxFunction, num_warps: int,
                 int_params: dict[int, int] | None = None, default_int: int = 1024):
        self.module = module
        self.func = func
        self.T = 32 * num_warps
        self.tid = np.arange(self.T, dtype=np.int64)
        self.regs: dict[str, Vec | None] = {}
        self.int_params = int_params or {}
        self.default_int = default_int
        self.params: dict[str, int] = {}
        for i, (name, decl) in enumerate(func.params):
            if ".ptr" in decl or ".u64" in decl or ".b64" in decl:
                self.params[name] = (i + 1) * POINTER_BASE_STRIDE
            else:
                self.params[name] = self.int_params.get(i, default_int)

    # -- operands -----------------------------------------------------------------------------
    def _special(self, name: str) -> Vec | None:
        T = self.T
        table = {
            "%tid.x": self.tid, "%tid.y": np.zeros(T, np.int64), "%tid.z": np.zeros(T, np.int64),
            "%ntid.x": np.full(T, T), "%ntid.y": np.ones(T, np.int64), "%ntid.z": np.ones(T, np.int64),
            "%laneid": self.tid % 32, "%warpid": self.tid // 32,
            "%ctaid.x": np.zeros(T, np.int64), "%ctaid.y": np.zeros(T, np.int64),
            "%ctaid.z": np.zeros(T, np.int64),
            "%nctaid.x": np.ones(T, np.int64), "%nctaid.y": np.ones(T, np.int64),
            "%nctaid.z": np.ones(T, np.int64),
            "%cluster_ctarank": np.zeros(T, np.int64),
        }
        return table.get(name)

    def value(self, op: Operand) -> Vec | None:
        if op.kind == "reg":
            special = self._special(op.text)
            if special is not None:
                return special
            return self.regs.get(op.text)
        if op.kind == "negreg":
            v = self.regs.get(op.text[1:])
            return None if v is None else (v == 0).astype(np.int64)
        if op.kind == "imm":
            return np.full(self.T, op.value, dtype=np.int64)
        if op.kind == "sym":
            if op.text in self.module.shared_symbols:
                return np.zeros(self.T, np.int64)
            return None
        return None

    def address(self, op: Operand) -> Vec | None:
        if op.kind != "address":
            return None
        if op.base is None:
            return np.full(self.T, op.offset, np.int64)
        if op.base.startswith("%"):
            base = self.regs.get(op.base)
            return None if base is None else base + op.offset
        if op.base in self.module.shared_symbols:
            return np.full(self.T, op.offset, np.int64)
        return None

    # -- evaluation ---------------------------------------------------------------------------
    def _set(self, inst: Instruction, dst: Operand, val: Vec | None, guard: Vec | None) -> None:
        regs = dst.registers()
        if not regs:
            return
        if dst.kind == "regpair" and val is not None:  # setp p|q
            self.regs[regs[0]] = val
            self.regs[regs[1]] = (val == 0).astype(np.int64)
            return
        for r in regs:
            v = val if len(regs) == 1 else None
            if v is not None and guard is not None and self.regs.get(r) is not None:
                v = np.where(guard.astype(bool), v, self.regs[r])
            self.regs[r] = v

    def _guard(self, inst: Instruction) -> Vec | None:
        if inst.guard is None:
            return None
        g = self.regs.get(inst.guard)
        if g is None:
            return None
        g = g.astype(bool)
        return ~g if inst.guard_negated else g

    def run(self) -> Evaluation:
        ev = Evaluation(self.T)
        for inst in self.func.instructions:
            guard = self._guard(inst)
            active = guard if guard is not None else np.ones(self.T, dtype=bool)
            self._memory(inst, active, ev)
            if inst.opcode == "bra" and inst.guard is not None:
                target = inst.operands[0].text if inst.operands else ""
                ev.branches.append(BranchPredicate(inst, guard, target))
                continue
            if not inst.operands or inst.opcode in ("st", "bar", "barrier", "bra", "ret", "red", "stmatrix",
                                                   "cp", "fence", "membar", "mbarrier", "exit", "trap"):
                continue
            dst = inst.operands[0]
            try:
                val = self._compute(inst)
            except (ValueError, ZeroDivisionError, OverflowError, IndexError, FloatingPointError):
                val = None
            self._set(inst, dst, val, guard)
            if val is not None and len(dst.registers()) == 1:
                for w in range(0, self.T, 32):
                    chunk = val[w:w + 32]
                    if chunk.size and (chunk != chunk[0]).any():
                        ev.thread_dependent.add(dst.registers()[0])
                        break
        return ev

    def _memory(self, inst: Instruction, active: Vec, ev: Evaluation) -> None:
        op = inst.opcode
        if op not in ("ld", "st", "ldmatrix", "stmatrix", "cp", "atom", "red", "ldu"):
            return
        if op == "cp":
            if not inst.has("async") or "bulk" in inst.modifiers:
                return
            dst = inst.operands[0] if inst.operands else None
            size = inst.operands[2].value if len(inst.operands) > 2 and inst.operands[2].value else 16
            if dst is not None:
                ev.accesses.append(MemoryAccess(inst, "shared", "cp.async", int(size), self.address(dst), active))
            if len(inst.operands) > 1:
                ev.accesses.append(MemoryAccess(inst, "global", "cp.async", int(size),
                                                self.address(inst.operands[1]), active))
            return
        addr_op = next((o for o in inst.operands if o.kind == "address"), None)
        if addr_op is None:
            return
        space = inst.state_space or "generic"
        if space.startswith("shared"):
            space = "shared"
        if space == "param":
            return
        kind = "ld" if op == "ldu" else op
        nbytes = 16 if op in ("ldmatrix", "stmatrix") else access_bytes(inst)
        ev.accesses.append(MemoryAccess(inst, space, kind, nbytes, self.address(addr_op), active))

    def _compute(self, inst: Instruction) -> Vec | None:
        op = inst.opcode
        ops = inst.operands
        t = _type_of(inst)
        signed = t.startswith("s")
        bits = _bits(t)

        def v(i: int) -> Vec | None:
            return self.value(ops[i]) if i < len(ops) else None

        if op == "ld":
            if inst.state_space == "param" and ops[1].kind == "address" and ops[1].base in self.params:
                return np.full(self.T, self.params[ops[1].base] + ops[1].offset, np.int64)
            return None
        if op == "mov":
            src = ops[1]
            if src.kind == "sym" and src.text in self.module.shared_symbols:
                return np.zeros(self.T, np.int64)
            return v(1)
        if op in ("cvta", "cvt"):
            a = v(1)
            if a is None:
                return None
            if op == "cvt":
                if any(m.startswith("f") or m.startswith("bf") for m in inst.modifiers if m not in ("ftz",)):
                    if any(m in ("f16", "f32", "f64", "bf16") for m in inst.modifiers):
                        return None
                return _wrap(a, bits, signed)
            return a
        if op in ("add", "sub", "mul", "mad", "shl", "shr", "and", "or", "xor", "min", "max", "div",
                  "rem", "neg", "not", "abs", "selp", "setp", "bfe", "bfi", "mul24", "mad24"):
            if t.startswith("f") or t.startswith("bf"):
                return None
            if op == "setp":
                return self._setp(inst)
            args = [v(i) for i in range(1, len(ops))]
            if any(a is None for a in args[: {"neg": 1, "not": 1, "abs": 1}.get(op, 2)]):
                return None
            a = args[0]
            b = args[1] if len(args) > 1 else None
            if op == "add":
                r = a + b
            elif op == "sub":
                r = a - b
            elif op in ("mul", "mul24"):
                r = a * b
                if "hi" in inst.modifiers:
                    r = r >> bits
                elif "wide" in inst.modifiers:
                    return _wrap(r, bits * 2, signed)
            elif op in ("mad", "mad24"):
                c = args[2]
                if c is None:
                    return None
                if "wide" in inst.modifiers:
                    return _wrap(a * b + c, bits * 2, signed)
                r = a * b + c
            elif op == "shl":
                r = a << np.minimum(b, 63)
            elif op == "shr":
                r = (a if signed else _wrap(a, bits, False)) >> np.minimum(b, 63)
            elif op == "and":
                r = a & b
            elif op == "or":
                r = a | b
            elif op == "xor":
                r = a ^ b
            elif op == "min":
                r = np.minimum(a, b)
            elif op == "max":
                r = np.maximum(a, b)
            elif op == "div":
                if (b == 0).any():
                    return None
                r = np.where((a < 0) ^ (b < 0), -(np.abs(a) // np.abs(b)), a // b) if signed else a // b
            elif op == "rem":
                if (b == 0).any():
                    return None
                r = np.fmod(a, b) if signed else a % b
            elif op == "neg":
                r = -a
            elif op == "not":
                r = (a == 0).astype(np.int64) if t == "pred" else ~a
            elif op == "abs":
                r = np.abs(a)
            elif op == "selp":
                p = args[2]
                if p is None:
                    return None
                r = np.where(p.astype(bool), a, b)
            elif op == "bfe":
                c = args[2]
                if c is None:
                    return None
                pos, length = b, c
                raw = _wrap(a, bits, False) >> pos
                field_ = raw & ((np.int64(1) << length) - 1)
                if signed:
                    sign = (field_ >> np.maximum(length - 1, 0)) & 1
                    field_ = np.where((sign == 1) & (length > 0), field_ - (np.int64(1) << length), field_)
                return field_
            elif op == "bfi":
                c, d = args[2], args[3] if len(args) > 3 else None
                if c is None or d is None:
                    return None
                mask = ((np.int64(1) << d) - 1) << c
                r = (b & ~mask) | ((a << c) & mask)
            else:
                return None
            return _wrap(r, bits, signed) if t != "pred" else (r != 0).astype(np.int64)
        return None

    def _setp(self, inst: Instruction) -> Vec | None:
        ops = inst.operands
        a, b = self.value(ops[1]), self.value(ops[2]) if len(ops) > 2 else None
        if a is None or b is None:
            return None
        t = _type_of(inst)
        if t.startswith("u") or t.startswith("b"):
            a, b = _wrap(a, _bits(t), False), _wrap(b, _bits(t), False)
        cmp = inst.modifiers[0] if inst.modifiers else "eq"
        table = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b,
                 "lo": a < b, "ls": a <= b, "hi": a > b, "hs": a >= b}
        r = table.get(cmp)
        if r is None:
            return None
        # a trailing boolean operand combines (setp.lt.and.s32 p, a, b, q)
        if len(ops) > 3 and any(m in ("and", "or", "xor") for m in inst.modifiers):
            q = self.value(ops[3])
            if q is None:
                return None
            q = q.astype(bool)
            r = r & q if "and" in inst.modifiers else (r | q if "or" in inst.modifiers else r ^ q)
        return r.astype(np.int64)


def evaluate(module: PtxModule, num_warps: int, int_params: dict[int, int] | None = None,
             default_int: int = 1024) -> list[Evaluation]:
    return [LaneEvaluator(module, f, num_warps, int_params, default_int).run() for f in module.functions]


# --------------------------------------------------------------------------------------------
# shared-memory banks and global-memory sectors


def shared_wavefronts(addresses: Vec, active: Vec, nbytes: int, kind: str) -> tuple[int, int, list[int]]:
    """(wavefronts, ideal wavefronts, per-warp excess) of one shared-memory instruction.

    A warp's request is split in phases of 128 bytes: all 32 threads for accesses of up to 4
    bytes, half-warps for 8 bytes, quarter-warps for 16 bytes; ``ldmatrix``/``stmatrix`` serve
    one 8x16-byte matrix per phase (threads 0-7, 8-15, ...). Within a phase, the wavefronts are the
    largest number of distinct 4-byte words that fall into one of the 32 banks (the same word is
    broadcast). The ideal is one wavefront per phase that has active threads.
    """
    T = addresses.shape[0]
    if kind in ("ldmatrix", "stmatrix"):
        group = 8
    elif nbytes <= 4:
        group = 32
    else:
        group = max(1, 128 // nbytes)
    total = ideal = 0
    per_warp = []
    words_per_thread = max(1, nbytes // 4)
    for w in range(0, T, 32):
        warp_total = warp_ideal = 0
        for g in range(w, min(w + 32, T), group):
            idx = [i for i in range(g, min(g + group, T)) if active[i]]
            if not idx:
                continue
            banks: dict[int, set[int]] = {}
            for i in idx:
                first = int(addresses[i]) // 4
                for k in range(words_per_thread):
                    word = first + k
                    banks.setdefault(word % 32, set()).add(word)
            warp_total += max(len(s) for s in banks.values())
            warp_ideal += 1
        total += warp_total
        ideal += warp_ideal
        per_warp.append(warp_total - warp_ideal)
    return total, ideal, per_warp


def global_sectors(addresses: Vec, active: Vec, nbytes: int) -> tuple[int, int]:
    """(32-byte sectors touched, ideal sectors) summed over the block's warps."""
    return line_sectors([(addresses, active, nbytes)])


def line_sectors(accesses: list[tuple[Vec, Vec, int]]) -> tuple[int, int]:
    """(32-byte sectors touched, ideal sectors) of one source access summed over the block's warps,
    given its instructions' ``(addresses, active, bytes per thread)``: a sector that a warp's sibling
    instructions touch again (a vector split into scalar loads when a mask's alignment is unknown:
    thread t reads bytes 16t+4k in instruction k) is one sector of DRAM/L2 traffic, counted once."""
    T = accesses[0][0].shape[0]
    total = ideal = 0
    for w in range(0, T, 32):
        sectors: set[int] = set()
        elements: set[tuple[int, int]] = set()
        for addresses, active, nbytes in accesses:
            sel = active[w:w + 32]
            if not sel.any():
                continue
            for x in addresses[w:w + 32][sel].tolist():
                elements.add((int(x), nbytes))
                for off in range(0, nbytes, 4):
                    sectors.add((int(x) + off) // 32)
        total += len(sectors)
        ideal += -(-sum(n for _, n in elements) // 32)
    return total, ideal
