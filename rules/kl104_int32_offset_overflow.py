from functools import partial

import libcst as cst
import z3

from kernlint.engine.findings import once_at
from kernlint.engine.run import first_int32_overflow, int32_products, late_casts
from kernlint.engine.symbols import Ptr
from kernlint.engine import terms
from kernlint.engine.terms import free_vars
from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.names import int_literal, source_text
from kernlint.source.rulebase import SourceRule
from kernlint.source.values import Fact, ProgramAxis


def _stride_call(node) -> tuple[str, list] | None:
    """``(tensor, args)`` of ``tensor.stride(args...)``."""
    if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "stride"
            and isinstance(node.func.value, cst.Name)):
        return node.func.value.value, [a.value for a in node.args]
    return None


def _stride_of(scope, node, depth: int = 0) -> tuple[str, int] | None:
    """``q.stride(1)`` (directly, or through a name the host code assigned it: ``s_t = q.stride(1)``,
    ``s_b, s_t, s_d = q.stride()``) -> ("q", 1)."""
    found = _stride_call(node)
    if found is not None:
        tensor, args = found
        dim = int_literal(args[0]) if len(args) == 1 else None
        return (tensor, dim) if dim is not None else None
    if (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
            and depth <= 3):  # ``strides = q.stride()``, then ``strides[1]``
        index = int_literal(node.slice[0].slice.value)
        whole = _stride_call(node.value) or _bound_stride_call(scope, node.value)
        return (whole[0], index) if whole is not None and not whole[1] and index is not None else None
    if not isinstance(node, cst.Name) or scope is None or depth > 3:
        return None
    b = scope.binding(node.value)
    if b is None or b.node is None:
        return None
    if b.index is not None:  # unpacked from one value
        found = _stride_call(b.node)
        return (found[0], b.index) if found is not None and not found[1] else None
    return _stride_of(scope, b.node, depth + 1)


def _bound_stride_call(scope, node) -> tuple[str, list] | None:
    """``q.stride()`` bound to the name ``node`` (as one value) in the host code."""
    if not isinstance(node, cst.Name) or scope is None:
        return None
    b = scope.binding(node.value)
    return _stride_call(b.node) if b is not None and b.node is not None and b.index is None else None


def _stride_params(state, launch) -> dict[str, tuple[str, int]]:
    """Kernel parameters this launch passes a tensor's stride: name -> (tensor, dimension)."""
    cache = state.__dict__.setdefault("_stride_params", {})
    if id(launch) not in cache:
        out = {}
        if not launch.starred:
            for name, arg in launch.args.items():
                if arg.node is not None:
                    dim = _stride_of(launch.scope, arg.node)
                    if dim is not None:
                        out[name] = dim
        cache[id(launch)] = out
    return cache[id(launch)]


def _outer(j: int, k: int) -> bool:
    """Dimension ``j`` is outside dimension ``k`` (negative dimensions count from the innermost)."""
    if (j < 0) == (k < 0):
        return j < k
    return k < 0


def _strides_of_every_launch(state, param: str) -> list[tuple[str, int, dict]] | None:
    """For each launch of the kernel: the tensor and dimension whose stride it passes as ``param``,
    and every stride parameter it passes (:func:`_stride_params`); None without launches or when a
    launch does not pass ``param`` as a stride."""
    launches = state.info.facts.launches_of(state.kernel.kernel)
    if not launches:
        return None
    out = []
    for launch in launches:
        dims = _stride_params(state, launch)
        if param not in dims:
            return None
        out.append((*dims[param], dims))
    return out


def _inside_one_row(state, params: frozenset) -> bool:
    """``pid * t.stride(k)`` where the kernel walks an outer dimension of ``t`` along a sequence (in
    blocks, in a loop, or at token positions read from memory) and every dimension inside ``k``
    only with fixed constexpr blocks: ``k`` is not the long dimension, and the product stays below
    one row of the long one (``t.stride(k - 1)``), e.g. a head index times the head stride of
    ``[tokens, heads, head_dim]``. Checked for every launch."""
    if len(params) != 1:
        return False
    (param,) = tuple(params)
    per_launch = _strides_of_every_launch(state, param)
    if per_launch is None:
        return False
    terms = state.stride_terms
    if "long" in terms.get(param, ()):
        return False
    for tensor, k, dims in per_launch:
        same = [(p, j) for p, (t, j) in dims.items() if t == tensor and p != param]
        if not any("long" in terms.get(p, ()) for p, j in same if _outer(j, k)):
            return False
        if any("long" in terms.get(p, ()) for p, j in same if _outer(k, j)):
            return False
    return True


def _one_element_per_program(state, params: frozenset, accesses: list) -> bool:
    """Every access the product feeds reads or writes one element addressed by program ids alone (no
    lanes, no loaded index, no loop) in a per-program vector: either a program id is added unscaled
    (``loss + col_block * n_rows + row``: the programs enumerate the elements one by one) or the
    factor is the stride of a tensor whose inner dimensions the kernel never addresses (``dloss +
    row * dloss.stride(0)``). Such a vector holds about as many elements as the grid has programs.
    ``x + row * n_cols`` (one element of each row of a matrix) is not one."""
    if accesses and all(_reads_an_index(state, a) for a in accesses):
        return True
    if not accesses or not all(
        not a.ptr.rank and not a.ptr.lanes and not a.ptr.block_ptr and not a.ptr.data and not a.ptr.loops
        and Fact.BLOCK_OFFSET not in a.ptr.facts and not (a.mask is not None and a.mask.rank) for a in accesses):
        return False  # (`pid * BLOCK` means a program covers a block, even if it reads one element)
    if all(any(isinstance(s, ProgramAxis) for s in a.ptr.index) for a in accesses):
        return True
    if len(params) != 1:
        return False
    (param,) = tuple(params)
    per_launch = _strides_of_every_launch(state, param)
    if per_launch is None:
        return False
    for tensor, k, dims in per_launch:
        if any(t == tensor and _outer(k, j) for t, j in dims.values()):
            return False
    return True


def _reads_an_index(state, access) -> bool:
    """A scalar load, outside loops, whose value scales a stride of another tensor: one entry of an
    index table (a block table ``[batch, max_blocks]``: an entry per block of a cache)."""
    if access.kind != "load" or access.ptr.rank or access.ptr.lanes or access.ptr.block_ptr or access.loops:
        return False
    factors = state.index_loads.get(access.node, ())
    launches = state.info.facts.launches_of(state.kernel.kernel)
    return any("stride" in p.lower() or any(p in _stride_params(state, launch) for launch in launches)
               for p in factors)


def _exempt(state, params: frozenset, accesses: list) -> bool:
    """The product stays small whatever the input, judged from how the kernel walks each dimension of
    the tensor it addresses (``accesses``: the engine's accesses it feeds)."""
    cache = state.__dict__.setdefault("_kl104_exempt", {})
    if params not in cache:
        cache[params] = _inside_one_row(state, params)
    if cache[params]:
        return True
    if any(isinstance(a.ptr, Ptr) and a.ptr.offset.lanes for a in accesses):
        return False  # a block of elements: not one element per program
    nodes = {id(a.node) for a in accesses}
    return _one_element_per_program(state, params, [a for a in state.accesses if id(a.node) in nodes])


_WALKERS = (("pid!", "a program id"), ("iter_", "a loop counter"), ("data!", "a loaded value"),
            ("ticket!", "a value an atomic returned"))


def _walker_kind(product) -> str:
    names = free_vars(product.walker.term)
    return next((what for prefix, what in _WALKERS if any(n.startswith(prefix) for n in names)), "a value")


def _innermost(product):
    """The first product of a chain (``i * n_tokens`` of ``i * n_tokens * D``): where to widen."""
    while True:
        inner = [p for p in product.walker.narrow if p is not product]
        if not inner:
            return product
        product = min(inner, key=lambda p: (len(p.walker.narrow), p.order))  # not the set's order: the hash's


def _operands(node) -> tuple:
    if isinstance(node, cst.BinaryOperation):
        return node.left, node.right
    if isinstance(node, cst.AugAssign):
        return node.target, node.value
    return None, None


class Int32OffsetOverflow(SourceRule):
    code = "KL104"
    name = "int32-offset-overflow"
    category = "int-overflow"
    level = Level.WARNING
    precision = "medium"
    confirm = Confirmation(
        tool="compute-sanitizer",
        check="memcheck",
        threshold="> 0 invalid global accesses with a tensor of more than 2**31 elements",
        env=(("PYTORCH_NO_CUDA_MEMORY_CACHING", "1"),),
        fallback="interpreter",
        description="run with a tensor whose element count exceeds 2**31: the wrapped offset addresses memory "
        "before the tensor (memcheck) or the interpreter sees the negative offset",
    )
    summary = "An int32 product of a program id, loop counter or loaded index and a size feeds a pointer: it wraps past 2**31 elements."
    docs = """
## What it does
Finds products computed in 32 bits that feed the address of a load, store or atomic and that some
run can push past 2**31 - 1: a program id, a loop counter or a value loaded and cast to int32 (a
token offset read from `cu_seqlens`) times a size or stride — `pid * stride`, `i * n_tokens * D`,
`bos * H`. Widening another term of the address does not help (`b.to(tl.int64) * stride_b + h *
stride_h` overflows in `h * stride_h`), nor does a cast after the product (`(h * stride_h).to(tl.int64)`:
the message says the cast comes too late).

Each product is a query to the bounds engine: is there a run, for the sizes the launches in the file
allow, where the access is reached and the product exceeds 2**31 - 1? The witness (sizes, program
ids, loop counters, the loaded value) is in the message. What bounds the answer:
- Triton passes an integer argument below 2**31 as int32 and a larger one as int64, which widens every
  product it enters: so a size the product multiplies is below 2**31;
- CUDA's grid: at most 2**31 - 1 programs on axis 0, 65535 on axes 1 and 2;
- a program id times constants alone (`pid * BLOCK`) is asked only where a launch gives the grid as
  a number (a size of 2**31 or more written in the file): with a grid made of a tensor's sizes, the
  block offsets stay below the size the grid was made from;
- without a launch in the file, the sizes are free: the message says so (it holds for a tensor of
  more than 2**31 elements).

A loaded value counts where it is int32: cast so by the kernel, or loaded through a pointer every
launch binds to a tensor the host code makes or asserts int32 (`torch.empty(..., dtype=torch.int32)`,
`.int()`, `assert ids.dtype == torch.int32`, or one a helper the wrapper calls returns: `ids, counts =
route(...)`); otherwise a load returns its tensor's dtype, which the kernel does not state (index
tensors are often int64). A block of indices as loaded (`stride_cm * offs_token[:, None]`) counts as
one index does; other products of blocks (`offs[:, None] * stride`) and sums are not asked about. A
pointer a loop moves by a fixed step keeps the products it started from (`w_ptrs = w + e * stride_we
+ ...`, then `w_ptrs += BLOCK_K * stride_wk`).

A product the address multiplies again is an index, not an offset: `bos = i_n * T`, then `bos * H *
K`. Where the index stays int32 the outer product is reported (it passes 2**31 first); where it is
widened before it is scaled (`(i_n * T).to(tl.int64) * H * K`) it is not reported: it passes 2**31
only with more than 2**31 rows of what it counts (tokens, here), while the tensor it indexes holds
`H * K` elements per row. A block pointer's offsets are such indices too (Triton scales them by the
strides in int64); its base is asked like any address.

Products that stay small whatever the input are not reported, judged from how the kernel walks each
dimension of the tensor (the launches say which stride parameter is `t.stride(k)`):
- a program id times the stride of an inner dimension `k`, when the kernel walks an outer dimension
  of the same tensor along a sequence (in blocks, in a loop, or at token positions read from memory)
  and no dimension from `k` inwards: the product stays inside one row of the long dimension — a head
  index times the head stride of `[tokens, heads, head_dim]`. Of `[batch, heads, seq, head_dim]` the
  head product spans a whole sequence and is reported;
- a product that only addresses single elements of a per-program vector: no lanes, no loaded
  index, and either a program id added unscaled (`lse + split * n_rows + row`) or the stride of a
  tensor whose inner dimensions the kernel never addresses (`dloss + row * dloss.stride(0)`). Such a
  vector holds about one element per program;
- a product that only addresses scalar reads, outside loops, of an index table: the value read scales
  a stride of another tensor (`block = tl.load(block_table + seq * stride_bt + pos // block_size)`,
  then `cache + block * stride_cache_block`). A block table has an entry per block of the cache.

One finding per kernel and kind of walking factor (program ids, loop counters, loaded values, values
an atomic returned: each kind is widened in its own place), with the witness of the product most
likely to be large that some run pushes past 2**31 - 1 (not part of a larger product, feeding a block
rather than one element, with a factor not wrapped by `%`, with a stride); the kernel's other int32
products of that kind that feed addresses are listed after it, not asked about. The fix is named at
the first product of a chain (`i` of `i * n_tokens * D`).

## Why is this bad?
`tl.program_id` and `range` counters are int32 and Triton passes integer arguments below 2**31 as
int32, so the product is an int32 multiply. For a tensor of more than 2**31 elements (8 GiB of fp32: long-context logits, KV
caches, large embeddings) it wraps to a negative offset and the kernel reads or writes memory before
the tensor. Casting the product afterwards is too late: the overflow has already happened.

## Example
```python
row = tl.program_id(0)
x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols)
```

## Use instead
```python
row = tl.program_id(0).to(tl.int64)
x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols)
```
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def rows(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    start = row * stride  # expect: KL104
    x = tl.load(x_ptr + start + cols, mask=cols < n_cols)
    tl.store(y_ptr + start + cols, x, mask=cols < n_cols)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def heads(q_ptr, o_ptr, T, stride_qb, stride_qh, stride_qt, BLOCK_T: tl.constexpr, D: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1)
    offs_t = tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, D)
    for t in range(0, T, BLOCK_T):
        rows = t + offs_t
        off = b * stride_qb + h * stride_qh + rows[:, None] * stride_qt + offs_d[None, :]  # expect: KL104
        tl.store(o_ptr + off, tl.load(q_ptr + off, mask=rows[:, None] < T), mask=rows[:, None] < T)

def run(q, o):  # q: [batch, heads, seq, head_dim]: one head spans the whole sequence
    B, H, T, D = q.shape
    heads[(B, H)](q, o, T, q.stride(0), q.stride(1), q.stride(2), BLOCK_T=64, D=D)
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def rows(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols)
    tl.store(y_ptr + row * stride + cols, x, mask=cols < n_cols)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def heads(q_ptr, o_ptr, start_ptr, len_ptr, stride_qt, stride_qh, BLOCK_T: tl.constexpr, D: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    start = tl.load(start_ptr + b).to(tl.int64)
    n = tl.load(len_ptr + b)
    offs_t = tl.program_id(2) * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, D)
    off = (start + offs_t[:, None]) * stride_qt + h * stride_qh + offs_d[None, :]
    tl.store(o_ptr + off, tl.load(q_ptr + off, mask=offs_t[:, None] < n), mask=offs_t[:, None] < n)

def run(q, o, start, lens, max_len):  # q: [tokens, heads, head_dim]: h * stride_qh < heads * head_dim
    T, H, D = q.shape
    heads[(start.numel(), H, triton.cdiv(max_len, 64))](q, o, start, lens, q.stride(0), q.stride(1), BLOCK_T=64, D=D)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def scale_rows(dx_ptr, dloss_ptr, stride_dx, dloss_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    dloss = tl.load(dloss_ptr + row * dloss_stride)  # one value per row: dloss has n_rows elements
    ptrs = dx_ptr + row.to(tl.int64) * stride_dx + cols
    tl.store(ptrs, tl.load(ptrs, mask=cols < n_cols) * dloss, mask=cols < n_cols)

def run(dx, dloss):
    n_rows, n_cols = dx.shape
    scale_rows[(n_rows,)](dx, dloss, dx.stride(0), dloss.stride(0), n_cols, BLOCK=triton.next_power_of_2(n_cols))
''',
        '''
import triton
import triton.language as tl

@triton.jit
def append_token(k_ptr, cache_ptr, table_ptr, lens_ptr, stride_kt, stride_tb, stride_cb, block_size, D: tl.constexpr):
    seq = tl.program_id(0)
    pos = tl.load(lens_ptr + seq) - 1
    block = tl.load(table_ptr + seq * stride_tb + pos // block_size)  # one entry of the block table
    d = tl.arange(0, D)
    dst = cache_ptr + block.to(tl.int64) * stride_cb + (pos % block_size) * D + d
    tl.store(dst, tl.load(k_ptr + seq.to(tl.int64) * stride_kt + d))

def run(k, cache, table, lens):  # cache: [num_blocks, block_size, D]
    append_token[(k.shape[0],)](k, cache, table, lens, k.stride(0), table.stride(0), cache.stride(0),
                                cache.shape[1], D=k.shape[-1])
''',
    )

    def check(self, state):
        code = partial(source_text, state.info.module)
        runtime = {p.name for p in state.kernel.kernel.params if not p.constexpr}
        # products of one term (a product written at a load and again at its store) are one question
        by_term: dict[int, tuple] = {}
        for product, accesses in int32_products(state).items():
            key = product.term.get_id()
            if key in by_term:
                by_term[key][1].extend(accesses)
            else:
                by_term[key] = (product, list(accesses))
        asked = {}
        for key, (product, accesses) in by_term.items():
            if not _exempt(state, frozenset(n for n in free_vars(product.size.term) if n in runtime), accesses):
                asked[key] = (product, accesses)
        inner = {n.term.get_id() for product, _ in asked.values() for n in product.walker.narrow}

        # one finding per kernel and kind of walking factor: the fix (widen the program ids, the loop
        # counter, the loaded index where it is loaded) is the same for every product of one kind. The
        # product asked first is the one most likely to be large: not part of a larger product, feeding
        # a block (not one element), by a factor not wrapped with `%`, with a stride (the address
        # arithmetic); then the first one met. A product the kernel widens too late comes before all
        # of them: its author meant 64 bits there.
        late = late_casts(state)

        def rank(key):
            product, accesses = asked[key]
            scalar = all(isinstance(a.ptr, Ptr) and not a.ptr.offset.lanes for a in accesses)
            wrapped = "(mod " in terms.text(product.walker.term)
            stride = any("stride" in n.lower() for n in free_vars(product.size.term))
            return (key in inner, product not in late, scalar, wrapped, not stride, product.order)

        by_kind: dict[str, list] = {}
        for key in sorted(asked, key=rank):
            by_kind.setdefault(_walker_kind(_innermost(asked[key][0])), []).append(key)
        for ordered in by_kind.values():
            yield from self._overflow(state, code, asked, ordered)

    def _overflow(self, state, code, asked: dict, ordered: list):
        found = first_int32_overflow(state, [asked[t] for t in ordered])
        if found is None:
            return
        product, v = found.product, found.violation
        text = " ".join(code(product.node).split())
        first = _innermost(product)
        others = [" ".join(code(asked[k][0].node).split()) for k in ordered if asked[k][0] is not product]
        others = list(dict.fromkeys(t for t in others if t != text))
        walker = _operands(first.node)[0 if first.walker_left else 1]
        walker_text = " ".join(code(walker).split()) if walker is not None else text
        value = found.witness.eval(first.walker.term, model_completion=True)
        loaded = any(n.startswith(("data!", "ticket!")) for n in free_vars(first.walker.term))
        shown = v.text + (f", `{walker_text}`={value}" if loaded and z3.is_int_value(value) else "")
        kind = found.accesses[0].kind
        more = (f"; also computed in int32 and feeding addresses here: {', '.join(f'`{t}`' for t in others[:4])}"
                f"{', ...' if len(others) > 4 else ''}" if others else "")
        at = f" ({v.against})" if v.against else ""
        sizes = "" if state.info.facts.launches_of(state.kernel.kernel) else (
            " (no launch in this file gives the sizes: this holds for a tensor of more than 2**31 elements)")
        fix = (f"widen `{walker_text}` with `.to(tl.int64)` before the product"
               + ("; the `.to(tl.int64)` after the product comes too late" if product in late_casts(state) else ""))
        yield from once_at(
            self, state, product.node,
            f"int32 offset overflow: `{text}` is computed in 32 bits from {_walker_kind(first)} and feeds the "
            f"address of a {kind}: it reaches {v.address} > 2**31 - 1 when {shown}{at}{sizes}{more}; {fix}",
            products=[text, *others], witness=v.witness_values(), value=v.address,
        )
