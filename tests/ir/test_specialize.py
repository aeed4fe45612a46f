from __future__ import annotations

from kernlint.ir.specialize import specializations_for
from kernlint.source.configs import parse_config

KERNEL = '''import triton
import triton.language as tl

{decorators}
@triton.jit
def k(x_ptr, out_fp16_ptr, n, stride_m, eps, BLOCK: tl.constexpr, HAS_BIAS: tl.constexpr, GROUP_M: tl.constexpr = 4):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs * stride_m, mask=offs < n)
    tl.store(out_fp16_ptr + offs, x + eps)

def launch(x, y):
    k[(1,)](x, y, 10, 1, 1e-5, BLOCK=256, HAS_BIAS=True)
'''


def test_fallback_types_and_constexpr_defaults():
    specs, problems = specializations_for("k", KERNEL.format(decorators="").replace("def launch", "def _l").replace("k[(1,)]", "pass  #"))
    assert problems == []
    (s,) = specs
    assert s.origin == "fallback"
    assert s.signature["x_ptr"] == "*fp32" and s.signature["out_fp16_ptr"] == "*fp16"
    assert s.signature["n"] == "i32" and s.signature["stride_m"] == "i32" and s.signature["eps"] == "fp32"
    assert s.constexprs == {"BLOCK": 64, "HAS_BIAS": False, "GROUP_M": 4}
    assert "x_ptr" in s.divisible and "n" in s.divisible


def test_launch_site_inference():
    specs, _ = specializations_for("k", KERNEL.format(decorators=""))
    (s,) = specs
    assert s.origin == "launch" and s.constexprs["BLOCK"] == 256 and s.constexprs["HAS_BIAS"] is True


def test_launch_sites_come_from_the_core_finder_comments_and_all():
    source = KERNEL.format(decorators="").replace(
        "    k[(1,)](x, y, 10, 1, 1e-5, BLOCK=256, HAS_BIAS=True)\n",
        "    mod.k[(1,)](\n        x, y,  # inputs, two of them\n        10, 1, 1e-5,\n"
        "        BLOCK=128,  # block, size\n        HAS_BIAS=False,\n        num_warps=8,\n    )\n"
        "    # k[(1,)](x, y, 10, 1, 1e-5, BLOCK=512)  (commented out: not a launch)\n")
    specs, _ = specializations_for("k", source)
    (s,) = specs
    assert s.origin == "launch" and s.num_warps == 8
    assert s.constexprs["BLOCK"] == 128 and s.constexprs["HAS_BIAS"] is False


def test_comment_wins_and_sets_types_and_options():
    src = KERNEL.format(decorators='# kernlint: specialize(BLOCK=128, x_ptr="*bf16", n="i32", num_warps=8)\n'
                                   '# kernlint: specialize(BLOCK=32)')
    specs, problems = specializations_for("k", src)
    assert problems == []
    assert [s.constexprs["BLOCK"] for s in specs] == [128, 32]
    assert specs[0].signature["x_ptr"] == "*bf16" and specs[0].num_warps == 8
    assert "n" not in specs[0].divisible and "n" in specs[1].divisible
    assert all(s.origin == "comment" for s in specs)


def test_autotune_configs_capped():
    configs = ",\n".join(f'triton.Config({{"BLOCK": {2 ** i}}}, num_warps={2 ** (i % 3)}, num_stages=2)'
                         for i in range(5, 11))
    src = KERNEL.format(decorators=f"@triton.autotune(configs=[{configs}], key=['n'])")
    specs, _ = specializations_for("k", src, max_configs=3)
    assert [s.constexprs["BLOCK"] for s in specs] == [32, 64, 128]
    assert [s.num_warps for s in specs] == [4, 1, 2]
    assert specs[0].label.startswith("autotune[0]")


def test_parse_config_kwargs_form():
    values, nw, ns = parse_config("triton.Config(kwargs={'BLOCK_M': 64}, num_warps=4)")
    assert values == {"BLOCK_M": 64} and nw == 4 and ns is None


def test_malformed_comment_is_a_problem_not_a_crash():
    src = KERNEL.format(decorators="# kernlint: specialize(BLOCK=)")
    specs, problems = specializations_for("k", src)
    assert problems and specs


STRIDED = '''import triton
import triton.language as tl

{comment}
@triton.jit
def copy2d(x_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym, stride_yn, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + rm[:, None] * stride_xm + cols * stride_xn)
    tl.store(y_ptr + rm[:, None] * stride_ym + stride_yn * tl.arange(0, BN)[None, :], x)
{launch}
'''


def _strided(comment="", launch=""):
    specs, _ = specializations_for("copy2d", STRIDED.format(comment=comment, launch=launch))
    return specs[0]


def test_last_axis_strides_are_one_as_the_launcher_makes_them():
    s = _strided()
    # scaled by an index broadcast along the tile's last axis (directly or through a variable)
    assert s.signature["stride_xn"] == s.signature["stride_yn"] == "constexpr"
    assert s.constexprs["stride_xn"] == s.constexprs["stride_yn"] == 1
    assert s.signature["stride_xm"] == "i32" and "stride_xm" in s.divisible and "stride_xn" not in s.divisible


def test_launch_sites_decide_unit_strides():
    # y written transposed: its last-axis stride is y.stride(0), not 1
    launch = "\ndef go(x, y):\n    copy2d[(1,)](x, y, 4, 4, x.stride(0), x.stride(1), y.stride(1), y.stride(0), BM=16, BN=16)\n"
    s = _strided(launch=launch)
    assert s.constexprs["stride_xn"] == 1  # the last stride the call passes for x
    assert s.signature["stride_yn"] == "i32" and s.signature["stride_ym"] == "i32"
    s = _strided(launch="\ndef go(x, y):\n    copy2d[(1,)](x, y, 4, 4, 64, 1, 64, 1, BM=16, BN=16)\n")
    assert s.constexprs["stride_xn"] == s.constexprs["stride_yn"] == 1 and s.signature["stride_xm"] == "i32"


def test_a_comment_can_give_a_unit_stride_a_type_again():
    s = _strided(comment='# kernlint: specialize(stride_xn="i32")')
    assert s.signature["stride_xn"] == "i32" and "stride_xn" not in s.constexprs
    assert s.constexprs["stride_yn"] == 1


def test_launch_arguments_named_after_a_literal_read_as_the_literal():
    def spec(body):
        source = KERNEL.format(decorators="").replace(
            "def launch(x, y):\n    k[(1,)](x, y, 10, 1, 1e-5, BLOCK=256, HAS_BIAS=True)\n",
            "WARPS = 8\n\ndef launch(x, y, flag):\n" + body +
            "    k[(1,)](x, y, 10, 1, 1e-5, BLOCK=BLOCK, HAS_BIAS=True, num_warps=WARPS)\n")
        return specializations_for("k", source)[0][0]

    s = spec("    BLOCK = 128\n")
    assert s.origin == "launch" and s.constexprs["BLOCK"] == 128 and s.num_warps == 8
    s = spec("    BLOCK = 128\n    if flag:\n        BLOCK = 256\n")  # two values: not resolved
    assert s.constexprs["BLOCK"] == 64 and s.constexprs["HAS_BIAS"] is True


def test_pointers_whose_values_index_memory_are_integer_pointers():
    source = '''import triton
import triton.language as tl


@triton.jit
def gather(Out, X, Dest_loc, Scores, bias, stride_o, stride_x, class_start, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    dest = tl.load(Dest_loc + i)                       # lands in an address: an integer
    offs = tl.arange(0, BLOCK)
    o_ptrs = Out + dest * stride_o + offs
    x = tl.load(X + i * stride_x + offs)
    s = tl.load(Scores + offs)
    pos = tl.argmax(s, 0)                              # a new value: Scores stays float
    bias = tl.load(bias + offs)                        # the parameter rebound: ambiguous, left alone
    tl.store(o_ptrs, x + bias + pos)
    idx = tl.load(X + offs).to(tl.int32)
    idx -= class_start                                 # an offset, not a pointer
    tl.store(Out + idx, x)
'''
    (s,) = specializations_for("gather", source)[0]
    assert s.signature["Dest_loc"] == "*i32"
    assert s.signature["Scores"] == s.signature["bias"] == s.signature["Out"] == "*fp32"
    assert s.signature["class_start"] == "i32"


def test_dtype_constexprs():
    source = '''import triton
import triton.language as tl


@triton.jit
def acc_kernel(x_ptr, ACC_TYPE: tl.constexpr, OUT_DTYPE: tl.constexpr = tl.float16, BLOCK: tl.constexpr = 16):
    acc = tl.zeros((BLOCK,), dtype=ACC_TYPE)
    tl.store(x_ptr + tl.arange(0, BLOCK), acc.to(OUT_DTYPE))
'''
    (s,) = specializations_for("acc_kernel", source)[0]
    assert s.constexprs["ACC_TYPE"] == "tl.float32" and s.constexprs["OUT_DTYPE"] == "tl.float16"
    # a *_TYPE flag that is never used as a dtype keeps the integer guess (``if CAST_TYPE:``)
    flag = source.replace("ACC_TYPE: tl.constexpr,", "ACC_TYPE: tl.constexpr, CAST_TYPE: tl.constexpr,")
    (s,) = specializations_for("acc_kernel", flag)[0]
    assert s.constexprs["CAST_TYPE"] == 64
    # used as a dtype inside a helper it is passed to
    helper = source.replace("acc = tl.zeros((BLOCK,), dtype=ACC_TYPE)", "acc = _zeros(BLOCK, ACC_TYPE)").replace(
        "@triton.jit\ndef acc_kernel", "@triton.jit\ndef _zeros(B: tl.constexpr, T: tl.constexpr):\n"
        "    return tl.zeros((B,), dtype=T)\n\n\n@triton.jit\ndef acc_kernel")
    (s,) = specializations_for("acc_kernel", helper)[0]
    assert s.constexprs["ACC_TYPE"] == "tl.float32"
    launched = source + "\n\ndef go(x):\n    acc_kernel[(1,)](x, ACC_TYPE=tl.int32)\n"
    (s,) = specializations_for("acc_kernel", launched)[0]
    assert s.origin == "launch" and s.constexprs["ACC_TYPE"] == "tl.int32"


def test_dtype_constexprs_compile(tmp_path):
    from kernlint.ir.compile import compile_job

    source = '''import triton
import triton.language as tl


@triton.jit
def acc_kernel(x_ptr, ACC_TYPE: tl.constexpr, BLOCK: tl.constexpr = 16):
    acc = tl.zeros((BLOCK,), dtype=ACC_TYPE) + 1
    tl.store(x_ptr + tl.arange(0, BLOCK), acc)
'''
    path = tmp_path / "k.py"
    path.write_text(source)
    (s,) = specializations_for("acc_kernel", source)[0]
    rec = compile_job({"path": str(path), "kernel": "acc_kernel", "spec": s.to_dict(), "constexprs": s.constexprs,
                       "capability": 90, "key": "k"})
    assert rec["ok"], rec.get("error")


def test_stride_minus_one_is_the_unit_stride():
    launch = ("\ndef go(x, y):\n    copy2d[(1,)](x, y, 4, 4, x.stride(1), x.stride(-1), y.stride(0), y.stride(1),"
              " BM=16, BN=16)\n")
    s = _strided(launch=launch)
    # x passes stride(-1): that one is 1, stride(1) is another dimension's
    assert s.constexprs["stride_xn"] == 1 and s.signature["stride_xm"] == "i32"


def test_module_float_type_from_host_code():
    from kernlint.ir.specialize import module_float_type

    assert module_float_type("x = torch.randn(4, dtype=torch.float16)") == "*fp16"
    assert module_float_type("x = torch.randn(4, dtype=torch.bfloat16)") == "*bf16"
    assert module_float_type("a = torch.float16\nb = torch.float32") == "*fp32"
    # a kernel-side cast says what a value becomes, not what the tensor holds
    assert module_float_type("y = tl.load(p).to(tl.float16)") == "*fp32"
    source = KERNEL.format(decorators="") + "\ndef make():\n    return torch.empty(8, dtype=torch.half)\n"
    (s,) = specializations_for("k", source)[0]
    assert s.signature["x_ptr"] == "*fp16" and s.signature["out_fp16_ptr"] == "*fp16"


def test_pointers_dereferenced_inside_helpers():
    source = '''import triton
import triton.language as tl


@triton.jit
def _inner(acc, K_ptrs, n):
    return acc + tl.load(K_ptrs + tl.arange(0, 16), mask=tl.arange(0, 16) < n)


@triton.jit
def outer(Q, K, Out, n, stride_k):
    K_ptrs = K + tl.program_id(0) * stride_k
    acc = tl.load(Q + tl.arange(0, 16))
    acc = _inner(acc, K_ptrs, n)
    tl.store(Out + tl.arange(0, 16), acc)
'''
    (s,) = specializations_for("outer", source)[0]
    assert s.signature["K"] == "*fp32" and s.signature["n"] == "i32" and s.signature["stride_k"] == "i32"


def test_a_transposed_tile_keeps_its_stride():
    source = '''import triton
import triton.language as tl


@triton.jit
def kt(K, Out, stride_kn, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    # K^T tile: n runs along the last axis with its stride, d (contiguous, no stride) along the first
    k = tl.load(K + offs_n[None, :] * stride_kn + offs_d[:, None])
    tl.store(Out + offs_d[:, None] * BLOCK_N + offs_n[None, :], k)
'''
    (s,) = specializations_for("kt", source)[0]
    assert s.signature["stride_kn"] == "i32"


def test_lane_strides_need_the_launch_to_pass_a_last_stride():
    source = '''import triton
import triton.language as tl


@triton.jit
def gemv(x_ptr, out_ptr, xm_stride, xk_stride, rows_stride, BLOCK_K: tl.constexpr):
    offs_k = tl.arange(0, BLOCK_K)
    x = tl.load(x_ptr + tl.program_id(0) * xm_stride + offs_k * xk_stride)
    rows = ((tl.program_id(0) * BLOCK_K + offs_k) * rows_stride)[:, None]
    tl.store(out_ptr + rows + offs_k[None, :], x[:, None] + x[None, :])
'''
    (s,) = specializations_for("gemv", source)[0]
    assert s.signature["xk_stride"] == "i32"  # a 1-D index alone says nothing
    launched = source + "\n\ndef go(x, o):\n    gemv[(1,)](x, o, x.stride(0), x.stride(1), o.stride(1), BLOCK_K=64)\n"
    (s,) = specializations_for("gemv", launched)[0]
    assert s.constexprs["xk_stride"] == 1
    assert s.signature["rows_stride"] == "i32"  # expanded along the first axis: not a lane index


def test_launch_values_bound_by_tuple_unpacking_are_compiled_not_guessed():
    source = KERNEL.format(decorators="").replace(
        "    k[(1,)](x, y, 10, 1, 1e-5, BLOCK=256, HAS_BIAS=True)\n",
        "    BLOCK, WARPS = 512, 8\n    k[(1,)](x, y, 10, 1, 1e-5, BLOCK=BLOCK, HAS_BIAS=True, num_warps=WARPS)\n")
    (s,) = specializations_for("k", source)[0]
    assert s.constexprs["BLOCK"] == 512 and s.num_warps == 8 and s.guessed == ()


def test_the_fallback_names_the_constexprs_it_guessed():
    source = KERNEL.format(decorators="").replace("k[(1,)]", "pass  #")
    (s,) = specializations_for("k", source)[0]
    assert s.guessed == ("BLOCK", "HAS_BIAS")  # GROUP_M has a default
    assert s.guessed_values() == "BLOCK=64, HAS_BIAS=False"


GUESSED = '''import triton
import triton.language as tl


@triton.jit
def scaled_row(x_ptr, y_ptr, N: tl.constexpr, SCALE: tl.constexpr):
    offs = tl.arange(0, N)
    row = tl.load(x_ptr + tl.program_id(0) * N + offs) * SCALE
    row = row - tl.max(row, axis=0)
    num = tl.exp(row)
    tl.store(y_ptr + tl.program_id(0) * N + offs, num / tl.sum(num, axis=0))


def launch(x, y, scale):
    scaled_row[(x.shape[0],)](x, y, 8192, scale, num_warps=1)
'''


def test_an_ir_finding_resting_on_a_guessed_value_says_which(tmp_path, ir_cache):
    from kernlint.ir.phase import run_ir_phase

    path = tmp_path / "guessed.py"
    path.write_text(GUESSED)
    (finding,) = run_ir_phase([str(path)], cache_dir=ir_cache, jobs=1, select=["KL303"])
    assert "guessed SCALE=64" in finding.message and finding.evidence["guessed"] == ["SCALE"]


def test_the_configuration_specializes_a_kernel_as_a_comment_would():
    (s,) = specializations_for("k", KERNEL.format(decorators=""), configured={"BLOCK": 1024, "num_warps": 2})[0]
    assert s.constexprs["BLOCK"] == 1024 and s.num_warps == 2 and s.label.startswith("config")
