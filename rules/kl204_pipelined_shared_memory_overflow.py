from kernlint.model import Frontend, Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule
from kernlint.source.tilelang import DTYPE_BYTES
from kernlint.source.tilelang_target import SHARED_LIMIT, module_target

#: largest dynamic shared memory one block may opt into (bytes), when the module names no target
SM80_MAX = SHARED_LIMIT["sm_80"]  # A100; sm_86/sm_89 allow only 99 KB
SM90_MAX = SHARED_LIMIT["sm_90"]  # H100/H200 (sm_90) and B200 (sm_100)


class PipelinedSharedMemoryOverflow(SourceRule):
    code = "KL204"
    name = "pipelined-shared-memory-overflow"
    category = "occupancy"
    level = Level.WARNING
    frontends = (Frontend.TILELANG,)
    confirm = Confirmation(
        tool="ncu",
        check="launch__shared_mem_per_block_dynamic",
        threshold="> 166912 bytes (sm_80) or > 232448 bytes (sm_90): the launch fails instead",
        description="the kernel's dynamic shared memory as compiled; past the device's opt-in maximum the launch "
        "itself fails (cudaFuncSetAttribute / 'too many resources requested'), which the run reports",
    )
    summary = "The shared buffers live in a TileLang `T.Pipelined` loop, times its `num_stages`, exceed a GPU's shared memory per block."
    docs = """
## What it does
Sizes every `T.alloc_shared` buffer (shape × dtype, resolved through the factory's defaults and call
sites) and, for each `T.Pipelined(..., num_stages=s)` loop, adds up the buffers the loop body uses,
counting the buffers its `T.copy`s fill `s` times. That sum is a lower bound on the kernel's shared
memory: all those buffers are live at once in the loop, so TileLang's shared-memory merging cannot
overlap them. The sum is judged against the GPU the module is written for: an explicit target
string (`@tilelang.jit(target="hip -mcpu=gfx950")`), architecture-only intrinsics (`T.wgmma_gemm`,
TMA: sm_90; `tcgen05`: sm_100) or the architecture the file is named for (`*_hopper.py`); past
that GPU's limit it is an error. Without a target the rule assumes the 163 KB an A100 (sm_80)
block can use (an error past the 227 KB of sm_90 and sm_100) and says so. Sizes are resolved for
the configurations the kernel runs with: its call sites, where a parameter that
`@tilelang.autotune(configs=...)` chooses is the tuner's (a config that does not fit is discarded
by the tuner), not its default.

## Why is this bad?
TileLang's software pipelining keeps `num_stages` copies of every buffer a pipelined `T.copy`
fills, so that the loads of iteration `k + s - 1` overlap the compute of iteration `k`: shared
memory grows linearly with the stage count. Past the device's per-block maximum the kernel does not
launch at all; close to it, one block per SM fits and occupancy collapses. Autotuning spaces that
multiply `block_M × block_K × num_stages` without a bound hit this often.

## Example
```python
A_shared = T.alloc_shared((256, 128), "float16")   # 64 KB
B_shared = T.alloc_shared((128, 256), "float16")   # 64 KB
for k in T.Pipelined(T.ceildiv(K, 128), num_stages=3):   # 3 x 128 KB = 384 KB
    T.copy(A[by * 256, k * 128], A_shared)
    T.copy(B[k * 128, bx * 256], B_shared)
    T.gemm(A_shared, B_shared, C_local)
```

## Use instead
```python
A_shared = T.alloc_shared((128, 64), "float16")    # 16 KB
B_shared = T.alloc_shared((64, 128), "float16")    # 16 KB
for k in T.Pipelined(T.ceildiv(K, 64), num_stages=3):    # 3 x 32 KB = 96 KB
    ...
```
"""
    bad = (
        '''
import tilelang.language as T

def matmul(M, N, K, block_M=256, block_N=256, block_K=128, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):  # expect: KL204
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
''',
    )
    good = (
        '''
import tilelang.language as T

def matmul(M, N, K, block_M=128, block_N=128, block_K=64, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
''',
    )

    @staticmethod
    def _bytes(state, env, name):
        buf = state.buffers[name]
        dtype = env.dtype(buf.dtype_node) if buf.dtype_node is not None else None
        size = DTYPE_BYTES.get(dtype or "")
        if size is None:
            return None
        for dim in buf.shape:
            v = env.value(dim)
            if not isinstance(v, int) or v <= 0:
                return None
            size *= v
        return size

    def check(self, state):
        for loop in state.loops:
            if loop.kind != "pipelined":
                continue
            body_ops = [op for op in state.ops if loop in op.loops]
            used = []
            for op in body_ops:
                for name in op.reads + op.writes:
                    buf = state.buffers.get(name)
                    if buf is not None and buf.is_shared and name not in used:
                        used.append(name)
            staged = {w for op in body_ops if op.kind == "copy" for w in op.writes}
            worst = None
            for env in state.configs:
                stages = env.value(loop.num_stages) if loop.num_stages is not None else 1
                if not isinstance(stages, int):
                    continue
                total, parts = 0, []
                for name in used:
                    b = self._bytes(state, env, name)
                    if b is None:
                        continue
                    times = max(stages, 1) if name in staged else 1
                    total += b * times
                    parts.append(f"{name} {b // 1024} KB" + (f" x{times}" if times > 1 else ""))
                if worst is None or total > worst[0]:
                    worst = (total, stages, parts)
            target = module_target(state.info)
            limit = target.shared_limit
            if worst is None or worst[0] <= (limit or SM80_MAX):
                continue
            total, stages, parts = worst
            if limit is not None:
                where = f"{target.arch}, the GPU this kernel is written for ({target.why}: {limit // 1024} KB)"
            elif total > SM90_MAX:
                where = "every current GPU (sm_90/sm_100 allow 227 KB; no target in the module)"
            else:
                where = "sm_80 (A100: 163 KB; assumed: no target in the module)"
            f = self.finding(
                state, loop.node.iter,
                f"the shared buffers this loop keeps live need at least {total // 1024} KB with num_stages={stages} "
                f"({', '.join(parts)}): more than a block may use on {where}; lower num_stages or the tile sizes",
                shared_bytes=total, num_stages=stages, target=target.arch or "unknown",
            )
            if limit is not None or total > SM90_MAX:
                f.level = Level.ERROR
            yield f
