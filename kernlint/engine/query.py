"""One z3 query per access: can the address leave the tensor where the mask holds?

Two ways to know the tensor's extent, in order:

1. a launch gives it (:class:`~kernlint.engine.facts.LaunchFacts`): the address must stay in
   ``[0, extent)`` for every program of the launch's grid;
2. otherwise only what the kernel itself states: a mask somewhere in the kernel bounds an index
   (``offs < n``) that this access's address is built from (a sum or product of it); the access
   must keep that index inside the stated bound too. No extent is invented.

Satisfiable: a :class:`Violation` with a witness. Unsatisfiable: proven. Unknown (time budget,
unmodelled values): nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import sys
from dataclasses import dataclass, field
from typing import Callable

import z3

from kernlint.engine.evaluate import Access, KernelModel
from kernlint.engine.launch_terms import SHAPE_NAME, LaunchFacts, size_caps, value_bounds
from kernlint.engine.symbols import UNMODELLED, Num, Ptr, at_least, at_most, int_val, int_var, mentions, position, shown_value
from kernlint.engine import cpu_cap, monotone, terms
from kernlint.engine.terms import components as _components, conjunction, conjuncts, free_vars, keyed_conjuncts, merged_free
from kernlint.source.configs import config_values, tuned_names, unread_keys

#: the CPU time a check may spend (:mod:`~kernlint.engine.cpu_cap`), for the work the budget does not
#: count: nlsat's (z3 4.15 counts it apart), which ran 14 to 20 s on questions that had spent half
#: the budget. Every answered question of the corpora ends within 0.45 s on a 2-core machine; the
#: budget runs out in about 0.65 s
TIMEOUT_MS = 1000
#: z3's own wall-clock cap, far above the CPU cap, for a check the watchdog cannot reach; where no
#: thread CPU clock can be read, the CPU cap's value is the wall-clock cap
WALL_CAP_MS = 10 * TIMEOUT_MS
#: the solver's work budget per query, in z3's resource units: unlike a timeout it gives the same
#: answer on a loaded CI machine as on a fast laptop (the CPU cap stays, for the work it leaves out)
RLIMIT = 4_000_000
#: witnesses are first sought with every variable in [-SMALL, SMALL]
SMALL = 1 << 16
#: the budget of each search for a smaller witness (above what the largest one of the corpora
#: needed): one that runs out keeps the witness already found
TIGHTEN_RLIMIT = 1_000_000
#: the budget of a question first asked with its variables bounded (``small_first``)
SMALL_FIRST_RLIMIT = 100_000


_TRUE = z3.BoolVal(True)

#: a launch's question the solver did not answer (:meth:`Prover._launch`)
UNANSWERED = "unanswered"


@dataclass
class Violation:
    access: Access
    how: str  # "launch" | "stated" | "loop" | "block"
    #: what the address is checked against, in words
    against: str
    witness: dict[str, int] = field(default_factory=dict)
    #: rendered witness, for the message
    text: str = ""
    address: int | None = None
    bound: int | None = None
    #: the witness as (what, value) pairs in the order they are shown
    shown: tuple = ()

    def witness_values(self) -> dict[str, int]:
        return {k: v for k, v in self.shown}


def stated_bounds(model: KernelModel) -> list[tuple]:
    """(index term, bound term, access) for every ``index < bound`` conjunct of a mask in the kernel
    (``bound > index`` too; ``<=`` states ``index < bound + 1``)."""
    out, seen = [], {}
    for access in model.accesses:
        mask = access.mask
        if not isinstance(mask, Num):
            continue
        key = (mask.term.get_id(), mask.lanes)  # loads and stores under one mask share their reading
        if key not in seen:
            seen[key] = _mask_bounds(mask)
        out += [(a, bound, access, lengths) for a, bound, lengths in seen[key]]
    return out


def _mask_bounds(mask: Num) -> list[tuple]:
    found = []
    todo = [mask.term]
    while todo:
        t = todo.pop()
        if not z3.is_app(t):
            continue
        kind = t.decl().kind()
        if kind == z3.Z3_OP_AND:
            todo.extend(t.children())
            continue
        if kind not in (z3.Z3_OP_LT, z3.Z3_OP_LE, z3.Z3_OP_GT, z3.Z3_OP_GE):
            continue
        a, b = t.children()
        if kind in (z3.Z3_OP_GT, z3.Z3_OP_GE):
            a, b = b, a
        if not _has_lane(a) or _has_lane(b):
            continue
        bound = b if kind in (z3.Z3_OP_LT, z3.Z3_OP_GT) else b + 1
        found.append((a, bound, _lengths(mask, a)))
    # several bounds on one index (``p < k & p < n``): only the loosest can be the extent (one that
    # differs from one program to the next, ``p < pid``, is none: kept apart, and not asked)
    loosest: dict = {}
    for a, bound, lengths in found:
        key = (a.get_id(), lengths, reads_program_id(bound))
        if key in loosest:
            kept = loosest[key][1]
            bound = z3.If(kept >= bound, kept, bound)
        loosest[key] = (a, bound, lengths)
    return list(loosest.values())


def reads_program_id(term) -> bool:
    """Whether a term differs from one program to the next (it reads a program id)."""
    return any(n.startswith("pid!") for n in free_vars(term))


def _lengths(value: Num, term) -> frozenset:
    """(axis, arange length) of the block axes ``term`` uses: two aranges of different lengths
    on one axis share a position variable but are different indices."""
    names = set(free_vars(term))
    # the length as text, not as a z3 id: the id of a term no longer held can be reused
    return frozenset((axis, lane.extent_text()) for lane, axis in value.lanes
                     if f"lane!{axis}" in names)


def _ratio(ck, cl):
    """``ck / cl`` as a term when ``ck`` is a multiple of ``cl`` term by term (``BK * s`` / ``s``)."""
    ck, cl = z3.simplify(ck, som=True), z3.simplify(cl, som=True)
    if z3.is_int_value(cl) and cl.as_long() != 0:
        q = z3.simplify(ck / cl)
        return q if z3.is_int_value(z3.simplify(ck - q * cl)) and z3.simplify(ck - q * cl).as_long() == 0 else None
    if z3.is_app(ck) and ck.decl().kind() == z3.Z3_OP_MUL:
        kids = ck.children()
        for i, kid in enumerate(kids):
            if kid.eq(cl):
                rest = kids[:i] + kids[i + 1:]
                out = rest[0]
                for r in rest[1:]:
                    out = out * r
                return out
    return None


def _pruned(branches: tuple, values: dict, params: dict) -> bool:
    """Whether one of the ``if`` tests ``branches`` is false for the constexpr ``values`` (a test
    that reads anything else is left open)."""
    for test in branches:
        mentioned = set(free_vars(test))
        if mentioned and mentioned <= set(values):
            if z3.is_false(z3.simplify(z3.substitute(test, *((params[n], values[n]) for n in mentioned)))):
                return True
    return False


def _counts_blocks_of(model: KernelModel, term, shape) -> bool:
    """Whether ``term`` is made of a ceiling division of ``shape`` the kernel computes
    (``pid % tl.cdiv(y_size, B)``): the kernel's own count of blocks, whose last one may end past
    the shape."""
    counts = {t.get_id() for blocks, _, t in model.ceil_divs.values() if _is_zero(blocks - shape)}
    seen, stack = set(), [term]
    while counts and stack:
        t = stack.pop()
        if t.get_id() in counts:
            return True
        if t.get_id() not in seen:
            seen.add(t.get_id())
            stack.extend(t.children())
    return False


def _is_zero(term) -> bool:
    s = z3.simplify(term, som=True)
    return z3.is_int_value(s) and s.as_long() == 0


def _related(known: set, assumptions) -> set:
    """``known`` and the sizes the wrapper's equations tie to it (an ``==`` between sizes, or one an
    assert states under a test, ``if bias is not None: assert bias.shape[0] == N``)."""
    known = set(known)
    stated = [c for a in assumptions for c in (conjuncts([a.arg(1)]) if z3.is_implies(a) else [a])]
    equations = [set(free_vars(a)) for a in stated if z3.is_eq(a)]
    grew = True
    while grew:
        grew = False
        for names in equations:
            if names & known and not names <= known:
                known |= names
                grew = True
    return known


def _first_of_data_bounded(cond: list) -> tuple[list, list] | None:
    """Where a test lets lanes (or a loop's iterations) through up to a value the kernel loaded
    (``offs < end - start`` of two loads of ``cu_seqlens``, ``for s in range(0, seq_len, B)``): a
    length the host keeps inside the tensor by a contract the kernel does not state, so that a
    witness would rest on what memory holds, which a reader cannot check. Then (those lanes and
    iterations at their first, the tests that read loaded values): a witness under the first needs of
    the data only that one element is in range (a sequence of at least one token). None where no test
    does."""
    pinned: dict[str, z3.ExprRef] = {}
    bounds = []
    for part in conjuncts(cond):
        names = free_vars(part)
        if any(n.startswith("data!") for n in names):
            pinned.update((n, v) for n, v in names.items() if n.startswith(("lane!", "iter_")))
            bounds.append(part)
    return ([v == 0 for v in pinned.values()], bounds) if pinned else None


def _has_lane(term) -> bool:
    return any(name.startswith("lane!") for name in free_vars(term))


def _lane_domain(*values) -> list:
    """Each block axis the values use ranges over its arange's length (a power of two)."""
    out, sizes = [], {}
    for value in values:
        if isinstance(value, Num):
            for lane, axis in value.lanes:
                out += lane.domain(axis)
                size = lane.size()
                if axis in sizes:
                    out.append(size == sizes[axis])  # blocks combined on one axis have one shape
                sizes.setdefault(axis, size)
    return out


def _divides_by(term, names: set) -> bool:
    """Whether a quotient or a remainder in ``term`` divides by one of ``names``."""
    if not names & free_vars(term).keys():
        return False
    return any(names & free_vars(d).keys() for d in terms.divisors(term))


#: the ends of its tensor an address is asked to leave by (:meth:`Prover._launch`)
EITHER_SIDE, PAST_END, BEFORE_START = "either side", "past the end", "before the start"


def _from_sizes(term) -> bool:
    """Whether ``term`` reads a tensor's size (``x.shape[0] * top_k``, ``ids.numel()``): a value the
    input fixes, not one the caller may set anywhere (``eos_id``)."""
    return any(SHAPE_NAME.fullmatch(n) or n.endswith(".numel()") for n in free_vars(term))


def _stated_names(facts: LaunchFacts) -> set[str]:
    """The names what a launch's wrapper states reads (its assumptions)."""
    return set(merged_free(facts.assumptions))


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _within(variables: list, limit: int, ctx: z3.Context) -> z3.BoolRef:
    """``-limit <= v <= limit`` for each integer constant ``v``, in ``ctx`` (made of the bounds
    :func:`at_least` and :func:`at_most` keep, and translated at once)."""
    return conjunction([b for v in variables for b in (at_least(v, -limit), at_most(v, limit))]).translate(ctx)


def _within_limit(model, variables: list, limit: int) -> bool:
    """Whether the model gives every variable a value in [-limit, limit] (no smaller witness to seek)."""
    for v in variables:
        value = model.eval(v, model_completion=True)
        if not z3.is_int_value(value) or abs(value.as_long()) > limit:
            return False
    return True


def _under(facts: LaunchFacts | None) -> str:
    """``; under the launch on line 22, at the wrapper's default ...`` where the launch's own values
    (a default it was judged at) are what the witness rests on."""
    return f"; under {facts.label}" if facts is not None and facts.at_default else ""


def _context() -> z3.Context:
    """A context of the question's own: the solver's path (and so whether it answers within its
    budget) follows the ids of the terms, which in a shared context depend on every question asked
    before. So an answer depends on its question alone, not on what else the kernel (or the file,
    or an unrelated change to the engine) asked first."""
    _keep_freed_heap()
    return z3.Context()


def clear_cache() -> None:
    terms.clear()


#: glibc's ``mallopt`` parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_heap_kept = False


def _keep_freed_heap() -> None:
    """Let the C heap keep what a deleted z3 context frees, for the next kernel's context.

    Making a context touches some 16 MB of fresh memory; glibc hands it back to the system when the
    context is deleted, so the next kernel's context took as many page faults again (most of the
    making's cost, 9 ms instead of 1 ms). Freed memory up to 64 MB now stays with the process (a
    setting of the C allocator for the whole process, made once; findings do not depend on it)."""
    global _heap_kept
    if _heap_kept:
        return
    _heap_kept = True
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    mallopt(_M_TRIM_THRESHOLD, 64 << 20)


class Solving:
    """The answers of one kernel's queries, each asked in a context of its own (:func:`_context`)."""

    def __init__(self) -> None:
        self.answers: dict[str, tuple] = {}
        #: keys of satisfiable answers whose witness was not tightened (``solve(tighten=False)``)
        self.untightened: set[str] = set()
        self.incremental: dict = {}
        self.incremental_ctx: z3.Context | None = None
        self.refutations: dict = {}
        #: the context of the question being asked in parts (:meth:`one_question`), once made
        self.question_ctx: z3.Context | None = None
        self.question_depth = 0

    @contextlib.contextmanager
    def one_question(self):
        """The queries asked inside are parts of one question (a race asked in each of several
        layouts): they share a context, made on the first part. A part's answer then depends on the
        parts asked before it, which the question itself fixes: still on its question alone."""
        self.question_depth += 1
        try:
            yield
        finally:
            self.question_depth -= 1
            if not self.question_depth:
                self.question_ctx = None

    def _solver(self, ctx: z3.Context, timeout_ms: int = TIMEOUT_MS, rlimit: int = RLIMIT):
        # the plain SMT core, not z3's default portfolio, which picks tactics by elapsed time and
        # so answers differently from one run to the next
        solver = z3.SimpleSolver(ctx=ctx)
        solver.set("timeout", WALL_CAP_MS if cpu_cap.available() else timeout_ms)
        solver.set("rlimit", rlimit)
        # Groebner bases and Horner forms of the products of sizes and strides ran for seconds
        # without drawing on the budget (the answer then followed the cap); nlsat answers those
        # queries in a fraction of a second
        solver.set("arith.nl.grobner", False)
        solver.set("arith.nl.horner", False)
        # Hermite-normal-form cuts over the layouts' stride stand-ins (numbers of hundreds of digits)
        # ran for up to half a second a question, again without drawing on the budget
        solver.set("arith.enable_hnf", False)
        return solver

    def refuted(self, key, base: Callable[[], list], formulas: list) -> bool:
        """Whether ``base()`` (the same for every question of ``key``: built and added once, to a
        solver of its own) and ``formulas`` have no model."""
        asked = (key, tuple(sorted(terms.text(f) for f in formulas)))
        if asked in self.refutations:
            return self.refutations[asked]
        solver = self.incremental.get(key)
        if solver is None:
            # a context apart from the one-shot queries': their terms' ids, and so their answers
            # and witnesses, stay what they are without these questions
            if self.incremental_ctx is None:
                self.incremental_ctx = _context()
            solver = self.incremental[key] = self._solver(self.incremental_ctx)
            facts = base()
            if facts:
                solver.add(conjunction(facts).translate(self.incremental_ctx))
        solver.push()
        try:
            if formulas:
                solver.add(conjunction(formulas).translate(self.incremental_ctx))
            self.refutations[asked] = cpu_cap.check(solver, self.incremental_ctx, TIMEOUT_MS / 1000) == z3.unsat
        finally:
            solver.pop()
        return self.refutations[asked]

    def solve(self, facts: list, goal, timeout_ms: int = TIMEOUT_MS, rlimit: int = RLIMIT,
              limits: tuple = (256, 4096, SMALL), small_first: bool = False, certify: bool = True,
              tighten: bool = True, alone_rlimit: int | None = None, ctx: z3.Context | None = None):
        """Solve the conjunction of ``facts`` and ``goal`` (the negation of what is to be proven); a
        witness is sought with every variable within each of ``limits`` in turn. ``small_first``:
        most such questions have a witness within the last limit, so they are asked within it first
        (one question instead of two), then, where that has no answer, without it. ``certify``: seek
        a certificate of unsatisfiability first (:mod:`~kernlint.engine.monotone`). ``tighten``:
        False where only the answer matters (the witness is then whatever model came first; asked
        again with ``tighten``, the question is solved afresh, so the witness is the one it would
        have had). ``alone_rlimit``: where the answer is unsat, whether ``facts`` alone have a model is
        asked too, in the same context (making a context costs more than most such questions), and
        kept as the answer of ``solve(facts, True, timeout_ms, alone_rlimit, tighten=False)``. ``ctx``:
        the context to ask in (by default one of the question's own, :func:`_context`)."""
        formulas = [*facts, goal]
        # the conjuncts in a fixed order: the solver's path must not depend on the order Python's
        # sets happened to build the formula in
        parts = sorted(dict(keyed_conjuncts(formulas)).items())
        key = "\n".join(k for k, _ in parts)
        hit = self.answers.get(key)
        if hit is not None and (not tighten or key not in self.untightened):
            return hit
        if certify and monotone.refutes(facts, goal):  # proven without a solver (and without a context)
            self.answers[key] = (z3.unsat, None)
            return self.answers[key]
        formula = conjunction([c for _, c in parts]) if parts else z3.BoolVal(True)
        variables = [v for v in merged_free([c for _, c in parts]).values() if z3.is_int(v)]
        if ctx is None and self.question_depth:
            if self.question_ctx is None:
                self.question_ctx = _context()
            ctx = self.question_ctx
        elif ctx is None:
            ctx = _context()
        solver = self._solver(ctx, timeout_ms, rlimit)
        solver.add(formula.translate(ctx))
        main = z3.main_ctx()
        if small_first:
            solver.set("rlimit", min(rlimit, SMALL_FIRST_RLIMIT))
            solver.push()
            solver.add(_within(variables, limits[-1], ctx))
            if cpu_cap.check(solver, ctx, timeout_ms / 1000) == z3.sat:
                out = self.answers[key] = (z3.sat, solver.model().translate(main))
                return out
            solver.pop()
            solver.set("rlimit", rlimit)
        result = cpu_cap.check(solver, ctx, timeout_ms / 1000)
        model = solver.model().translate(main) if result == z3.sat else None
        loose = model is not None and not _within_limit(model, variables, limits[0])
        if loose and not tighten:
            self.untightened.add(key)
        elif loose:
            # a small witness is the one a reader checks by hand: tighten while it stays satisfiable
            solver.set("rlimit", min(rlimit, TIGHTEN_RLIMIT))
            for limit in limits:
                solver.push()
                solver.add(_within(variables, limit, ctx))
                if cpu_cap.check(solver, ctx, timeout_ms / 1000) == z3.sat:
                    model = solver.model().translate(main)
                    break
                solver.pop()
        out = (result, model)
        self.answers[key] = out
        if tighten:
            self.untightened.discard(key)
        if alone_rlimit is not None and result == z3.unsat:
            self.solve(facts, _TRUE, timeout_ms, alone_rlimit, limits, tighten=False, ctx=ctx)
        return out


class Prover:
    """Judges the accesses of one evaluated kernel against its launches' facts."""

    def __init__(self, model: KernelModel, launches: list[LaunchFacts], describe, assumptions=(), kernel=None,
                 handed_over: bool = False, inlined: bool = False):
        self.model = model
        self.launches = launches
        #: the module passes the kernel to a function (a launcher whose launch the engine does not read)
        self.handed_over = handed_over
        #: a helper the module's kernels call, launched nowhere: its accesses are judged inlined at each
        #: call, under the values that call passes; alone, its block sizes would be free (``BLOCK_N``
        #: larger than the ``BLOCK_M`` a loop steps by, where every caller passes one block for both)
        self.alone = inlined and not launches
        #: the launches the bounds questions are asked under: a mode or flag the wrapper forwards with
        #: a default is judged at it (a call that leaves it out is one the wrapper accepts); the
        #: other questions keep the caller's choice free
        self.judged_launches = [f.at_defaults() for f in launches]
        self.describe = describe  # term -> source-like text, for messages
        self.solving = Solving()
        self._flag_memo: dict[int, tuple] = {}
        #: (offset, loop, lane) ids -> what ``_walked_index`` made of them
        self._walks: dict[tuple, tuple | None] = {}
        self._blocks: set[str] | None = None
        self._flag_names: set[str] | None = None
        self.base = list(model.symbols.domain) + list(assumptions)
        # sizes, strides, block sizes and flags are not negative; a value the kernel tests what it
        # loads against (``y == ignore_index``) is no size
        sentinels = set(merged_free([t for ts in model.sentinels.values() for t in ts]))
        self.base += [at_least(v, 0) for n, v in model.params.items() if n not in model.pointers and n not in sentinels]
        self.scalars = {n for n, v in model.params.items() if n not in model.pointers and n not in model.constexprs}
        #: the kernel's constexpr defaults and autotune configs (KL107's sources of values)
        params = kernel.params if kernel is not None else ()
        self.defaults = {p.name: int(p.default) for p in params
                         if p.constexpr and p.default is not None and p.default.strip().isdigit()}
        self.configs = config_values(kernel) if kernel is not None else []
        self.unread = unread_keys(kernel) if kernel is not None else set()
        self.tuned = tuned_names(kernel) if kernel is not None else set()

    @functools.cached_property
    def stated(self) -> list[tuple]:
        """:func:`stated_bounds` of the kernel (read only where a launch leaves an extent open)."""
        return stated_bounds(self.model)

    @functools.cached_property
    def splits(self) -> set[tuple]:
        """(index, bound) of the tests that split an axis (``tl.where(d < ROT, rotated, d)``)."""
        return {(a.get_id(), b.get_id()) for test in self.model.splits for a, b, _ in _mask_bounds(test)}

    def modelled(self, access: Access, *extra, gathered: bool = False) -> tuple[list, list, dict] | None:
        """(path and mask conditions, lane domain, the names they, the address and ``extra`` terms
        mention) of a plain access whose address, mask and path the engine models; None for a block
        pointer, an address gathered through loaded data (unless ``gathered``: then its loaded values
        are names of their own, which only a launch's stated bounds give values), or an unmodelled
        value."""
        ptr, mask = access.ptr, access.mask
        if not isinstance(ptr, Ptr) or (ptr.offset.data and not gathered) or ptr.offset.is_bool:
            return None
        if mask is not None and not (isinstance(mask, Num) and mask.is_bool):
            return None
        cond = [*access.path] + ([mask.term] if mask is not None else [])
        lanes = _lane_domain(ptr.offset, mask)
        names: dict = {}
        for t in (ptr.offset.term, *cond, *lanes, *extra):
            names.update(free_vars(t))
        if any(n.startswith(UNMODELLED) for n in names):
            return None
        return cond, lanes, names

    def judge(self, access: Access) -> Violation | None:
        if self.alone:
            return None
        plain = self.modelled(access, gathered=True)
        if plain is None:
            return None
        cond, _, names = plain
        offset = access.ptr.offset.term
        path_vars, fixed = self._flag_launches(access)
        if access.ptr.offset.data and not self._counted_by_data(access):
            found = self._gathered(access, cond, names)
            if found is not None or (path_vars & self.model.constexprs and not fixed):
                return found
            if not self._reads_loads_only(access):
                return None  # a value the engine does not compute (``prev_multiple_of(N, B)``) is no extent
            # a block the loop moves from a loaded start (``start + i * B + tl.arange(0, B)``) still
            # walks the extent the loop states; where no launch gives the tensor's extent, an index the
            # kernel bounds elsewhere (``offs_d < head_dim``) is bounded by it here too, whatever row
            # the loaded values pick
            extent_known = any(access.ptr.base in f.extents for f in self.judged_launches)
            return next(filter(None, ((None if extent_known else self._stated(access, offset, cond, f, gathered=True))
                                      or self._walked(access, offset, cond, f) for f in fixed or [None])), None)
        mentioned = set(names)
        judged_all = bool(self.launches)
        unanswered = False
        for facts in self.judged_launches:
            verdict = self._launch(access, facts, offset, cond, mentioned, path_vars)
            if isinstance(verdict, Violation):
                return verdict
            if verdict is None or verdict is UNANSWERED:
                judged_all = False
            unanswered |= verdict is UNANSWERED
        if judged_all or access.unchecked:
            # a block pointer's own shape states its extents: leaving it is KL109's question
            return None
        if path_vars & self.model.constexprs and not fixed:
            return None  # a compile-time flag no launch fixes may encode what the author proved
        for facts in fixed or [None]:
            # a launch gives this tensor's extent and the solver could not answer against it: a bound
            # another access's mask states is a weaker stand-in for an extent that is known
            found = (None if unanswered else self._stated(access, offset, cond, facts)) \
                or self._walked(access, offset, cond, facts)
            if found is not None:
                return found
        return None

    def _sentinels(self, name: str, facts) -> list:
        """The values the kernel tests the loaded ``name`` for, each a number in the kernel or one the
        launch passes (``ignore_index=-100``): a parameter the caller leaves free (``eos_id``) may be
        any value, one past the table among them, which is no input the kernel is written for. Each as
        (the value, where it is asked: None for anywhere)."""
        out = []
        for v in self.model.sentinels.get(name, []):
            params = set(free_vars(v))
            if all(p in facts.values and z3.is_int_value(z3.simplify(facts.values[p])) for p in params):
                out.append((v, None))
        # a bound tested, where the launch computes it from a tensor's size (``T * top_k``): the
        # input fixes it, so a value that fails the test is one such an input holds; where the caller
        # passes it (``ids >= vocab_start`` of one rank's rows), a value that fails the test and is
        # still an index (0 or more) is one the kernel is written for: it tests for it
        for v in self.model.tested_bounds.get(name, []):
            params = set(free_vars(v))
            if params and all(p in facts.values and _from_sizes(facts.values[p]) for p in params):
                out.append((v, None))
            elif params and all(p in facts.values for p in params):
                out.append((v, v >= 0))
        return out

    def _counted_by_data(self, access: Access) -> bool:
        """Whether the address is data only through loop counters whose loops stop at a loaded value
        (``for s in range(0, seq_len, B)``): a sum of program ids, lanes, counters and parameters,
        which the questions of a launch ask with those counters at their first iteration."""
        names = free_vars(access.ptr.offset.term)
        return all(n.startswith(("pid!", "lane!", "iter_")) or n in self.model.params for n in names) and any(
            stop is not None and self._loaded_length(stop) for _, k, _, _, stop in access.loops
            if k.decl().name() in names)

    def _reads_loads_only(self, access: Access) -> bool:
        """Whether every value the address and the bounds of its loops read that the engine does not
        compute is one loaded from a tensor."""
        terms_read = [access.ptr.offset.term, *(t for _, _, start, step, stop in access.loops
                                               for t in (start, step, stop) if t is not None)]
        return all(n in self.model.loaded_from for t in terms_read for n in free_vars(t) if n.startswith("data!"))

    def _loaded_length(self, term) -> bool:
        """Whether ``term`` reads loaded values, each loaded from a tensor (a length in memory, not the
        value of an operation the engine does not model)."""
        data = [n for n in free_vars(term) if n.startswith("data!")]
        return bool(data) and all(n in self.model.loaded_from for n in data)

    def _gathered(self, access: Access, cond: list, names: dict) -> Violation | None:
        """An address made of values the kernel loaded (``table + row * D`` of ``row = tl.load(ids +
        t)``), judged under each launch that states bounds of every tensor those values come from
        (``assert int(ids.min()) >= 0 and int(ids.max()) < V``): a loaded element lies between the
        least and the greatest, so a witness is an input the wrapper accepts. Otherwise not judged."""
        loaded = sorted(n for n in names if n.startswith("data!"))
        # only values loaded from a tensor stand for what the address gathers: any other value the
        # engine does not model (a loop counter it cannot bound, an opaque operation) stays unjudged
        unbounded = {k.decl().name() for _, k, _, _, stop in access.loops if stop is None}
        if not loaded or any(n not in self.model.loaded_from for n in loaded) or any(
                n in unbounded or not (n in self.model.params or n.startswith(("pid!", "lane!", "iter_", "data!")))
                for n in names):
            return None
        path_vars, _ = self._flag_launches(access)
        addressed = set(free_vars(access.ptr.offset.term))
        for facts in self.judged_launches:
            stated = _stated_names(facts)
            bounds, bounded, read = [], set(), set()
            for n in loaded:
                least, greatest = self._stated_element_bounds_of(n, facts, stated)
                if greatest is None:
                    expected = self._sentinels(n, facts)
                    if not expected and n not in addressed:
                        # a length the mask reads (``offs < tl.load(n_ptr)``), not an index: a witness
                        # asks the lanes it lets through at their first (:meth:`_launch`)
                        continue
                    if not expected:
                        bounds = None
                        break
                    # nothing stated, but the kernel tests the value for one it expects to read
                    # (``y == ignore_index``): that value is an input the kernel is written for
                    bounds.append(z3.Or([names[n] == v if where is None else z3.And(names[n] == v, where)
                                         for v, where in expected]))
                    read |= set(merged_free([v for v, _ in expected]))
                    continue
                if least is None:
                    # only the greatest stated (``assert int(pos.max()) < cache.shape[2]``): elements
                    # from 0 up to it are an input the check lets through
                    least = int_val(0)
                bounds += [least <= names[n], names[n] <= greatest]
                bounded |= {str(least), str(greatest)}
            if bounds is None:
                continue
            # (the sizes the stated bounds compare the values with, ``V`` of ``ids.max() < V``, are
            # what the values are read against)
            sizes = {m for a in facts.assumptions for m in free_vars(a) if bounded & set(free_vars(a))}
            verdict = self._launch(access, facts, access.ptr.offset.term, [*cond, *bounds], set(names) | read,
                                   path_vars, sizes)
            if isinstance(verdict, Violation):
                return verdict
        return self._past_at_zero(access, cond, names, loaded, path_vars)

    def _past_at_zero(self, access: Access, cond: list, names: dict, loaded: list, path_vars) -> Violation | None:
        """A gather whose address runs past the end of its tensor with every loaded value 0: an index
        of 0 is one any table takes, so an input of zeros is one the kernel is written for
        (``x + offs_m * stride + idx`` with the stride of another, wider tensor passed). Only past
        the end: a loaded value the kernel shifts down (``n - 1``) may be one it never reads as 0;
        and not where a loaded value divides (0 is then no value it can hold). Before the start too
        where the mask or a test on the path reads the loaded value (``ids < vocab_end`` before
        ``ids - vocab_start``): the kernel checks it against a range, so it expects values outside."""
        offset = access.ptr.offset.term
        if any(_divides_by(t, set(loaded)) for t in (offset, *cond)):
            return None
        checked = set(loaded) & set(merged_free(cond))
        asked = [(loaded, EITHER_SIDE if checked else PAST_END)]
        # before the start, with only the address's loaded values at 0 (a first sequence starting at
        # 0): the lengths only the mask and the path read are any (a non-empty first sequence), and
        # an offset below 0 needs none of them large
        in_address = sorted(set(loaded) & set(free_vars(offset)))
        if checked and in_address and len(in_address) < len(loaded):
            asked.append((in_address, BEFORE_START))
        for zero, side in asked:
            for facts in self.judged_launches:
                verdict = self._launch(access, facts, offset, [*cond, *(names[n] == 0 for n in zero)], set(names),
                                       path_vars, side=side)
                if isinstance(verdict, Violation):
                    return verdict
        return self._past_from_first_lane(access, cond, names, path_vars)

    def _past_from_first_lane(self, access: Access, cond: list, names: dict, path_vars) -> Violation | None:
        """A gather whose first lane's address lies inside its tensor while another lane's runs past
        its end (``cos + pos * stride + offs_d`` masked by ``offs_d < D`` over rows of ``D // 2``): the
        loaded values only pick where the block starts, and any start inside the tensor is an input the
        kernel is written for (the last row's, ``pos`` at the last position), so the lanes overrun."""
        offset = access.ptr.offset.term
        lanes = [v for n, v in free_vars(offset).items() if n.startswith("lane!")]
        if not lanes or any(n in self.model.lane_data for n in names):
            return None  # (a block of loaded values is one stand-in for every lane: not where it starts)
        first = z3.substitute(offset, *((v, int_val(0)) for v in lanes))
        for facts in self.judged_launches:
            if access.ptr.base not in facts.extents:
                continue
            extent = facts.extents[access.ptr.base][0]
            if any(not SHAPE_NAME.fullmatch(n) for n in free_vars(extent)):
                continue  # (an element count alone need not be whole rows: a start inside it says little)
            # (the extent's sizes are related by the start's own bound: the start lies inside it)
            verdict = self._launch(access, facts, offset, [*cond, first >= 0, first < extent], set(names),
                                   path_vars, frozenset(free_vars(extent)), side=PAST_END)
            if isinstance(verdict, Violation):
                return verdict
        return None

    def _flag_launches(self, access: Access) -> tuple[frozenset, list]:
        """The names the ``if`` tests around the access read, and the launches that fix every
        constexpr among them (found once per access)."""
        hit = self._flag_memo.get(id(access))
        if hit is not None and hit[0] is access:
            return hit[1]
        # (a value a heuristics decorator computes from the sizes is no flag the caller sets)
        path_vars = set(merged_free(access.branches)) - self.model.defined.keys()
        if isinstance(access.mask, Num):  # a mask chosen by a flag (``offs < K if not EVEN_K else True``)
            for t in terms.choices(access.mask.term):
                names = set(free_vars(t))
                if names and names <= self.model.constexprs:
                    path_vars |= names - self.model.defined.keys()
        found = frozenset(path_vars), [f for f in self.judged_launches if not path_vars & self.model.constexprs - set(f.values)]
        self._flag_memo[id(access)] = (access, found)
        return found[0], list(found[1])

    def judge_block(self, access: Access) -> Violation | None:
        """A block-pointer access whose block can leave the shape its block pointer declares, on a
        dimension ``boundary_check`` leaves out. A block that moves with a program id or a loop is
        asked under each launch (what it fixes, its grid and asserts; a program id no grid bounds
        starts its block inside the shape, as ``cdiv(shape, block)`` programs do), or with no launch
        in the module under the kernel's own facts; a block that does not move only under a launch
        that fixes every size it mentions (a block wider than a shape nothing fixes is no finding)."""
        if self.alone:
            return None
        path_vars, fixed = self._flag_launches(access)
        if path_vars & self.model.constexprs and not fixed:
            return None  # a compile-time flag no launch fixes may encode what the author proved
        for axis in access.unchecked:
            found = self._block_axis(access, axis, fixed if self.launches else [None])
            if found is not None:
                return found
        return None

    def _block_axis(self, access: Access, axis, launches) -> Violation | None:
        index, shape = axis.index.term, axis.shape.term
        if axis.index.data or axis.shape.data:
            return None
        cond = list(access.path)
        lanes = _lane_domain(access.ptr.offset, axis.index, axis.shape)  # every block axis's lanes
        mentioned = set()
        for t in (index, shape, *cond, *lanes):
            mentioned |= set(free_vars(t))
        if any(n.startswith(UNMODELLED) for n in mentioned):
            return None
        pids = {int(n[4:]) for n in free_vars(index) if n.startswith("pid!")}
        moves = bool(pids) or any(mentions(index, k) for _, k, _, _, _ in access.loops)
        sizes = mentioned & set(self.model.params)
        domain = self.base + lanes
        # no dimension of the block pointer's tensor is empty (a size in it may be 0: an offset)
        domain += [other.shape.term >= 1 for other in access.unchecked]
        start = z3.substitute(index, (position(axis.axis), int_val(0)))
        for facts in launches:
            if not moves and (facts is None or any(n not in facts.values for n in sizes)):
                continue
            if facts is None and not self._partial_stated(access, axis):
                continue
            inside = [z3.And(start >= 0, start < shape)] if pids - set(facts.grid if facts else ()) else []
            result, witness = self.solving.solve([*domain, *self._bindings(facts, sizes), *inside, *cond],
                                                 z3.Or(index < 0, index >= shape))
            if result != z3.sat:
                continue
            against = (f"the shape `{self.describe(shape)}` its block pointer declares on dimension {axis.dim}"
                       + (f" ({facts.label})" if facts is not None else " (no launch in this file fixes its sizes)"))
            return self._violation(access, "block", against, witness, index, shape, facts)
        return None

    def judge_arange(self, lane) -> tuple[int, str, dict] | None:
        """(extent, where its values come from, the values) of a ``tl.arange`` whose extent is not a
        power of two for values the kernel is compiled with: literals, a launch's constexprs, an
        autotune config, a parameter's default. These are constants, so the extent is computed
        for each launch and config (no solver); sizes nothing fixes are not asked about."""
        size = lane.extent()
        if z3.is_int_value(size):
            return None if _power_of_two(size.as_long()) else (size.as_long(), "literal", {})
        names = set(free_vars(size))
        if not names <= set(self.model.params) or names - self.model.constexprs or names & self.unread:
            return None  # a runtime value, one the engine does not model, or set by configs not read
        params = self.model.params
        # the constexprs of the ``if`` tests around it: a specialization that prunes the branch
        # (``if DPE > 0:`` compiled with ``DPE=0``) never compiles the arange
        wanted = names | (merged_free(lane.branches).keys() & self.model.constexprs)
        configs = [c for c in self.configs if c is not None] if wanted & self.tuned else [{}]
        for facts in self.launches or [None]:
            # what this launch passes as a constant (a literal, an expression of constants); a size
            # computed from a tensor's shape is whatever the caller makes it
            given = {n: v for n, v in (facts.values.items() if facts is not None else ()) if n in wanted}
            fixed = {n: z3.simplify(v) for n, v in given.items() if not free_vars(v)}
            for n in wanted & set(self.defaults) - set(given):
                fixed[n] = int_val(self.defaults[n])
            for config in configs:
                values = {**fixed, **{n: int_val(v) for n, v in config.items()
                                      if n in wanted and isinstance(v, int) and not isinstance(v, bool)}}
                if not names <= set(values) or _pruned(lane.branches, values, params):
                    continue
                values = {n: v for n, v in values.items() if n in names}
                extent = z3.simplify(z3.substitute(size, *((params[n], v) for n, v in values.items())))
                if z3.is_int_value(extent) and not _power_of_two(extent.as_long()):
                    shown = {n: v.as_long() for n, v in sorted(values.items()) if z3.is_int_value(v)}
                    return extent.as_long(), self._source(shown, facts), shown
        return None

    def _source(self, values: dict, facts) -> str:
        """Where the witness's constexpr values come from, in words."""
        if any(n in self.tuned for n in values):
            for i, config in enumerate(self.configs):
                if config is not None and all(config.get(n) == v for n, v in values.items() if n in config):
                    return f"autotune config {i + 1}"
            return "an autotune config"
        if facts is not None and any(n in facts.values for n in values):
            return facts.label
        return "its default"

    def _partial_stated(self, access: Access, axis) -> bool:
        """Whether the kernel itself says that a block can end past ``axis``'s shape (with no launch
        to give the sizes, nothing else may): a loop that moves the block runs to a bound made of
        that shape (``range(0, T, BT)``, ``range(cdiv(T, BT))``), or another access's mask or
        ``boundary_check`` bounds an index by that very shape."""
        shape = axis.shape.term
        names = set(free_vars(shape))
        for _, k, _, _, stop in access.loops:
            if stop is not None and mentions(axis.index.term, k) and names & set(free_vars(stop)):
                return True
        if reads_program_id(axis.index.term) and _counts_blocks_of(self.model, axis.index.term, shape) and not self.handed_over:
            # (a launcher in the module, unread, may launch only whole blocks: its own test decides)
            return True
        return any(other is not access and _is_zero(bound - shape) for _, bound, other, _ in self.stated)

    def mask_holds_on_axes(self, access: Access, axes: frozenset[int]) -> frozenset[int]:
        """Those of the block ``axes`` (negative) whose conjuncts of the access's mask no lane can
        falsify under any launch of the kernel (or, with none in the module, under the kernel's
        own facts). Names a launch does not fix stay free: the mask must hold whatever they are."""
        mask = access.mask
        if mask is None or not (isinstance(mask, Num) and mask.is_bool):
            return frozenset()
        by_axis: dict[int, list] = {}
        for part in conjuncts([mask.term]):
            names = [n for n in free_vars(part) if n.startswith("lane!")]
            axis = -(int(names[0][5:]) + 1) if len(names) == 1 else None
            if axis in axes:
                by_axis.setdefault(axis, []).append(part)
        held, params = set(), set(self.model.params)
        lanes = _lane_domain(access.ptr.offset if isinstance(access.ptr, Ptr) else mask, mask)
        for axis, parts in by_axis.items():
            goal = z3.And(parts) if len(parts) > 1 else parts[0]
            question = [*lanes, *access.path, z3.Not(goal)]
            # one solver per launch holds the kernel's domain and what the launch fixes
            if all(self.solving.refuted(id(facts), lambda f=facts: self.base + self._bindings(f, params), question)
                   for facts in self.launches or [None]):
                held.add(axis)
        return frozenset(held)

    def _walked(self, access, offset, cond, facts):
        """A loop states the extent of the dimension it walks: ``for s in range(a, n, B)`` moving a
        block of B lanes one block per trip ends at ``n``; ``for k in range(cdiv(K, B))`` at ``K``.
        The block must not run past it where the mask holds."""
        own = [index for index, _, a, _ in self.stated if a is access]
        for var, k, start, step, stop in access.loops:
            if stop is None or not mentions(offset, k):
                continue
            for lane, axis in access.ptr.offset.lanes:
                if any(mentions(i, k) and mentions(i, lane.var(axis)) for i in own):
                    continue  # the mask bounds the walked index itself: the author's bound decides
                found = self._walk(access, offset, cond, facts, var, k, start, step, stop, lane, axis)
                if found is not None:
                    return found
        return None

    def _walk(self, access, offset, cond, facts, var, k, start, step, stop, lane, axis):
        key = (offset.get_id(), k.get_id(), start.get_id(), step.get_id(), stop.get_id(), lane.start.get_id(), axis)
        if key not in self._walks:  # loads and stores through one offset walk alike
            self._walks[key] = self._walked_index(offset, k, start, step, stop, lane, axis)
        if self._walks[key] is None:
            return None
        index, extent, tiled = self._walks[key]
        domain = self._stated_domain(_lane_domain(access.ptr.offset, access.mask), (offset, extent, *cond), facts)
        result, witness = self.solving.solve([*domain, *cond, tiled], index >= extent)
        if result != z3.sat:
            return None
        against = (f"the extent `{self.describe(extent)}` that `for {var or '...'} in range(...)` walks in "
                   f"blocks of `{lane.text}`")
        return self._violation(access, "loop", against, witness, index, extent, facts)

    def _walked_index(self, offset, k, start, step, stop, lane, axis) -> tuple | None:
        """(index, extent, what tiles the extent) of the lane ``axis`` of ``offset`` moved by the loop
        counter ``k``, where the offset moves one block a trip (or counts blocks of a ``cdiv``), else None."""
        p = lane.var(axis)
        at = lambda kv, pv: z3.substitute(offset, (k, int_val(kv)), (p, int_val(pv)))  # noqa: E731
        o0 = at(0, 0)
        ck, cl = at(1, 0) - o0, at(0, 1) - o0
        zero = _is_zero
        if zero(cl) or not (zero(at(2, 0) - o0 - 2 * ck) and zero(at(0, 2) - o0 - 2 * cl)
                            and zero(at(1, 1) - o0 - ck - cl)):
            return None
        position = start + step * k
        if zero(ck - step * cl):
            # one block of lanes per step, where the block is as wide as the step (a tap loop moving
            # a wider block one element a trip, ``x[t - k]`` over lanes t, walks no extent of k's)
            return position + lane.start + p, stop, step == lane.size()
        if zero(step - 1) and stop.get_id() in self.model.ceil_divs:
            blocks, divisor, _ = self.model.ceil_divs[stop.get_id()]
            ratio = _ratio(ck, cl)
            if ratio is None or not zero(ratio - divisor):
                return None  # the pointer moves by something else than the block the count divides by
            return position * ratio + lane.start + p, blocks, _TRUE
        return None

    def _launch(self, access, facts: LaunchFacts, offset, cond, mentioned, path_vars, related=frozenset(),
                side: str = EITHER_SIDE):
        """A Violation, True (proven in bounds), UNANSWERED (asked, and the solver did not answer within
        its budget) or None (this launch does not say enough to ask). ``side``: which end of the tensor
        the address is asked to leave by."""
        before_start = side == BEFORE_START
        base = access.ptr.base
        if base not in facts.extents:
            return None
        extent, extent_text = facts.extents[base]
        needed = (mentioned & (self.scalars | self.model.constexprs)) | (path_vars & self.model.constexprs)
        needed = self._defined_through(needed)
        values = facts.with_grid_choices()
        if any(n not in values for n in needed):
            return None
        for name in mentioned:
            if name.startswith("pid!") and int(name[4:]) not in facts.grid:
                return None
        bindings = [self.model.params[n] == values[n] for n in needed]
        grids = [self.model.pids[a][1] == g for a, g in facts.grid.items() if a in self.model.pids]
        known = set(related)
        for t in [*(values[n] for n in needed), *facts.grid.values()]:
            known |= set(free_vars(t))
        sizes = set(free_vars(extent))
        if not sizes <= known:
            known = _related(known, facts.assumptions)  # ``assert s.numel() == triton.cdiv(n, 128)``
        if sizes and not sizes & known and not before_start:
            return None  # an extent nothing the kernel receives relates to: it says nothing
        # an extent only partly related (``x.numel()`` of an ``x`` whose leading size is passed to
        # nothing): the free sizes, at least 1, can prove the access but not convict it. A size the
        # launch passes the kernel is received, though this access does not read it (``M`` of ``M, N
        # = a.shape`` beside rows counted with ``N``)
        if not sizes <= known:
            received = set(known)
            for v in values.values():
                received |= set(free_vars(v))
            known = _related(received, facts.assumptions)
        guard = facts.extent_guards.get(base)
        # (an extent known only where the wrapper makes the tensor can convict, not prove: the caller
        # may pass a tensor of its own)
        # (an address below 0 is before the tensor whatever its extent)
        proof_only = not sizes <= known and not before_start
        domain = self.base + _lane_domain(access.ptr.offset, access.mask) + bindings + grids + facts.assumptions
        domain += [guard] if guard is not None else []
        for n in mentioned & self.scalars:
            if n in needed and z3.is_int_value(z3.simplify(values[n])):
                continue  # a number the launch passes (``ignore_index=-100``) is what it is
            domain.append(at_least(self.model.params[n], 0))
        domain += self._stated_element_bounds(mentioned, facts)
        if side == PAST_END:
            outside = offset >= extent
        else:
            outside = offset < 0 if before_start else z3.Or(offset < 0, offset >= extent)
        result, witness = self.solving.solve([*domain, *cond], outside)
        if result == z3.unsat:
            return True if guard is None else UNANSWERED
        if proof_only:
            return UNANSWERED
        pinned = _first_of_data_bounded(cond)
        if pinned is not None:
            # a witness may still not rest on how far the data lets the lanes run: asked again with
            # those lanes, and the iterations of the loops around them, at their first (where each
            # bound is a length loaded from a tensor)
            if not all(self._loaded_length(b) for b in pinned[1]):
                return UNANSWERED
            cond = [*cond, *pinned[0]]
            if result == z3.sat:
                result, witness = self.solving.solve([*domain, *cond], outside)
        if result == z3.unknown:
            result, witness = self._at_small_sizes([*domain, *cond], outside, facts, needed)
        if result != z3.sat:
            return UNANSWERED
        kept = None if before_start else self._within_contract(facts, values, cond, sizes, [*domain, *cond], outside)
        if kept is not None:
            result, witness = kept
            if result != z3.sat:
                return UNANSWERED
        return self._violation(access, "launch", f"`{extent_text}` ({facts.label})", witness, offset, extent, facts)

    def _within_contract(self, facts: LaunchFacts, values: dict, cond: list, sizes: set, formulas: list,
                         outside) -> tuple | None:
        """The question asked again with each size of the tensor the kernel sees only inside a stride
        (the rows of a batched ``b``, in ``b.stride(0)``) equal to a size of another tensor the mask
        bounds it by (``k < K`` with ``K`` of ``a``): the two sizes of a contract (a matmul's inner
        dimensions) the wrapper does not state and callers keep. An access that leaves its tensor
        only where they differ is no finding. None where there are no such sizes."""
        plain, strided = set(), set()
        for n, v in values.items():
            (strided if n in facts.stride_args else plain).update(free_vars(v))
        for g in facts.grid.values():
            plain |= set(free_vars(g))
        plain = _related(plain, facts.assumptions)
        hidden = sorted(n for n in (sizes & strided) - plain if SHAPE_NAME.fullmatch(n))
        if not hidden:
            return None
        own = {m.group(1) for m in map(SHAPE_NAME.fullmatch, sizes) if m is not None}
        bounding = set()
        for n in merged_free(cond):
            if n in values and n not in facts.stride_args:
                bounding |= set(free_vars(values[n]))
        others = sorted(n for n in bounding if (m := SHAPE_NAME.fullmatch(n)) is not None and m.group(1) not in own)
        if not others:
            return None
        equal = [z3.Or([int_var(h) == int_var(o) for o in others]) for h in hidden]
        return self.solving.solve([*formulas, *equal], outside)

    def _stated_element_bounds(self, mentioned, facts: LaunchFacts) -> list:
        """Each value loaded from a tensor whose least or greatest element the launch's wrapper
        states (``assert int(lens.max()) <= pages * page``) lies within what it states: a witness
        is an input the wrapper accepts."""
        loaded = [n for n in sorted(mentioned) if n.startswith("data!") and self._loaded_tensor(n, facts)]
        if not loaded:
            return []  # (most addresses read no loaded value: the wrapper's facts need not be read)
        stated = _stated_names(facts)
        out = []
        for n in loaded:
            least, greatest = self._stated_element_bounds_of(n, facts, stated)
            v = int_var(n)
            out += [least <= v] if least is not None else []
            out += [v <= greatest] if greatest is not None else []
        return out

    def _loaded_tensor(self, name: str, facts: LaunchFacts) -> str | None:
        """The wrapper's name of the tensor the loaded value ``name`` comes from, where the launch passes it whole."""
        return facts.tensors.get(self.model.loaded_from.get(name, ""))

    def _stated_element_bounds_of(self, name: str, facts: LaunchFacts, stated: set[str]) -> tuple:
        """(least, greatest) element of the tensor the loaded value ``name`` comes from, each where
        the launch's wrapper states it (``stated``: :func:`_stated_names`), else None."""
        tensor = self._loaded_tensor(name, facts)
        if tensor is None:
            return None, None
        least, greatest = value_bounds(tensor)
        return (least if str(least) in stated else None), (greatest if str(greatest) in stated else None)

    def _at_small_sizes(self, formulas: list, goal, facts: LaunchFacts, needed: set) -> tuple:
        """A question the solver left unknown, asked again with every size the wrapper is given at 1,
        then at 2: the products and quotients of sizes that made it nonlinear become numbers (``pid //
        (OH * OW)`` of ``OH`` computed from the input's height, a kernel size and a padding), and a
        witness found so is an input like any other."""
        roots: set = set()
        for t in [*(facts.values[n] for n in needed if n in facts.values), *facts.grid.values()]:
            roots |= set(free_vars(t))
        constrained: set = set()  # sizes a condition of their own holds (a power of two, a cap)
        for a in facts.assumptions:
            names = list(free_vars(a))
            if len(names) == 1 and not any(a.eq(c) for c in size_caps(int_var(names[0]))):
                constrained.add(names[0])
        pinned = sorted(n for n in roots - constrained if n in facts.names)
        if not pinned:
            return z3.unknown, None
        for value in (1, 2):
            result, witness = self.solving.solve(formulas + [int_var(n) == value for n in pinned], goal,
                                                 rlimit=SMALL_FIRST_RLIMIT)
            if result == z3.sat:
                return result, witness
        return z3.unknown, None

    def _defined_through(self, names: set) -> set:
        """``names`` with each value a heuristics decorator defines replaced by what its relation reads
        (the relation is in the domain: the launch fixes the value by fixing those)."""
        defined = self.model.defined
        out = {n for n in names if n not in defined}
        for n in names & defined.keys():
            out |= defined[n] - defined.keys()
        return out

    def _stated_domain(self, lanes: list, terms: tuple, facts) -> list:
        """The domain of a question against a bound the kernel states: the kernel's, the lanes', every
        runtime size the terms or the lanes mention at least 1, and what the launch fixes of them (the
        block sizes the lanes range over too: a witness keeps the launch's)."""
        domain = self.base + lanes
        mentioned = set()
        for t in (*terms, *lanes):
            mentioned |= set(free_vars(t))
        for n in mentioned & self.scalars:
            domain.append(at_least(self.model.params[n], 1))
        return domain + self._grid_ties() + self._bindings(facts, mentioned & set(self.model.params))

    def _grid_ties(self) -> list:
        """Each program id below the parameter every launch passes the name of its grid axis to
        (``pid_k < SPLIT_K`` of a grid ``(tiles, split_k)`` beside ``SPLIT_K=split_k``), where the
        value itself cannot be read: true of every run, so a question asked without the launch's
        values keeps it."""
        if not self.launches:
            return []
        out = []
        for axis, (pid, _) in self.model.pids.items():
            tied = {f.grid_params.get(axis) for f in self.launches}
            if len(tied) == 1 and None not in tied:
                out.append(pid < self.model.params[tied.pop()])
        return out

    def _bindings(self, facts: LaunchFacts | None, names) -> list:
        """What a launch fixes of the named parameters, and its grid; a constexpr the caller
        chooses (the wrapper passes on its own parameter) is that parameter wherever the launch's
        other values, grid or assumptions are made of it too (``MASKED=not (n % block == 0)``
        beside ``BLOCK=block``): the choice stays free, its relations to the rest hold."""
        if facts is None:
            return []
        names = set(names)
        names |= self._defined_through(names & self.model.defined.keys())  # what a defined flag reads
        out = [self.model.params[n] == facts.values[n] for n in sorted(names) if n in facts.values]
        out += [self.model.pids[a][1] == g for a, g in facts.grid.items() if a in self.model.pids]
        chosen = {n: v for n, v in facts.chosen.items() if n in names}
        if not chosen:
            return out + facts.assumptions
        # a wrapper's parameter is capped like a size (at least 1), which a flag (a constexpr an
        # ``if`` tests) is not: those caps neither relate the choice to the rest of the launch nor
        # hold once a flag is bound to it
        caps = {n: {c.get_id() for c in size_caps(v)} for n, v in chosen.items()}
        capped = set().union(*caps.values())
        out += [a for a in facts.assumptions if a.get_id() not in capped]
        used: set = set()
        for t in out:
            used |= set(free_vars(t))
        related = {n: v for n, v in chosen.items() if v.decl().name() in used}
        dropped = set().union(*(caps[n] for n in related.keys() & self._flags()))
        out += [a for a in facts.assumptions if a.get_id() in capped - dropped]
        return out + [self.model.params[n] == v for n, v in related.items()]

    def _flags(self) -> set[str]:
        """The constexprs an ``if`` around an access tests."""
        if self._flag_names is None:
            self._flag_names = set()
            for access in self.model.accesses:
                self._flag_names |= self._flag_launches(access)[0]
            self._flag_names &= self.model.constexprs
        return self._flag_names

    def block_sizes(self) -> set[str]:
        """The constexprs a ``tl.arange`` of the kernel spans."""
        if self._blocks is None:
            self._blocks = set()
            for lane in self.model.lanes:
                self._blocks |= set(free_vars(lane.start)) | set(free_vars(lane.end))
            self._blocks &= self.model.constexprs
        return self._blocks

    def _stated(self, access, offset, cond, facts, gathered: bool = False):
        parts = _components(offset)
        lengths = _lengths(access.ptr.offset, offset)
        own = set()
        for index, _, a, _ in self.stated:
            if a is access:
                own |= _components(index)
        scope = set(free_vars(offset))
        for t in cond:
            scope |= set(free_vars(t))
        # an address that gathers rows (``cache + slot * stride + d``) takes a bound only from another
        # access's mask, on lanes its own mask does not test in any way (``d == 1`` beside ``d < 1``
        # is a split, not an overrun), and one no loaded value moves
        tested = {n for n in free_vars(access.mask.term) if n.startswith("lane!")} \
            if gathered and isinstance(access.mask, Num) else set()
        for index, bound, other, used in self.stated:
            if not used <= lengths:
                continue
            if gathered:
                lanes = {n for n in free_vars(index) if n.startswith("lane!")}
                if other.checked or (lanes and lanes <= tested) or any(
                        n.startswith("data!") for n in free_vars(bound)):
                    continue
            # the index, or the index shifted by a number (``o_t + 1``: the next row), as a part of
            # the address: what this access's own mask bounds is its own call
            reached = [index] if index.get_id() in parts and index.get_id() not in own else []
            reached += [u for u in terms.shifted(offset, index) if u.get_id() not in own]
            if not reached:
                continue
            if (index.get_id(), bound.get_id()) in self.splits:
                continue  # the kernel gives the lanes past it values of their own: they are live
            if any("!" in n and not n.startswith(("lane!", "pid!", "grid!")) and n not in scope
                   for n in free_vars(bound)):
                continue  # the bound moves with a loop (or value) this access does not see
            if reads_program_id(bound):
                continue  # a bound that differs from one program to the next is no tensor's extent
            domain = self._stated_domain(_lane_domain(access.ptr.offset, access.mask, other.mask),
                                         (offset, index, bound, *cond), facts)
            for term in reached:
                result, witness = self.solving.solve([*domain, *cond], term >= bound)
                if result != z3.sat:
                    continue
                where = "this access's mask" if other is access else f"the mask {self.describe(other)}"
                against = (f"the bound {where} states for that index (no launch in this file gives this "
                           f"tensor's extent{_under(facts)})")
                return self._violation(access, "stated", against, witness, term, bound, facts)
        return None

    def _violation(self, access, how, against, witness, address, bound, facts) -> Violation:
        values = {}
        names = dict(self.model.symbols.described)
        if facts is not None:
            names.update(facts.names)
        shown = []
        for decl in witness.decls():
            name = decl.name()
            value = witness[decl]
            if not z3.is_int_value(value):
                continue
            n = value.as_long()
            values[name] = n
        # what the reader needs: the sizes the address, mask, path and bound depend on
        relevant = set()
        for t in (address, bound, access.ptr.offset.term, *access.path, *_lane_domain(access.ptr.offset),
                  *([access.mask.term] if isinstance(access.mask, Num) else [])):
            relevant |= set(free_vars(t))
        if facts is not None:
            for n in list(relevant):
                if n in facts.values:
                    relevant |= set(free_vars(facts.values[n]))
            for a, g in facts.grid.items():
                relevant |= set(free_vars(g))
            # a value loaded into the address, with the bounds of its tensor the wrapper states
            for n in [n for n in relevant if n.startswith("data!")]:
                tensor = facts.tensors.get(self.model.loaded_from.get(n, ""))
                relevant |= {str(v) for v in value_bounds(tensor)} if tensor is not None else set()
                relevant |= set(merged_free(self.model.sentinels.get(n, [])))
        # the side of each host test the reader cannot follow (``64 if is_hip() else 128``) the run takes
        absent = set()  # optional arguments the run leaves out: their stand-ins are read nowhere
        for name in sorted(n for n in relevant if n.startswith("`")):
            v = witness.eval(z3.Bool(name), model_completion=False)
            if z3.is_true(v) or z3.is_false(v):
                shown.append((name, "true" if z3.is_true(v) else "false"))
            if z3.is_false(v) and name.endswith(" is not None`"):
                absent.add(name[1:-len(" is not None`")])
        for name in sorted(self.model.params):
            if name in self.model.pointers or name not in relevant:
                continue
            v = witness.eval(self.model.params[name], model_completion=False)
            if z3.is_int_value(v):
                shown.append((name, v.as_long()))
        if facts is not None:
            for name, text in sorted(facts.names.items()):
                if name in values and name in relevant and name not in absent:
                    shown.append((text, values[name]))
        for axis, (pid, _) in sorted(self.model.pids.items()):
            if pid.decl().name() not in relevant:
                continue
            v = witness.eval(pid, model_completion=False)
            if z3.is_int_value(v):
                shown.append((f"program_id({axis})", v.as_long()))
        for name in sorted(n for n in relevant if n in self.model.loaded_from):
            v = witness.eval(z3.Int(name), model_completion=False)
            if z3.is_int_value(v):
                shown.append((f"the value loaded through `{self.model.loaded_from[name]}`", v.as_long()))
        for var, k, start, step, _ in access.loops:
            kv = witness.eval(k, model_completion=False)
            at = witness.eval(start + step * k, model_completion=True)
            if z3.is_int_value(kv) and var and z3.is_int_value(at):
                shown.append((var, at.as_long()))
        lanes = set(access.ptr.offset.lanes)
        for lane, axis in sorted(lanes, key=lambda la: (-la[1], la[0].ident)):
            v = witness.eval(lane.start + lane.var(axis), model_completion=True)
            if z3.is_int_value(v):
                shown.append((f"`{lane.text}`", v.as_long()))
        addr = witness.eval(address, model_completion=True)
        lim = witness.eval(bound, model_completion=True)
        a = addr.as_long() if z3.is_int_value(addr) else None
        b = lim.as_long() if z3.is_int_value(lim) else None
        shown = list(dict.fromkeys(shown))
        pairs = tuple(shown)
        shown = [f"{what}={shown_value(n)}" for what, n in pairs]
        return Violation(access, how, against, values, ", ".join(shown), a, b, pairs)
