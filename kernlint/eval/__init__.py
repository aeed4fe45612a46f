"""``kernlint eval``: trustworthy correctness, performance and anti-cheat evaluation of
generated kernels. See :func:`evaluate` for the Python API and :mod:`kernlint.eval.cli` for the
command line."""

from kernlint.eval.api import EvalOptions, EvalResult, evaluate
from kernlint.eval.policy import Policy

__all__ = ["EvalOptions", "EvalResult", "Policy", "evaluate"]
