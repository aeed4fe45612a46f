"""What ``triton.language`` offers, in every Triton release kernlint supports: its names, the
parameters of its functions, the methods of its tensors. Read from a table made from the releases
themselves (``triton_api.json``), so that the source phase never imports Triton.

A name is unknown only when no supported release has it, a parameter required only when every
release requires it: what these say cannot compile, cannot compile on any of them.

Refresh the table with ``python -m kernlint.source.triton_api DIR...`` (each DIR holds one
release's ``triton`` package, e.g. a wheel unpacked; ``-`` for the installed one).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).with_name("triton_api.json")


@dataclass(frozen=True)
class Signature:
    """A ``triton.language`` function's parameters, as every supported release accepts them."""

    #: the parameters in order (positional-or-keyword, then keyword-only)
    params: tuple[str, ...]
    #: those every release requires
    required: frozenset[str]
    #: the number of parameters a call may pass by position (in some release)
    positional: int
    #: whether some release takes ``*args`` or ``**kwargs`` (then nothing is judged)
    open: bool


@dataclass(frozen=True)
class TritonApi:
    versions: tuple[str, ...]
    names: frozenset[str]
    tensor_methods: frozenset[str]
    signatures: dict[str, Signature]


@lru_cache(maxsize=1)
def api() -> TritonApi:
    data = json.loads(TABLE.read_text())
    return TritonApi(
        tuple(data["versions"]), frozenset(data["names"]), frozenset(data["tensor_methods"]),
        {name: Signature(tuple(s["params"]), frozenset(s["required"]), s["positional"], s["open"])
         for name, s in data["signatures"].items()})


_DUMP = r"""
import inspect, json, triton, triton.language as tl
HIDDEN = ("_builder", "_semantic", "_generator")
out = {"version": triton.__version__, "names": [n for n in dir(tl) if not n.startswith("__")],
       "tensor_methods": [n for n in dir(tl.tensor) if not n.startswith("_")], "signatures": {}}
for name in out["names"]:
    fn = getattr(tl, name)
    if isinstance(fn, type) or not callable(fn) or name.startswith("_"):
        continue
    fn = getattr(fn, "fn", fn)  # a JITFunction (``tl.softmax``, ``tl.sum``): the function it wraps
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        continue
    params = []
    for p in sig.parameters.values():
        if p.name in HIDDEN:
            continue
        params.append([p.name, p.kind.name, p.default is inspect.Parameter.empty])
    out["signatures"][name] = params
print(json.dumps(out))
"""


def _dump(path: str) -> dict:
    env = None
    if path != "-":
        import os
        env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run([sys.executable, "-c", _DUMP], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _merge(dumps: list[dict]) -> dict:
    names = sorted(set().union(*(d["names"] for d in dumps)))
    methods = sorted(set().union(*(d["tensor_methods"] for d in dumps)))
    signatures = {}
    for name in names:
        seen = [d["signatures"].get(name) for d in dumps if name in d["names"]]
        if any(s is None for s in seen):
            continue  # a release whose signature cannot be read (a wrapper): nothing is judged
        kinds = {kind for s in seen for _, kind, _ in s}
        order: list[str] = []
        for s in seen:
            order += [p for p, kind, _ in s if p not in order and kind in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY",
                                                                           "POSITIONAL_ONLY")]
        required = set.intersection(*({p for p, _, req in s if req} for s in seen))
        positional = max(sum(kind in ("POSITIONAL_OR_KEYWORD", "POSITIONAL_ONLY") for _, kind, _ in s) for s in seen)
        signatures[name] = {"params": order, "required": sorted(required), "positional": positional,
                            "open": bool(kinds & {"VAR_POSITIONAL", "VAR_KEYWORD"})}
    return {"versions": [d["version"] for d in dumps], "names": names, "tensor_methods": methods,
            "signatures": signatures}


if __name__ == "__main__":
    dumps = [_dump(p) for p in sys.argv[1:] or ["-"]]
    TABLE.write_text(json.dumps(_merge(dumps), indent=1, sort_keys=True) + "\n")
    print(f"{TABLE.name}: triton {', '.join(d['version'] for d in dumps)}")
