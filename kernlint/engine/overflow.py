"""One z3 query per int32 product: can a run push it past 2**31 - 1?

The evaluator records every scalar product computed in 32 bits from a value that walks with the run
(:class:`~kernlint.engine.symbols.Narrow`: a program id, a loop counter, a value loaded and cast to
int32). A product is asked about at each access whose address it feeds, under that access's path,
for every launch of the kernel in the file. What bounds the answer:

- each launch's facts (its grid, the values it passes, what its wrapper asserts);
- Triton's calling convention: an integer argument below 2**31 is passed as int32 and one at or past
  it as int64, which widens every product it enters; so an argument a product of int32 factors
  multiplies is below 2**31;
- CUDA's grid: at most 2**31 - 1 programs along axis 0 and 65535 along axes 1 and 2.

A program id or loop counter times constants alone (``pid * BLOCK``, ``i * 4``) can pass 2**31 - 1 only
through the size of the grid or the trip count: it is asked only where a launch gives them as numbers
(a size of 2**31 or more written in the file); a grid made of a tensor's sizes leaves the kernel to
the tensors it is given. A value loaded and cast to int32 is bounded by nothing but its type. A value a
launch does not fix is free within those bounds, so a tensor may hold more than 2**31 elements.
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from kernlint.engine.evaluate import Access
from kernlint.engine.query import SMALL, Prover, Violation, _lane_domain
from kernlint.engine.run import DEGRADE
from kernlint.engine.symbols import UNMODELLED, WALKING, BlockPtr, Narrow, Num, Ptr, at_most, int_val, int_var
from kernlint.engine.terms import free_vars

INT32_MAX = 2 ** 31 - 1
#: CUDA's limits on the number of blocks along each grid axis
GRID_LIMITS = {0: 2 ** 31 - 1, 1: 65535, 2: 65535}


@dataclass
class Overflow:
    """An int32 product that passes 2**31 - 1 in a run: ``violation.address`` is its value there."""

    product: Narrow
    #: the accesses whose address it feeds
    accesses: list[Access]
    violation: Violation
    #: the run's values (a z3 model), to evaluate the product's factors in
    witness: object = None


def products_of(access: Access) -> frozenset:
    """The int32 products an access's address is computed from."""
    ptr = access.ptr
    if isinstance(ptr, Ptr):
        return ptr.offset.narrow
    if isinstance(ptr, BlockPtr):  # its offsets are indices (``Evaluator.block_ptr``)
        return ptr.base_offset.narrow if isinstance(ptr.base_offset, Num) else frozenset()
    return frozenset()


def products_fed(model) -> dict:
    """Every int32 product of the kernel and the accesses whose address it feeds, in the order met; a
    product the address multiplies again is an index, left to the outer product (and where the index
    is widened before it is scaled, ``(i_n * T).to(tl.int64) * H``, it passes 2**31 only with more
    than 2**31 rows of what it counts)."""
    fed: dict[Narrow, list[Access]] = {}
    for access in model.accesses:
        for product in sorted(products_of(access), key=lambda p: p.order):  # a set's order is its hashes'
            if product not in model.scaled:
                fed.setdefault(product, []).append(access)
    return fed


def first_overflow(prover: Prover, asked: list[tuple]) -> Overflow | None:
    """The first of ``asked`` ((product, accesses) pairs, most telling first) that some run pushes
    past 2**31 - 1: one finding per kernel needs one witness, not one per product."""
    for product, accesses in asked:
        try:
            verdict = _judge(prover, product, accesses)
        except DEGRADE:
            verdict = None
        if isinstance(verdict, tuple):
            return Overflow(product, accesses, *verdict)
    return None


def _judge(prover: Prover, product: Narrow, accesses: list[Access]):
    """(Violation, witness), True (no run passes 2**31 - 1) or None (not known)."""
    names = set(free_vars(product.term))
    if any(n.startswith(UNMODELLED) for t in (product.term, *product.path) for n in free_vars(t)):
        return None
    launches = prover.launches if prover.launches else [None]
    walkers = {n for n in free_vars(product.walker.term) if n.startswith(WALKING)}
    if all(n.startswith(("pid!", "iter_")) for n in walkers) and not _sizes(product) & prover.scalars:
        # a program id or loop counter times constants: only a grid or trip count the launch states
        # as a number says how far it goes
        launches = [f for f in launches if f is not None and all(_stated(prover, f, n, accesses) for n in walkers)]
        if not launches:
            return None
    proven = True
    for facts in launches:
        for access in _distinct_paths(accesses):
            cond = _reached(access) + [c for c in product.path if not any(c is d for d in access.path)]
            domain = prover.base + _lane_domain(*_ranked(access)) + prover._bindings(facts, set(prover.model.params))
            domain += _calling_convention(prover, names, cond, facts)
            for factor in (product.walker.term, product.size.term):  # each factor is an int32 itself
                domain += [factor >= -INT32_MAX - 1, factor <= INT32_MAX]
            # a product past 2**31 needs a factor past 2**15: no witness within 4096. A certificate
            # that a product stays small needs products of the facts, which the certificates do not
            # try: they would rarely refute it, at more than the solver's cost
            result, witness = prover.solving.solve([*domain, *cond], product.term > int_val(INT32_MAX),
                                                   limits=(SMALL,), small_first=True, certify=False)
            if result == z3.sat:
                return prover._violation(access, "overflow", facts.label if facts is not None else "", witness,
                                         product.term, int_val(INT32_MAX), facts), witness
            if result != z3.unsat:
                proven = False
    return True if proven else None


def _sizes(product: Narrow) -> set:
    """The names the sizes of a chain of products read (``n_tokens`` and ``D`` of ``i * n_tokens * D``)."""
    names = set(free_vars(product.size.term))
    for inner in product.walker.narrow:
        names |= _sizes(inner)
    return names


def _stated(prover: Prover, facts, name: str, accesses: list[Access]) -> bool:
    """Whether the launch gives as a number how far the program id or loop counter ``name`` goes."""
    if name.startswith("pid!"):
        axis = int(name[4:])
        return axis in facts.grid and z3.is_int_value(z3.simplify(facts.grid[axis]))
    fixed = [(prover.model.params[n], v) for n, v in facts.values.items() if n in prover.model.params]
    for access in accesses:
        for _, k, start, step, stop in access.loops:
            if k.decl().name() == name:
                ends = [t for t in (start, step, stop) if t is not None]
                if len(ends) < 3:
                    return False
                return all(z3.is_int_value(z3.simplify(z3.substitute(t, *fixed) if fixed else t)) for t in ends)
    return False


def _distinct_paths(accesses: list[Access]) -> list[Access]:
    seen, out = set(), []
    for a in accesses:
        key = tuple(c.get_id() for c in a.path)
        if key not in seen:
            seen.add(key)
            out.append(a)
    return out


def _reached(access: Access) -> list:
    """The conditions under which the access runs (its mask where the engine models it: a scalar
    product feeding an address no lane uses does no harm)."""
    cond = list(access.path)
    mask = access.mask
    if isinstance(mask, Num) and mask.is_bool and not any(n.startswith(UNMODELLED) for n in free_vars(mask.term)):
        cond.append(mask.term)
    return cond


def _ranked(access: Access) -> list:
    return [v for v in (access.ptr.offset if isinstance(access.ptr, Ptr) else None, access.mask) if isinstance(v, Num)]


def _calling_convention(prover: Prover, names: set, cond: list, facts) -> list:
    """Every argument the product multiplies is an int32 (below 2**31: a larger one would widen the
    product), and so is every other argument the question reads unless the launch passes it; every
    grid axis is within CUDA's limit."""
    mentioned = set(names)
    given = facts.values if facts is not None else {}
    for c in cond:
        mentioned |= {n for n in free_vars(c) if n not in given}
    out = [at_most(prover.model.params[n], INT32_MAX) for n in sorted(mentioned)
           if n in prover.model.params and n not in prover.model.pointers]
    for n in sorted(names):  # a loaded value in a 32-bit product was cast to int32
        if n.startswith(("data!", "ticket!")):
            v = int_var(n)
            out += [v >= -INT32_MAX - 1, at_most(v, INT32_MAX)]
    for axis, (_, grid) in prover.model.pids.items():
        out.append(at_most(grid, GRID_LIMITS.get(axis, 65535)))
    return out
