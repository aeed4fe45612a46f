"""Block pointers on Tritons whose language dropped them (3.9: ``make_block_ptr`` raises).

Runs inside the interpreted process (see :mod:`kernlint.dynamic.interp_hook`). A block pointer is
kept as plain numbers (base address, shape, strides, offsets, block shape) and *lowered* at each
``tl.load``/``tl.store`` into what the compiler makes of it: a tensor of element pointers, and a
mask that is true where every dimension named in ``boundary_check`` is inside ``shape``. The
ordinary load and store then run on those, so the exact-bounds check judges every lane a block
pointer touches; dimensions left out of ``boundary_check`` are not masked, as on the GPU.
"""

from __future__ import annotations

import numpy as np


def removed(tl) -> bool:
    """True when this Triton's ``make_block_ptr`` is a stub that raises (feature detection)."""
    try:
        tl.core.make_block_ptr(None, None, None, None, None, None, _semantic=object())
    except NotImplementedError:
        return True
    except Exception:
        return False
    return False


def _value(x) -> int:
    x = getattr(x, "value", x)  # constexpr
    handle = getattr(x, "handle", None)
    if handle is not None:
        return int(np.asarray(handle.data).reshape(-1)[0])
    return int(x)


def _values(xs) -> list[int]:
    xs = getattr(xs, "value", xs)
    return [_value(x) for x in xs]


class BlockPointer:
    """``tl.make_block_ptr`` as numbers; ``advance`` returns a moved copy, as the original does."""

    def __init__(self, base, shape, strides, offsets, block_shape, order):
        self.base = base  # the pointer tensor (its dtype says the element type)
        self.shape = _values(shape)
        self.strides = _values(strides)
        self.offsets = _values(offsets)
        self.block_shape = _values(block_shape)
        self.order = _values(order)

    def advance(self, offsets, _semantic=None):
        moved = object.__new__(BlockPointer)
        moved.__dict__.update(self.__dict__)
        moved.offsets = [o + d for o, d in zip(self.offsets, _values(offsets))]
        return moved

    def lower(self, boundary_check) -> tuple[np.ndarray, np.ndarray | None]:
        """(element addresses, in-bounds mask or None) of the block."""
        elt = self.base.dtype.element_ty
        itemsize = max(1, elt.primitive_bitwidth // 8)
        base = np.uint64(_value(self.base))
        index = np.indices(self.block_shape, dtype=np.int64)
        offset = np.zeros(self.block_shape, dtype=np.int64)
        mask = None
        checked = {int(d) for d in _values(boundary_check or ())}
        for dim, (start, stride, extent) in enumerate(zip(self.offsets, self.strides, self.shape)):
            idx = index[dim] + start
            offset += idx * stride
            if dim in checked:
                inside = (idx >= 0) & (idx < extent)
                mask = inside if mask is None else mask & inside
        return base + (offset * itemsize).astype(np.uint64), mask


def install(tl, interp_module) -> None:
    """Replace the stubs by the emulation in ``triton.language`` (the interpreter then binds them
    to its semantic like any builtin)."""
    core = tl.core
    orig_load, orig_store = core.load, core.store
    TensorHandle = interp_module.TensorHandle

    def _tensors(bp: BlockPointer, boundary_check):
        ptrs, mask = bp.lower(boundary_check)
        ptr_ty = bp.base.dtype
        block = tl.block_type(ptr_ty, list(bp.block_shape))
        ptr_t = tl.tensor(TensorHandle(ptrs, ptr_ty), block)
        mask_t = None if mask is None else tl.tensor(TensorHandle(mask, tl.int1), tl.block_type(tl.int1, list(bp.block_shape)))
        return ptr_t, mask_t

    @core.builtin
    def make_block_ptr(base, shape, strides, offsets, block_shape, order, _semantic=None):
        return BlockPointer(base, shape, strides, offsets, block_shape, order)

    @core.builtin
    def advance(base, offsets, _semantic=None):
        return base.advance(offsets)

    @core.builtin
    def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
             eviction_policy="", volatile=False, _semantic=None):
        if isinstance(pointer, BlockPointer):
            pointer, mask = _tensors(pointer, boundary_check)
            padding = getattr(padding_option, "value", padding_option)
            other = None if mask is None else (float("nan") if padding == "nan" else 0)
        return orig_load(pointer, mask, other, cache_modifier=cache_modifier, eviction_policy=eviction_policy,
                         volatile=volatile, _semantic=_semantic)

    @core.builtin
    def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy="", _semantic=None):
        if isinstance(pointer, BlockPointer):
            pointer, mask = _tensors(pointer, boundary_check)
        return orig_store(pointer, value, mask, cache_modifier=cache_modifier, eviction_policy=eviction_policy,
                          _semantic=_semantic)

    for module in (tl, core):
        for name, fn in (("make_block_ptr", make_block_ptr), ("advance", advance), ("load", load), ("store", store)):
            setattr(module, name, fn)
