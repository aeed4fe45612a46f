"""The dynamic phase: confirm or refute findings by running the kernels.

- :mod:`kernlint.dynamic.interp_check`: exact-bounds and write-overlap checks on Triton's
  interpreter (CPU, no GPU needed): the CI fallback, and the only way to see races between
  programs on global memory.
- :mod:`kernlint.dynamic.block_ptr` and :mod:`kernlint.dynamic.unwritten`: what the interpreter
  adds inside the run: block pointers where Triton dropped them, poisoned fresh outputs.
- :mod:`kernlint.dynamic.gsan`: Triton's own global-memory race sanitizer, where the Triton has it.
- :mod:`kernlint.dynamic.sanitizer`: compute-sanitizer command lines and report parsing.
- :mod:`kernlint.dynamic.ncu`: Nsight Compute command lines and CSV parsing.
- :mod:`kernlint.dynamic.confirm`: plans the fewest tool processes for a set of findings (or, to
  discover, for every kernel of a file), runs them, and merges the verdicts.

Importing this package needs neither a GPU nor the tools.
"""
