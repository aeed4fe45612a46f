"""Two programs, one address: can two distinct programs of a launch write different values to the
same element through a plain (non-atomic) store?

The store's address, mask, path condition and value are terms over the variables of one program
(its program ids, lanes, loop iterations and the data it loaded). A second program is the same
terms with those variables renamed; sizes, strides, constexprs and the grid are the launch's, shared.
The question is satisfiable when the two programs differ on a program-id axis, both reach the store
(mask and path hold), write the same element and may write different values. A value both programs
compute alike (a constant, or one of the sizes) is no race: the result does not depend on which
write lands last. Atomic tickets are modelled: ``tl.atomic_add`` returns each program a different
old value, so ``if tl.atomic_add(counter, 1) == n - 1:`` lets one program through.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

import z3

from kernlint.engine.evaluate import Access
from kernlint.engine.query import Prover
from kernlint.engine.symbols import Num, Ptr, int_var
from kernlint.engine.terms import free_vars

#: the variables of one program: a second program gets its own (sizes and the grid are shared)
PER_PROGRAM = ("pid!", "lane!", "iter_", "data!", "ticket!", "bits!")
SECOND = "@2"


@dataclass
class Race:
    access: Access
    #: program-id axis -> (first program's id, second program's id)
    programs: dict
    address: int | None
    #: the launch's values the witness rests on, as ``name=value`` text
    text: str
    read_modify_write: bool


def judge_race(prover: Prover, access: Access, single_axes: frozenset[int] = frozenset()) -> Race | None:
    """A witness of two programs writing one element of ``access``'s tensor, or None (proven, not
    modelled, or unknown within the solver's budget)."""
    model = prover.model
    ptr = access.ptr
    axes = [a for a in sorted(model.pids) if a not in single_axes]
    if access.kind != "store" or not axes:
        return None
    value = access.value.term if isinstance(access.value, Num) and not access.value.is_bool else None
    # a scatter through loaded indices is not this question, nor an unmodelled value
    plain = prover.modelled(access, *([value] if value is not None else []))
    if plain is None:
        return None
    cond, lanes, names = plain
    path_vars, fixed = prover._flag_launches(access)
    if path_vars & model.constexprs and not fixed:
        return None  # a compile-time flag no launch fixes may encode what the author proved
    pids = {a: model.pids[a][0] for a in axes}
    for a, pid in pids.items():
        names.setdefault(pid.decl().name(), pid)
    own = {n: v for n, v in names.items() if n.startswith(PER_PROGRAM)}
    pairs = [(v, int_var(n + SECOND)) for n, v in own.items()]

    def second(term):
        return z3.substitute(term, *pairs) if pairs else term

    own_facts = [f for f in prover.base if set(free_vars(f)) & set(own)]
    domain = [*prover.base, *(second(f) for f in own_facts), *lanes, *(second(f) for f in lanes), *cond,
              *(second(c) for c in cond)]
    domain += [v != int_var(n + SECOND) for n, v in own.items() if n.startswith("ticket!")]
    # CUDA's grid: at most 2**31 - 1 programs on axis 0, 65535 on axes 1 and 2
    domain += [z3.And(p < GRID_LIMITS[a], second(p) < GRID_LIMITS[a]) for a, p in pids.items()]
    goal = [z3.Or([pid != second(pid) for pid in pids.values()]), ptr.offset.term == second(ptr.offset.term)]
    if value is not None:
        goal.append(value != second(value))
    for facts_of_launch in (fixed if prover.launches else [None]):
        facts = [*domain, *prover._bindings(facts_of_launch, set(names) & set(model.params))]
        given = dict(facts_of_launch.values) if facts_of_launch is not None else {}
        witness = _for_every_layout(prover, facts, z3.And(*goal), ptr.offset.term, given)
        if witness is not None:
            return _race(prover, access, pids, witness, second)
    return None


#: the launch's strides are given values far apart, in several orders, and its other sizes one
#: moderate value: an overlap that stays in every order comes from the code (an axis the address
#: leaves out, a step smaller than its block); one that goes away in some order came from a layout
#: no caller passes (a row stride below the row)
SIZE = 1 << 20
STRIDE_SCALE = 1 << 96  # above every size times program id times block
ORDERS = 12
#: the block sizes no launch gives: an overlap must stay for each (a race of the code, not of an
#: odd configuration)
BLOCKS = (16, 128)
GRID_LIMITS = {0: 2 ** 31 - 1, 1: 65535, 2: 65535}
#: each layout's question gets a tenth of a bounds query's work budget: one that needs more is
#: unknown (no finding), and a kernel's stores are asked in several layouts each
RACE_RLIMIT = 100_000


def _strides(address, names: list[str]) -> set[str]:
    """The names that scale an index of one program in ``address`` (its change with the name
    depends on a program id, lane, loop iteration or loaded value)."""
    out = set()
    for n in names:
        v = int_var(n)
        slope = z3.simplify(z3.substitute(address, (v, z3.IntVal(1))) - z3.substitute(address, (v, z3.IntVal(0))))
        if any(m.startswith(PER_PROGRAM) for m in free_vars(slope)):
            out.add(n)
    return out


def _for_every_layout(prover, facts: list, goal, address, given: dict | None = None):
    """A witness of ``goal`` under each of several orderings of the strides (powers of
    ``STRIDE_SCALE``, other sizes at ``SIZE``) and each of ``BLOCKS`` for the block sizes no launch
    gives (``given``: what the launch passes for each parameter it fixes: the values are given to
    the wrapper's names those are made of), or None where one of them refutes it."""
    given = given or {}
    model = prover.model
    found = {}
    for f in (*facts, goal):
        found.update(free_vars(f))
    # a constexpr an arange spans is a block size; any other is a size like the runtime ones
    block_names = set()
    for lane in model.lanes:
        block_names |= set(free_vars(lane.start)) | set(free_vars(lane.end))
    block_names &= model.constexprs
    names = sorted(n for n in found if not n.startswith((*PER_PROGRAM, "grid!")) and SECOND not in n
                   and n not in block_names and n not in model.pointers and n not in given)
    strides = _strides(address, names)
    for param in _strides(address, sorted(given)):  # a stride the launch passes: the names it is made of
        strides |= set(free_vars(given[param])) & set(names)
    strides = sorted(strides)
    sizes = [int_var(n) == SIZE + i for i, n in enumerate(n for n in names if n not in strides)]
    orders = [list(p) for p in itertools.islice(itertools.permutations(strides), 24)] if len(strides) <= 4 else []
    if not orders:
        orders = [strides, strides[::-1]]
        for k in range(ORDERS - 2):
            shuffled = list(strides)
            random.Random(k).shuffle(shuffled)
            orders.append(shuffled)
    free_blocks = sorted(block_names - set(given))
    first = None
    for block, order in itertools.product(BLOCKS if free_blocks else BLOCKS[:1], orders):
        values = [int_var(n) == STRIDE_SCALE ** (i + 1) for i, n in enumerate(order)]
        values += [model.params[n] == block for n in free_blocks]
        result, witness = prover.solving.solve([*facts, *sizes, *values], goal, rlimit=RACE_RLIMIT)
        if result != z3.sat:
            return None
        first = first or witness
    return first


def _race(prover, access, pids, witness, second) -> Race:
    programs = {}
    for axis, pid in pids.items():
        a, b = (witness.eval(p, model_completion=True) for p in (pid, second(pid)))
        programs[axis] = (a.as_long() if z3.is_int_value(a) else None, b.as_long() if z3.is_int_value(b) else None)
    addr = witness.eval(access.ptr.offset.term, model_completion=True)
    shown = []
    relevant = set(free_vars(access.ptr.offset.term))
    for name in sorted(prover.model.params):
        v = witness.eval(prover.model.params[name], model_completion=False)
        # the layout's stand-in strides are no one's sizes: only values a reader would pass are shown
        if z3.is_int_value(v) and name in relevant and name not in prover.model.pointers and v.as_long() < SIZE:
            shown.append(f"{name}={v.as_long()}")
    address = addr.as_long() if z3.is_int_value(addr) and addr.as_long() < SIZE else None
    rmw = any(a.kind == "load" and isinstance(a.ptr, Ptr) and a.ptr.base == access.ptr.base
              and a.ptr.offset.term.eq(access.ptr.offset.term) for a in prover.model.accesses)
    return Race(access, programs, address, ", ".join(shown), rmw)
