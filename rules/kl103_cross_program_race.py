import libcst as cst

from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule
from kernlint.engine.findings import access_line, named, reported_once


def _asserted_one(asserts) -> set[str]:
    """Names the wrapper asserts equal to 1 (``assert n == 1``, ``assert 1 == n``)."""
    out = set()
    for test in asserts:
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Equal)):
            continue
        left, right = test.left, test.comparisons[0].comparator
        for name, one in ((left, right), (right, left)):
            if isinstance(name, cst.Name) and isinstance(one, cst.Integer) and one.value == "1":
                out.add(name.value)
    return out


def _one(element) -> bool:
    """A grid element the host code fixes at 1 (a parameter's default is not fixed: a caller may
    pass another value)."""
    return element.value is not None and element.value.value == 1 and element.value.how != "default"


def _single_program_axes(state) -> set[int]:
    """Grid axes every launch in the module leaves at one program (absent, a value the host code
    resolves to 1, or a name the wrapper asserts is 1)."""
    launches = state.info.facts.launches_of(state.kernel.kernel)
    if not launches:
        return set()
    common = None
    for launch in launches:
        if launch.grid is None:
            return set()
        asserted = _asserted_one(launch.scope.asserts if launch.scope is not None else ())
        axes = {i for i in range(3) if i >= len(launch.grid) or _one(launch.grid[i]) or launch.grid[i].text.strip() in asserted}
        common = axes if common is None else common & axes
    return common or set()


class CrossProgramRace(SourceRule):
    code = "KL103"
    name = "cross-program-race"
    category = "race"
    level = Level.ERROR
    confirm = Confirmation(
        tool="interpreter",
        check="write-overlap",
        threshold="> 1 program writes the same address non-atomically",
        fallback="differential",
        description="racecheck covers shared memory only, so a race between programs on global memory is "
        "invisible to every sanitizer: the interpreter records which program wrote each address, and a "
        "differential GPU run (two launch orders) must agree",
    )
    summary = "A non-atomic `tl.store` that two programs can both write, at one element, with different values."
    docs = """
## What it does
Asks, for every plain `tl.store`, whether two distinct programs of a launch can both reach it (mask
and path hold for both) and write the same element with values that may differ. The two programs
are the store's address, mask, path and value twice, with their own program ids, lanes, loop
iterations and loaded data; sizes, strides and the grid are the launch's (an axis whose number of
programs the engine cannot read, `max_seqlen.item()`, is asked with two programs on it: enough to
meet through it, too few to run past the tensor's axis into the next one's elements, which would be
an out-of-bounds write, not a race). A finding names the two
programs (and the element, where it is small enough to read). Where no two programs meet at one
store, it asks the same of the store and each later write through the same pointer: another store
(the last program writes a tail that program 0 also clears) or an atomic (program 0 resets a
counter that the others add to: an atomic does not order another program's plain store); the
finding names the other write's line.

It asks the same of every plain `tl.load` and each store through the same pointer (or through
another pointer parameter that a launch binds to the same tensor, `k[grid](x, x, n)`, or to names
bound to it: `out = x2` of `x2 = x.view(n, d) if x.is_contiguous() else x.reshape(n, d)`): can one
program read an element another program of the launch writes? What it reads then depends on which
program runs first (an in-place stencil, a recurrence split over programs). Kernels with atomics
are left out of this question: their tickets, locks and semaphores order what they guard, and that
ordering is not modelled; so are `volatile` loads (spin-waits).

What counts as a race:
- a race must hold for every layout of the tensor: the runtime strides are tried in several
  orders, far apart (so a row never runs into the next one), and block sizes no launch gives at
  16 and at 128. An overlap that only a degenerate layout makes (a row stride below the row) is not
  reported; one the code makes (an axis the address leaves out, programs a half block apart) is.
  The strides' stand-ins lie above the 2**31 elements a launch allows each size on purpose; a layout
  that contradicts what the launch states (a block that must cover a stride) proves nothing, and
  where every layout does, the store is not judged. A size the launch ties to a block
  (`BLOCK=min(next_power_of_2(N), 1024)`) follows the block: it is left free, not a stand-in. A
  stride the wrapper passes on from its own caller (`stride_cm=stride_cm`) is a stride like any
  other, whatever its name. So an overlap that needs one size to be small (a tail block spilling
  into the next row when `N` is not a multiple of the block) is not a race of every layout: KL101
  and KL102 judge the tail;
- programs that store the same value (a constant, or one computed from sizes alone) at one element
  are a *warning* ("overlapping writes"), not an error: the result does not depend on which write
  lands last, but the writes still race (a data race in CUDA's memory model, and the traffic is
  repeated). A value the engine does not model (a float expression) counts as the same where it
  reads nothing a program, lane, iteration or load changes (`1.0`, `scale * 0.5`). A value computed
  from loaded data, or one a loop accumulates, is the same where the two programs load the same
  addresses (with the same masks) in every trip of the same loops: two programs that split an
  axis the value does not depend on (one computes a normalizer for each of several output column
  blocks) write the same value. That is shown without the solver where every program id the value
  and its loads read is one that the element written fixes (two programs at one element of
  `z + (i_bh + B * H * i_k) * T + i_c * BT + lane`, with `i_c * BT + lane < T`, share `i_bh`, `i_k`
  and `i_c`, whatever value block `i_v` each has); a float literal beside loaded values (`0.5 *
  b_s`) changes nothing of what they read. So is a value computed element-wise from what each program loads
  at the element it writes (or a fixed distance from it): two programs whose sweeps overlap, one's
  last block running into the next one's share, write `f(x[e])` at element `e` from different lanes
  and iterations alike. Where they load different elements, where a reduction, scan, dot or move of
  lanes lies between the load and the store, or where the kernel also loads from the tensor it
  stores to (a read-modify-write: what one reads may be what the other wrote), the values may differ;
- a kernel that never calls `tl.program_id` is asked under each launch that states its grid: every
  program of a grid of more than one does the same work. A store of a value that can differ between
  them (read from memory the kernel also writes, or drawn from an atomic) races (an error), and so
  does a load of what the store writes; any other store is an overlapping write (a warning);
- `tl.atomic_add` hands each program a different old value, so `if tl.atomic_add(counter, 1) ==
  n - 1:` (the last arriver) lets one program through, and where every program draws one ticket
  and `n` is the number of programs, every other draw came before its stores (the last arriver
  resetting the counter races with none); a store reached through a test of what a
  plain load reads from a tensor the kernel updates atomically (`tl.atomic_add(count, 1)`, then
  `if tl.load(count) == n:`) is the same idiom read back, and what it guards depends on memory
  ordering: not judged; `tl.atomic_cas(flag, c, v)` with `c != v`
  the same in every program claims the flag: no two programs see `c` at once (one wins an election,
  or a lock passes from one to the next), so what only the program that saw `c` writes is never
  written by two at once;
- stores inside a spin-lock critical section (`while tl.atomic_cas(lock, 0, 1) == 1: pass` ...
  `tl.atomic_xchg(lock, 0)`, an exchange on that same pointer: one on a flag inside the section does
  not release it) are ordered by the lock; axes every launch leaves at one program (or
  that the wrapper asserts are 1) have one program;
- an `if` whose test the engine does not model keeps the accesses under it out of the question
  when the test may differ between programs (a uniform test such as `if M is not None` does not);
- a plain store whose address is computed from a block of loaded values (an index per lane: a
  scatter, a histogram) is a warning, "possible race through loaded indices": whether two lanes or
  programs load the same index is the data's. `tl.atomic_add` (or another atomic) settles it. So is
  an index add through a scalar each program loads (`row = tl.load(out + j * D + d)`, then a plain
  store of `row + v` there, of `j = tl.load(index + i)`): the loaded scalar alone places what the
  program rereads and writes back. A segment's start is not such an index: read beside its end
  (`cu_seqlens[i]`, `cu_seqlens[i + 1]`), or added to a program id or loop counter that walks the
  segment (`(bos + i_t) * H`); nor is a slot each lane claims with an atomic
  (`base + tl.atomic_add(cursor + row, 1)`), which is its own;
- a plain load at a place a loaded index picks where the program id picks the place a store writes,
  in the same tensor (the same pointer, or one a launch binds to the same tensor: `x.contiguous()`
  of a contiguous `x` is `x` itself; `x.clone()` is a tensor of its own) is a warning too, "possible
  race through loaded indices": an in-place gather (`x[perm[i]]` read while row `i` is written)
  reads what another program may be writing. An index beside the program's own id (`x[row, y[row]]`
  of a cross-entropy row) stays in the program's place;
- each layout's question has a fixed work budget for the solver, and the CPU time of a check is
  capped, not its wall-clock time, so the answer is the same on a loaded machine; a question it
  cannot settle within them is no finding;
- not modelled (no finding): two different stores of one kernel that overlap, two stores through
  two pointers bound to one tensor, and memory ordering (release/acquire, scopes).

## Why is this bad?
Every program along that axis writes the same address; which write wins depends on scheduling, and
read-modify-write sequences lose updates. The result changes from run to run, and no sanitizer sees
it: racecheck only watches shared memory.

## Example
```python
pid = tl.program_id(0)
x = tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK))
total = tl.load(out_ptr)
tl.store(out_ptr, total + tl.sum(x))
```

## Use instead
```python
tl.atomic_add(out_ptr, tl.sum(x))
```
or write one partial result per program (`out_ptr + pid`) and reduce them afterwards.
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def total(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    acc = tl.load(out_ptr)  # expect: KL103
    tl.store(out_ptr, acc + tl.sum(x, axis=0))  # expect: KL103
''',
        '''
import triton
import triton.language as tl

@triton.jit
def shift_in_place(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    nxt = tl.load(x_ptr + offs + 1, mask=offs + 1 < n)  # expect: KL103
    tl.store(x_ptr + offs, nxt, mask=offs + 1 < n)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def split_k(a_ptr, c_ptr, K, BLOCK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    offs = pid_k * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + pid_m * K + offs, mask=offs < K, other=0.0)
    tl.store(c_ptr + pid_m, tl.sum(a, axis=0))  # expect: KL103
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def bucket_rows(rows_ptr, bucket_ptr, start_ptr, cursor_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bucket = tl.load(bucket_ptr + offs, mask=mask, other=0)
    # each lane claims its own slot of its bucket: lanes of one bucket get different tickets
    slot = tl.load(start_ptr + bucket, mask=mask, other=0) + tl.atomic_add(cursor_ptr + bucket, 1, mask=mask)
    tl.store(out_ptr + slot, tl.load(rows_ptr + offs, mask=mask), mask=mask)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def total(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))
''',
        '''
import triton
import triton.language as tl

@triton.jit
def first_writes(flag_ptr, x_ptr, out_ptr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid)
    tl.store(out_ptr + pid, x)
    if pid == 0:
        tl.store(flag_ptr, 1)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def last_one_finishes(x_ptr, partial_ptr, counter_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK)), axis=0))
    ticket = tl.atomic_add(counter_ptr, 1)
    if ticket == tl.num_programs(0) - 1:  # each program draws a different ticket: one passes
        tl.store(out_ptr, 1.0)
''',
    )

    def check(self, state):
        from kernlint.engine.run import gathered_reads, races, read_write_races, scatter_stores

        single = frozenset(_single_program_axes(state))
        write_write, read_write, scatters = races(state, single), read_write_races(state, single), scatter_stores(state)
        gathers = gathered_reads(state)
        if not (write_write or read_write or scatters or gathers):
            return
        locked = {id(a.node) for a in state.accesses if a.locked}  # inside a spin-lock critical section
        yield from self._write_write(state, write_write, locked)
        yield from self._read_write(state, read_write, locked)
        yield from self._scatters(state, scatters, locked)
        yield from self._gathers(state, gathers, locked)

    def _gathers(self, state, gathers, locked):
        for load, store, aliased in gathers:
            if id(load.node) in locked or id(store.node) in locked:
                continue
            target, _ = named(state, load)
            through = _passed_as_both(aliased, load, store)
            for finding in reported_once(self, state, load,
                    f"possible race through loaded indices: this load reads `{target}` at a place computed from "
                    f"values loaded from memory, and the store on line {access_line(state, store)} writes the same "
                    f"tensor at places each program id picks{through}: a program reads what another may be writing. "
                    "Read from a copy (`.clone()`) unless no loaded index reaches a place another program writes",
                    pointer=target, gather=True, store_line=access_line(state, store), aliased=aliased):
                finding.level = Level.WARNING  # whether an index reaches another program's place is the data's
                yield finding

    def _scatters(self, state, stores, locked):
        for store in stores:
            if id(store.node) in locked:
                continue
            target, _ = named(state, store)
            for finding in reported_once(self, state, store,
                    f"possible race through loaded indices: the address of this store into `{target}` is "
                    "computed from values loaded from memory; two programs (or lanes) that load the same "
                    "index write one element non-atomically. Use `tl.atomic_add` (or another atomic) unless "
                    "the indices are unique", pointer=target, scatter=True):
                finding.level = Level.WARNING  # whether indices repeat is the data's, not the code's
                yield finding

    def _read_write(self, state, found, locked):
        for race in found:
            load, store = race.access, race.store
            if id(load.node) in locked or id(store.node) in locked:
                continue
            target, _ = named(state, load)
            reader, writer = (", ".join(f"program_id({axis})={ids[side]}" for axis, ids in sorted(race.programs.items()))
                              for side in (0, 1))
            line = access_line(state, store)
            element = f"element {race.address}" if race.address is not None else "an element"
            sizes = f" with {race.text}" if race.text else ""
            through = _passed_as_both(race.aliased, load, store)
            yield from reported_once(self, state, load,
                f"cross-program race: this load reads {element} of `{target}` that another program of the "
                f"launch stores on line {line}{through}, so what it reads depends on which program runs "
                f"first; witness: {reader} reads what {writer} writes{sizes}",
                pointer=target, programs={str(a): list(ids) for a, ids in race.programs.items()},
                address=race.address, store_line=line, aliased=race.aliased)

    def _write_write(self, state, found, locked):
        for race in found:
            access = race.access
            if id(access.node) in locked:
                continue
            target, _ = named(state, access)
            programs = " and ".join(
                ", ".join(f"program_id({axis})={ids[side]}" for axis, ids in sorted(race.programs.items()))
                for side in (0, 1))
            what = "read, modify and write" if race.read_modify_write else "write"
            sizes = f" with {race.text}" if race.text else ""
            element = f"element {race.address}" if race.address is not None else "one element"
            evidence = dict(pointer=target, programs={str(a): list(ids) for a, ids in race.programs.items()},
                            address=race.address, read_modify_write=race.read_modify_write,
                            same_value=race.same_value)
            partner, through = race.partner, ""
            if partner is not None:
                evidence["other_line"] = line = access_line(state, partner)
                through = (" (the first through this store, the second through the "
                           + (f"atomic on line {line}, which does not order a plain store)" if partner.kind == "atomic"
                              else f"store on line {line})"))
            if race.same_value:
                for finding in reported_once(self, state, access,
                        f"overlapping writes: two programs write {element} of `{target}` non-atomically{through}, with "
                        f"the same value (the result does not depend on which lands last, but the writes race "
                        f"and repeat the traffic: let one program write it); witness: {programs}{sizes}",
                        **evidence):
                    finding.level = Level.WARNING
                    yield finding
                continue
            yield from reported_once(self, state, access,
                f"cross-program race: two programs {what} {element} of `{target}` non-atomically{through}, "
                f"possibly with different values, for every layout of the tensor; witness: {programs}{sizes}",
                **evidence)


def _passed_as_both(aliased: str | None, load, store) -> str:
    """`` (the launch passes `x` as both `a` and `b`)`` where a launch binds the two pointers to one tensor."""
    return f" (the launch passes `{aliased}` as both `{load.ptr.base}` and `{store.ptr.base}`)" if aliased else ""
