"""The PTX reader on nvcc's output for CUDA C++ (what TileLang kernels compile to): inline-asm
predicates without ``%``, TMA tensor addresses, ``.L2::cache_hint`` modifiers, float immediates
(``createpolicy ... 1.0``, which Triton emits for eviction hints too), ``.local`` depots and call
sites of functions inlined into inlined functions. Compiled here with nvcc; skipped without it."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from kernlint.ir import lanes, ptx

CUDA = r'''#include <cstdint>

__device__ __forceinline__ void wait_parity(uint32_t bar, uint32_t phase) {
  asm volatile("{\n.reg .pred P1;\nLAB_WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
               "@P1 bra DONE;\nbra LAB_WAIT;\nDONE:\n}\n" :: "r"(bar), "r"(phase));
}

__device__ __forceinline__ void tma_load(const void* desc, uint32_t smem, uint32_t bar, int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
               " [%0], [%1, {%3, %4}], [%2], %5;"
               :: "r"(smem), "l"(desc), "r"(bar), "r"(x), "r"(y), "l"(1152921504606846976ull) : "memory");
}

__device__ __forceinline__ float load_inner(const float* p, int i) {
  return p[i];
}

__device__ __forceinline__ float load_outer(const float* p, int i) {
  return load_inner(p, i + 1) * 2.0f;
}

__device__ __forceinline__ uint64_t evict_last_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

extern "C" __global__ void kern(const void* desc, const float* x, float* y, int k) {
  volatile float scratch[8];  // a .local depot
  for (int i = 0; i < 8; ++i) scratch[i] = x[i];
  y[blockDim.x + threadIdx.x] = scratch[k & 7] + (float)evict_last_policy();
  __shared__ __align__(128) float tile[1024];
  __shared__ __align__(8) uint64_t bar;
  uint32_t s = (uint32_t)__cvta_generic_to_shared(tile);
  uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) tma_load(desc, s, b, blockIdx.x * 32, 0);
  wait_parity(b, 0);
  y[threadIdx.x] = tile[threadIdx.x] + load_outer(x, threadIdx.x);
}
'''
KERNEL_LINE = CUDA.splitlines().index("  y[threadIdx.x] = tile[threadIdx.x] + load_outer(x, threadIdx.x);") + 1


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    nvcc = shutil.which("nvcc") or next((p for p in [os.path.join(os.environ.get("CUDA_HOME", ""), "bin", "nvcc")]
                                           if os.path.exists(p)), None)
    if nvcc is None:
        pytest.skip("nvcc not found")
    d = tmp_path_factory.mktemp("cuda")
    src, out = d / "k.cu", d / "k.ptx"
    src.write_text(CUDA)
    proc = subprocess.run([nvcc, "-ptx", "-arch=sm_90a", "-lineinfo", "-O3", "-o", str(out), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return ptx.parse(out.read_text()), str(src)


def test_local_depots_and_float_immediates(module):
    mod, _ = module
    (func,) = mod.functions
    policy = next(i for i in func.instructions if i.opcode == "createpolicy")
    assert policy.operands[-1].kind == "fimm" and policy.operands[-1].text == "1.0"
    assert any(i.state_space == "local" for i in func.instructions)  # `.local` is not a `.loc`


def test_inline_asm_predicates_and_tma_addresses(module):
    mod, _ = module
    (func,) = mod.functions
    ops = {i.full_opcode: i for i in func.instructions}
    waits = [i for i in func.instructions if i.opcode == "bra" and i.guard == "P1"]
    assert waits, "the inline-asm guard @P1 is read as a guard"
    tma = next(i for name, i in ops.items() if name.startswith("cp.async.bulk.tensor"))
    assert tma.has("L2::cache_hint")
    assert tma.operands[1].kind == "tensor" and len(tma.operands[1].elements) == 2
    # the evaluator skips what it cannot model instead of failing
    ev = lanes.evaluate(mod, num_warps=1)[0]
    assert any(a.space == "global" and a.kind == "ld" for a in ev.accesses)


def test_nested_inlining_reaches_the_kernel_line(module):
    mod, src = module
    (func,) = mod.functions
    inner = CUDA.splitlines().index("  return p[i];") + 1
    loads = [i for i in func.instructions if i.opcode == "ld" and i.state_space == "global"
             and i.loc is not None and i.loc.line == inner]
    assert loads
    frames = loads[0].loc.frames()
    # load_inner -> load_outer -> kern: the outermost call site is the kernel's own line
    assert len(frames) >= 3, frames
    assert os.path.basename(frames[-1][0]) == os.path.basename(src) and frames[-1][1] == KERNEL_LINE
