"""A stride of one tensor passed where the kernel walks another (KL114).

A launch passes ``X.stride(d)`` for a scalar parameter that the kernel's addresses through some
pointers multiply. Where none of those pointers is bound to X, nor to a tensor that shares X's
storage or was made like it (``torch.empty_like(x)``, ``x.view(-1)``), the kernel steps through
another tensor T by X's stride. The question, under the launch's facts (its values, its wrapper's
asserts) with each tensor laid out contiguously in its sizes: can ``X.stride(d)`` differ from every
stride of T? A witness is a set of sizes the wrapper accepts for which the kernel moves through T by
a step that is none of T's axes: it reads or writes the wrong elements, and past T where the step is
larger than T's own (what the bounds rules ask cannot show it where T's other sizes reach the kernel
in no other way).
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from kernlint.engine.evaluate import Access, KernelModel
from kernlint.engine.launch_terms import LaunchFacts
from kernlint.engine.query import Prover
from kernlint.engine.symbols import Ptr, int_var
from kernlint.engine.terms import free_vars


@dataclass
class ForeignStride:
    #: the first access through the pointer whose address reads the stride
    access: Access
    #: the kernel's stride parameter, and the launch
    param: str
    facts: LaunchFacts
    #: (X, d) of the ``X.stride(d)`` passed, and T, the tensor the pointer is bound to
    source: tuple[str, int]
    tensor: str
    #: the sizes of the witness (as the wrapper names them), the stride passed and T's strides there
    witness: dict[str, int]
    passed: int | None
    strides: tuple[int, ...]
    #: the strides agree where the stride's tensor is contiguous, which the wrapper does not ensure
    contiguous_only: bool = False
    #: the parameter the launch passes the walked tensor's own stride (of the same axis) as, where the
    #: stride passed walks its own tensor too: the wrapper hands each tensor its stride, the kernel
    #: walks this one by another's
    own: str | None = None
    #: the parameter the launch passes the same stride as to walk its own tensor, where the layouts of
    #: both tensors are the caller's: the kernel keeps them apart, the launch makes them one
    twin: str | None = None


def foreign_strides(prover: Prover, model: KernelModel, reported: set[int] = frozenset()) -> list[ForeignStride]:
    """``reported``: the ids of accesses the bounds rules already report (their witness shows the
    same step past the tensor: one finding)."""
    out, walking = [], {}
    for facts in prover.launches:
        for param, (source, axis) in sorted(facts.stride_args.items()):
            value = facts.values.get(param)
            if value is None and source in facts.contiguous:
                continue
            if param not in walking:  # (the pointers a parameter walks are the kernel's, at every launch)
                walking[param] = _walked_by(model, param)
            walked = walking[param]
            tensors = {base: facts.tensors.get(base) for base in walked}
            if not walked or None in tensors.values():
                continue  # (a pointer to a slice or an expression: which tensor it walks is not known)
            kin = facts.kin.get(source, frozenset((source,)))
            if any(t in kin or source in facts.kin.get(t, ()) for t in tensors.values()):
                if value is None:
                    continue  # (whether the two layouts agree is the caller's, as far as the engine reads)
                # the stride walks its own tensor too: one layout shared on purpose, unless the launch
                # passes another of the tensors walked its own stride of that axis as well
                for base, access in walked.items():
                    own = _own_stride(facts, tensors[base], axis, kin, access) if id(access) not in reported else None
                    if own is None:
                        continue
                    found = _differs(prover, facts, param, value, (source, axis), tensors[base], access)
                    if found is None and {source, tensors[base]} <= facts.contiguous:
                        continue  # both laid out contiguously in sizes where the strides agree
                    found = found or ForeignStride(access, param, facts, (source, axis), tensors[base], {}, None, (),
                                                   contiguous_only=True)
                    found.own = own
                    out.append(found)
                continue
            for base, access in walked.items():
                if id(access) in reported:
                    continue
                found = _differs(prover, facts, param, value, (source, axis), tensors[base], access)
                if found is None and not {source, tensors[base]} & facts.contiguous:
                    # (both laid out by the caller: the wrapper neither makes nor asserts them contiguous)
                    twin = _walking_its_own(model, facts, param, (source, axis), kin, walking)
                    if twin is not None:
                        found = ForeignStride(access, param, facts, (source, axis), tensors[base], {}, None, (),
                                              contiguous_only=True, twin=twin)
                if found is not None:
                    out.append(found)
    return out


def _walking_its_own(model: KernelModel, facts: LaunchFacts, param: str, source: tuple, kin: frozenset,
                     walking: dict) -> str | None:
    """Another parameter the launch passes the same stride as, which walks only the tensor the stride
    is taken from (``stride_x_row=x.stride(0)`` beside ``stride_res_row=x.stride(0)``)."""
    for other, passed in sorted(facts.stride_args.items()):
        if other == param or passed != source:
            continue
        if other not in walking:
            walking[other] = _walked_by(model, other)
        bound = [facts.tensors.get(base) for base in walking[other]]
        if bound and all(t in kin for t in bound):
            return other
    return None


def _own_stride(facts: LaunchFacts, tensor: str, axis: int, kin: frozenset, access: Access) -> str | None:
    """The parameter a launch passes ``tensor``'s own stride of ``axis`` as, where ``access`` (through
    a pointer bound to ``tensor``, not one of ``kin``) does not read it."""
    if tensor in kin or any(k in facts.kin.get(tensor, ()) for k in kin):
        return None
    mentioned = free_vars(access.ptr.offset.term)
    own = facts.kin.get(tensor, frozenset((tensor,)))
    for param, (source, d) in sorted(facts.stride_args.items()):
        if d == axis and source in own and param not in mentioned:
            return param
    return None


def _walked_by(model: KernelModel, param: str) -> dict[str, Access]:
    """Pointer -> the first access through it whose address reads ``param``."""
    walked: dict[str, Access] = {}
    for a in model.accesses:
        if isinstance(a.ptr, Ptr) and param in free_vars(a.ptr.offset.term):
            walked.setdefault(a.ptr.base, a)
    return walked


def _differs(prover: Prover, facts: LaunchFacts, param: str, value, source: tuple, tensor: str,
             access: Access) -> ForeignStride | None:
    layout = facts.layouts.get(tensor)
    if not layout:
        return None
    if value is None:
        # a stride of a tensor whose layout the wrapper leaves to the caller (``y = x.reshape(-1, n)``,
        # made contiguous on one path only), walking one the wrapper lays out itself: the two agree
        # only for some of the inputs it accepts
        return ForeignStride(access, param, facts, source, tensor, {}, None, (), contiguous_only=True) \
            if tensor in facts.contiguous else None
    result, witness = prover.solving.solve(list(facts.assumptions), z3.And([value != s for s in layout]))
    if result == z3.unsat and tensor in facts.contiguous and source[0] not in facts.contiguous:
        # one of the walked tensor's strides while both are laid out contiguously: not where the
        # caller passes the other as a view (rows of a padded buffer), which the wrapper accepts
        return ForeignStride(access, param, facts, source, tensor, {}, None, (), contiguous_only=True)
    if result != z3.sat or witness is None:
        return None

    def at(term) -> int:
        return witness.eval(term, model_completion=True).as_long()

    names = set(free_vars(value))
    for s in layout:
        names |= set(free_vars(s))
    shown = {facts.names.get(n, n): at(int_var(n)) for n in sorted(names)}
    return ForeignStride(access, param, facts, source, tensor, shown, at(value), tuple(at(s) for s in layout))
