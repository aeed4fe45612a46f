"""``triton.Config(...)`` of a kernel's ``@triton.autotune``, read once: every phase asks here."""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import Any

DTYPE_TEXT = re.compile(r"^(?:tl|triton\.language)\.(?:float|bfloat|int|uint)\w*$")


def constexpr_literal(text: str) -> Any:
    """A constexpr argument's value: a literal, or a Triton dtype written ``tl.float16`` (kept as
    that text; the compile worker turns it into the dtype). Raises ValueError otherwise."""
    text = text.strip()
    if DTYPE_TEXT.match(text):
        return text
    try:
        return ast.literal_eval(text)
    except SyntaxError as e:
        raise ValueError(str(e)) from None


def parse_config(text: str) -> tuple[dict[str, Any], int | None, int | None]:
    """``triton.Config({...}, num_warps=.., num_stages=..)`` source -> its values and options."""
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call):
        raise ValueError("not a call")
    func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    if func != "Config":
        raise ValueError(f"not a triton.Config but {ast.unparse(node.func)}(...)")  # a helper's configs
    values: dict[str, Any] = {}
    kwargs = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "kwargs"), None)
    if isinstance(kwargs, ast.Dict):
        for k, v in zip(kwargs.keys, kwargs.values):
            if isinstance(k, ast.Constant):
                values[str(k.value)] = constexpr_literal(ast.unparse(v))
    opts = {k.arg: k.value for k in node.keywords if k.arg in ("num_warps", "num_stages")}
    nw = ast.literal_eval(opts["num_warps"]) if "num_warps" in opts else None
    ns = ast.literal_eval(opts["num_stages"]) if "num_stages" in opts else None
    return values, nw, ns


@lru_cache(maxsize=4096)
def _values(text: str) -> dict[str, Any] | None:
    try:
        return parse_config(text)[0]
    except (ValueError, SyntaxError, TypeError):
        return None  # configs built by code (a comprehension, a helper's call): any values


def config_values(kernel) -> list[dict[str, Any] | None]:
    """The constexpr values of each of the kernel's autotune configs; None for one that cannot be
    read (a helper's configs, a comprehension: their values are not known)."""
    return [_values(text) for text in kernel.autotune_configs]


def tuned_names(kernel) -> set[str]:
    """Constexprs the kernel's autotune configs set, read or not."""
    return {n for values in config_values(kernel) if values is not None for n in values} | unread_keys(kernel)


def int_values(values: dict[str, Any]) -> dict[str, int]:
    return {k: v for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)}


#: the options every ``triton.Config`` passes to the kernel with its values (``Config.all_kwargs``: their
#: defaults are not None); a kernel parameter of one of these names takes it
CONFIG_OPTIONS = frozenset({"num_warps", "num_ctas", "num_stages"})


@lru_cache(maxsize=4096)
def config_options(text: str) -> frozenset[str]:
    """The options the ``triton.Config(...)`` calls in the text pass: CONFIG_OPTIONS and the keywords
    written (``maxnreg=128``)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return CONFIG_OPTIONS
    written = {k.arg for node in ast.walk(tree) if isinstance(node, ast.Call)
               and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "Config"
               for k in node.keywords if k.arg not in (None, "kwargs", "pre_hook")}
    return CONFIG_OPTIONS | written


@lru_cache(maxsize=4096)
def config_keys(text: str) -> frozenset[str]:
    """The names ``triton.Config({...})`` calls in the text set, their values read or not."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return frozenset()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "Config" \
                and node.args and isinstance(node.args[0], ast.Dict):
            out |= {k.value for k in node.args[0].keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return frozenset(out)


def unread_keys(kernel) -> set[str]:
    """Constexprs that configs which cannot be read (a comprehension of ``triton.Config``) set to
    values not known here."""
    return {k for text, values in zip(kernel.autotune_configs, config_values(kernel)) if values is None
            for k in config_keys(text)}
