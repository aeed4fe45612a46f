"""``triton.Config(...)`` of a kernel's ``@triton.autotune``, read once: every phase asks here."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
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
    return _config_call(ast.parse(text.strip(), mode="eval").body)


def _config_call(node: ast.expr) -> tuple[dict[str, Any], int | None, int | None]:
    values = _config_values(node)
    opts = {k.arg: k.value for k in node.keywords if k.arg in ("num_warps", "num_stages")}
    nw = ast.literal_eval(opts["num_warps"]) if "num_warps" in opts else None
    ns = ast.literal_eval(opts["num_stages"]) if "num_stages" in opts else None
    return values, nw, ns


def _config_values(node: ast.expr) -> dict[str, Any]:
    """The constexpr values of a ``triton.Config(...)`` call (whatever its options)."""
    if not isinstance(node, ast.Call):
        raise ValueError("not a call")
    if _callee(node) != "Config":
        raise ValueError(f"not a triton.Config but {ast.unparse(node.func)}(...)")  # a helper's configs
    values: dict[str, Any] = {}
    kwargs = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "kwargs"), None)
    if isinstance(kwargs, ast.Dict):
        for k, v in zip(kwargs.keys, kwargs.values):
            if isinstance(k, ast.Constant):
                values[str(k.value)] = constexpr_literal(ast.unparse(v))
    return values


def _callee(node: ast.Call) -> str | None:
    return getattr(node.func, "attr", None) or getattr(node.func, "id", None)


#: the options every ``triton.Config`` passes to the kernel with its values (``Config.all_kwargs``: their
#: defaults are not None); a kernel parameter of one of these names takes it
CONFIG_OPTIONS = frozenset({"num_warps", "num_ctas", "num_stages"})


@dataclass(frozen=True)
class ConfigText:
    """What one autotune config's source says, read once."""

    #: its constexpr values; None where they cannot be read (configs built from what the module does not say: an imported list)
    values: dict[str, Any] | None
    #: the names the ``triton.Config({...})`` calls in the text set, their values read or not
    keys: frozenset[str]
    #: the options those calls pass: CONFIG_OPTIONS and the keywords written (``maxnreg=128``)
    options: frozenset[str]

    @property
    def names(self) -> frozenset[str]:
        """The constexprs the config sets, read or not."""
        return frozenset(self.values) if self.values is not None else self.keys


@lru_cache(maxsize=4096)
def read_config(text: str) -> ConfigText:
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return ConfigText(None, frozenset(), CONFIG_OPTIONS)
    try:
        values = _config_values(tree.body)
    except (ValueError, SyntaxError, TypeError):
        values = None
    keys, written = set(), set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _callee(node) == "Config"):
            continue
        written |= {k.arg for k in node.keywords if k.arg not in (None, "kwargs", "pre_hook")}
        if node.args and isinstance(node.args[0], ast.Dict):
            keys |= {k.value for k in node.args[0].keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return ConfigText(values, frozenset(keys), CONFIG_OPTIONS | written)


def config_values(kernel) -> list[dict[str, Any] | None]:
    """The constexpr values of each of the kernel's autotune configs; None for one that cannot be
    read (built from what the module does not say: their values are not known)."""
    return [read_config(text).values for text in kernel.autotune_configs]


def tuned_names(kernel) -> set[str]:
    """Constexprs the kernel's autotune configs set, read or not."""
    return {n for text in kernel.autotune_configs for n in read_config(text).names}


def unread_keys(kernel) -> set[str]:
    """Constexprs that configs which cannot be read (a comprehension over an imported list) set to
    values not known here."""
    return {k for text in kernel.autotune_configs if (c := read_config(text)).values is None for k in c.keys}


def supplied_by_configs(kernel) -> set[str] | None:
    """The parameters the kernel's autotune configs give values: the names each sets and the options
    each passes; None where a config's names cannot be read (a helper's configs the module does not say)."""
    configs = [read_config(text) for text in kernel.autotune_configs]
    if not all(c.names for c in configs):
        return None
    return {n for c in configs for n in c.names | c.options}


def set_by_every_config(kernel) -> set[str]:
    """The constexprs every autotune config of the kernel sets (none where a config cannot be read):
    a launch that also gives one makes the autotuner raise."""
    configs = [read_config(text).values for text in kernel.autotune_configs]
    if not configs or any(values is None for values in configs):
        return set()
    return set.intersection(*(set(values) for values in configs))


def int_values(values: dict[str, Any]) -> dict[str, int]:
    return {k: v for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)}
