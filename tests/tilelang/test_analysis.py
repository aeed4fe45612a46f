"""Unit tests of the libcst-only TileLang analysis (kernlint.source.tilelang)."""

from __future__ import annotations

import textwrap

from kernlint.source.discover import discover
from kernlint.source.phase import parse
from kernlint.source.tilelang import analyse
from kernlint.source.tilelang_padding import pad_flows

GEMM = textwrap.dedent(
    '''
    import tilelang
    import tilelang.language as T

    @tilelang.jit(out_idx=[-1])
    def matmul(M, N, K, block_M, block_N, block_K=32, dtype="float16", accum_dtype="float"):
        @T.prim_func
        def main(A: T.Tensor((M, K), dtype), B: T.Buffer((K, N), dtype), C: T.Tensor((M, N), dtype)):
            with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
                A_shared = T.alloc_shared((block_M, block_K), dtype)
                B_shared = T.alloc_shared((block_K, block_N), dtype)
                C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
                r = T.alloc_local((4,), "int32")
                T.clear(C_local)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                    T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local, transpose_B=False)
                for i, j in T.Parallel(block_M, block_N):
                    C_local[i, j] = T.max(C_local[i, j], 0)
                T.copy(C_local, C[by * block_M, bx * block_N])

        return main

    kernel = matmul(1024, 2048, 512, 128, 64)
    '''
)


def states(text):
    module, text, error = parse("k.py", text)
    assert error is None
    info = discover("k.py", text, module)
    return {k.kernel.name: analyse(info, k) for k in info.kernels}


def test_buffers_launch_loops_and_ops():
    s = states(GEMM)["main"]
    assert s.launch is not None and s.launch.block_vars == ["bx", "by"]
    assert s.code(s.launch.threads) == "128"
    scopes = {n: b.scope for n, b in s.buffers.items()}
    assert scopes == {
        "A": "global", "B": "global", "C": "global", "A_shared": "shared.dyn", "B_shared": "shared.dyn",
        "C_local": "local.fragment", "r": "local",
    }
    assert [s.code(d) for d in s.buffers["A"].shape] == ["M", "K"]
    assert [lp.kind for lp in s.loops] == ["pipelined", "parallel"]
    assert s.env.value(s.loops[0].num_stages) == 3
    assert s.loops[1].vars == ["i", "j"]
    kinds = [(op.kind, op.reads, op.writes) for op in s.ops]
    assert kinds == [
        ("clear", [], ["C_local"]),
        ("copy", ["A"], ["A_shared"]),
        ("copy", ["B"], ["B_shared"]),
        ("gemm", ["A_shared", "B_shared", "C_local"], ["C_local"]),
        ("store", ["C_local"], ["C_local"]),
        ("copy", ["C_local"], ["C"]),
    ]
    copy_a = s.ops[1]
    assert [s.code(start) for start, _ in copy_a.src.dims] == ["by * block_M", "k * block_K"]
    assert copy_a.loops == (s.loops[0],)


def test_sizes_resolve_from_defaults_and_call_sites():
    s = states(GEMM)["main"]
    (env,) = s.configs
    assert env.value(s.buffers["B_shared"].shape[1]) == 64  # block_N from the call site
    assert env.value(s.buffers["A_shared"].shape[1]) == 32  # block_K from its default
    assert s.dtype_of("C_local", env) == "float32"  # "float"
    assert s.dtype_of("A_shared", env) == "float16"
    # M is the factory's parameter: the call site's 1024 is one input, not a promise
    assert not s.divisible(s.buffers["A"].shape[0], s.buffers["A_shared"].shape[0])
    asserted = states(GEMM.replace("def matmul(", "def matmul(").replace(
        "    @T.prim_func", "    assert M % block_M == 0\n    @T.prim_func", 1))["main"]
    assert asserted.divisible(asserted.buffers["A"].shape[0], asserted.buffers["A_shared"].shape[0])
    assert s.env.value(s.buffers["A_shared"].shape[0]) is None  # no call site in the bare env


def test_sizes_resolve_from_a_kernel_called_where_it_is_made():
    # `matmul(...)(a, b)`: the factory's call is the callee of the launch, itself an argument of a check
    text = GEMM.replace("kernel = matmul(1024, 2048, 512, 128, 64)",
                        "def run(a, b, M=1024):\n    check(matmul(M, 2048, 512, 128, 64)(a, b), a @ b)")
    s = states(text)["main"]
    (env,) = s.configs
    assert env.value(s.buffers["A"].shape[0]) == 1024  # M from run()'s default
    assert env.value(s.buffers["B_shared"].shape[1]) == 64
    asserted = states(text.replace("    check(", "    assert check("))["main"]
    assert [e.value(asserted.buffers["A"].shape[0]) for e in asserted.configs] == [1024]


def test_factory_itself_yields_no_kernel_body():
    s = states(GEMM)["matmul"]
    assert s.launch is None and s.ops == []


def test_padding_flows_through_exp_to_sum_but_is_cleared_by_if_then_else():
    text = textwrap.dedent(
        '''
        import tilelang.language as T

        @T.prim_func
        def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M,), "float32")):
            with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
                x = T.alloc_fragment((64, 128), "float32")
                y = T.alloc_fragment((64, 128), "float32")
                s = T.alloc_fragment((64,), "float32")
                for k in T.serial(T.ceildiv(N, 128)):
                    T.copy(X[bx * 64, k * 128], x)
                    for i, j in T.Parallel(64, 128):
                        y[i, j] = x[i, j] * 2.0
                    T.reduce_sum(y, s, dim=1)
                    for i, j in T.Parallel(64, 128):
                        y[i, j] = T.exp(x[i, j])
                    T.reduce_sum(y, s, dim=1)
                    for i, j in T.Parallel(64, 128):
                        y[i, j] = T.if_then_else(k * 128 + j < N, T.exp(x[i, j]), 0)
                    T.reduce_sum(y, s, dim=-1)
                    T.reduce_sum(x, s, dim=0)
        '''
    )
    s = states(text)["main"]
    flows = pad_flows(s)
    # only the sum over exp(...) of the padded columns: x * 2 stays zero, the masked one is clean,
    # and dim 0 (rows, 64 | M unknown) is padded but zero for a sum
    assert [(s.code(f.op.node), f.dim, f.kind) for f in flows] == [("T.reduce_sum(y, s, dim=1)", 1, "nonzero")]
    assert flows[0].op.index == 4


def test_sliced_copy_and_named_shape_find_the_tail_only_when_the_size_is_not_a_multiple():
    text = textwrap.dedent(
        '''
        import tilelang.language as T

        def attn_rowmax(batch, seq_len, dim, block_N=128):
            shape = [batch, seq_len, dim]

            @T.prim_func
            def main(K: T.Tensor(shape, "float32"), Y: T.Tensor((batch, dim), "float32")):
                with T.Kernel(batch, threads=128) as bz:
                    k_tile = T.alloc_fragment((block_N, dim), "float32")
                    m = T.alloc_fragment((dim,), "float32")
                    for k in T.serial(T.ceildiv(seq_len, block_N)):
                        T.copy(K[bz, k * block_N:(k + 1) * block_N, :], k_tile)
                        T.reduce_max(k_tile, m, dim=0)
                    T.copy(m, Y[bz, 0])

            return main

        a = attn_rowmax(2, 4096, 64)
        b = attn_rowmax(2, SEQ, 64)
        '''
    )
    s = states(text)["main"]
    assert [s.code(d) for d in s.buffers["K"].shape] == ["batch", "seq_len", "dim"]
    flows = pad_flows(s)
    assert [(f.reduce, f.dim) for f in flows] == [("max", 0)]  # the SEQ call site is unknown
    # call sites that all pass multiples are examples, not a promise: seq_len is the factory's parameter
    s_calls = states(text.replace("attn_rowmax(2, SEQ, 64)", "attn_rowmax(2, 8192, 64)"))["main"]
    assert [(f.reduce, f.dim) for f in pad_flows(s_calls)] == [("max", 0)]
    s_asserted = states(text.replace("    shape = [", "    assert seq_len % block_N == 0\n    shape = ["))["main"]
    assert pad_flows(s_asserted) == []
    s_fixed = states(text.replace("def attn_rowmax(batch, seq_len, dim, block_N=128):",
                                  "SEQ_LEN = 4096\n\ndef attn_rowmax(batch, dim, block_N=128):\n    seq_len = SEQ_LEN")
                     .replace("attn_rowmax(2, 4096, 64)", "attn_rowmax(2, 64)").replace("b = attn_rowmax(2, SEQ, 64)", ""))["main"]
    assert pad_flows(s_fixed) == []


def test_a_tile_placed_by_a_loaded_offset_is_judged_by_its_walk():
    text = textwrap.dedent(
        '''
        import tilelang.language as T

        def packed_rowmax(batch, dim, block_N=64):
            tokens = T.dynamic("tokens")

            @T.prim_func
            def main(K: T.Tensor((tokens, dim), "float32"), starts: T.Tensor((batch + 1,), "int32"),
                     longest: T.int32, Y: T.Tensor((batch, dim), "float32")):
                with T.Kernel(T.ceildiv(longest, block_N), batch, threads=128) as (bx, bz):
                    k_tile = T.alloc_fragment((block_N, dim), "float32")
                    m = T.alloc_fragment((dim,), "float32")
                    first = starts[bz]
                    length = starts[bz + 1] - first
                    for k in T.serial(WALK):
                        T.copy(K[first + k * block_N : first + (k + 1) * block_N, :], k_tile)
                        T.reduce_max(k_tile, m, dim=0)
                    T.copy(m, Y[bz, 0])

            return main
        '''
    )

    def flows(walk, copy_start="first + k * block_N"):
        src = text.replace("WALK", walk).replace("K[first + k * block_N", f"K[{copy_start}")
        return [(f.reduce, f.dim) for f in pad_flows(states(src)["main"])]

    assert flows("T.ceildiv(length, block_N)") == [("max", 0)]  # the last tile runs past its sequence
    assert flows("length // block_N") == []  # whole tiles only: inside the sequence whatever the offsets
    assert flows("T.ceildiv(length, block_N)", copy_start="first * block_N + k * block_N") == [("max", 0)]
    # the offset a multiple of the tile keeps the tiling of the tensor: judged against its end
    assert flows("length // block_N", copy_start="(first // block_N) * block_N + k * block_N") == [("max", 0)]
    # a grid axis walks the sequence too, unless an enclosing `if v < E` bounds it by whole tiles
    grid = textwrap.dedent(text).replace("for k in T.serial(WALK):", "if bx < BOUND:").replace(
        "K[first + k * block_N : first + (k + 1) * block_N", "K[first + bx * block_N : first + (bx + 1) * block_N")
    assert [f.reduce for f in pad_flows(states(grid.replace("if bx < BOUND:", "if True:"))["main"])] == ["max"]
    assert pad_flows(states(grid.replace("BOUND", "length // block_N"))["main"]) == []
    assert [f.reduce for f in pad_flows(states(grid.replace("BOUND", "T.ceildiv(length, block_N)"))["main"])] \
        == ["max"]
