import libcst as cst

from kernlint.model import Frontend
from kernlint.source.discover import discover


def _kernels(src):
    info = discover("m.py", src, cst.parse_module(src))
    return {k.kernel.name: k.kernel for k in info.kernels}, info


def test_decorator_forms():
    src = '''
import triton
import triton.language as tl
from triton import jit as tjit
import triton as tr

@triton.jit
def a(x): pass

@tjit
def b(x): pass

@tr.jit(do_not_specialize=["n"])
def c(x, n, B: tl.constexpr = 128): pass

def d_impl(x): pass
d = triton.jit(d_impl)

CONFIGS = [triton.Config({"B": 64}, num_warps=4), triton.Config({"B": 128}, num_warps=8)]

@triton.autotune(configs=CONFIGS, key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["B"] == 0})
@triton.jit
def e(x, n, B: tl.constexpr, EVEN: tl.constexpr): pass

class Holder:
    @staticmethod
    @triton.jit
    def f(x): pass

def not_a_kernel(x): pass
'''
    kernels, _ = _kernels(src)
    assert set(kernels) == {"a", "b", "c", "d_impl", "e", "f"}
    assert kernels["c"].params[2].constexpr and kernels["c"].params[2].default == "128"
    assert len(kernels["e"].autotune_configs) == 2 and "num_warps=8" in kernels["e"].autotune_configs[1]
    assert kernels["e"].heuristics == ["EVEN"]
    lines = src.splitlines()
    assert kernels["a"].span.line == lines.index("def a(x): pass") + 1 == kernels["a"].span.end_line
    assert kernels["f"].span.line == lines.index("    def f(x): pass") + 1 and kernels["f"].span.col == 5


def test_tilelang_forms():
    src = '''
import tilelang
import tilelang.language as T

def matmul(M, N, K, block_M, block_N, block_K, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            pass
    return main

@tilelang.jit
def other(A):
    pass

def kernel_block_only(A):
    with T.Kernel(8, threads=128) as bx:
        pass
'''
    kernels, _ = _kernels(src)
    assert {k: v.frontend for k, v in kernels.items()} == {
        "main": Frontend.TILELANG, "other": Frontend.TILELANG, "kernel_block_only": Frontend.TILELANG,
    }


def test_launches_found_lazily():
    src = '''
import triton
@triton.jit
def k(x): pass

def wrapper(x):
    k[(1,)](x)
    grid = lambda meta: (triton.cdiv(10, meta["B"]),)
    k[grid](x)
'''
    _, info = _kernels(src)
    assert len(info.launches_of("k")) == 2
    assert info.launches_of("missing") == []


def test_launch_arguments_skip_comments_and_keep_strings_whole():
    src = '''
import triton
@triton.jit
def k(x, y, n, tag, BLOCK: tl.constexpr): pass

def wrapper(x, y, n):
    k[(1,)](
        x,  # input, row-major
        y, n,  # count of elements (x, y)
        "a,b",
        BLOCK=1024,  # rows, cols
    )
'''
    _, info = _kernels(src)
    (launch,) = info.launches_of("k")
    assert launch.argument_texts() == (["x", "y", "n", '"a,b"'], {"BLOCK": "1024"})


def test_no_import_of_user_code(tmp_path):
    src = "import triton\nraise SystemExit('must not run')\n@triton.jit\ndef k(x): pass\n"
    kernels, _ = _kernels(src)
    assert list(kernels) == ["k"]


def test_a_kernel_name_defined_twice_gets_each_definitions_span():
    from tests.helpers import lint

    src = '''import torch
import triton
import triton.language as tl
if True:
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0)
else:
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 2.0)


def go():
    x = torch.empty(100)
    k[(4,)](x, BLOCK=64)  # 256 lanes over 100 elements, unmasked: each definition's store overruns
'''
    result = lint(src)
    assert sorted((k.span.line, k.span.end_line) for k in result.kernels) == [(6, 8), (11, 13)]
    assert sorted(f.span.line for f in result.findings) == [8, 13]


def test_triton_re_exported_by_a_project_module_is_triton():
    """``from pkg._triton import triton, tl`` (a module that imports without Triton installed):
    the kernel is found and its ``tl`` calls are Triton's, so the rules read them."""
    from kernlint import catalogue
    from kernlint.source.phase import lint_text

    src = '''
from pkg.ops._triton import triton, tl


@triton.jit
def copy_rows(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols)
    tl.store(y_ptr + row * stride + cols, x, mask=cols < n_cols)
'''
    kernels, info = _kernels(src)
    assert list(kernels) == ["copy_rows"]
    assert info.imports.resolve(cst.parse_expression("tl.program_id")) == "triton.language.program_id"
    result, _ = lint_text("m.py", src, [catalogue.all_rules()["KL104"]()])
    assert [f.rule for f in result.findings] == ["KL104"]


def test_what_each_heuristic_reads_is_kept_with_its_decorator():
    src = '''
import triton
import triton.language as tl

@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0, "WIDE": lambda a: a["EVEN"] and a["m"] > 8})
@triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])
@triton.heuristics(values={"FLAG": pick_flag})
@triton.jit
def k(x, n, m, BLOCK: tl.constexpr, EVEN: tl.constexpr, WIDE: tl.constexpr, FLAG: tl.constexpr):
    pass
'''
    (kernel,) = [k.kernel for k in discover("m.py", src, cst.parse_module(src)).kernels]
    assert [d.reads for d in kernel.decorators] == [
        {"EVEN": ["n", "BLOCK"], "WIDE": ["EVEN", "m"]}, {}, {"FLAG": []}, {}]
    assert kernel.heuristics == ["EVEN", "WIDE", "FLAG"]
    # the model travels (the file cache, the IR phase): the reads with it
    from kernlint.model import Kernel
    assert Kernel.from_dict(kernel.to_dict()) == kernel


def test_the_kernels_another_kernel_calls_are_its_inlined_helpers():
    src = '''
import triton
import triton.language as tl


@triton.jit
def _load_row(ptr, BLOCK: tl.constexpr):
    return tl.load(ptr + tl.arange(0, BLOCK))


@triton.jit
def _scale(x, s):
    return x * s


@triton.jit
def kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    tl.store(y_ptr + row * BLOCK + tl.arange(0, BLOCK), _scale(_load_row(x_ptr + row * BLOCK, BLOCK), 2.0))


@triton.jit
def unused_helper(ptr):
    tl.store(ptr, 1)
'''
    info = discover("m.py", src, cst.parse_module(src))
    assert info.inlined_kernels == {"_load_row", "_scale"}


def test_a_string_annotation_that_says_constexpr_is_one():
    # Triton reads an annotation's text: `BLOCK: "tl.constexpr"` is a compile-time parameter
    src = '''
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: "tl.constexpr", WIDTH: "int", SCALE: tl.constexpr):
    pass
'''
    info = discover("m.py", src, cst.parse_module(src))
    assert info.kernels[0].kernel.constexprs == ["BLOCK", "SCALE"]


def test_a_projects_own_autotuner_of_triton_configs_is_read():
    """``@custom_autotune.autotune(configs=[triton.Config(...)])`` (AutoGPTQ's own tuner): each launch
    runs with one of those configs, so their values are the kernel's; a decorator named ``autotune``
    that is given anything else is no tuner the checker reads."""
    kernels, _ = _kernels('''
import triton
import triton.language as tl
from . import custom_autotune

@custom_autotune.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=4), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def tuned(x, n, BLOCK: tl.constexpr): pass

@custom_autotune.autotune(configs=make_configs(), key=["n"])
@triton.jit
def built(x, n, BLOCK: tl.constexpr): pass

@telemetry.autotune(configs=["fast", "slow"])
@triton.jit
def other(x, n, BLOCK: tl.constexpr): pass
''')
    assert len(kernels["tuned"].autotune_configs) == 2 and '"BLOCK": 128' in kernels["tuned"].autotune_configs[1]
    assert kernels["built"].autotune_configs == [] and kernels["other"].autotune_configs == []
