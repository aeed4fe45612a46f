"""``kernlint eval``: trustworthy correctness, performance and anti-cheat evaluation of
generated kernels. See :func:`evaluate` for the Python API and :mod:`kernlint.eval.cli` for the
command line.

Where each thing happens: :mod:`~kernlint.eval.judge` (trusted: seeds, comparison, audits, clock
checks; never imports problem or candidate code), :mod:`~kernlint.eval.worker` (the executors that
do: one imports the problem, one the candidate), :mod:`~kernlint.eval.wire` (what passes between
them: tensors as raw buffers, text artifacts, JSON), :mod:`~kernlint.eval.isolation` (the sandbox),
:mod:`~kernlint.eval.policy` (the verdict). Structure: :mod:`~kernlint.eval.structure_capture` (in
the candidate's executor: launch records and compiled text, data only), and on the judge's side
:mod:`~kernlint.eval.structure` (IR rules, flaws), :mod:`~kernlint.eval.structure_profile` (the
ncu pass the judge starts and reads), :mod:`~kernlint.eval.roofline` (the one roofline)."""

from kernlint.eval.api import EvalOptions, EvalResult, evaluate
from kernlint.eval.policy import Policy

__all__ = ["EvalOptions", "EvalResult", "Policy", "evaluate"]
