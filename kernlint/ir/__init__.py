"""The IR phase: compile Triton kernels ahead of time (no GPU needed) and lint TTIR/TTGIR/PTX.

Modules, in pipeline order:

- :mod:`kernlint.ir.specialize` decides *what* to compile for each kernel.
- :mod:`kernlint.ir.discovery` finds ``@triton.jit`` kernels when the caller has none.
- :mod:`kernlint.ir.compile` compiles them through Triton's API (worker processes, on-disk cache).
- :mod:`kernlint.ir.tilelang` lowers TileLang kernels to CUDA (on the CPU) and compiles them to PTX
  with nvcc, in the same workers.
- :mod:`kernlint.ir.ptx` / :mod:`kernlint.ir.mlir` parse the artefacts, mapping every instruction
  back to the user's ``file:line:col``.
- :mod:`kernlint.ir.lanes` evaluates PTX address arithmetic for every lane of a block.
- :mod:`kernlint.ir.resources` / :mod:`kernlint.ir.occupancy` read ptxas' resource usage and
  compute theoretical occupancy.
- :mod:`kernlint.ir.rulebase` is the base class of the IR rules in ``rules/kl3*.py``.
- :mod:`kernlint.ir.phase` is the one entry point: :func:`kernlint.ir.phase.run_ir_phase`.
"""
