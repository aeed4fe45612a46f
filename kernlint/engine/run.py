"""The engine's entry for source rules: evaluate a kernel once, judge every access once."""

from __future__ import annotations

import re
from functools import partial
import threading

import libcst as cst
import z3
from dataclasses import dataclass

from kernlint.engine.coverage import shortfalls
from kernlint.engine.evaluate import Access, evaluate
from kernlint.engine.symbols import Num, Ptr
from kernlint.engine.terms import free_vars
from kernlint.engine.launch_terms import config_assumptions, launch_facts
from kernlint.engine.query import Prover, Violation
from kernlint.facts import WHOLE
from kernlint.engine.strides import foreign_strides as _foreign_strides
from kernlint.source.compiles import cannot_compile, unreached
from kernlint.source.names import argument, source_text


@dataclass
class BoundsReport:
    accesses: list[Access]
    violations: list[Violation]


#: failures of the engine on code it does not model (a z3 sort clash, an odd AST): unknown, never a crash
DEGRADE = (z3.Z3Exception, TypeError, ValueError, AttributeError, IndexError, KeyError, ZeroDivisionError,
            RecursionError)
#: z3's main context and the engine's term caches are process-wide and not thread-safe (two
#: threads building terms at once crash the interpreter): a batch judging candidates in threads,
#: or a language server, runs one module's engine at a time
_ENGINE_LOCK = threading.RLock()
_VAR = re.compile(r"lane!(\d+)|pid!(\d+)|grid!(\d+)|(\w+)!\d+")


def _describer(model, state):
    code = partial(source_text, state.info.module)
    def describe(term) -> str:
        if isinstance(term, Access):
            text = (" ".join(code(term.mask_node).split()) if term.mask_node is not None
                    else f"boundary_check={term.checked}" if term.checked else "?")
            text = text if len(text) <= 80 else text[:77] + "..."
            line = state.kernel.locator.span(term.node, state.anchor(term.node)).line
            return f"`{text}` on line {line}" if term.helper is None else f"`{text}` in `{term.helper}`"
        def name(m):
            if m.group(1):
                return f"lane[axis -{int(m.group(1)) + 1}]"
            if m.group(2):
                return f"program_id({m.group(2)})"
            if m.group(3):
                return f"num_programs({m.group(3)})"
            if m.group(4) == "data" and m.group(0) in model.loaded_from:
                return f"tl.load({model.loaded_from[m.group(0)]}...)"
            return m.group(4)
        return _VAR.sub(name, str(term))

    return describe


def bounds_report(state) -> BoundsReport:
    """Every access of the kernel and those that can leave their tensor (computed once per state)."""
    with _ENGINE_LOCK:
        return _bounds_report(state)


def _engine(state):
    """The kernel's evaluated model and its prover (built once per state), or None where the
    engine does not model the kernel."""
    if "_engine" not in state.__dict__:
        try:
            model = evaluate(state.info, state.kernel)
            prover = Prover(model, launch_facts(state, model), _describer(model, state),
                            config_assumptions(state, model), state.kernel.kernel,
                            _handed_over(state), state.name in state.info.inlined_kernels)
            state._runtime_aranges = _runtime_aranges(model, prover)
            state._scalar_masked = _scalar_pointer_masks(model)
            # a kernel that cannot compile runs nothing, nor one launched only after a launch that
            # fails: its accesses and races are not judged (what it cannot compile still is)
            blocked = (state._runtime_aranges or state._scalar_masked
                       or cannot_compile(state.info, state.kernel.node) or unreached(state.info, state.kernel.node))
            state._engine = None if blocked else (model, prover)
        except DEGRADE:  # a construct the engine does not model: nothing is judged, nothing raises
            state._engine = None
    return state._engine


def _runtime_aranges(model, prover) -> list[tuple]:
    """(lane, names) of each ``tl.arange`` whose start or end reads a parameter that is not a
    ``tl.constexpr`` (Triton requires constants there); none in a helper judged only where it is
    called (its parameters are what each call passes)."""
    if prover.alone:
        return []
    out = []
    for lane in model.lanes:
        names = sorted(n for n in {**free_vars(lane.start), **free_vars(lane.end)} if n in prover.scalars)
        if not names or lane.node is None:
            continue
        if any(set(free_vars(test)) and set(free_vars(test)) <= model.constexprs for test in lane.branches):
            continue  # under a test of compile-time values only: a specialization may leave it out
        out.append((lane, names))
    return out


def _scalar_pointer_masks(model) -> list[Access]:
    """The plain loads and stores through one element's pointer with a block for a mask: Triton
    rejects them (``Mask argument cannot be block type if pointer argument is not a block``)."""
    return [a for a in model.accesses if a.kind in ("load", "store") and isinstance(a.ptr, Ptr)
            and a.ptr.offset.rank == 0 and isinstance(a.mask, Num) and a.mask.rank > 0]


def scalar_pointer_masks(state) -> list[Access]:
    """:func:`_scalar_pointer_masks` of the kernel (KL113's)."""
    with _ENGINE_LOCK:
        _engine(state)
        return state.__dict__.get("_scalar_masked", [])


def runtime_aranges(state) -> list[tuple]:
    """:func:`_runtime_aranges` of the kernel (KL112's)."""
    with _ENGINE_LOCK:
        _engine(state)
        return state.__dict__.get("_runtime_aranges", [])


def _handed_over(state) -> bool:
    """Whether the module passes the kernel to a function (``_launch(kernel, ...)``, ``fn=kernel``)."""
    name = re.escape(state.name)
    return re.search(rf"[(,=]\s*{name}\s*[,)]", state.info.source) is not None


def release(state) -> None:
    """Drop the kernel's model and solver context once its rules have run (a context holds
    megabytes, and a file's states live until the file is done)."""
    state.__dict__.pop("_engine", None)
    state.__dict__.pop("_runtime_aranges", None)
    state.__dict__.pop("_scalar_masked", None)


def unpadded_axes(state, load: cst.Call, axes: frozenset[int]) -> frozenset[int]:
    """Those of the block ``axes`` (negative) on which the mask of the ``tl.load`` call ``load``
    holds in every lane of every run the kernel's launches allow: its ``other`` never reaches them
    (a loop that visits only whole blocks below the extent, ``range(0, i_c * BT, BS)``)."""
    with _ENGINE_LOCK:
        engine = _engine(state)
        if engine is None:
            return frozenset()
        model, prover = engine
        memo = state.__dict__.setdefault("_unpadded", {})
        key = (id(load), axes)
        if key not in memo:
            found = None  # a helper inlined at several calls: the axes every call proves
            for access in model.accesses:
                if access.node is load and access.kind == "load":
                    try:
                        held = prover.mask_holds_on_axes(access, axes)
                    except DEGRADE:
                        held = frozenset()
                    found = held if found is None else found & held
            memo[key] = found or frozenset()
        return memo[key]


def block_violations(state) -> list[Violation]:
    """The block-pointer accesses whose block can leave the shape it declares (computed once per
    state). KL109 reports these; KL101/KL102 report a block-pointer access only when its block stays
    inside its declared shape and that shape lies past the tensor."""
    return _judged(state, "_block_violations", lambda a: bool(a.unchecked), lambda prover, a: prover.judge_block(a))


def races(state, single_axes: frozenset[int] = frozenset()) -> list:
    """The plain stores two programs can both write with different values (computed once per state;
    ``single_axes``: program-id axes every launch leaves at one program)."""
    from kernlint.engine.races import judge_race

    return _judged(state, "_races", lambda a: a.kind == "store", lambda prover, a: judge_race(prover, a, single_axes))


def read_write_races(state, single_axes: frozenset[int] = frozenset()) -> list:
    """The plain loads that can read an element another program of the launch stores to (computed
    once per state; none in a kernel with atomics, whose ordering idioms are not modelled)."""
    from kernlint.engine.races import judge_read_write

    with _ENGINE_LOCK:
        engine = _engine(state)
        if engine is None or any(a.kind == "atomic" for a in engine[0].accesses):
            return []  # tickets, locks and semaphores order what they guard
    aliases = _aliases(state)

    def judge(prover, load):
        if argument(load.node, "volatile") is not None:
            return None  # a spin-wait reads what another program writes on purpose
        for store in prover.model.accesses:
            if store.kind == "store":
                found = judge_read_write(prover, load, store, single_axes, aliases)
                if found is not None:
                    found.store = store
                    return found
        return None

    return _judged(state, "_read_write_races", lambda a: a.kind == "load", judge)


def int32_products(state) -> dict:
    """The kernel's int32 products (:class:`~kernlint.engine.symbols.Narrow`) and the accesses whose
    address each feeds; empty where the engine does not model the kernel."""
    from kernlint.engine.overflow import products_fed

    with _ENGINE_LOCK:
        engine = _engine(state)
        return products_fed(engine[0]) if engine is not None else {}


def first_int32_overflow(state, asked: list[tuple]):
    """The first of ``asked`` ((product, accesses) pairs) that a run the launches allow pushes past
    2**31 - 1 (:class:`~kernlint.engine.overflow.Overflow`), or None."""
    from kernlint.engine.overflow import first_overflow

    with _ENGINE_LOCK:
        engine = _engine(state)
        try:
            return first_overflow(engine[1], asked) if engine is not None and asked else None
        except DEGRADE:
            return None


def called_names(state) -> set | None:
    """The last names of the functions and methods the kernel (with its inlined helpers) calls
    (``sum`` for ``tl.sum`` and ``x.sum``); None where the engine does not model the kernel whole."""
    model = _whole_model(state)
    return model.called if model is not None else None


def masks_a_load(state) -> bool | None:
    """Whether a ``tl.load`` of the kernel (or of a helper it inlines) is given a mask (only such a
    load pads lanes); None where the engine does not model the kernel whole."""
    model = _whole_model(state)
    return any(a.kind == "load" and a.mask_node is not None for a in model.accesses) if model is not None else None


def _whole_model(state):
    """The kernel's evaluated model, or None where the engine does not model it whole."""
    with _ENGINE_LOCK:
        engine = _engine(state)
        return None if engine is None or engine[0].partial else engine[0]


def data_branches(state) -> list:
    """The ``if``/``while`` tests and ``for`` ranges of the kernel computed from loaded values
    (:class:`~kernlint.engine.evaluate.DataBranch`), in source order."""
    with _ENGINE_LOCK:
        engine = _engine(state)
        return engine[0].data_branches if engine is not None else []


def late_casts(state) -> set:
    """The int32 products cast to a wider type only after they are computed."""
    with _ENGINE_LOCK:
        engine = _engine(state)
        return engine[0].late_casts if engine is not None else set()


def exclusive_atomics(state) -> list[Access]:
    """The atomics every element of whose footprint belongs to one program (computed once per
    state; KL110's)."""
    from kernlint.engine.races import judge_exclusive

    def judge(prover, access):
        return access if judge_exclusive(prover, access) else None

    return _judged(state, "_exclusive_atomics", lambda a: a.kind == "atomic", judge)


def scatter_stores(state) -> list[Access]:
    """The plain stores whose address is computed from a block of values loaded from memory (an
    index per lane, as a scatter or histogram reads them): where two programs or lanes load the same
    index they write one element. So is a scalar each program loads that alone places what it
    updates (``out[j * D + d] += v`` of a ``j`` loaded once from a table read at that one place: an
    index add, whose duplicate indices lose updates); a segment's start is not one (read beside its
    end, or added to a program id or a loop counter that walks the segment), nor a slot claimed with
    an atomic."""
    with _ENGINE_LOCK:
        engine = _engine(state)
        if engine is None:
            return []
        model = engine[0]
        loads = [a for a in model.accesses if a.kind == "load" and isinstance(a.ptr, Ptr)]
        out = []
        for a in model.accesses:
            if a.kind != "store" or not isinstance(a.ptr, Ptr) or not a.ptr.offset.data:
                continue
            names = set(free_vars(a.ptr.offset.term))
            # a slot claimed with an atomic (``base + tl.atomic_add(cursor, 1)``) is each lane's own
            if any(n.startswith("ticket!") for n in names):
                continue
            if names & model.lane_data or _index_add(model, loads, a, names):
                out.append(a)
        return out


def gathered_reads(state) -> list[tuple]:
    """(load, store, the host name a launch passes as both pointers or None) of each plain load whose
    address is computed from values loaded from memory in place of a program id, from a tensor a plain
    store of the kernel writes at places that program id moves (the same pointer, or one a launch
    binds to the same tensor): a program reads at a loaded index what another program may be writing
    (an in-place gather, ``x[perm[i]]`` read while row ``i`` is written). None in a kernel with atomics."""
    with _ENGINE_LOCK:
        engine = _engine(state)
        if engine is None:
            return []
        model = engine[0]
        if any(a.kind == "atomic" for a in model.accesses):
            return []
        aliases = _aliases(state)
        # (each plain store at places program ids pick, with those ids)
        stores = [(a, {n for n in free_vars(a.ptr.offset.term) if n.startswith("pid!")}) for a in model.accesses
                  if a.kind == "store" and isinstance(a.ptr, Ptr) and not a.ptr.offset.data]
        stores = [(a, pids) for a, pids in stores if pids]
        out = []
        for load in model.accesses:
            if load.kind != "load" or not isinstance(load.ptr, Ptr) or not load.ptr.offset.data:
                continue
            if argument(load.node, "volatile") is not None:
                continue
            names = set(free_vars(load.ptr.offset.term))
            tables = {model.loaded_from.get(n) for n in names if n.startswith("data!")}
            if not tables or None in tables:
                continue  # (a value the engine does not model, not one loaded from a tensor)
            for store, pids in stores:
                shared = aliases.get(frozenset((load.ptr.base, store.ptr.base)), {})
                # the loaded index stands where the store has a program id (``x[perm[i]]`` beside
                # ``x[i]``): an index beside the program's own id (``x[row, y[row]]``) stays in its place
                if not pids - names:
                    continue
                if store.ptr.base == load.ptr.base or shared:
                    out.append((load, store, next(iter(shared.values()), None)))
                    break
        return out


def _index_add(model, loads: list[Access], store: Access, names: set[str]) -> bool:
    """Whether ``store`` writes back what the program loaded (``loads``: its plain loads) at the same
    address, at a place a scalar it loaded decides (a program id or loop counter beside it moves along
    another axis, not along the one the scalar indexes), from tables each read at one place only."""
    from kernlint.engine.races import walks_the_loaded_index

    if any(n.startswith(("pid!", "iter_")) for n in names) and walks_the_loaded_index(store.ptr.offset.term):
        return False
    if not any(a.ptr.base == store.ptr.base and a.ptr.offset.term.eq(store.ptr.offset.term) for a in loads):
        return False
    tables = {model.loaded_from.get(n) for n in names if n.startswith("data!")}
    if not tables or None in tables:
        return False
    for table in tables:
        places = {a.ptr.offset.term.get_id() for a in loads if a.ptr.base == table}
        if len(places) != 1:
            return False
    return True


#: methods whose result is the storage of the tensor they are called on, all of it, in its order


def _aliases(state) -> dict:
    """``{frozenset((a, b)): {launch offset: host name}}`` for the pointer parameters ``a`` and ``b``
    that a launch of the kernel binds to one host tensor (the same plain name); found once per state."""
    if "_aliases" not in state.__dict__:
        state.__dict__["_aliases"] = _bound_twice(state)
    return state.__dict__["_aliases"]


def _bound_twice(state) -> dict:
    out: dict = {}
    for launch in state.info.facts.launches_of(state.kernel.kernel):
        by_text: dict = {}
        for param, arg in launch.args.items():
            text = arg.text.strip()
            if text.isidentifier() and arg.tensor is not None:
                # a name bound to another tensor's name (``out = x``) is that tensor, and so is a view
                # of all of it or its ``.contiguous()`` (the tensor itself where it is contiguous)
                same = arg.tensor.root if arg.tensor.root and set(arg.tensor.derived) <= WHOLE else text
                by_text.setdefault(same, []).append(param)
        for text, params in by_text.items():
            for i, a in enumerate(params):
                for b in params[i + 1:]:
                    out.setdefault(frozenset((a, b)), {})[launch.offset] = text
    return out


def _judged(state, key: str, wanted, judge) -> list:
    """``judge(prover, access)`` of every access ``wanted`` selects, once per access site (a helper
    inlined twice is judged once): what is not None, computed once per state."""
    with _ENGINE_LOCK:
        if key not in state.__dict__:
            engine = _engine(state)
            found, seen = [], set()
            for access in engine[0].accesses if engine is not None else ():
                site = (id(access.node), id(access.site))
                if not wanted(access) or site in seen:
                    continue
                try:
                    v = judge(engine[1], access)
                except DEGRADE:
                    v = None
                if v is not None:
                    seen.add(site)
                    found.append(v)
            state.__dict__[key] = found
        return state.__dict__[key]


def arange_extents(state) -> list[tuple]:
    """(arange call, extent, where its values come from, witness) of each ``tl.arange`` whose
    extent is not a power of two for values the kernel is compiled with."""
    with _ENGINE_LOCK:
        engine = _engine(state)
        found, seen = [], set()
        for lane in engine[0].lanes if engine is not None else ():
            if lane.node is None or id(lane.node) in seen:
                continue
            seen.add(id(lane.node))
            try:
                judged = engine[1].judge_arange(lane)
            except DEGRADE:
                judged = None
            if judged is not None:
                found.append((lane, *judged))
        return found


def grid_shortfalls(state) -> list:
    """The launches whose grid does not reach the last element a mask of the kernel lets through
    (:class:`~kernlint.engine.coverage.Shortfall` each)."""
    with _ENGINE_LOCK:
        engine = _engine(state)
        if engine is None or not engine[1].launches:
            return []
        # a mask that lets an access leave its tensor does not bound the data (KL101/KL102's)
        overruns = {id(v.access) for v in _bounds_report(state).violations}
        try:
            return shortfalls(engine[1], overruns)
        except DEGRADE:
            return []


def foreign_strides(state) -> list:
    """The strides of one tensor a launch passes where the kernel walks another
    (:class:`~kernlint.engine.strides.ForeignStride` each, KL114's)."""
    with _ENGINE_LOCK:
        engine = _engine(state)
        if engine is None or not engine[1].launches:
            return []
        reported = {id(v.access) for v in _bounds_report(state).violations}
        try:
            return _foreign_strides(engine[1], engine[0], reported)
        except DEGRADE:
            return []


def _bounds_report(state) -> BoundsReport:
    cached = getattr(state, "_bounds_report", None)
    if cached is not None:
        return cached
    engine = _engine(state)
    if engine is None:
        state._bounds_report = BoundsReport([], [])
        return state._bounds_report
    model, prover = engine
    violations = []
    seen = set()
    for access in model.accesses:
        key = (id(access.node), id(access.site))
        if key in seen:
            continue
        try:
            found = prover.judge(access)
        except DEGRADE:
            found = None
        if found is not None:
            seen.add(key)
            violations.append(found)
    report = BoundsReport(model.accesses, violations)
    state._bounds_report = report
    return report
