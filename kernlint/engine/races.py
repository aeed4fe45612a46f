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
from z3 import z3core as C
from z3.z3 import _to_expr_ref

from kernlint.engine import apart, monotone, terms
from kernlint.engine.evaluate import Access
from kernlint.engine.query import Prover
from kernlint.engine.launch_terms import MAX_SIZE
from kernlint.engine.symbols import PER_PROGRAM, UNMODELLED, Num, Ptr, at_least, at_most, int_val, int_var
from kernlint.engine.terms import free_vars, int_op, merged_free

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
    #: for a read of what another program writes: the store (``access`` is the load)
    store: Access | None = None
    #: the host expression a launch passes as both the load's and the store's pointer
    aliased: str | None = None
    #: the two programs write the same value (a constant, or what they compute alike)
    same_value: bool = False
    #: the other write, where the second program writes the element through another statement
    partner: Access | None = None


def judge_race(prover: Prover, access: Access, single_axes: frozenset[int] = frozenset()) -> Race | None:
    """A witness of two programs writing one element of ``access``'s tensor, both through this store
    or the second through another write of the same pointer (a store, or an atomic: it does not order
    a plain store; not asked where atomics on other pointers may order the two), or None (proven,
    not modelled, or unknown within the solver's budget)."""
    if access.kind != "store" or not isinstance(access.ptr, Ptr):
        return None
    if _polls(prover.model, access):
        return None
    found = _two_programs(prover, access, access, single_axes)
    if found is not None:
        return found
    accesses = prover.model.accesses
    if any(a.kind == "atomic" and getattr(a.ptr, "base", None) != access.ptr.base for a in accesses):
        return None  # an atomic on another pointer may order the two writes (a barrier, a flag): not modelled
    here = next(i for i, a in enumerate(accesses) if a is access)
    for i, other in enumerate(accesses):
        # each pair of stores once (from its first); an atomic from the store, wherever it stands
        if ((other.kind == "atomic" or other.kind == "store" and i > here) and isinstance(other.ptr, Ptr)
                and other.ptr.base == access.ptr.base and other.node is not access.node
                and not _after_every_draw(prover.model, access, other)):
            found = _two_programs(prover, access, other, single_axes)
            if found is not None:
                found.partner = other
                return found
    return None


def judge_read_write(prover: Prover, load: Access, store: Access, single_axes: frozenset[int] = frozenset(),
                     aliases: dict | None = None) -> Race | None:
    """A witness of one program reading an element that another program of the launch writes
    through ``store`` (the same pointer parameter, or one that ``aliases`` says a launch binds to the
    same tensor: ``{(a, b): {launch offset: host expression}}``): what it reads depends on which runs
    first. None where proven, not modelled, or unknown within the solver's budget."""
    if load.kind != "load" or store.kind != "store" or not isinstance(load.ptr, Ptr) or not isinstance(store.ptr, Ptr):
        return None
    if load.ptr.base == store.ptr.base:
        return _two_programs(prover, load, store, single_axes)
    # two pointer parameters a launch binds to one tensor (``k[grid](x, x, n)``): that launch's question
    shared = (aliases or {}).get(frozenset((load.ptr.base, store.ptr.base)), {})
    aliased = [f for f in prover.launches if getattr(f.launch, "start", None) in shared]
    if not aliased:
        return None
    found = _two_programs(prover, load, store, single_axes, aliased)
    if found is not None:
        found.aliased = shared[aliased[0].launch.start]
    return found


def judge_exclusive(prover: Prover, access: Access, single_axes: frozenset[int] = frozenset()) -> bool:
    """Whether every element ``access`` (an atomic) updates belongs to one program: two distinct
    programs reaching one element is refuted at every size and stride, under every launch that fixes
    the flags around it (or, with no launch, the kernel's own facts)."""
    if access.kind != "atomic" or not isinstance(access.ptr, Ptr):
        return False
    if isinstance(access.value, Num) and access.value.rank > access.ptr.offset.rank:
        return False  # one address broadcast over a block of values: its lanes all update it
    others = [a for a in prover.model.accesses if a is not access and getattr(a.ptr, "base", None) == access.ptr.base]
    # the element is its program's alone only if no other program reaches it through any access
    # (another atomic, a plain store, a load that polls it) either
    return all(_two_programs(prover, access, other, single_axes, exclusive=True) is True
               for other in [access, *others])


def _two_programs(prover: Prover, first: Access, other: Access, single_axes: frozenset[int],
                  launches: list | None = None, exclusive: bool = False):
    """Two distinct programs, the first reaching ``first`` and the second ``other``, at one element
    (a store twice: with values that may differ): a :class:`Race`, or None. ``launches``: only
    under these launches. ``exclusive``: True where that is refuted at every size instead."""
    model = prover.model
    # a kernel that never reads its program id: every program of a launch of several does the same work
    virtual = not model.pids
    pid_axes = {0: (int_var("pid!0"), int_var("grid!0"))} if virtual else model.pids
    axes = [a for a in sorted(pid_axes) if a not in single_axes]
    if not axes or (virtual and not prover.launches):
        return None
    same = first is other
    # a load of the very element the store writes (``x = tl.load(p); tl.store(p, f(x))``): the
    # question of one address, as a store's with itself
    one_address = same or first.ptr.offset.term.eq(other.ptr.offset.term)
    # the values two writes put there (a store twice: the same statement's, or two statements'),
    # compared where the engine can say what they are a function of: a store with itself by what its
    # value reads (``Num.reads``), two statements by their terms (a value the engine does not follow,
    # such as what a loop carried out, may differ: not compared)
    written = [a.value for a in (first, other)] if first.kind == other.kind == "store" else []
    values, reads = None, None
    if written and all(isinstance(v, Num) and not v.is_bool for v in written):
        # (not where the kernel loads from a tensor it writes: what one program reads there may be
        # what another wrote, as in a read-modify-write or a hand-off between programs)
        if (same and written[0].reads is not None and not prover.model.unrecorded_writes
                and not _loads_what_it_writes(prover.model.accesses)):
            values, reads = (written[0].term, written[0].term), written[0].reads
        elif not any(n.startswith(UNMODELLED) for v in written for n in free_vars(v.term)):
            values = tuple(v.term for v in written)
    # a scatter through loaded indices is not this question
    plain = prover.modelled(first)
    plain_other = plain if same else prover.modelled(other)
    if plain is None or plain_other is None:
        return None
    cond, lanes, names = plain
    other_cond, other_lanes, other_names = plain_other
    if _opposed(cond, other_cond):
        return None  # under opposite tests of one value every program shares: never in one launch
    # the store's own lanes and iterations: where the two programs write from the same ones, what
    # they write is compared through what the value reads
    context = {n for n in {**names, **other_names} if n.startswith(("lane!", "iter_"))}
    names = {**names, **other_names}
    # (the parameters the values read are the launch's too: a comparison of two programs' reads at
    # any block size or stride of their own would tell nothing of the launch's)
    for t in (reads if reads is not None else values) or ():
        names.update(free_vars(t))
    path_vars, fixed = prover._flag_launches(first)
    if not same:
        more, fixed_other = prover._flag_launches(other)
        path_vars |= more
        fixed = [f for f in fixed if f in fixed_other]
    if path_vars & model.constexprs and not fixed:
        return None  # a compile-time flag no launch fixes may encode what the author proved
    pids = {a: pid_axes[a][0] for a in axes}
    for a, pid in pids.items():
        names.setdefault(pid.decl().name(), pid)
    own = {n: v for n, v in names.items() if n.startswith(PER_PROGRAM)}
    second = _renaming(own, PER_PROGRAM)
    own_facts = [f for f in prover.base if set(free_vars(f)) & set(own)]
    domain = [*prover.base, *(second(f) for f in own_facts), *lanes, *(second(f) for f in other_lanes), *cond,
              *(second(c) for c in other_cond)]
    domain += [v != int_var(n + SECOND) for n, v in own.items() if n.startswith("ticket!")]
    # two programs never hold one compare-and-swap claim at once
    domain += [z3.Not(z3.And(v == model.claims[n], second(v) == model.claims[n]))
               for n, v in own.items() if n in model.claims]
    if virtual:
        pid, grid = pid_axes[0]
        domain += [grid >= 1, pid >= 0, pid < grid, second(pid) >= 0, second(pid) < grid]
    # CUDA's grid: at most 2**31 - 1 programs on axis 0, 65535 on axes 1 and 2
    domain += [z3.And(p < GRID_LIMITS[a], second(p) < GRID_LIMITS[a]) for a, p in pids.items()]
    address, other_address = first.ptr.offset.term, other.ptr.offset.term
    # an atomic's updates are its program's alone only if its lanes do not meet either (lanes of one
    # program that add to one element need the atomic as much as two programs do)
    apart = [*pids.values(), *(v for n, v in own.items() if exclusive and n.startswith("lane!"))]
    goal = [z3.Or([v != second(v) for v in apart]), address == second(other_address)]
    ignored = [] if exclusive or not one_address else _ignored_axis(pids, own, second, [address, *cond, *other_cond])
    # programs that run the same code on an unmodelled value: nothing says that it differs
    alike = values is not None or same and virtual and not exclusive
    if launches is not None:
        fixed = [f for f in fixed if f in launches]
    # the proof without a solver reads one address for both programs
    layout_address = address if one_address else address + other_address
    programs = [v.decl().name() for v in apart] if one_address else ()
    asked = fixed if prover.launches else [None]
    if virtual:  # the launches that say how many programs there are
        asked = [f for f in asked if all(a in f.grid for a in range(3))]
    for facts_of_launch in asked:
        facts = [*domain, *prover._bindings(facts_of_launch, set(names) & set(model.params))]
        if facts_of_launch is not None and not virtual:
            # an axis whose number of programs the launch does not say (a grid element the engine
            # cannot read, ``max_seqlen.item()``) is asked with two programs on it: enough for two to
            # meet through it, not so many that a program id runs past its tensor's axis into the
            # next one's elements (an out-of-bounds write, not two programs of one element)
            facts += [z3.And(p < 2, second(p) < 2) for a, p in pids.items() if a not in facts_of_launch.grid]
        if virtual:
            grid = facts_of_launch.grid
            facts.append(pid_axes[0][1] == grid[0] * grid[1] * grid[2])
        given = dict(facts_of_launch.values) if facts_of_launch is not None else {}
        if exclusive:
            if not _refuted_in_every_layout(prover, facts, z3.And(*goal), layout_address, given, programs,
                                            every_size=True):
                return None
            continue
        witness = None
        if ignored:
            # programs that differ only on an axis neither the address nor the mask reads (a split-K
            # store of the whole tile) meet at every element: asked first, its overlap needs no search
            witness = _for_every_layout(prover, facts, z3.And(*goal, *ignored), layout_address, given, programs)
        if witness is None:
            witness = _for_every_layout(prover, facts, z3.And(*goal), layout_address, given, programs)
        if witness is None:
            continue
        if alike:
            if reads is not None and (written[0].aligned and _of_the_element(values[0], reads, address, model.returned)
                                      or _agree_by_address(facts, address, values[0], reads, context, model.returned)):
                # the same value wherever the two programs meet, shown without the solver
                return _race(prover, first, pids, witness, second, symmetric=same, same_value=True)
            # the writes overlap: do the values differ too? (asked only of an overlap: most stores have none)
            if reads is not None:
                apart_values = _apart_through_reads(own, context, values[0], reads, second, model.returned)
            elif values is not None:
                apart_values = values[0] != second(values[1])
            differs = values is not None and _for_every_layout(
                prover, facts, z3.And(*goal, apart_values), layout_address, given, programs)
            if differs:
                return _race(prover, first, pids, differs, second, symmetric=same)
            # the same value only where that is proven (an unknown answer leaves the values apart)
            same_value = values is None or _refuted_in_every_layout(
                prover, facts, z3.And(*goal, apart_values), layout_address, given, programs)
            return _race(prover, first, pids, witness, second, symmetric=same, same_value=same_value)
        return _race(prover, first, pids, witness, second, symmetric=same)
    return True if exclusive and asked else None


#: the launch's strides are given values far apart, in several orders, and its other sizes one
#: moderate value: an overlap that stays in every order comes from the code (an axis the address
#: leaves out, a step smaller than its block); one that goes away in some order came from a layout
#: no caller passes (a row stride below the row)
SIZE = 1 << 20
#: the lower bounds tried in turn, and the upper bound, of the sizes of an input the launch allows
#: (:func:`_allowed_sizes`): above the usual blocks first, so that a block's neighbours are programs
ALLOWED_SIZES = ((1025, 2, 1), 1 << 12)
STRIDE_SCALE = 1 << 96  # above every size times program id times block
ORDERS = 12
#: the block sizes no launch gives: an overlap must stay for each (a race of the code, not of an
#: odd configuration)
BLOCKS = (16, 128)
GRID_LIMITS = {0: 2 ** 31 - 1, 1: 65535, 2: 65535}
#: each layout's question gets a small share of a bounds query's work budget: one that needs more
#: is unknown (no finding), and a kernel's stores (and its loads, against them) are asked in several
#: layouts each
RACE_RLIMIT = 20_000
#: a layout asked again with its sizes free is a harder question: a smaller budget
RETRY_RLIMIT = 5_000
#: layouts no tensor has (their stand-ins contradict the launch) after which a question is left
IMPOSSIBLE_LAYOUTS = 2


def _strides(address, names: list[str]) -> set[str]:
    """The names that scale an index of one program in ``address`` (its change with the name
    depends on a program id, lane, loop iteration or loaded value)."""
    out = set()
    mentioned = free_vars(address)
    for n in names:
        if n not in mentioned:
            continue  # its slope is zero
        v = int_var(n)
        slope = z3.simplify(z3.substitute(address, (v, z3.IntVal(1))) - z3.substitute(address, (v, z3.IntVal(0))))
        if any(m.startswith(PER_PROGRAM) for m in free_vars(slope)):
            out.add(n)
    return out


def _opposed(first: list, second: list) -> bool:
    """Whether a condition of ``first`` is, as written, the negation of one of ``second`` (``MODE ==
    0`` and ``Not(MODE == 0)``: the two branches of a compile-time test). Conditions on a program's
    own values are not compared: two programs' differ."""
    shared = [[c for c in terms.conjuncts(side) if not any(n.startswith(PER_PROGRAM) for n in free_vars(c))]
              for side in (first, second)]
    texts = [{terms.text(c) for c in side} for side in shared]
    return any(terms.text(terms.negation(c)) in texts[1 - i] for i, side in enumerate(shared) for c in side)


def _for_every_layout(prover, facts: list, goal, address, given: dict | None = None, programs=(),
                      shapes_as_sizes: bool = False):
    """A witness of ``goal`` under each of several orderings of the strides (powers of
    ``STRIDE_SCALE``, other sizes at ``SIZE``) and each of ``BLOCKS`` for the block sizes no launch
    gives (``given``: what the launch passes for each parameter it fixes: the values are given to
    the wrapper's names those are made of), or None where one of them refutes it. ``programs``: the
    program ids of which the goal asks that one differ between the two programs (the goal also asks
    that ``address`` be the same for both).

    Where no layout can be asked (each contradicts the launch: a tensor's size the launch passes as
    a stride, ``stride_cm=c.stride(0)`` of a contiguous ``c`` of ``(M, N)`` read as ``N``, has a
    stand-in above the ``M * N < 2**31`` its wrapper asserts), the question is asked once more with
    such sizes as sizes: the launch states the tensor's layout, so any sizes it allows are a real
    input, not a layout no caller passes."""
    with prover.solving.one_question():
        agreed = _in_every_layout(prover, facts, goal, address, given, programs, shapes_as_sizes)
    if agreed is None:
        return None
    # the witness shown is the first layout's, made small only now that every layout agrees (in a
    # context of its own, as a question apart: the search for a small witness is the costliest part)
    facts, sized, first = agreed
    return _ask(prover, facts, sized, first, goal, tighten=True)[1]


def _in_every_layout(prover, facts: list, goal, address, given, programs, shapes_as_sizes: bool):
    """(facts, stand-in sizes, the first layout's values) where every layout has a witness of ``goal``."""
    facts, sized, layouts, valued = _layouts(prover, facts, goal, address, given or {}, shapes_as_sizes)
    if _apart_at_every_size(facts, address, programs, valued):
        return None  # what every layout would answer (unsat, or no such layout), without a layout
    first, impossible = None, 0
    for values, layout in layouts:
        if programs and _disjoint(facts, address, programs, layout):
            return None  # what the solver would answer (unsat), without its context
        answer = _ask(prover, facts, sized, values, goal)
        if answer is None:
            # no tensor is laid out so: it proves nothing. Every order gives each stride a stand-in
            # above every size, so what contradicts one order mostly contradicts all
            impossible += 1
            if first is None and impossible >= IMPOSSIBLE_LAYOUTS:
                break
            continue
        result, witness = answer
        if result != z3.sat:
            return None
        if first is None:
            first = values
    if first is None:
        if impossible and not shapes_as_sizes and _shape_strides(address, given or {}):
            return _in_every_layout(prover, facts, goal, address, given, programs, shapes_as_sizes=True)
        return None
    return facts, sized, first


def _refuted_in_every_layout(prover, facts: list, goal, address, given: dict | None = None, programs=(),
                             every_size: bool = False) -> bool:
    """Whether ``goal`` has no model in any of the layouts :func:`_for_every_layout` asks (each
    proven, by the solver-free proof or the solver; a layout no tensor has, even with its sizes free,
    is skipped, and at least one must be asked): a claim that something cannot happen rests on the
    layouts as they are. ``every_size``: asked once, every size and stride free: a claim that no
    two programs meet must hold at every size, not at stand-ins (a grid of ``cdiv(cdiv(n, 1024),
    1024)`` programs is one program at the stand-in n only, and ``pid % S`` never repeats below a
    stand-in S above every grid)."""
    with prover.solving.one_question():
        return _refuted_in_each(prover, facts, goal, address, given, programs, every_size)


def _refuted_in_each(prover, facts: list, goal, address, given, programs, every_size: bool) -> bool:
    if every_size:
        if _apart_at_every_size(facts, address, programs):
            return not _impossible(prover, facts)
        result, _ = prover.solving.solve(facts, goal, rlimit=RACE_RLIMIT, tighten=False)
        return result == z3.unsat and not _impossible(prover, facts)
    facts, sized, layouts, _ = _layouts(prover, facts, goal, address, given or {})
    asked = 0
    for values, layout in layouts:
        if programs and _disjoint(facts, address, programs, layout):
            asked += 1
            continue
        # asked as the witness search asks (:func:`_for_every_layout`): a layout whose stand-in
        # sizes contradict the launch again with those sizes free
        answer = _ask(prover, facts, sized, values, goal)
        if answer is None:
            continue
        if answer[0] != z3.unsat:
            return False
        asked += 1
    return asked > 0


def _shape_strides(address, given: dict) -> set[str]:
    """The tensor sizes (``c.shape[1]``) among the names of the strides the launch passes."""
    return {n for param in _strides(address, sorted(given)) for n in free_vars(given[param]) if _is_shape(n)}


def _is_shape(name: str) -> bool:
    return ".shape[" in name or ".size(" in name


def _layouts(prover, facts: list, goal, address, given: dict, shapes_as_sizes: bool = False
             ) -> tuple[list, dict, list, set]:
    """(the facts, less the size caps of the names that stand for strides; the stand-in value of
    each other size; for each layout, the equations that set its strides and free blocks and all
    its values by name; the names every layout gives a value, at least 1). ``shapes_as_sizes``: a
    tensor's size the launch passes as a stride is a size, not a stride's stand-in."""
    model = prover.model
    found = {}
    for f in (*facts, goal):
        found.update(free_vars(f))
    # a constexpr an arange spans is a block size; any other is a size like the runtime ones
    block_names = prover.block_sizes()
    # a wrapper's name the launch passes as a block size (``DIM=dim_padded``) is a block too, wherever
    # else it is used (``seg_stride=batch * dim_padded``): a stride's stand-in is no block's size
    # and the wrapper's names a block's launch value is computed from (``p`` of ``BLOCK=min(p, 1024)``
    # with ``p = next_power_of_2(N)``) follow the block too: left free
    launched_blocks, made_of = _launched(model, given, block_names)
    # and a size the launch ties to one (``N`` of ``BLOCK=next_power_of_2(N)``) follows the block:
    # left free, neither a stride's stand-in nor a size's
    tied = set(made_of)
    for f in facts if launched_blocks or made_of else ():
        mentioned = set(free_vars(f))
        # (bounds tie a size to the block, ``N <= BLOCK < 2 * N``; a count or a divisibility does not:
        # ``kb // g`` programs and ``kb % g == 0`` hold at a stride's stand-in, a power of two above
        # every block)
        text = terms.text(f)  # (SMT-LIB text: ``(div a b)``, ``(mod a b)``)
        if (len(mentioned) > 1 and mentioned & (set(launched_blocks) | made_of) and "(div " not in text
                and "(mod " not in text):
            tied |= mentioned
    # (a flag ``@triton.heuristics`` computes, ``EVEN == (n % BLOCK == 0)``, follows its relation: no
    # stand-in, which would contradict it)
    names = sorted(n for n in found if not n.startswith((*PER_PROGRAM, "grid!")) and SECOND not in n
                   and n not in block_names and n not in model.pointers and n not in given
                   and n not in launched_blocks and n not in tied and n not in model.defined
                   and z3.is_int(found[n]))  # (a host test the reader cannot follow is no size)
    strides = _strides(address, names)
    for param in _strides(address, sorted(given)):  # a stride the launch passes: the names it is made of
        strides |= {n for n in free_vars(given[param]) if n in names and not (shapes_as_sizes and _is_shape(n))}
        # (a wrapper's own name spelled as the parameter, ``stride_cm=stride_cm``, is that name: left
        # free, it let two rows of a layout no tensor has meet)
        if param not in block_names and param not in tied and z3.is_const(given[param]) and str(given[param]) == param:
            strides.add(param)
    strides = sorted(strides)
    # a launch caps each size of its tensors at 2**31 elements; a stride's stand-in lies above every
    # size on purpose (it stands for a layout, not for a tensor a caller passes), so its cap is left out
    caps = {at_most(int_var(n), MAX_SIZE).get_id() for n in strides}
    facts = [f for f in facts if f.get_id() not in caps]
    sized = {n: SIZE + i for i, n in enumerate(n for n in names if n not in strides)}
    orders = [list(p) for p in itertools.islice(itertools.permutations(strides), 24)] if len(strides) <= 4 else []
    if not orders:
        orders = [strides, strides[::-1]]
        for k in range(ORDERS - 2):
            shuffled = list(strides)
            random.Random(k).shuffle(shuffled)
            orders.append(shuffled)
    free_blocks = sorted(block_names - set(given))

    def layouts():  # made as they are asked: most questions end at the first
        for block, order in itertools.product(BLOCKS if free_blocks or launched_blocks else BLOCKS[:1], orders):
            values = [int_op("==", int_var(n), int_val(STRIDE_SCALE ** (i + 1))) for i, n in enumerate(order)]
            values += [int_op("==", model.params[n], int_val(block)) for n in free_blocks]
            # (each its own power of two: one value for all would make ``T // BK`` one program)
            values += [int_op("==", int_var(n), int_val(block << i)) for i, n in enumerate(launched_blocks)]
            layout = {**sized, **{n: STRIDE_SCALE ** (i + 1) for i, n in enumerate(order)},
                      **dict.fromkeys(free_blocks, block), **{n: block << i for i, n in enumerate(launched_blocks)}}
            yield values, layout

    return facts, sized, layouts(), {*names, *free_blocks, *launched_blocks}


def _allowed_sizes(prover, facts: list, sized: dict) -> dict | None:
    """A value for each of ``sized`` that ``facts`` allow, each within ``ALLOWED_SIZES`` (the first
    lower bound that has one), or None."""
    for low in ALLOWED_SIZES[0]:
        bounds = [b for n in sized for b in (at_least(int_var(n), low), at_most(int_var(n), ALLOWED_SIZES[1]))]
        result, model = prover.solving.solve([*facts, *bounds], z3.BoolVal(True), rlimit=RACE_RLIMIT, tighten=False)
        if result == z3.sat and model is not None:
            values = {n: model.eval(int_var(n), model_completion=True) for n in sized}
            if all(z3.is_int_value(v) for v in values.values()):
                return {n: v.as_long() for n, v in values.items()}
    return None


def _launched(model, given: dict, blocks: set[str]) -> tuple[list[str], set[str]]:
    """The wrapper's names the launch passes as one of the ``blocks``: (those passed alone, by name;
    the others those blocks' values are computed from). An autotuned block is given as itself: not
    one of them."""
    alone, made_of = set(), set()
    for b in blocks & set(given):
        value = given[b]
        if z3.is_int_value(value):
            continue
        names = {n for n in free_vars(value) if n not in model.params}
        (alone if z3.is_const(value) else made_of).update(names)
    return sorted(alone), made_of - alone


def _ask(prover, facts: list, sized: dict, values: list, goal, tighten: bool = False):
    """(result, witness) of ``goal`` in one layout, or None for a layout no tensor has, even asked
    again with its sizes free (``tighten``: a witness small enough to show)."""
    sizes = [int_op("==", int_var(n), int_val(v)) for n, v in sized.items()]
    result, witness = prover.solving.solve([*facts, *sizes, *values], goal, rlimit=RACE_RLIMIT, tighten=tighten,
                                           alone_rlimit=RACE_RLIMIT)
    if result == z3.unsat and _impossible(prover, [*facts, *sizes, *values]):
        # the stand-in sizes contradict what the launch states of them (``BLOCK =
        # next_power_of_2(N)`` where N is a stride; sizes the wrapper relates, ``a.shape[1] ==
        # b.shape[0]``, or bounds, ``D <= 16384``, ``M * N < 2**31``): ask again with only the
        # strides set, the other sizes free but not empty (a size of 0 is a degenerate layout too),
        # and within what a launch allows a size (2**31), so that the strides' stand-ins stay above
        # every row they hold: uncapped, a free size outgrew a stride and made rows of a layout no
        # tensor has overlap
        free = [b for n in sized for b in (at_least(int_var(n), 1), at_most(int_var(n), MAX_SIZE))]
        result, witness = prover.solving.solve([*facts, *free, *values], goal, rlimit=RETRY_RLIMIT, tighten=tighten,
                                               alone_rlimit=RACE_RLIMIT)
        if result == z3.unsat and _impossible(prover, [*facts, *free, *values]):
            return None
        if result == z3.unknown:
            # (free sizes multiply unknowns, which the solver may not decide: then at the sizes of
            # one input the launch allows, in this layout, a question without such products)
            allowed = _allowed_sizes(prover, [*facts, *values], sized)
            if allowed is not None:
                at = [int_op("==", int_var(n), int_val(v)) for n, v in allowed.items()]
                found = prover.solving.solve([*facts, *at, *values], goal, rlimit=RACE_RLIMIT, tighten=tighten)
                if found[0] == z3.sat:
                    return found
    return result, witness


def _impossible(prover, facts: list) -> bool:
    """Whether ``facts`` alone have no model (a layout no launch can have)."""
    return prover.solving.solve(facts, z3.BoolVal(True), rlimit=RACE_RLIMIT, tighten=False)[0] == z3.unsat


def _polls(model, access: Access) -> bool:
    """Whether the store is reached only through a test of what a plain load read from a tensor the
    kernel updates atomically (``tl.atomic_add(count, 1)``, then ``if tl.load(count) == n:``): the
    last-arriver idiom, which memory ordering makes safe and the engine does not model."""
    counted = {getattr(a.ptr, "base", None) for a in model.accesses if a.kind == "atomic"}
    if not counted:
        return False
    return any(model.loaded_from.get(n) in counted for n in merged_free(access.branches))


def _after_every_draw(model, store: Access, atomic: Access) -> bool:
    """Whether ``store`` runs only in the program that drew the last ticket of ``atomic``
    (``if tl.atomic_add(counter, 1) == tl.num_programs(0) - 1:``, every program drawing one): every
    other program's draw came before it, so the two never meet (the last arriver resets the counter)."""
    if atomic.kind != "atomic" or atomic.loops or atomic.branches:
        return False
    for test in store.branches:
        if not z3.is_eq(test):
            continue
        for ticket, bound in (test.children(), reversed(test.children())):
            drawn = model.drawn_by.get(ticket.decl().name()) if z3.is_const(ticket) else None
            if drawn is not None and drawn.node is atomic.node:
                programs = int_val(1)
                for _, grid in model.pids.values():
                    programs = programs * grid
                if z3.simplify(bound + 1 - programs).eq(int_val(0)):
                    return True
    return False


def _loads_what_it_writes(accesses) -> bool:
    """Whether the kernel loads from a pointer it also stores to or updates atomically."""
    loaded = {getattr(a.ptr, "base", None) for a in accesses if a.kind == "load"}
    return any(getattr(a.ptr, "base", None) in loaded for a in accesses if a.kind != "load")


def _renaming(own: dict, prefixes: tuple):
    """The term with the second program's copy of each of ``own``'s variables whose name starts with
    one of ``prefixes`` (``z3.substitute`` through the C API: the wrapper checks the sorts of every
    pair on each call, and a store's question renames a few dozen terms)."""
    pairs = [(v, int_var(n + SECOND)) for n, v in own.items() if n.startswith(prefixes)]
    if not pairs:
        return lambda term: term
    sources = (z3.Ast * len(pairs))(*(a.as_ast() for a, _ in pairs))
    targets = (z3.Ast * len(pairs))(*(b.as_ast() for _, b in pairs))
    return lambda term: _to_expr_ref(C.Z3_substitute(term.ctx.ref(), term.as_ast(), len(pairs), sources, targets),
                                     term.ctx)


def _of_the_element(value, reads, address, returned: set) -> bool:
    """Whether a store's value is a function of the element it writes: its term and every term it
    reads (the loads' addresses, masks and fill values) name no program id, lane, iteration or stand-in
    once the store's ``address`` is taken as given, other than values loaded through such reads (a
    load returns what memory holds at its address, and no store of the kernel writes a tensor it
    loads). Two programs that write one element then write the same value, whichever lanes and
    iterations they write it from (a sweep whose last block runs into the next program's)."""
    given = z3.Int("element!")
    # (in the simplifier's normal form: the address in the value, ``offs > 0``, is the pointer's
    # offset without its ``0 +``)
    address = z3.simplify(address)

    def of_the_element(term) -> bool:
        for name in free_vars(term):
            if name.startswith(PER_PROGRAM) or name.startswith(UNMODELLED):
                if not name.startswith("data!") or name in returned:
                    return False
        return True

    # (a read beside the element, ``offs + 1``, is the address plus a number)
    return all(of_the_element(z3.substitute(z3.simplify(t), (address, given)))
               or z3.is_int(t) and of_the_element(z3.simplify(t - address))
               for t in (value, *reads))


#: the names of one program's own draws (its ids, atomic tickets, compare-and-swap claims): the second
#: program has its own copies
_PROGRAM_OWN = ("pid!", "ticket!", "claim!")
#: the stand-ins for what the engine does not compute (a loaded block, a bitwise result, what a loop
#: carried): one symbol for both programs, every lane and trip
_STAND_INS = ("data!", "bits!", *UNMODELLED)


def _apart_through_reads(own: dict, context: set, value, reads, second, atomic_returns: set):
    """That the value a store writes differs between two programs, judged through what it reads
    (:attr:`Num.reads`): the first program's stand-ins for what the engine does not compute (a
    loaded block, a bitwise result, what a loop carried) stand for the second's too, one symbol for
    every lane and trip, so the values are equal where the reads agree, and only at the same lane. What
    an atomic returned (``atomic_returns``) is each program's own: it depends on the order they run in."""
    returned = {n: v for t in (value, *reads) for n, v in free_vars(t).items()
                if n.startswith(_PROGRAM_OWN) or n in atomic_returns}
    second_ids = _renaming(returned, ("",))
    second_computed = _renaming({**{n: v for n, v in own.items() if n.startswith((*_PROGRAM_OWN, "lane!", "iter_"))},
                                 **returned}, ("",))
    stand_ins = any(n.startswith(_STAND_INS) for n in free_vars(value))
    elsewhere = [own[n] != second(own[n]) for n in sorted(context)] if stand_ins else []
    # (a read that mentions no program id is the same in both programs: left out)
    renamed = set(returned) | {n for n in own if n.startswith(_PROGRAM_OWN)}
    apart_reads = [r != second_ids(r) for r in reads if not renamed.isdisjoint(free_vars(r))]
    return z3.Or(value != second_computed(value), *elsewhere, *apart_reads)


def _agree_by_address(facts: list, address, value, reads, context: set, returned: set) -> bool:
    """Whether two programs that write through one ``address`` write the same value there, shown
    without the solver (:func:`_apart_through_reads` states what must agree): every program id, lane
    and iteration the value reads, every program id its reads read, and (where the value stands for
    what the engine does not compute) every lane and iteration of the store, is one that two equal
    addresses hold alike (:func:`kernlint.engine.apart.agreeing`), itself or through digits of it. Not
    where the value reads what an atomic ``returned``: that depends on the order the programs run in."""
    if address.ctx is not z3.main_ctx():
        return False
    if any(n in returned for t in (value, *reads) for n in free_vars(t)):
        return False
    try:
        atoms, _ = _atoms([_tree(monotone.read(f)) for f in facts])
        alike = apart.agreeing(atoms, _tree(monotone.read(address)))
        if not alike:
            return False
        if any(n.startswith(_STAND_INS) for n in free_vars(value)):
            if not all(n in alike for n in context):
                return False
        return _term_held_alike(value, (*_PROGRAM_OWN, "lane!", "iter_"), alike) and all(
            _term_held_alike(r, _PROGRAM_OWN, alike) for r in reads)
    except (z3.Z3Exception, RecursionError, TypeError, ValueError, AttributeError, KeyError, ZeroDivisionError):
        return False


def _term_held_alike(term, own: tuple, alike: frozenset) -> bool:
    # (a term that reads none of them is alike whatever its form: the trees read arithmetic only)
    return not any(n.startswith(own) for n in free_vars(term)) or _held_alike(_tree(monotone.read(term)), own, alike)


def _held_alike(t: tuple, own: tuple, alike: frozenset) -> bool:
    """Whether the tree ``t`` reads the names starting with ``own`` only where they (or their digits
    by a size, ``pid // S``, ``pid % S``) are ``alike``: then it has one value in both programs."""
    if t is _OTHER:
        return False  # a term the trees do not read: what it reads is not known
    if t[0] == "#":
        return True
    if t[0] == "$":
        return not t[1].startswith(own) or t[1] in alike
    if (t[0] in (_DIV, _MOD) and t[1][0] == "$" and t[1][1].startswith(own)
            and not any(n.startswith(own) for n in _names(t[2])) and apart.digit_name(t[0], t[1][1], t[2]) in alike):
        return True
    return all(_held_alike(x, own, alike) for x in t[1:])


def _ignored_axis(pids: dict, own: dict, second, read: list) -> list:
    """The second program of a pair at the first program's every per-program value but one program
    id that none of ``read`` (the address and the conditions it is written under) mentions, which
    differs: as equations, or none where every program id is read."""
    mentioned = set(merged_free(read))
    free = [a for a, pid in pids.items() if pid.decl().name() not in mentioned]
    if not free:
        return []
    moved = pids[free[0]]
    return [moved != second(moved), *(v == second(v) for n, v in own.items() if not v.eq(moved))]


def _race(prover, access, pids, witness, second, symmetric: bool = False, same_value: bool = False) -> Race:
    programs = {}
    for axis, pid in pids.items():
        a, b = (witness.eval(p, model_completion=True) for p in (pid, second(pid)))
        programs[axis] = (a.as_long() if z3.is_int_value(a) else None, b.as_long() if z3.is_int_value(b) else None)
    ids = [programs[a] for a in sorted(programs)]
    if symmetric and all(None not in pair for pair in ids) and [b for _, b in ids] < [a for a, _ in ids]:
        # two programs at one store: named in the order of their ids, whichever the solver met first
        programs = {axis: (b, a) for axis, (a, b) in programs.items()}
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
    return Race(access, programs, address, ", ".join(shown), rmw, same_value=same_value)


# -- two programs apart without a solver ----------------------------------------------------------
# In a layout every size, stride and block has a value, and most addresses are then sums of program
# ids, lanes and loop iterations times numbers (``pid * 16 + lane``). Two programs meet at one element
# only if the differences of these, times their numbers, add up to zero; where each number exceeds
# the widest sum of the differences below it, every difference is zero in turn, so no two programs
# differing in a program id meet. This proves some of the questions the solver would prove (and only
# those: anything else is left to the solver, so its answers, and the findings, stay the same).

_ADD, _SUB, _MUL, _NEG = z3.Z3_OP_ADD, z3.Z3_OP_SUB, z3.Z3_OP_MUL, z3.Z3_OP_UMINUS
_DIV, _MOD = z3.Z3_OP_IDIV, z3.Z3_OP_MOD
_LE, _GE, _LT, _GT, _EQ = z3.Z3_OP_LE, z3.Z3_OP_GE, z3.Z3_OP_LT, z3.Z3_OP_GT, z3.Z3_OP_EQ
_AND, _OR = z3.Z3_OP_AND, z3.Z3_OP_OR
_ARITHMETIC = frozenset((_ADD, _SUB, _MUL, _NEG, _DIV, _MOD))
_COMPARISONS = frozenset((_LE, _GE, _LT, _GT, _EQ))
#: the most combinations of alternative configurations (``Or(BLOCK == 32, BLOCK == 64)``) tried
CASES = 32
#: the most cases made by giving a name each value the facts leave it (:func:`_with_each_value`)
VALUE_CASES = 64
#: ast id -> the term as nested tuples: ``("#", number)``, ``("$", name)``, ``(op, *arguments)`` for
#: integer arithmetic, comparisons of two terms, ``and`` and ``or``, ``("?",)`` for anything else
_TREES: dict[int, tuple] = {}
terms.CACHES.append(_TREES)
_OTHER = ("?",)
#: id of a tree -> the names it mentions
_NAMES: dict[int, frozenset] = {}
terms.CACHES.append(_NAMES)


def walks_the_loaded_index(term) -> bool:
    """Whether a program id or loop counter in the address ``term`` moves along the axis a loaded
    value indexes (``(bos + i_t * BT + lanes) * S``: a segment walked from a loaded start), rather than
    along another (``tok * stride_row + pid_h * BLOCK + lanes``: a column block of the row a loaded
    index picks). Where the address is no sum the engine reads, it is taken to walk it."""
    per_variable = apart.coefficients(_tree(monotone.read(term)))
    if per_variable is None:
        return True
    loaded = [c for v, c in per_variable.items() if v.startswith("data!")]
    walkers = [c for v, c in per_variable.items() if v.startswith(("pid!", "iter_"))]
    return any(apart.divides(d, w) for d in loaded for w in walkers) or not loaded


def _tree(ident: int) -> tuple:
    """The term of ast id ``ident``, as :mod:`kernlint.engine.monotone` has read it, as nested tuples
    (made once per term: the questions of a kernel share most of their facts)."""
    hit = _TREES.get(ident)
    if hit is not None:
        return hit
    kind, payload, kids = monotone.node(ident)
    if kind == monotone.NUM:
        out = ("#", payload)
    elif kind == monotone.VAR:
        out = ("$", payload)
    elif kind in _ARITHMETIC or kind in (_AND, _OR) or (kind in _COMPARISONS and len(kids) == 2):
        out = (kind, *(_tree(k) for k in kids))
    else:
        out = _OTHER
    _TREES[ident] = out
    return out


def _names(t: tuple) -> frozenset:
    hit = _NAMES.get(id(t))
    if hit is None:
        hit = frozenset((t[1],)) if t[0] == "$" else frozenset().union(*(_names(x) for x in t[1:])) if t[0] != "#" else frozenset()
        _NAMES[id(t)] = hit
    return hit


def _linear(t: tuple, values: dict, memo: dict, open_names: bool = False):
    """``{name: coefficient}`` (the constant under ``""``) of an integer term (a tree) over the
    variables of the programs, the other names given their ``values`` (or, ``open_names``, kept as
    variables); None where the term is not linear in its variables or names one without a value."""
    key = id(t)
    if key in memo:
        return memo[key]
    out = None
    tag = t[0]
    if tag == "#":
        out = {"": t[1]}
    elif tag == "$":
        name = t[1]
        if name.startswith(PER_PROGRAM):
            out = {name: 1}
        elif name in values:
            out = {"": values[name]}
        elif open_names or name.startswith("grid!"):
            out = {name: 1}  # a grid is the same for both programs, but no layout gives it a value
    elif tag in _ARITHMETIC:
        args = [_linear(x, values, memo, open_names) for x in t[1:]]
        if all(x is not None for x in args):
            out = _combine(tag, args)
    memo[key] = out
    return out


def _combine(op, args: list):
    if op == _NEG:
        return {k: -v for k, v in args[0].items()}
    if op in (_ADD, _SUB):
        out = dict(args[0])
        for x in args[1:]:
            for k, v in x.items():
                out[k] = out.get(k, 0) + (v if op == _ADD else -v)
        return out
    if op == _MUL:
        out = args[0]
        for x in args[1:]:
            if set(out) - {""}:
                if set(x) - {""}:
                    out = _scaled(out, x)
                    if out is None:
                        return None  # a product of two variables
                    continue
                out, x = x, out
            k = out.get("", 0)
            out = {n: k * v for n, v in x.items()}
        return out
    # integer division and remainder (z3's: the remainder is never negative)
    if len(args) != 2 or set(args[1]) - {""}:
        return None
    b = args[1].get("", 0)
    if set(args[0]) - {""}:
        # of one program's variable by a positive number (``pid // H``, ``(pid % (H * W)) // W``):
        # a digit of the variable, a variable of its own whose bounds are read off the variable's
        (name, c), = args[0].items() if len(args[0]) == 1 else ((None, 0),)
        if c != 1 or b <= 0 or name is None:
            return None
        found = _digit(op, name, b)
        return None if found is None else {found: 1}
    a = args[0].get("", 0)
    if b == 0:
        return None  # z3 leaves x / 0 open
    r = a % abs(b)
    return {"": r if op == _MOD else (a - r) // b}


def _scaled(x: dict, y: dict) -> dict | None:
    """``pid * grid`` (a program id times the number of programs on another axis, one coefficient
    each) as a variable ``("scaled", pid, grid)`` of its own; None for any other product."""
    if len(x) != 1 or len(y) != 1:
        return None
    (a, c), = x.items()
    (b, d), = y.items()
    if isinstance(b, str) and b.startswith("pid!"):
        a, b = b, a
    if not (isinstance(a, str) and a.startswith("pid!") and isinstance(b, str) and b.startswith("grid!")):
        return None
    return {("scaled", a, b): c * d}


def _digit(op, name, b: int):
    """``name // b`` (``op`` is division) or ``name % b`` as a digit ``("digit", variable, d, m)``:
    ``(variable // d) % m`` (``m`` None: no remainder is taken), or None where it is not one (a
    remainder by a number that does not divide the one taken before)."""
    if isinstance(name, str):
        variable, d, m = name, 1, None
    elif name[0] == "digit":
        _, variable, d, m = name
    else:
        return None
    if op == _DIV:
        if m is None:
            return ("digit", variable, d * b, None)  # floor division twice: once by the product
        # (x % m) // b == (x // b) % (m // b) where b divides m
        return ("digit", variable, d * b, m // b) if m % b == 0 else None
    if m is None or m % b == 0:
        return ("digit", variable, d, b)  # (x % m) % b == x % b where b divides m
    return None


def _apart_at_every_size(facts: list, address, programs, valued=frozenset()) -> bool:
    """:func:`kernlint.engine.apart.at_every_size` of the facts and address terms."""
    if not programs or address.ctx is not z3.main_ctx():
        return False
    try:
        atoms, _ = _atoms([_tree(monotone.read(f)) for f in facts])
        return apart.at_every_size(atoms, _tree(monotone.read(address)), programs, valued)
    except (z3.Z3Exception, RecursionError):
        return False


def _disjoint(facts: list, address, programs, values: dict) -> bool:
    """Whether two programs that differ in one of the ``programs`` ids cannot reach the same
    ``address`` under ``facts`` with the layout's ``values`` (True only where shown; the second
    program's variables are the first's with ``SECOND`` appended)."""
    if address.ctx is not z3.main_ctx():
        return False
    try:
        # a fact over names with values only says nothing of the programs
        trees = [_tree(monotone.read(f)) for f in facts]
        shown = [t for t in trees if any(n.startswith(PER_PROGRAM) or n not in values for n in _names(t))]
        return _cases_apart(shown, _tree(monotone.read(address)), programs, values)
    except (z3.Z3Exception, RecursionError, TypeError, ValueError, AttributeError, KeyError, ZeroDivisionError):
        return False  # the solver's question


def _cases_apart(facts: list, address, programs, values: dict) -> bool:
    """``_disjoint`` of trees, in each configuration the facts allow."""
    atoms, choices = _atoms(facts)
    values = _given(atoms, values)
    # the names the question turns on: the address's, the programs' facts', and those of the
    # equalities that give them values
    wanted = set(_names(address))
    for t in atoms:
        if any(n.startswith(PER_PROGRAM) for n in _names(t)):
            wanted |= _names(t)
    direct = set(wanted)
    grown = True
    while grown:
        grown = False
        for t in atoms:
            if t[0] == _EQ and _names(t) & wanted and not _names(t) <= wanted:
                wanted |= _names(t)
                grown = True
    wanted = {n for n in wanted if n not in values and not n.startswith(PER_PROGRAM)}
    cases = [{}]
    for alternatives in choices:  # each configuration a case of its own
        if not any(_names(x) & wanted for alternative in alternatives for pair in alternative for x in pair):
            continue
        found = []
        for alternative in alternatives:
            case = _settled(alternative, values)
            if case is None:
                break  # an alternative of another form: the fact is left out
            found.append(case)
        else:
            cases = [{**c, **d} for c in cases for d in found
                     if all(c.get(n, v) == v and values.get(n, v) == v for n, v in d.items())]
            if len(cases) > CASES:
                return False
    cases = _with_each_value(atoms, values, wanted & direct, cases)
    if not cases:
        # (none: the layout's values contradict the facts, a layout no launch has: that proves
        # nothing, the solver's question says so)
        return False
    # what no case changes is read once: a term with a value without the cases has the same value in each
    memo: dict = {}
    rows, pending = _rows(atoms, values, memo)
    known = {k: v for k, v in memo.items() if v is not None}
    for case in cases:
        given, more = values, rows
        if case:
            given = _given([t for t in pending if t[0] == _EQ], {**values, **case})
            more = rows + _rows(pending, given, dict(known))[0]
        if not _apart(_linear(address, given, dict(known)), programs, more):
            return False
    return True


def _with_each_value(atoms: list, values: dict, wanted: set, cases: list) -> list | None:
    """``cases``, each split by every value of each ``wanted`` name that has none yet and that the
    facts hold within a few values (``1 <= V <= BV`` for ``V`` of a launch's ``BV =
    next_power_of_2(V)``): an address with a product ``T * V`` is linear in each case. None where
    that makes more than ``VALUE_CASES`` cases."""
    low, high = _bounds(_rows(atoms, values, {}, open_names=True)[0])
    for name in sorted(n for n in wanted if not any(n in case for case in cases)):
        lo, hi = low.get(name), high.get(name)
        if lo is None or hi is None or hi - lo >= VALUE_CASES:
            continue
        cases = [{**case, name: v} for case in cases for v in range(lo, hi + 1)]
        if len(cases) > VALUE_CASES:
            return None
    return cases


def _atoms(facts: list) -> tuple[list, list]:
    """The comparisons ``(op, left, right)`` the facts (trees) assert, and the disjunctions of
    conjunctions of equalities they assert (each a list of lists of ``(left, right)``)."""
    atoms, choices = [], []
    stack = list(reversed(facts))
    while stack:
        t = stack.pop()
        op = t[0]
        if op == _AND:
            stack.extend(reversed(t[1:]))
        elif op in _COMPARISONS:
            atoms.append(t)
        elif op == _OR:
            alternatives = []
            for d in t[1:]:
                parts = d[1:] if d[0] == _AND else (d,)
                if not all(x[0] == _EQ for x in parts):
                    break
                alternatives.append([x[1:] for x in parts])
            else:
                choices.append(alternatives)
    return atoms, choices


def _settled(equalities: list, values: dict) -> dict | None:
    """The values that ``equalities`` give to names (each one name, not of a program, plus a
    number), or None where one is of another form."""
    out: dict = {}
    for x, y in equalities:
        found = _binding(x, y, values)
        if found is None:
            return None
        name, value = found
        if out.get(name, value) != value:
            return None
        out[name] = value
    return out


def _binding(x, y, values: dict, memo: dict | None = None):
    """(name, value) of ``x == y`` where that is ``name == number`` (a name not of a program)."""
    memo = {} if memo is None else memo
    lhs, rhs = _linear(x, values, memo, True), _linear(y, values, memo, True)
    if lhs is None or rhs is None:
        return None
    diff, constant = _difference(lhs, rhs)
    if len(diff) != 1:
        return None
    (name, c), = diff.items()
    if not isinstance(name, str) or name.startswith(PER_PROGRAM) or constant % c:
        return None
    return name, -constant // c


def _difference(lhs: dict, rhs: dict) -> tuple[dict, int]:
    """``lhs - rhs`` of two linear forms: the non-zero coefficients, and the constant."""
    diff = dict(lhs)
    for k, v in rhs.items():
        diff[k] = diff.get(k, 0) - v
    constant = diff.pop("", 0)
    return {n: c for n, c in diff.items() if c}, constant


def _given(atoms: list, values: dict) -> dict:
    """``values`` and those that the equalities among ``atoms`` give further names (a launch's sizes,
    its grid)."""
    values = dict(values)
    for _ in range(3):
        grown, memo = False, {}
        for t in atoms:
            if t[0] == _EQ:
                found = _binding(t[1], t[2], values, memo)
                if found is not None and found[0] not in values:
                    values[found[0]] = found[1]
                    grown = True
        if not grown:
            break
    return values


def _apart(first: dict | None, programs, rows: list) -> bool:
    """``_disjoint`` for the address ``first`` (linear) and the facts ``rows``, with every
    configuration's value given."""
    if first is None:
        return False
    first = _flattened({k: v for k, v in first.items() if v and k}, rows)
    left = set()
    for p in programs:
        if p in first:
            left.add(p)
            continue
        flat = {k for k in first if isinstance(k, tuple) and k[0] == "flat" and p in k[1:3]}
        if flat:
            left |= flat
            continue
        # a program id the address reads only through digits (``pid // H`` and ``pid % H``, or
        # ``pid // (H * W)``, ``(pid // W) % H`` and ``pid % W``): all of them the same, the id is the same
        digits = {k for k in first if isinstance(k, tuple) and k[0] == "digit" and k[1] == p}
        if not _covers(digits):
            return False  # a program id the address leaves out: the solver's question
        left |= digits
    low, high = _bounds(rows)

    def span(n, copy: str):
        """The bounds of the variable ``n`` of the first or (``copy``) second program."""
        if not isinstance(n, tuple):
            return low.get(n + copy), high.get(n + copy)
        if n[0] == "flat":  # p * g + q, for 0 <= q < g
            _, p, q, g = n
            bounds = (low.get(p + copy), high.get(p + copy), low.get(q + copy), high.get(q + copy), high.get(g))
            if any(b is None for b in bounds) or bounds[0] < 0 or bounds[2] < 0:
                return None, None
            lo_p, hi_p, lo_q, hi_q, hi_g = bounds
            return lo_p + lo_q, hi_p * hi_g + hi_q
        if n[0] != "digit":
            return None, None
        _, v, d, m = n
        lo, hi = low.get(v + copy), high.get(v + copy)
        lo, hi = (None if lo is None else lo // d), (None if hi is None else hi // d)
        if m is not None and not (lo is not None and hi is not None and 0 <= lo and hi < m):
            return 0, m - 1  # the remainder wraps: any digit (a quotient below m is its own remainder)
        return lo, hi

    def shift(n, copy: str):
        if not isinstance(n, tuple):
            return n + copy
        if n[0] == "flat":
            return (n[0], n[1] + copy, n[2] + copy, n[3])
        return (n[0], n[1] + copy, *n[2:])

    def width(part: dict):
        """The most ``S - S'`` can be, for ``S`` the sum ``part`` of the first program's variables
        and ``S'`` of the second's."""
        spans = []
        for copy in ("", SECOND):
            lo = hi = 0
            for n, c in part.items():
                b, t = span(n, copy)
                if c < 0:
                    b, t = t, b
                if b is None or t is None:
                    return None
                lo += c * b
                hi += c * t
            shifted = {shift(n, copy): c for n, c in part.items()}
            negated = {n: -c for n, c in shifted.items()}
            for coef, bound in rows:  # a fact that bounds the sum itself (``pid * BV + lane < V``)
                if coef == shifted:
                    hi = min(hi, bound)
                elif coef == negated:
                    lo = max(lo, -bound)
            spans.append((lo, hi))
        (lo1, hi1), (lo2, hi2) = spans
        return max(hi1 - lo2, hi2 - lo1)

    rest = dict(first)
    while left:
        name = max(rest, key=lambda n: (abs(rest[n]), str(n)))
        step = abs(rest.pop(name))
        spread = width(rest) if rest else 0
        if spread is None or spread >= step:
            return False
        left.discard(name)
    return True


def _flattened(first: dict, rows: list) -> dict:
    """``first`` with ``c * pid_a * grid_b + c * pid_b`` as ``c * ("flat", pid_a, pid_b, grid_b)``
    where the facts bound ``pid_b`` below ``grid_b`` in both programs: a program index flattened
    over two axes (``(pid_k * num_programs(2) + pid_bh) * stride``), the same for two programs only
    where both ids are."""
    out = dict(first)
    for key, c in first.items():
        if not (isinstance(key, tuple) and key[0] == "scaled"):
            continue
        _, p, g = key
        q = "pid!" + g[len("grid!"):]
        if out.get(q) != c or not all(({q + copy: 1, g: -1}, -1) in rows for copy in ("", SECOND)):
            continue
        del out[key], out[q]
        out[("flat", p, q, g)] = c
    return out


def _covers(digits: set) -> bool:
    """Whether the digits of one variable determine it: from ``d == 1`` up, each digit's ``m`` is
    the next one's ``d`` divided by its own, and the last takes no remainder."""
    steps = {d: m for _, _, d, m in digits}
    d = 1
    while d in steps:
        m = steps.pop(d)
        if m is None:
            return True
        d *= m
    return False


def _rows(atoms: list, values: dict, memo: dict, open_names: bool = False) -> tuple[list, list]:
    """The comparisons linear in the programs' variables, as ``({name: coefficient}, bound)`` for
    ``sum <= bound``, and the comparisons not linear in them or naming one without a value (left
    out: a proof from fewer facts holds with all of them). ``open_names``: names without a value
    are variables too."""
    rows, pending = [], []
    for t in atoms:
        op, x, y = t
        lhs, rhs = _linear(x, values, memo, open_names), _linear(y, values, memo, open_names)
        if lhs is None or rhs is None:
            pending.append(t)
            continue
        diff, constant = _difference(lhs, rhs)
        k = -constant
        if not diff:
            continue
        negated = {n: -c for n, c in diff.items()}
        if op in (_LE, _EQ):
            rows.append((diff, k))
        if op in (_GE, _EQ):
            rows.append((negated, -k))
        if op == _LT:
            rows.append((diff, k - 1))
        if op == _GT:
            rows.append((negated, -k - 1))
    return rows, pending


def _bounds(rows: list) -> tuple[dict, dict]:
    """Lower and upper bounds of the variables that ``rows`` imply (a few rounds of propagation)."""
    low: dict = {}
    high: dict = {}
    for _ in range(4):
        changed = False
        for coef, bound in rows:
            for n, c in coef.items():
                rest = 0
                for m, d in coef.items():
                    if m == n:
                        continue
                    b = low.get(m) if d > 0 else high.get(m)
                    if b is None:
                        break
                    rest += d * b
                else:
                    room = bound - rest  # c * n <= room
                    if c > 0:
                        t = room // c
                        if high.get(n) is None or t < high[n]:
                            high[n] = t
                            changed = True
                    else:
                        b = -(room // -c)
                        if low.get(n) is None or b > low[n]:
                            low[n] = b
                            changed = True
        if not changed:
            break
    return low, high
