"""kernlint: static-plus-dynamic linter and evaluation harness for Triton and TileLang kernels."""

__version__ = "0.1.0"


def __getattr__(name: str):
    # ``kernlint.evaluate(problem, candidate)`` without making ``import kernlint`` load the eval stack
    if name in ("evaluate", "EvalOptions", "EvalResult"):
        from kernlint.eval import api

        return getattr(api, name)
    raise AttributeError(f"module 'kernlint' has no attribute {name!r}")
