from kernlint.model import Level
from kernlint.rule import Confirmation
from kernlint.source.rulebase import SourceRule


class LaunchArgumentsMismatch(SourceRule):
    code = "KL111"
    name = "launch-arguments-mismatch"
    category = "api-misuse"
    level = Level.ERROR
    confirm = Confirmation(
        tool="none",
        check="launch",
        threshold="the launch raises before the kernel runs",
        description="running the launch raises (too many positional arguments, one parameter given twice, "
        "one left without a value, a value the autotuner sets, a keyword Triton does not know, or a value a "
        "heuristic reads before anything sets it); no GPU run is needed to see it",
    )
    summary = ("A launch passes more positional arguments than the kernel has parameters, one parameter twice, "
               "a value every autotune config sets, a keyword that is neither a parameter nor a launch option, "
               "none for a parameter without a default, or none for what a heuristic reads.")
    docs = """
## What it does
Binds each launch `kernel[grid](...)` in the module to the kernel's parameters, as Python binds a
call: by position, then by keyword. A launch that passes more positional arguments than the kernel
declares parameters, gives one parameter both by position and by keyword, gives a parameter that
every one of the kernel's `@triton.autotune` configs sets (or `num_warps`, `num_stages`, `num_ctas`,
which every `triton.Config` passes), passes a keyword that is neither a
parameter nor a launch option, or leaves a parameter without a default with no value is reported
at the launch, with the counts or the names. The values the kernel's `@triton.autotune`
configs and `@triton.heuristics` set count as given. A heuristic's function sees only the launch's
arguments (not the parameters' defaults) and what the decorators above it add: one that reads
(`args["BLOCK"]`) a value an `@triton.autotune` *below* it sets, or a default the launch leaves out,
is reported too. Launch options are the keywords of
`JITFunction.run` and the fields of the backends' options (`num_warps`, `num_stages`, `maxnreg`,
`launch_pdl`, AMD's `waves_per_eu`...): those of NVIDIA and AMD, as upstream Triton 2.1 to 3.9
define them, and of the Intel XPU and Ascend backends. A kernel declared with `**meta` (Triton 1's
style) takes no keywords through it: Triton 2 to 3.8 bind it as one parameter named `meta`, which a
launch must fill like any other, and Triton 3.9 rejects the kernel where it is defined. Not judged: parameters left without a value
by a launch that spreads a sequence of unknown length (`*args`) or a mapping (`**kwargs`), and any
launch of a kernel whose configs or heuristics the code builds, or that another decorator wraps (it
may give any parameter, or take keywords of its own).

## Why is this bad?
The call raises `TypeError` before the kernel runs (or, for a missing parameter a
`@triton.heuristics` function reads, `KeyError`; for a keyword Triton does not know, `KeyError:
Keyword argument X was specified but unrecognised`, since Triton 3.0; for a value the autotuner
chooses, `ValueError: Conflicting meta-parameters: X. Make sure that you don't re-define auto-tuned
symbols.`, or with one config a `TypeError` for the value given twice; for a heuristic reading what
nothing has set yet, `KeyError`): the wrapper fails on every call. A backend kernlint does not know may accept options of its own: silence such a launch with
`# noqa: KL111`. It is typical
of a kernel whose signature changed (a stride dropped, a parameter renamed) while a wrapper kept the
old argument list, and of generated code that passes a stride per axis to a kernel that takes
fewer. The bounds, race and overflow rules do not judge such a launch: its arguments say nothing
of what a kernel would be given.

## Example
```python
@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr): ...

add[grid](x, y, out, n, BLOCK=1024)   # 4 positional arguments for 3 before BLOCK: `n` is `out`,
                                      # and BLOCK is given twice
add[grid](x, y, BLOCK=1024)           # `n` has no value
add[grid](x, y, n, BLOCK_SIZE=1024)   # no parameter is named BLOCK_SIZE: KeyError
tuned_add[grid](x, y, n, BLOCK=1024)  # its autotune configs choose BLOCK: ValueError

@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})  # runs first: no BLOCK yet
@triton.autotune(configs=[triton.Config({"BLOCK": 256})], key=["n"])      # put this one above it
@triton.jit
def even_add(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr): ...
```

## Use instead
Pass the arguments the kernel declares, in its order (or by keyword), and leave to the autotuner
what its configs choose (read the chosen value in the grid: `lambda meta: (cdiv(n, meta["BLOCK"]),)`).
"""
    bad = (
        '''
import triton
import triton.language as tl

@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def launch(x, y):
    add[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), 256, 4)  # expect: KL111
''',
        '''
import triton
import triton.language as tl

@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def launch(x, y, out):
    add[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)  # expect: KL111
''',
        '''
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"])
@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def launch(x, y):
    # the configs give BLOCK; nothing gives n
    add[lambda META: (triton.cdiv(x.numel(), META["BLOCK"]),)](x, y)  # expect: KL111
''',
        '''
import triton
import triton.language as tl

@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr = 256):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def launch(x, y):
    # BLOCK has a default, so nothing is missing; BLOCK_SIZE is no parameter and no launch option
    add[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK_SIZE=1024)  # expect: KL111
''',
        '''
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"])
@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def launch(x, y):
    # the configs choose BLOCK: the autotuner raises "Conflicting meta-parameters: BLOCK"
    add[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)  # expect: KL111
''',
        '''
import triton
import triton.language as tl

# the heuristic runs first, before the autotuner below it has set BLOCK: KeyError: 'BLOCK'
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"])
@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def launch(x, y):
    add[lambda META: (triton.cdiv(x.numel(), META["BLOCK"]),)](x, y, x.numel())  # expect: KL111
''',
    )
    good = (
        '''
import triton
import triton.language as tl

@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def launch(x, y):
    add[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), 256, num_warps=4)
    add[(triton.cdiv(x.numel(), 256),)](x, y, n=x.numel(), BLOCK=256)
    # launch options of the backends: NVIDIA's register cap, AMD's occupancy hint
    add[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256, num_stages=2, maxnreg=128)
    add[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256, waves_per_eu=2)
''',
        '''
import triton
import triton.language as tl

@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def launch(x, y, *extra):
    # a spread of unknown length: the positions after it are not known
    add[(1,)](x, *extra, BLOCK=256)
''',
        '''
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr, ALPHA: tl.constexpr = 1.0):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, ALPHA * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def launch(x, y, **options):
    # BLOCK from the configs, EVEN from the heuristics, ALPHA has a default
    add[lambda META: (triton.cdiv(x.numel(), META["BLOCK"]),)](x, y, x.numel())
    # a mapping spread: what it gives is not known
    add[(1,)](x, y, **options)
''',
    )

    def check(self, state):
        kernel = state.kernel.kernel
        for launch in state.info.facts.launches_of(kernel):
            if launch.misfit and launch.calls(kernel):
                yield self.finding_at(state, launch.span,
                                      f"`{kernel.name}` launch cannot bind its arguments: it {launch.misfit}; "
                                      f"the call raises before the kernel runs", misfit=launch.misfit)
