"""ModuleFacts: launches, their bound arguments and the host values behind them, found once per module."""

import libcst as cst
import pytest

from kernlint.source.discover import discover

KERNEL = '''
import torch
import triton
import triton.language as tl

CONFIGS = {"big": {"BLOCK_M": 128, "BLOCK_N": 256}}
BLOCK_K = 64


def pick(n):
    return max(16, min(256, triton.next_power_of_2(n)))


@triton.jit
def mm(a_ptr, c_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(c_ptr + offs, tl.load(a_ptr + offs, mask=offs < M), mask=offs < M)
'''


def facts(host: str):
    src = KERNEL + host
    return discover("m.py", src, cst.parse_module(src)).facts


def test_tuple_unpacking_augmented_assignment_and_options():
    f = facts('''
def launch(a, c, M, N):
    BLOCK_M, BLOCK_N = 128, 64
    BLOCK_N *= 2
    mm[(triton.cdiv(M, BLOCK_M),)](a, c, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=int(8.0))
''')
    (launch,) = f.launches_of("mm")
    assert launch.caller == "launch"
    assert launch.value("BLOCK_M").value == 128 and launch.value("BLOCK_M").how == "tuple unpacking"
    assert launch.value("BLOCK_N").value == 128
    assert launch.value("BLOCK_K").value == 64  # a module constant
    assert launch.value("num_warps").value == 8
    assert launch.value("M") is None and not launch.args["M"].resolved
    assert launch.grid[0].text == "triton.cdiv(M, BLOCK_M)" and launch.grid[0].value is None
    assert f.constants["BLOCK_K"].value == 64


def test_dict_configs_helpers_and_branches():
    f = facts('''
def launch(a, c, M, N, n=1000, flag=False):
    cfg = CONFIGS["big"]
    if flag:
        BLOCK_K = 32
    else:
        BLOCK_K = 16
    mm[(M,)](a, c, M, N, cfg["BLOCK_M"], cfg.get("BLOCK_N", 8), pick(n))
    mm[(M,)](a, c, M, N, BLOCK_M=BLOCK_K, BLOCK_N=max(BLOCK_K, 4), BLOCK_K=min(cfg["BLOCK_N"], 512))
''')
    first, second = f.launches_of("mm")
    assert [first.value(p).value for p in ("BLOCK_M", "BLOCK_N", "BLOCK_K")] == [128, 256, 256]
    # ``flag`` defaults to False: the else branch is the one taken
    assert second.value("BLOCK_M").value == 16
    assert second.value("BLOCK_K").value == 256


def test_runtime_branches_leave_a_value_unresolved():
    f = facts('''
def launch(a, c, M, N):
    BLOCK = 64
    if M > 4096:
        BLOCK = 128
    mm[(M,)](a, c, M, N, BLOCK, BLOCK, BLOCK)
''')
    (launch,) = f.launches_of("mm")
    assert launch.value("BLOCK_M") is None


def test_tensor_extents_of_pointer_arguments():
    f = facts('''
def launch(a, M, N):
    c = torch.empty((M, N), device=a.device)
    assert a.shape == c.shape
    d = torch.empty_like(c)
    mm[(M,)](a.contiguous().view(-1), c, M, N, 64, 64, 64)
    mm[(M,)](d[1:], d, M, N, 64, 64, 64)
''')
    first, second = f.launches_of("mm")
    a, c = first.args["a_ptr"].tensor, first.args["c_ptr"].tensor
    assert a.root == "a" and a.derived == ("contiguous", "view") and a.same_size_as == ("c",)
    assert c.shape == ("M", "N") and c.numel == "M * N" and c.same_size_as == ("a",)
    assert second.args["c_ptr"].tensor.shape == ("M", "N")
    assert second.args["a_ptr"].tensor.derived == ("slice",) and not second.args["a_ptr"].tensor.known


def test_tensor_dtypes_the_host_states():
    """A tensor's element type where the host code gives it: an allocation's ``dtype=``, a cast, an
    assert or a raising test on its dtype; none where it does not say."""
    f = facts('''
def launch(a, idx, M, N):
    assert idx.dtype == torch.int32
    c = torch.zeros((M, N), device=a.device, dtype=torch.int32)
    mm[(M,)](idx, c, M, N, 64, 64, 64)
    mm[(M,)](a.long(), torch.empty_like(c), M, N, 64, 64, 64)
    mm[(M,)](a, c.to(torch.float16).view(-1), M, N, 64, 64, 64)
    if a.dtype != torch.int16:
        raise ValueError("int16 only")
    mm[(M,)](a, idx.to(a.device), M, N, 64, 64, 64)
''')
    first, second, third, fourth = f.launches_of("mm")
    assert first.args["a_ptr"].tensor.dtype == "torch.int32" and first.args["c_ptr"].tensor.dtype == "torch.int32"
    assert second.args["a_ptr"].tensor.dtype == "torch.int64" and second.args["c_ptr"].tensor.dtype == "torch.int32"
    assert third.args["a_ptr"].tensor.dtype is None and third.args["c_ptr"].tensor.dtype == "torch.float16"
    assert fourth.args["a_ptr"].tensor.dtype == "torch.int16" and fourth.args["c_ptr"].tensor.dtype == "torch.int32"


def test_a_helper_called_with_tensors_gives_the_dtypes_of_the_tensors_it_returns():
    """Only the dtypes: its sizes are written in its own names, its loops run on values it was not given."""
    f = facts('''
def route(ids, n):
    order = torch.argsort(ids)
    firsts = torch.empty((n,), dtype=torch.int32, device=ids.device)
    for e in range(n):
        firsts[e] = e
    return firsts, order, n * 2

def launch(a, ids, M, N):
    firsts, order, twice = route(ids, N)
    mm[(M,)](firsts, order, M, twice, 64, 64, 64)
''')
    (launch,) = f.launches_of("mm")
    firsts = launch.args["a_ptr"].tensor
    assert firsts.dtype == "torch.int32" and firsts.shape is None and firsts.numel is None
    order = launch.args["c_ptr"].tensor
    assert (order is None or order.dtype is None) and launch.args["N"].value is None


def test_a_choice_of_two_views_of_one_tensor_is_that_tensor():
    f = facts('''
def launch(x, M, N):
    x2 = x.view(M * N, 4) if x.is_contiguous() else x.reshape(M * N, 4)
    out = x2
    part = x2 if M > 1 else x[:1]
    mm[(M,)](x2, out, M, N, 64, 64, 64)
    mm[(M,)](part, x, M, N, 64, 64, 64)
''')
    first, second = f.launches_of("mm")
    a, c = first.args["a_ptr"].tensor, first.args["c_ptr"].tensor
    assert a.root == c.root == "x" and a.shape == c.shape == ("M * N", "4")
    assert second.args["a_ptr"].tensor is None  # (a view of all of it, or a slice: which one is unknown)


def test_a_shape_stated_as_another_tensors_names_that_tensor():
    f = facts('''
def launch(k, v, M, N):
    assert v.shape == k.shape
    if k.shape != v.shape:
        raise ValueError("shapes")
    mm[(M,)](k, v, M, N, 64, 64, 64)
''')
    (launch,) = f.launches_of("mm")
    assert launch.scope.same_shape_as("v") == "k" and launch.scope.same_shape_as("k") == "v"
    assert launch.scope.same_shape_as("M") is None


def test_launches_are_found_once_for_many_kernels():
    kernels = "".join(f"@triton.jit\ndef k{i}(x_ptr, B: tl.constexpr):\n    pass\n\n\n" for i in range(50))
    host = "def run(x):\n" + "".join(f"    k{i}[(1,)](x, B={i + 1})\n" for i in range(50))
    src = "import triton\nimport triton.language as tl\n\n" + kernels + host
    f = discover("m.py", src, cst.parse_module(src)).facts
    assert [launch.value("B").value for launch in f.launches] == list(range(1, 51))
    assert [launch.span.line for launch in f.launches] == sorted(launch.span.line for launch in f.launches)


def test_a_size_assert_on_one_branch_only_is_not_a_fact_after_it():
    # the assert holds on the elif path only: after the branches the two tensors are not known to
    # share a size (this merge once made the facts an unknown value that crashed the launch reader)
    f = facts('''
def launch(a, c, M, N, scale):
    if isinstance(scale, float):
        c = torch.full_like(a, scale)
    elif M > 0:
        assert a.shape == c.shape
    mm[(M,)](a, c, M, N, 64, 64, 64)
''')
    (launch,) = f.launches_of("mm")
    assert launch.args["a_ptr"].tensor.same_size_as == ()


def test_an_assert_after_such_a_merge_records_its_own_pair():
    f = facts('''
def launch(a, c, M, N):
    if M > 0:
        assert a.shape == c.shape
    assert a.numel() == c.numel()
    mm[(M,)](a, c, M, N, 64, 64, 64)
''')
    (launch,) = f.launches_of("mm")
    assert launch.args["a_ptr"].tensor.same_size_as == ("c",)


def test_size_asserts_on_every_branch_survive_the_merge():
    f = facts('''
def launch(a, c, M, N):
    if M > 1024:
        assert a.shape == c.shape
    else:
        assert c.shape == a.shape
    mm[(M,)](a, c, M, N, 64, 64, 64)
''')
    (launch,) = f.launches_of("mm")
    assert launch.args["c_ptr"].tensor.same_size_as == ("a",)


def test_a_size_assert_inside_one_branch_does_not_leak_into_the_other():
    f = facts('''
X, Y = torch.empty(4), torch.empty(4)
assert X.shape == Y.shape


def launch(a, c, M, N, d):
    assert c.shape == d.shape
    if M > 1024:
        assert a.shape == c.shape
        mm[(M,)](a, c, M, N, 64, 64, 64)
    else:
        mm[(M,)](a, c, M, N, 64, 64, 64)
''')
    assert set(f.constants) == {"CONFIGS", "BLOCK_K"}  # the size facts are no module constant
    inside, other = f.launches_of("mm")
    assert inside.args["a_ptr"].tensor.same_size_as == ("c",)
    assert other.args["a_ptr"].tensor.same_size_as == ()
    assert other.args["c_ptr"].tensor.same_size_as == ("d",)


def test_the_launch_scope_holds_bindings_asserts_guards_and_branches():
    """What the symbolic engine reads of a launch: the expression each name was bound to (multi-line
    statements whole, unpackings of a shape with their position), the asserts and ``if ...: raise``
    guards it passed and the branch tests it sits under; a branch it does not sit in does not count."""
    f = facts('''
def launch(a, c, flag):
    M, N = a.shape
    stride = a.stride(
        0)
    assert M > 0
    if N > 4096:
        raise ValueError("too wide")
    if flag:
        assert N > 1
    if M > 8:
        mm[(M,)](a, c, M, N, BLOCK_M=64, BLOCK_N=64, BLOCK_K=BLOCK_K)
''')
    (launch,) = f.launches_of("mm")
    scope = launch.scope
    code = cst.Module([]).code_for_node
    assert code(scope.binding("stride").node).split() == ["a.stride(", "0)"]
    assert (scope.binding("N").index, scope.binding("N").arity, code(scope.binding("N").node)) == (1, 2, "a.shape")
    assert scope.unpacked_rank("a", scope.binding("a")) == 2 and scope.binding("flag").how == "parameter"
    assert [code(t) for t in scope.asserts] == ["M > 0"]  # ``N > 1`` holds on one path only
    assert [(code(t), holds) for t, holds in scope.conditions] == [("N > 4096", False), ("M > 8", True)]
    assert launch.args["N"].node is not None and code(launch.args["N"].node) == "N"


def test_a_rank_the_checks_on_the_path_state():
    """``assert b.shape == (N,)``, ``torch.Size([...])``, ``if s.ndim != 1 or s.size(0) != M: raise`` state a
    shape; a rank alone does not, nor a test on a path the launch is not on, nor an unpacking of a name
    bound again after it."""
    f = facts('''
def launch(x, b, s, t, w, q, flag):
    M, N = x.shape
    assert b.shape == (N,) and M > 0 and q.dim() == 2
    assert torch.Size([M, N, 2]) == t.size()
    if s.ndim != 1 or s.size(0) != M:
        raise ValueError("one per row")
    if flag:
        assert w.dim() == 2
    _, K = w.shape
    w = w.transpose(0, 1).contiguous()
    mm[(M,)](x, w, M, N, BLOCK_M=64, BLOCK_N=64, BLOCK_K=BLOCK_K)
''')
    (launch,) = f.launches_of("mm")
    scope = launch.scope
    # (a rank alone, ``q.dim() == 2``, states no sizes: no shape)
    assert [scope.stated_rank(n) for n in ("b", "t", "s", "w", "q")] == [1, 3, 1, None, None]
    assert scope.unpacked_rank("x", scope.binding("x")) == 2
    assert scope.unpacked_rank("w", scope.binding("w")) is None  # ``w`` was bound again after ``_, K = w.shape``


def test_a_launch_after_a_one_line_grid_function_is_found_and_its_grid_read():
    f = facts('''
def launch(a, c, M, N, ready):
    if ready:
        def grid(meta): return (triton.cdiv(M, meta["BLOCK_M"]), 4)
        mm[grid](a, c, M, N, BLOCK_M=128, BLOCK_N=64, BLOCK_K=BLOCK_K)
''')
    (launch,) = f.launches_of("mm")
    assert [(g.text, g.value.value if g.value else None) for g in launch.grid] == [
        ('triton.cdiv(M, meta["BLOCK_M"])', None), ("4", 4)]


def test_grid_elements_bound_through_a_name_keep_their_text_and_provenance():
    f = facts('''
def launch(a, c, M, N, split=1):
    G = 2
    grid = (triton.cdiv(M, 128), G, split)
    mm[grid](a, c, M, N, BLOCK_M=128, BLOCK_N=64, BLOCK_K=BLOCK_K)
''')
    (launch,) = f.launches_of("mm")
    assert [g.text for g in launch.grid] == ["triton.cdiv(M, 128)", "G", "split"]
    assert (launch.grid[1].value.value, launch.grid[2].value.value) == (2, 1)
    assert launch.grid[2].value.how == "default"  # a caller may pass another value


def test_tensors_made_from_list_literals_have_the_literal_shape():
    f = facts('''
def launch(M, N):
    a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    c = torch.as_tensor([7, 8, 9, 10])
    ragged = torch.tensor([[1.0], [2.0, 3.0]])
    mm[(1,)](a, c, M, N, 64, 64, 64)
    mm[(1,)](ragged, c, M, N, 64, 64, 64)
''')
    first, second = f.launches_of("mm")
    a, c = first.args["a_ptr"].tensor, first.args["c_ptr"].tensor
    assert a.shape == ("2", "3") and a.numel == "6"
    assert c.shape == ("4",) and c.numel == "4"
    ragged = second.args["a_ptr"].tensor
    assert ragged is None or ragged.shape is None  # ragged data: torch refuses it, no shape is made up


def test_a_launch_calls_the_kernel_its_own_scope_defines():
    src = '''
import torch
import triton
import triton.language as tl


def first_case():
    @triton.jit
    def kernel(out_ptr, n):
        tl.store(out_ptr + tl.program_id(0), n)

    kernel[(2,)](torch.zeros(2), 7)


def second_case():
    @triton.jit
    def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    kernel[(8,)](torch.ones(64), torch.zeros(64), 64, BLOCK=8)
'''
    info = discover("m.py", src, cst.parse_module(src))
    first, second = (k.kernel for k in info.kernels)
    (a,) = info.facts.launches_of(first)
    (b,) = info.facts.launches_of(second)
    assert set(a.args) == {"out_ptr", "n"} and a.grid_text == "(2,)"
    assert set(b.args) == {"x_ptr", "y_ptr", "n", "BLOCK"} and b.grid_text == "(8,)"
    assert len(info.facts.launches_of("kernel")) == 2  # by name: every definition's


def test_allocator_sizes_are_read_from_where_each_allocator_takes_them():
    f = facts('''
def launch(M, N, n_bins):
    a = torch.randint(0, n_bins, (M, N))
    c = torch.full((N,), 1.5)
    d = torch.randint(n_bins, size=(M,))
    e = torch.empty(M, N)
    mm[(1,)](a, c, M, N, 64, 64, 64)
    mm[(1,)](d, e, M, N, 64, 64, 64)
''')
    first, second = f.launches_of("mm")
    assert first.args["a_ptr"].tensor.shape == ("M", "N")
    assert first.args["c_ptr"].tensor.shape == ("N",)
    assert second.args["a_ptr"].tensor.shape == ("M",)
    assert second.args["c_ptr"].tensor.shape == ("M", "N")


def test_a_helper_that_receives_the_kernel_launches_it_with_the_callers_arguments():
    f = facts('''
def _launch(kernel, grid, args, meta, extra=None, **options):
    nt_len = 3
    kernel[grid](*args, **meta, **options)


def run_mm(a, c, M, N):
    nt_len = 99
    _launch(mm, (triton.cdiv(M, 128), nt_len), (a, c, M, N), dict(BLOCK_M=128, BLOCK_K=BLOCK_K),
            num_warps=4)
    _launch(mm, (M,), [a, c], {"BLOCK_N": 32})
''')
    first, second = f.launches_of("mm")
    assert first.caller == "run_mm"
    assert first.value("BLOCK_M").value == 128 and first.value("BLOCK_K").value == 64
    assert first.value("num_warps").value == 4
    assert first.args["a_ptr"].text == "a" and first.args["N"].text == "N"
    assert first.grid[0].text == "triton.cdiv(M, 128)"
    # the caller's grid names its own `nt_len`; a name the helper's body binds would mean the helper's
    assert first.grid[1].text == "nt_len" and first.grid[1].value.value == 99
    assert second.value("BLOCK_N").value == 32 and set(second.args) == {"a_ptr", "c_ptr", "BLOCK_N"}


def test_a_keyword_named_like_a_positional_only_parameter_of_the_helper_goes_to_its_kwargs():
    f = facts('''
def _launch_m(kernel, M, /, **kwargs):
    kernel[(M,)](**kwargs)


def run_mm(a, c, M, N):
    _launch_m(mm, M, a_ptr=a, c_ptr=c, M=M, N=N, BLOCK_M=128, BLOCK_N=64, BLOCK_K=32)
''')
    (launch,) = f.launches_of("mm")
    assert launch.args["M"].text == "M" and not launch.misfit


def test_a_launch_that_leaves_a_parameter_without_a_value_cannot_bind():
    f = facts('''
def run_mm(a, c, M, N):
    mm[(M,)](a, c, M, BLOCK_M=128, BLOCK_N=64, BLOCK_K=32)
    mm[(M,)](a, c, M, *N)
''')
    missing, spread = f.launches_of("mm")
    assert missing.misfit == "gives no value to 1 parameter without a default (`N`)"
    assert not spread.misfit  # a spread of unknown length may give it


def test_a_keyword_neither_parameter_nor_launch_option_cannot_bind():
    f = facts('''
def run_mm(a, c, M, N, extra):
    mm[(M,)](a, c, M, N, BLOCK_M=128, BLOCK_N=64, BLOCK_K=32, BLOCK_SIZE=32, num_warps=4)
    mm[(M,)](a, c, M, N, BLOCK_M=128, BLOCK_N=64, BLOCK_K=32, maxnreg=128, waves_per_eu=2, grf_mode="large")
    mm[(M,)](a, c, M, BLOCK_M=128, BLOCK_N=64, BLOCK_K=32, block_n=N, **extra)
''')
    unknown, options, spread = f.launches_of("mm")
    assert unknown.misfit.startswith("passes `BLOCK_SIZE`, neither a parameter of the kernel nor a launch option")
    assert not options.misfit  # NVIDIA's, AMD's and Intel's options
    # a mapping spread may give N, but no spread makes `block_n` a parameter
    assert spread.misfit.startswith("passes `block_n`") and "no value" not in spread.misfit


def test_a_kernel_of_keyword_catch_all_binds_it_as_one_parameter():
    src = '''
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, **meta):
    offs = tl.arange(0, meta["BLOCK"])
    tl.store(x_ptr + offs, 0.0, mask=offs < n)

def run(x):
    k[(1,)](x, x.numel(), BLOCK=128)
'''
    (launch,) = discover("m.py", src, cst.parse_module(src)).facts.launches_of("k")
    assert launch.misfit == ("passes `BLOCK`, neither a parameter of the kernel nor a launch option (Triton rejects "
                             "it: `Keyword argument BLOCK was specified but unrecognised`) and gives no value to 1 "
                             "parameter without a default (`**meta`: Triton passes no keywords through it, it binds it as "
                             "one parameter of that name)")


def test_a_value_every_autotune_config_sets_cannot_be_given_by_the_launch():
    src = '''
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 64, "SPLIT": 2}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr, SPLIT: tl.constexpr = 1):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)

def run(x):
    k[(1,)](x, x.numel(), 64)
    k[(1,)](x, x.numel(), SPLIT=4, num_warps=8)
    k[(1,)](x, x.numel(), SPLIT=4)
'''
    positional, split, alone = discover("m.py", src, cst.parse_module(src)).facts.launches_of("k")
    assert positional.misfit == ("gives `BLOCK`, which every `@triton.autotune` config sets (Triton rejects it: "
                                 "`Conflicting meta-parameters: BLOCK`)")
    # the options every triton.Config passes (num_warps, num_stages, num_ctas) arrive twice
    assert split.misfit.startswith("passes `num_warps`, which each `triton.Config`")
    # (one config leaves SPLIT to the launch: pruning the configs may keep only it, so it is not judged)
    assert not alone.misfit


def test_a_heuristic_sees_the_launch_and_the_decorators_above_it_only():
    src = '''
import triton
import triton.language as tl

@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0, "WIDE": lambda args: args["EVEN"] and args["S"] > 1})
@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def below(x_ptr, n, S: tl.constexpr = 2, BLOCK: tl.constexpr = 64, EVEN: tl.constexpr = 0, WIDE: tl.constexpr = 0):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)

@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0, "WIDE": lambda args: args["EVEN"] and args["S"] > 1})
@triton.jit
def above(x_ptr, n, S: tl.constexpr = 2, BLOCK: tl.constexpr = 64, EVEN: tl.constexpr = 0, WIDE: tl.constexpr = 0):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)

def run(x):
    below[(1,)](x, x.numel(), S=4)
    above[(1,)](x, x.numel())
    above[(1,)](x, x.numel(), S=4)
'''
    facts = discover("m.py", src, cst.parse_module(src)).facts
    (below,) = facts.launches_of("below")
    assert below.misfit.startswith("leaves `BLOCK` unset when its `@triton.heuristics` reads it")
    default, given = facts.launches_of("above")
    # a default is not among what a heuristic is called with; an earlier entry's value is
    assert default.misfit.startswith("leaves `S` unset") and not given.misfit


def test_keywords_of_a_kernel_another_decorator_wraps_are_not_judged():
    src = '''
import triton
import triton.language as tl
from mylib import libentry

@libentry()
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)

def run(x):
    k[(1,)](x, x.numel(), BLOCK=128, tuned_by="libentry")
'''
    (launch,) = discover("m.py", src, cst.parse_module(src)).facts.launches_of("k")
    assert not launch.misfit


def test_a_helper_launching_its_own_local_names_leaves_them_unknown_to_the_caller():
    f = facts('''
def _launch(kernel, n):
    grid = (n, 2)
    kernel[grid](n=n)


def run_mm(M):
    grid = (1000, 1)
    _launch(mm, M)
''')
    (launch,) = f.launches_of("mm")
    assert launch.grid is None or all(g.value is None for g in launch.grid)


def test_a_call_that_does_not_pass_a_kernel_or_cannot_be_bound_is_no_launch():
    f = facts('''
def _launch(kernel, grid, args):
    kernel[grid](*args)


def other(a, c, M):
    _launch(print, (1,), (a,))
    _launch(mm, *(1, 2))
    _launch(mm, (1,), (a,), unexpected=3)
''')
    assert f.launches_of("mm") == []


def test_a_while_loop_left_by_break_or_return_gives_no_exit_condition():
    """A ``break`` of the loop itself (in an ``if``, an ``except``, a ``match``, a one-line body, a
    nested loop's ``else``) or a ``return`` anywhere leaves the loop with its test still true; a
    ``break`` of a nested loop or a ``return`` of a nested function does not."""
    import libcst as cst

    from kernlint.facts import _breaks

    def breaks(body: str) -> bool:
        return _breaks(cst.parse_module(f"while a:{body}").body[0].body)

    for body in (" break\n", "\n    if x: break\n", "\n    try:\n        f()\n    except E:\n        break\n",
                 "\n    match x:\n        case 1:\n            break\n",
                 "\n    for i in r:\n        pass\n    else:\n        break\n",
                 "\n    for i in r:\n        if q:\n            return 1\n"):
        assert breaks(body), body
    for body in ("\n    g //= 2\n", "\n    for i in r:\n        break\n", "\n    def f():\n        return 1\n"):
        assert not breaks(body), body


def test_a_spread_tuple_the_host_writes_out_takes_its_positions():
    f = facts('''
def launch(a, c, M, N, square):
    sizes = (M, M) if square else (M, N)
    mm[(1,)](a, c, *sizes, BLOCK_M=64, BLOCK_N=64, BLOCK_K=BLOCK_K)
    mm[(1,)](a, *[c, M], N, BLOCK_M=32, BLOCK_N=32, BLOCK_K=BLOCK_K)
    mm[(1,)](a, *unknown_args, BLOCK_M=16, BLOCK_N=16, BLOCK_K=BLOCK_K)
    mm[(1,)](a, c, M, N, BLOCK_M=8, **options)
''')
    spread, listed, unknown, keywords = f.launches_of("mm")
    # the positions after the spread are the tuple's: M and N are bound (values unknown), the rest known
    assert not spread.starred and {"M", "N"} <= set(spread.args) and spread.args["BLOCK_M"].value.value == 64
    assert listed.args["c_ptr"].text == "[c, M][0]" and listed.args["N"].text == "N"
    # a spread of a tuple nobody wrote out: the positions after it are unknown
    assert unknown.starred and "c_ptr" not in unknown.args
    # keywords spread from a mapping: the arguments the launch names are still bound
    assert keywords.spread and not keywords.starred and keywords.args["N"].text == "N"


def test_an_axis_from_the_back_is_named_from_the_front_where_the_host_code_shows_the_rank():
    """``k.stride(3)`` beside ``k.size(-2)`` shows k as at least 4-D, so -2 is axis 2 (a later axis,
    3, is read from the front); an assert on the rank states it; the last axis is never named by
    the least rank alone (``x.stride(0)`` and ``x.size(-1)``: x may have any rank)."""
    f = facts('''
def launch(k, v, w, x, c):
    N = k.size(-2)
    W = w.size(-1)
    assert v.dim() == 5
    mm[(N,)](k, c, k.stride(3), v.shape[1], x.stride(0), x.size(-1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=BLOCK_K)
''')
    from kernlint.facts import front_axis

    (launch,) = f.launches_of("mm")
    axes = launch.scope.indexed_axes(tuple(a.node for a in launch.args.values()))
    assert front_axis(axes.get("k"), -2) == 2
    assert front_axis(axes.get("k"), -1) is None  # axis 3 is the last one read: k may have more
    # without the launch's own arguments nothing shows it
    assert front_axis(launch.scope.indexed_axes().get("k"), -2) is None
    assert (front_axis(axes.get("v"), -1), front_axis(axes.get("v"), -5), front_axis(axes.get("v"), -6)) == (4, 0, None)
    assert front_axis(axes.get("w"), -1) is None and front_axis(axes.get("x"), -1) is None


def test_a_shape_spread_into_a_tuple_unpacks_like_the_shape():
    """``B, T, H, K, V = *k.shape, v.shape[-1]``: the first four are k's sizes (k is 4-D), V is the
    expression written after the spread."""
    from kernlint.facts import unpacked_part

    f = facts('''
def launch(k, v, c):
    B, T, H, K, V = *k.shape, v.shape[-1]
    mm[(T,)](k, c, T, V, BLOCK_M=64, BLOCK_N=64, BLOCK_K=BLOCK_K)
''')
    (launch,) = f.launches_of("mm")
    scope = launch.scope
    code = cst.Module([]).code_for_node
    assert scope.unpacked_rank("k", scope.binding("k")) == 4
    t, v = scope.binding("T"), scope.binding("V")
    assert unpacked_part(t.node, t.index, t.arity) == ("k", 1)
    assert code(unpacked_part(v.node, v.index, v.arity)) == "v.shape[-1]"


def test_a_name_the_branches_bind_apart_is_the_chain_of_their_expressions():
    """``blocks += 1`` under an ``if`` (augmented: the expression before it, plus one) and an elif
    chain: the binding at the launch is each branch's expression under its test, the tests reading
    the names as they were before the ``if`` (``tiles - extra > n`` where the branch rebinds ``extra``)."""
    f = facts('''
def launch(a, c, M, N, n, both):
    tiles = M * N
    blocks = M // 64
    if M % 64:
        blocks += 1
    extra = tiles % n
    if both and tiles - extra > n:
        extra += n
    elif M > 8:
        extra = 0
    mm[(blocks, extra)](a, c, M, N, BLOCK_M=64, BLOCK_N=64, BLOCK_K=BLOCK_K)
''')
    (launch,) = f.launches_of("mm")
    code = cst.Module([]).code_for_node
    assert code(launch.scope.binding("blocks").node) == "M // 64 + 1 if M % 64 else M // 64"
    assert code(launch.scope.binding("extra").node) == (
        "tiles % n + n if both and tiles - tiles % n > n else 0 if M > 8 else tiles % n")


def test_a_binding_keeps_the_bindings_it_read_when_it_was_made():
    """``S`` of ``B, S = x.shape`` reads the ``x`` bound before a later ``x = x.reshape(B * S)``, and
    the later ``x`` reads the earlier one (not itself); ``a, b = b, a`` reads both before either changes."""
    f = facts('''
def launch(a, c, M, N):
    x = a.view(M, -1)
    B, S = x.shape
    x = x.reshape(B * S)
    p, q = M, N
    p, q = q, p
    mm[(B,)](x, c, S, q, BLOCK_M=64, BLOCK_N=64, BLOCK_K=BLOCK_K)
''')
    (launch,) = f.launches_of("mm")
    code = cst.Module([]).code_for_node
    scope = launch.scope
    first_x = scope.binding("S").seen["x"]
    assert code(first_x.node) == "a.view(M, -1)"
    assert scope.binding("x").seen["x"] is first_x and code(scope.binding("x").node) == "x.reshape(B * S)"
    assert scope.binding("q").seen["p"].how == "tuple unpacking" and code(scope.binding("q").seen["p"].node) == "M"


def test_a_launch_that_cannot_bind_its_arguments_is_marked():
    """More positional arguments than the kernel has parameters, or a parameter given twice: Python
    raises before the kernel runs, so nothing the launch passes is a value the kernel sees."""
    f = facts('''
def launch(a, c, M, N):
    mm[(M,)](a, c, M, N, 64, 64, 64, 1)
    mm[(M,)](a, c, M, N, 64, BLOCK_M=64, BLOCK_N=64, BLOCK_K=64)
    mm[(M,)](a, c, M, N, 64, BLOCK_N=64, BLOCK_K=64)
''')
    assert [launch.misfit for launch in f.launches_of("mm")] == [
        "passes 8 positional arguments to a kernel of 7 parameters",
        "passes `BLOCK_M` twice, by position and by keyword", ""]


ALIASED = '''
@triton.jit
def mm_half(a_ptr, c_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(c_ptr + offs, tl.load(a_ptr + offs, mask=offs < M), mask=offs < M)

'''


def test_a_name_bound_once_to_a_choice_of_kernels_launches_each_of_them():
    f = facts(ALIASED + '''
def chosen(a, c, M):
    fn = mm_half if a.dtype == torch.float16 else mm
    fn[(M,)](a, c, M, 1, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)


def branches(a, c, M):
    if a.dtype == torch.float16:
        step = mm_half
    else:
        step = mm
    step[(2 * M,)](a, c, M, 2, BLOCK_M=32, BLOCK_N=16, BLOCK_K=16)
''')
    # a name bound in each branch is no alias: the launch's other values may come from those
    # branches too (`args = (...)` beside it), which a launch of one kernel must not take from the other's
    assert sorted((l.kernel, l.grid_text) for l in f.launches) == [("mm", "(M,)"), ("mm_half", "(M,)")]
    # the two kernels' launches of one call stand at one offset: each is found by its kernel
    (half,) = [l for l in f.launches_of("mm_half") if l.grid_text == "(M,)"]
    (full,) = [l for l in f.launches_of("mm") if l.grid_text == "(M,)"]
    assert half.offset == full.offset
    assert f.launch_at(half.offset, "mm_half") is half and f.launch_at(half.offset, "mm") is full


def test_a_name_also_bound_otherwise_or_in_another_scope_is_no_alias():
    f = facts(ALIASED + '''
fn = mm_half


def rebinds(a, c, M, other):
    fn = mm
    if M > 4:
        fn = other            # a value that is not a kernel: what the launch calls is not known
    fn[(M,)](a, c, M, 1, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)


def loops(a, c, M, kernels):
    for step in kernels:      # a loop target: not an alias, though another scope binds `step`
        step[(M,)](a, c, M, 1, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)


def reads_the_module(a, c, M):
    fn[(3,)](a, c, M, 1, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)


def own_binding(a, c, M):
    step = mm
    step[(4,)](a, c, M, 1, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)


def parameter(a, c, M, fn):
    fn[(5,)](a, c, M, 1, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
''')
    assert sorted((l.kernel, l.grid_text) for l in f.launches) == [("mm", "(4,)"), ("mm_half", "(3,)")]


def test_a_conditional_with_a_leaf_that_is_no_kernel_is_no_alias():
    f = facts(ALIASED + '''
def maybe(a, c, M, fallback):
    fn = mm_half if a.dtype == torch.float16 else fallback
    fn[(M,)](a, c, M, 1, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
''')
    assert f.launches == []


def test_a_definition_in_the_scopes_own_body_replaces_the_earlier_ones():
    src = '''
import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)

scale[(1,)](torch.zeros(8), 8, BLOCK=8)          # the first definition's launch


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):        # replaces it for what runs after
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)


def run(x):
    scale[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64)
'''
    info = discover("m.py", src, cst.parse_module(src))
    first, second = (k.kernel for k in info.kernels)
    assert [l.grid_text for l in info.facts.launches_of(first)] == ["(1,)"]
    assert [l.grid_text for l in info.facts.launches_of(second)] == ["(triton.cdiv(x.numel(), 64),)"]


@pytest.mark.parametrize("configs, error", [
    ('[triton.Config({"BLOCK": 64})]', "TypeError: got multiple values for keyword argument 'BLOCK'"),
    ('[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})]', "Conflicting meta-parameters: BLOCK"),
])
def test_a_value_every_autotune_config_sets_fails_as_the_autotuner_fails(configs, error):
    # one config is not benchmarked: the call gets the value twice; several are, and the
    # benchmark rejects the value the launch gives
    f = facts(f'''
@triton.autotune(configs={configs}, key=["n"])
@triton.jit
def tuned(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 0.0, mask=tl.arange(0, BLOCK) < n)


def launch(x):
    tuned[(1,)](x, x.numel(), BLOCK=64)
''')
    (launch,) = f.launches_of("tuned")
    assert error in launch.misfit


def test_a_decorator_applied_by_hand_may_give_the_parameters_a_launch_leaves_out():
    f = facts('''
tuner = triton.autotune(configs=[triton.Config({"BLOCK_N": n}) for n in (64, 128)], key=["N"])
if torch.cuda.is_available():
    mm = tuner(mm)


def launch(a, c, M, N):
    mm[(triton.cdiv(M, 64),)](a, c, M, N, BLOCK_M=64, BLOCK_K=32)
''')
    (launch,) = f.launches_of("mm")
    assert launch.misfit == ""
    assert [d.name for d in f.kernel("mm").decorators] == ["tuner", "triton.jit"]
