"""The rule catalogue: every rule class found in ``kernlint.rules`` (the top-level ``rules/``)."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil

from kernlint.rule import Rule


class UnknownRule(KeyError):
    pass


def _rules_package():
    """``kernlint.rules``; from a source checkout that was not pip-installed, the top-level ``rules/``.

    The wheel maps ``rules/`` to ``kernlint.rules``; a plain checkout on ``sys.path`` lacks that
    mapping (e.g. a GPU machine that runs the tree as it is), so the folder is registered by hand.
    """
    try:
        return importlib.import_module("kernlint.rules")
    except ImportError:
        pass
    import sys
    from pathlib import Path

    import kernlint

    folder = Path(kernlint.__file__).resolve().parents[1] / "rules"
    spec = importlib.util.spec_from_file_location(
        "kernlint.rules", folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["kernlint.rules"] = module
    spec.loader.exec_module(module)
    kernlint.rules = module
    return module


@functools.lru_cache(maxsize=1)
def all_rules() -> dict[str, type[Rule]]:
    package = _rules_package()

    found: dict[str, type[Rule]] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, Rule)
                and obj.__module__ == module.__name__
                and "code" in vars(obj)
            ):
                if obj.code in found:
                    raise RuntimeError(f"duplicate rule code {obj.code}")
                found[obj.code] = obj
    return dict(sorted(found.items()))


def get_rule(code: str) -> type[Rule]:
    rules = all_rules()
    key = code.strip().upper()
    if key in rules:
        return rules[key]
    for rule in rules.values():
        if rule.name == code.strip().lower():
            return rule
    raise UnknownRule(code)


def select_codes(select: list[str] | None, ignore: list[str] | None) -> set[str]:
    """Rule codes enabled by ruff-style prefixes (``KL1`` selects KL100-KL199, ``ALL`` everything)."""
    codes = set(all_rules())

    def matching(prefixes: list[str]) -> set[str]:
        out = set()
        for p in prefixes:
            p = p.strip().upper()
            if p == "ALL":
                out |= codes
                continue
            hit = {c for c in codes if c.startswith(p)}
            if not hit:
                raise UnknownRule(p)
            out |= hit
        return out

    enabled = matching(select) if select else set(codes)
    if ignore:
        enabled -= matching(ignore)
    return enabled
