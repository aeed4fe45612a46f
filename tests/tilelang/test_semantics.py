"""The TileLang semantics the analysis models: which statements write which buffers, how
clear_accum behaves, what asserts prove, and which GPU a module is written for."""

from __future__ import annotations

import textwrap

from kernlint.source.discover import discover
from kernlint.source.phase import parse
from kernlint.source.tilelang import analyse
from kernlint.source.tilelang_target import module_target


def _info(text, path="k.py"):
    module, text, error = parse(path, textwrap.dedent(text))
    assert error is None
    return discover(path, text, module)


def _state(body, factory_extra="", params="M, N, block=64"):
    def indent(text, n):
        return textwrap.indent(textwrap.dedent(text).strip("\n"), " " * n)

    text = "\n".join([
        "import tilelang.language as T",
        "",
        f"def factory({params}):",
        indent(factory_extra or "pass", 4),
        "    @T.prim_func",
        '    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):',
        "        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:",
        indent(body, 12),
        "    return main",
        "",
    ])
    info = _info(text)
    return analyse(info, info.kernels[0])


def _ops(state):
    return [(op.kind, sorted(set(op.reads)), sorted(set(op.writes))) for op in state.ops]


def test_alloc_var_assignment_is_a_store_and_its_bare_name_a_read():
    s = _state('''
        m = T.alloc_var("float32")
        m = -T.infinity("float32")
        m = T.max(m, X[bx, 0])
    ''')
    assert _ops(s) == [("store", [], ["m"]), ("store", ["X", "m"], ["m"])]


def test_pointers_allreduce_and_statement_intrinsics_write_what_they_are_handed():
    s = _state('''
        a = T.alloc_local((4,), "float32")
        b = T.alloc_local((4,), "float32")
        r = T.alloc_local((1,), "float32")
        res = T.alloc_shared((4,), "uint32")
        T.call_extern("handle", "f", T.access_ptr(a, "r"), T.access_ptr(b, "w"))
        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), b[0], True, r[0], 0, dtype="handle"))
        T.clc_try_cancel_multicast(res, 0)
        Y[bx, 0] = T.clc_is_canceled(res)
    ''')
    assert _ops(s)[:3] == [("escape", ["a"], ["b"]), ("call", ["b"], ["r"]), ("escape", [], ["res"])]
    assert _ops(s)[3] == ("store", ["res"], ["Y"])  # an intrinsic whose value is used only reads


def test_clear_accum_first_later_and_unknown():
    body = '''
        a = T.alloc_shared((64, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        for j in T.unroll(4):
            T.gemm(a, a, c, clear_accum={})
    '''
    kinds = {flag: _state(body.format(flag)).ops[0].clear
             for flag in ("True", "False", "(j == 0)", "(j == 2)", "j > 0")}
    assert kinds == {"True": "always", "False": "never", "(j == 0)": "first", "(j == 2)": "later",
                     "j > 0": "unknown"}


def test_divisibility_from_asserts_not_from_call_sites():
    free = _state("pass")
    assert not free.divisible(free.buffers["X"].shape[0], free.launch.grid[0].args[1].value)
    chained = _state("pass", factory_extra='''
        assert M % 2 == 0
        half = M // 2
        assert half % block == 0
    ''')
    assert chained.divisible(chained.buffers["X"].shape[0], chained.launch.grid[0].args[1].value)
    coarser = _state("pass", factory_extra="assert M % 128 == 0")  # 128 is a multiple of block = 64
    assert coarser.divisible(coarser.buffers["X"].shape[0], coarser.launch.grid[0].args[1].value)


def test_compile_time_guards_decide_reachability_per_config():
    s = _state('''
        acc = T.alloc_local((1,), "float32")
        if use_fast:
            acc[0] = X[bx, 0]
        else:
            acc[0] = X[bx, 1]
    ''', params="M, N, block=64, use_fast=False")
    fast, slow = s.ops
    assert not s.reachable(fast, s.env) and s.reachable(slow, s.env)


def test_ordered_comparisons_of_fixed_sizes_decide_reachability():
    s = _state('''
        acc = T.alloc_local((1,), "float32")
        if lanes > 1:
            acc[0] = X[bx, 0]
        if lanes <= 1:
            acc[0] = X[bx, 1]
        if N > 1:
            acc[0] = X[bx, 2]
    ''', factory_extra="lanes = 1")
    split, single, unknown = s.ops
    assert not s.reachable(split, s.env) and s.reachable(single, s.env)
    assert s.reachable(unknown, s.env)  # N is the caller's: any value


def test_target_from_string_intrinsics_and_file_name():
    assert module_target(_info('''
        import tilelang
        @tilelang.jit(target="hip -mcpu=gfx950")
        def f(): pass
    ''')).arch == "gfx950"
    assert module_target(_info('''
        import tilelang.language as T
        def f(a, b, c):
            T.wgmma_gemm(a, b, c)
    ''')).arch == "sm_90"
    assert module_target(_info("x = 1\n", path="gemm_fp8_hopper.py")).arch == "sm_90"
    unknown = module_target(_info("x = 1\n", path="gemm.py"))
    assert unknown.arch is None and unknown.shared_limit is None
