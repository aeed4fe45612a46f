"""kernlint: static-plus-dynamic linter and evaluation harness for Triton and TileLang kernels."""

__version__ = "0.1.0"


def _register_checkout_rules() -> None:
    """The wheel installs the top-level ``rules/`` folder as ``kernlint/rules``; a source checkout
    (an editable install puts it on sys.path, and so does a GPU machine running the tree as it is)
    has no such folder, so ``rules/`` is registered as ``kernlint.rules`` here, once for everybody."""
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    folder = os.path.join(os.path.dirname(here), "rules")
    if os.path.isdir(os.path.join(here, "rules")) or not os.path.isfile(os.path.join(folder, "__init__.py")):
        return
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(
        "kernlint.rules", os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])
    module = importlib.util.module_from_spec(spec)
    sys.modules["kernlint.rules"] = module
    spec.loader.exec_module(module)
    globals()["rules"] = module


_register_checkout_rules()


def __getattr__(name: str):
    # ``kernlint.evaluate(problem, candidate)`` without making ``import kernlint`` load the eval stack
    if name in ("evaluate", "EvalOptions", "EvalResult"):
        from kernlint.eval import api

        return getattr(api, name)
    raise AttributeError(f"module 'kernlint' has no attribute {name!r}")
