"""Does a launch's grid reach the last element a kernel's mask lets through?

A mask conjunct ``index < bound`` whose index moves with program ids says the kernel expects a
partial last block: elements up to ``bound - 1`` are its work. Where the index grows with each
program id and lane (linear, a step provably not negative), the largest element any program
reaches is the index at the last program of the launch's grid and the last lane. The query: is
there a size the launch allows (its values, grid, asserts) where that largest element is below
``bound - 1``? Satisfiable: a :class:`Shortfall` with the sizes and the element missed. An index
that also moves with a loop, or that the engine cannot show to grow, is not asked about; nor a
bound the launch's grid is not made of (two sizes the wrapper receives apart say nothing), unless
the grid is a constant or the bound is another axis of a tensor the grid counts an axis of. A
constexpr the wrapper passes on from its own caller is asked about only where the grid is made of it
too (``grid = (DK // BK,)`` with ``BK=BK``).
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from kernlint.engine import monotone
from kernlint.engine.evaluate import Access
from kernlint.engine.launch_terms import SHAPE_NAME, LaunchFacts
from kernlint.engine.query import Prover, _lane_domain, _related, reads_program_id
from kernlint.engine.symbols import alike_in_every_program, at_least, int_var, position, shown_value
from kernlint.engine.terms import free_vars, text


@dataclass
class Shortfall:
    access: Access
    facts: LaunchFacts
    #: the program-id axes the indices move with
    axes: tuple[int, ...]
    #: the bound a mask states for the indices
    bound: z3.ExprRef
    #: the element ``bound - 1`` no program reaches, the last one reached, programs per axis
    missed: int
    reached: int
    programs: dict[int, int]
    #: the witness as (what, value) pairs in the order they are shown
    shown: tuple = ()
    #: the mask and its bound, in words
    mask_text: str = ""
    bound_text: str = ""

    @property
    def text(self) -> str:
        return ", ".join(f"{k}={shown_value(v)}" for k, v in self.shown)


def shortfalls(prover: Prover, overruns: set[int]) -> list[Shortfall]:
    """One shortfall per launch and program-id axes: the first bound of the kernel's masks whose
    last element that launch's grid does not reach. The indices one bound limits that move with
    program ids are asked together (``k_real < K`` and ``k_imag < K`` split the elements between
    them); a bound that an access in ``overruns`` (ids of accesses that can leave their tensor) is
    masked by is not the data's extent, and a bound one of whose indices is not modelled is not
    asked about."""
    groups: dict[str, tuple] = {}
    seen, written = set(), set()
    for index, bound, access, _ in prover.stated:
        # an index that moves with no program id walks another dimension (``k_idx < n_ctx``)
        if reads_program_id(index):
            key = (text(bound), text(index), access.mask.lanes)
            if access.kind != "load":
                written.add(key)
            if key not in seen:  # a load and a store under one mask: one index
                seen.add(key)
                # (accesses under different compile-time branches run under different launches'
                # configurations: each branch's grid is asked about its own)
                branch = tuple(text(c) for c in _reached(access))
                groups.setdefault((key[0], branch), (bound, []))[1].append((index, access))
    # a read whose bound lets more through than a write under the same program ids and lanes, the
    # write's bound reached by the grid, reads input the work never needs (``x[2 * i]`` and ``x[2 * i
    # + 1]`` masked by ``2 * i < n``, while the writes stop at ``i < n // 2``)
    judged = []
    for bound, members in groups.values():
        axes = _pid_axes(members, bound)
        if axes is None or any(id(a) in overruns for _, a in members):
            continue
        writes = any((text(bound), text(i), a.mask.lanes) in written for i, a in members)
        motion = (axes, frozenset(lane for _, a in members for lane in a.mask.lanes))
        judged.append((bound, members, axes, writes, motion))
    answers: dict[tuple, Shortfall | None] = {}

    def judge(g: int, facts: LaunchFacts) -> Shortfall | None:
        if (g, id(facts)) not in answers:
            bound, members, axes = judged[g][:3]
            answers[g, id(facts)] = _judge(prover, members, facts, axes, bound)
        return answers[g, id(facts)]

    found, asked = [], set()
    for g, (bound, members, axes, writes, motion) in enumerate(judged):
        for facts in prover.launches:
            key = (id(facts), axes)
            if key in asked or any(a not in facts.grid for a in axes):
                continue
            shortfall = judge(g, facts)
            if shortfall is not None and not writes and any(
                    w[3] and w[4] == motion and judge(h, facts) is None for h, w in enumerate(judged)):
                shortfall = None
            if shortfall is not None:
                asked.add(key)
                found.append(shortfall)
    return found


def _reached(access: Access) -> list:
    """The ``if`` tests around the access that every program reads alike (flags, sizes)."""
    return [c for c in access.branches if alike_in_every_program(c)]


def _pid_axes(members, bound) -> tuple[int, ...] | None:
    """The program-id axes the indices move with, where they move with nothing but program ids
    and lanes and the bound with neither."""
    axes = set()
    for index, _ in members:
        names = set(free_vars(index))
        if any("!" in n and not n.startswith(("pid!", "lane!")) for n in names):
            return None  # a loop moves it too (a grid-stride loop): it may reach the last element
        axes |= {int(n[4:]) for n in names if n.startswith("pid!")}
    if not axes or any("!" in n for n in free_vars(bound)):
        return None
    return tuple(sorted(axes))


def _judge(prover: Prover, members, facts: LaunchFacts, axes, bound) -> Shortfall | None:
    model = prover.model
    params = set(free_vars(bound))
    for index, access in members:
        params |= set(free_vars(index))
        for lane, _ in access.mask.lanes:
            params |= set(free_vars(lane.end - lane.start))
    params &= set(model.params)
    known = set()
    for a in axes:
        known |= set(free_vars(facts.grid[a]))
    values = facts.with_grid_choices(axes)
    if any(n not in values for n in prover._defined_through(params)):
        return None  # a size this launch does not pass: unknown
    # (a value a heuristics decorator defines follows from those its relation reads: bound to the
    # launch through them)
    defined, params = params, {n for n in params if n in values}
    given = z3.substitute(bound, *((model.params[n], values[n]) for n in params)) if params else bound
    if known and not set(free_vars(given)) <= _related(_with_sibling_axes(known, facts), facts.assumptions):
        return None  # the bound is a size the grid is not made of (a grid of constants is short of any)
    # each access's lanes apart: two masks may put blocks of different lengths on one axis
    lanes = list(dict.fromkeys(c for _, a in members for c in _lane_domain(a.mask)))
    bindings = prover._bindings(facts, defined) + [model.params[n] == values[n] for n in params
                                                   if n not in facts.values]
    domain = prover.base + lanes + bindings
    corners = []
    for index, access in members:
        corner = _corner(prover, domain, index, access)
        if corner is None:
            return None
        corners.append(corner)
    goals = list({text(c): c < bound - 1 for c in corners}.values())
    # what the launch fixes, its grid and the lanes, without the rest of the kernel's domain: most
    # grids are shown to reach the last element from these alone, and reading fewer facts is quicker
    few = [*bindings, *lanes, bound >= 1, *(at_least(model.pids[a][1], 1) for a in axes),
           *(at_least(model.params[n], 0) for n in params if n not in model.pointers)]
    if any(monotone.refutes(few, g) for g in goals):
        return None  # one index reaches the last element, shown without a solver
    goal = z3.And(goals) if len(goals) > 1 else goals[0]
    beyond = None
    if len(members) == 1:
        # one index: an element of its own form below the bound (``2 * b`` reaches even elements
        # only: the odd ones are no program's), not merely ``bound - 1``
        index, access = members[0]
        beyond, far = _beyond(model, index, access)
        goal = z3.And(beyond < bound, beyond > corners[0])
        domain = domain + far
    # the accesses run only where the ``if`` tests around them that every program reads alike hold
    # (``if SEQUENCE_PARALLEL:`` under a grid of ``cdiv(n, B) if SEQUENCE_PARALLEL else 1``)
    reached = list({text(c): c for _, a in members for c in _reached(a)}.values())
    result, witness = prover.solving.solve([*domain, *reached, bound >= 1], goal)
    if result != z3.sat:
        return None
    if beyond is not None:
        # the witness shown misses the bound's last element where the index reaches it in some run
        last, at_last = prover.solving.solve([*domain, *reached, bound >= 1], z3.And(goal, beyond == bound - 1))
        witness = at_last if last == z3.sat else witness
    return _shortfall(prover, members[0][1], facts, values, axes, corners, bound, witness, beyond)


def _beyond(model, index, access: Access) -> tuple:
    """``index`` at program ids and lane positions of their own, each at least 0 and bounded by
    neither the grid nor the block (the values its form can take: ``2 * b`` only even ones, ``row *
    stride + lane`` any), and their domain."""
    names = set(free_vars(index))
    pairs = [(pid, int_var(f"pid!{a}@far")) for a, (pid, _) in model.pids.items() if f"pid!{a}" in names]
    pairs += list({axis: (position(axis), int_var(f"lane!{axis}@far")) for _, axis in access.mask.lanes
                   if f"lane!{axis}" in names}.values())
    return z3.substitute(index, *pairs), [far >= 0 for _, far in pairs]


def _with_sibling_axes(known: set, facts: LaunchFacts) -> set:
    """``known`` and the other sizes of each tensor a size in it is an axis of: the axes of one tensor
    are independent (a grid of ``cdiv(M, B)`` for a mask ``n < N`` of ``M, N = x.shape`` is short for
    every ``N`` past the blocks of ``M``), where sizes of two tensors may be related by a contract the
    wrapper does not state."""
    tensors = {m.group(1) for m in map(SHAPE_NAME.fullmatch, known) if m is not None}
    if not tensors:
        return known
    return known | {n for n in facts.names if (m := SHAPE_NAME.fullmatch(n)) is not None and m.group(1) in tensors}


def _corner(prover: Prover, domain: list, index, access: Access):
    """``index`` at the last program of each axis and the last lane, where that is its largest
    value (it grows with each); None otherwise."""
    model = prover.model
    sizes = {}
    for lane, axis in access.mask.lanes:
        size = lane.end - lane.start
        if axis in sizes and not sizes[axis].eq(size):
            return None  # two aranges of different lengths on one axis: which one is the index's
        sizes[axis] = size
    names = set(free_vars(index))
    pairs = [(pid, grid - 1) for a, (pid, grid) in model.pids.items() if f"pid!{a}" in names]
    pairs += [(position(axis), size - 1) for axis, size in sizes.items() if f"lane!{axis}" in names]
    for v, _ in pairs:
        if not _grows(prover, domain, index, v):
            return None
    return z3.substitute(index, *pairs)


def _grows(prover: Prover, domain: list, index, v) -> bool:
    """Whether ``index`` is linear in ``v`` with a step no size makes negative."""
    step = z3.simplify(z3.substitute(index, (v, v + 1)) - index, som=True)
    if v.decl().name() in free_vars(step):
        return False
    if z3.is_int_value(step):
        return step.as_long() >= 0
    names = set(free_vars(step))
    sizes = [at_least(prover.model.params[n], 0) for n in names & set(prover.model.params)
             if n not in prover.model.pointers]
    if len(sizes) == len(names) and monotone.refutes(sizes, step < 0):
        return True  # a product of sizes (``BLOCK``, ``BLOCK * stride``): no domain needed
    result, _ = prover.solving.solve(domain, step < 0, tighten=False)
    return result == z3.unsat


def _shortfall(prover, access, facts, values, axes, corners, bound, witness, beyond=None) -> Shortfall:
    model = prover.model
    value = lambda t: witness.eval(t, model_completion=True).as_long()  # noqa: E731
    relevant = set(free_vars(bound))
    for c in corners:
        relevant |= set(free_vars(c))
    for n in list(relevant):
        if n in values:
            relevant |= set(free_vars(values[n]))
    for a in axes:
        relevant |= set(free_vars(facts.grid[a]))
    # (what a heuristics decorator computes a value from: the sizes that chose it)
    relevant |= prover._defined_through(relevant & model.defined.keys())
    for n in list(relevant):
        if n in values:
            relevant |= set(free_vars(values[n]))
    shown = []
    for name in sorted(model.params):
        v = witness.eval(model.params[name], model_completion=False)
        if z3.is_int_value(v) and name not in model.pointers and name in relevant:
            shown.append((name, v.as_long()))
    for name, written in sorted(facts.names.items()):
        v = witness.eval(int_var(name), model_completion=False)
        if name in relevant and z3.is_int_value(v):
            shown.append((written, v.as_long()))
    programs = {a: value(model.pids[a][1]) for a in axes}
    shown += [(f"programs on axis {a}", n) for a, n in programs.items()]
    shown = list(dict.fromkeys(shown))
    missed = value(bound) - 1 if beyond is None else value(beyond)
    return Shortfall(access, facts, axes, bound, missed, max(value(c) for c in corners), programs,
                     tuple(shown), prover.describe(access), prover.describe(bound))
