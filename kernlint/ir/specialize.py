"""Decide what to compile for a Triton kernel: its *specializations*.

A Triton kernel is compiled per signature (argument types), constexpr values and launch options.
kernlint compiles, in this order of preference:

1. every ``# kernlint: specialize(NAME=VALUE, ...)`` comment written on the kernel's decorator or
   ``def`` lines, or on the lines directly above them (one specialization per comment);
2. every ``triton.Config(...)`` of the kernel's ``@triton.autotune`` (at most ``max_configs``);
3. every launch ``kernel[grid](...)`` in the same module whose constexpr arguments are literals
   (at most ``max_configs``), as the core's discovery finds them
   (:func:`kernlint.source.discover.find_launches`);
4. the **fallback**, one specialization:

   - constexpr parameters take their default (a literal, or a dtype ``tl.float16``) when they
     have one; otherwise constexprs used as a dtype (``dtype=ACC_TYPE``) and ``*DTYPE`` names are
     ``tl.float32``, flags
     (``HAS_*``, ``IS_*``, ``USE_*``, ``EVEN_*``...) are ``False``, ``GROUP*`` sizes are ``8``,
     ``NUM_STAGES``/``num_*`` are 2 and every other constexpr is ``64`` (a power of two);
   - a parameter is a pointer when the kernel dereferences it (it appears in the pointer argument
     of ``tl.load``/``tl.store``/``tl.atomic_*``/``tl.make_block_ptr``) or its name says so
     (``*_ptr``, ``ptr``, ``*_ptrs``); pointers are ``*fp32``, or ``*fp16``/``*bf16`` when the name
     hints (``fp16``, ``half``, ``bf16``) or the module's host code names half-precision torch
     dtypes (``torch.float16``...) and never ``torch.float32``, and they are assumed 16-byte
     aligned, as Triton's
     launcher specializes them for tensors from PyTorch's allocator; pointers named like integer
     data (``lock``, ``idx``, ``indices``, ``count``, ``offsets``, ``seqlen``...), used by
     ``tl.atomic_cas``/``tl.atomic_xchg`` with integer operands, or whose loaded values end up in
     an address (``dest = tl.load(Dest_loc + i)`` ... ``Out + dest * stride``) or in integer-only
     arithmetic (``//``, ``%``, shifts, bit operations) are ``*i32``;
   - a stride parameter (``stride`` in its name) is the constant 1 when every launch passes a
     literal 1 or ``t.stride(-1)`` for it, or when it scales an index broadcast along a tile's last axis
     (``offs_n[None, :] * stride_cn``) and no launch passes another stride for it than a tensor's
     last (``t.stride(-1)`` or the highest ``t.stride(d)`` of the call): Triton's launcher turns
     an integer argument equal to 1 into the constant 1, so contiguous tensors compile that way;
   - scalars named like floats (``eps``, ``scale``, ``alpha``, ``beta``, ``*_f``...) are ``fp32``;
     every other scalar is ``i32``, assumed divisible by 16 (Triton's launcher specializes
     integers that are multiples of 16, which sizes and strides usually are). Write
     ``n="i32"`` in a ``specialize`` comment to drop that assumption, ``n="i32:16"`` to keep it.

In a ``specialize`` comment a string value is a type (``"*fp16"``, ``"i64"``, ``"fp32"``) and any
other literal is a constexpr value; ``num_warps`` and ``num_stages`` set the launch options.
Parameters a comment leaves out keep their fallback.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, replace
from typing import Any

from kernlint.ir.param_use import ParamUse, param_use
from kernlint.model import BoundArg, Kernel, Launch
from kernlint.source.configs import DTYPE_TEXT, constexpr_literal, parse_config
from kernlint.source.discover import DiscoveredKernel, ModuleInfo

SPECIALIZE_COMMENT = re.compile(r"#\s*kernlint:\s*specialize\((?P<body>.*)\)\s*$")
DEFAULT_MAX_CONFIGS = 4
DEFAULT_NUM_WARPS = 4
DEFAULT_NUM_STAGES = 3

_FLOAT_NAMES = re.compile(
    r"^(eps|epsilon|scale|sm_scale|alpha|beta|gamma|momentum|temperature|temp|lr|p|dropout_p|"
    r"theta|softcap|.*_scale|.*_eps|.*_f|.*_alpha|.*_beta)$", re.I)
_FLAG_NAMES = re.compile(r"^(HAS|IS|USE|EVEN|ENABLE|DO|WITH|APPLY|TRANS|RETURN|SAVE|STORE|NEED)_", re.I)


@dataclass(frozen=True)
class Specialization:
    """One compilation of a kernel: Triton signature, constexpr values and launch options."""

    #: parameter name -> Triton type (``*fp32``, ``i32``, ``fp32``) or ``constexpr``
    signature: dict[str, str]
    constexprs: dict[str, Any]
    num_warps: int = DEFAULT_NUM_WARPS
    num_stages: int = DEFAULT_NUM_STAGES
    #: parameters assumed divisible by 16 (pointers: 16-byte aligned)
    divisible: tuple[str, ...] = ()
    #: short human-readable name, e.g. ``autotune[1] BLOCK=128 warps=4 stages=3``
    label: str = ""
    #: where it came from: ``comment`` | ``autotune`` | ``launch`` | ``fallback``
    origin: str = "fallback"
    #: constexprs compiled with a value kernlint chose (nothing in the module gave one)
    guessed: tuple[str, ...] = ()

    def guessed_values(self) -> str:
        """``BLOCK_M=64, BLOCK_N=64``: the guessed constexprs with the values compiled."""
        return ", ".join(f"{p}={self.constexprs.get(p)}" for p in self.guessed)

    def key(self) -> str:
        """A canonical string: part of the cache key."""
        return json.dumps(
            {
                "signature": self.signature,
                "constexprs": {k: repr(v) for k, v in self.constexprs.items()},
                "num_warps": self.num_warps,
                "num_stages": self.num_stages,
                "divisible": sorted(self.divisible),
            },
            sort_keys=True,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "origin": self.origin,
            "signature": dict(self.signature),
            "constexprs": {k: _jsonable(v) for k, v in self.constexprs.items()},
            "num_warps": self.num_warps,
            "num_stages": self.num_stages,
            "divisible": list(self.divisible),
            "guessed": list(self.guessed),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Specialization":
        return cls(
            signature=dict(d["signature"]),
            constexprs=dict(d["constexprs"]),
            num_warps=int(d["num_warps"]),
            num_stages=int(d["num_stages"]),
            divisible=tuple(d.get("divisible", ())),
            label=d.get("label", ""),
            origin=d.get("origin", "fallback"),
            guessed=tuple(d.get("guessed", ())),
        )


def _jsonable(v: Any) -> Any:
    return v if isinstance(v, (int, float, str, bool)) or v is None else repr(v)


# --------------------------------------------------------------------------------------------
# what the specializer reads of one kernel: the source phase's model, nothing parsed again


@dataclass(frozen=True)
class _Target:
    """One kernel as the source phase modelled it: the discovered :class:`Kernel` (parameters,
    annotations, defaults, autotune configs), what its body does with the parameters, and its
    launches from the module's facts."""

    kernel: Kernel
    use: ParamUse
    #: the kernel's launches in the module's facts (each parameter's bound argument, typed)
    launches: list[Launch]
    #: the element type of float pointers without a hint in their name (:func:`module_float_type`)
    float_type: str
    #: first decorator line (1-based)
    first_line: int

    @property
    def params(self) -> list[str]:
        return [p.name for p in self.kernel.params]

    @property
    def constexpr(self) -> set[str]:
        # Triton's own test: "constexpr" in the annotation's text (a string annotation counts)
        return {p.name for p in self.kernel.params if p.annotation and "constexpr" in p.annotation}

    @property
    def defaults(self) -> dict[str, str]:
        return {p.name: p.default for p in self.kernel.params if p.default is not None}

    @property
    def annotations(self) -> dict[str, str]:
        return {p.name: p.annotation for p in self.kernel.params if p.annotation is not None}

    @property
    def def_line(self) -> int:
        return self.kernel.span.line

    def unit_strides(self) -> set[str]:
        """Stride parameters that are 1 for contiguous tensors, compiled as the constant 1 as
        Triton's launcher does with an integer argument equal to 1: those every launch passes a
        literal 1 or ``t.stride(-1)`` for, and those that scale an index broadcast along a tile's
        last axis (``offs_n[None, :] * stride_cn``) unless a launch passes something else than the
        last stride of a tensor for them (``t.stride(0)``, or ``t.stride(d)`` below the highest
        ``d`` the call passes for ``t``), and those that scale a 1-D lane index (``offs_k *
        xk_stride``) where the launches pass the highest stride of a tensor for them."""
        out = set()
        constexpr = self.constexpr
        for p in self.params:
            if p in constexpr or "stride" not in p.lower():
                continue
            texts = [_argument_texts(launch) for launch in self.launches]
            verdicts = [_unit_argument(launch, p) for launch in texts if p in launch]
            if verdicts and all(v == "one" for v in verdicts):
                out.add(p)
            elif p in self.use.last_axis_strides and "other" not in verdicts:
                out.add(p)
            elif p in self.use.lane_strides and "last" in verdicts and "other" not in verdicts:
                out.add(p)  # a 1-D index scaled by the last stride the call passes for its tensor
        return out


def _target(info: ModuleInfo, found: DiscoveredKernel) -> _Target:
    kernel = found.kernel
    fn = found.node
    params = [p.name for p in kernel.params]
    constexpr = {p.name for p in kernel.params if p.annotation and "constexpr" in p.annotation}
    first = found.locator.span(fn.decorators[0]).line if fn.decorators else kernel.span.line
    return _Target(kernel, param_use(fn, params, constexpr, info.functions),
                   info.facts.launches_of(kernel), module_float_type(info.source), first)


_STRIDE_CALL = re.compile(r"^(?P<t>[\w.\[\]]+?)\.stride\(\s*(?P<d>-?\d+)\s*\)$")


def _unit_argument(launch: dict[str, str], param: str) -> str:
    """What a launch passes for a stride: ``one`` (a literal 1, or ``t.stride(-1)``), ``last`` (the
    highest ``t.stride(d)``, d >= 1, the call passes for ``t``: the last dimension unless the call
    leaves later ones out), ``other`` (another stride of a tensor, or another literal) or
    ``unknown``."""
    text = launch[param].strip()
    if text == "1":
        return "one"
    if re.fullmatch(r"-?\d+", text):
        return "other"
    m = _STRIDE_CALL.match(text)
    if not m:
        return "unknown"
    d = int(m.group("d"))
    if d == -1:
        return "one"  # the last dimension's stride: 1 for a contiguous tensor
    dims = [int(x.group("d")) for x in (_STRIDE_CALL.match(v.strip()) for v in launch.values())
            if x and x.group("t") == m.group("t")]
    if -1 in dims:  # the call passes the last stride as stride(-1): stride(d) is another one
        return "other"
    return "last" if d >= 1 and d == max(dims) else "other"


def _argument_text(arg: BoundArg) -> str:
    """A launch argument as the specializer reads it: the literal a host value resolves to
    (``BLOCK=BLOCK`` after ``BLOCK, N = 64, 128`` reads as ``64``), else the text as written."""
    value = arg.value.value if arg.value is not None and not arg.value.guessed else None
    if isinstance(value, bool) or isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value if DTYPE_TEXT.match(value) else repr(value)
    return arg.text


def _argument_texts(launch: Launch) -> dict[str, str]:
    """A launch as param (or launch option) -> argument text, host values resolved to literals."""
    bound = {p: _argument_text(a) for p, a in launch.options.items()}
    bound.update({p: _argument_text(a) for p, a in launch.args.items()})
    return bound


_NO_VALUE = object()


def _launch_value(launch: Launch, name: str) -> Any:
    """What a launch passes for a parameter or option: the value the module's facts resolved (a
    literal, a dtype as its text), else the literal the argument is; ``_NO_VALUE`` otherwise."""
    arg = launch.args.get(name) or launch.options.get(name)
    if arg is None:
        return _NO_VALUE
    value = arg.value.value if arg.resolved else None
    if isinstance(value, (bool, int, float, str)):
        return value
    try:
        return constexpr_literal(arg.text)
    except (ValueError, SyntaxError):
        return _NO_VALUE


# --------------------------------------------------------------------------------------------
# building specializations


_INT_POINTER_NAMES = re.compile(r"(lock|idx|index|indices|count|offsets|seqlen|_ids|^ids|token|expert|"
                                r"sorted|histogram|bins|label|target)", re.I)


_HALF = re.compile(r"\btorch\.(float16|half|bfloat16)\b")
_SINGLE = re.compile(r"\btorch\.(float32|float)\b|dtype\s*=\s*['\"]float32")


def module_float_type(source: str) -> str:
    """The float element type a module's tensors have, as far as its host code shows: ``*fp16``
    or ``*bf16`` when it names half-precision torch dtypes (``torch.float16``...) and never
    ``torch.float32``, else ``*fp32``. Kernel-side casts (``.to(tl.float16)``) do not count: they
    say what a value becomes, not what the tensor holds."""
    half = {m.group(1) for m in _HALF.finditer(source)}
    if not half or _SINGLE.search(source):
        return "*fp32"
    return "*bf16" if half == {"bfloat16"} else "*fp16"


def _pointer_type(name: str, int_hint: bool = False, float_type: str = "*fp32") -> str:
    low = name.lower()
    if int_hint or _INT_POINTER_NAMES.search(name):
        return "*i32"
    if "bf16" in low or "bfloat" in low:
        return "*bf16"
    if "fp16" in low or "half" in low or "f16" in low:
        return "*fp16"
    if "int8" in low or "i8" == low[-2:]:
        return "*i8"
    if "fp32" in low or "float32" in low or "f32" in low:
        return "*fp32"
    return float_type


def _is_pointer_name(name: str) -> bool:
    low = name.lower()
    return low.endswith("ptr") or low.endswith("ptrs") or low in ("ptr", "base") or low.endswith("_p")


def _constexpr_fallback(name: str, default: str | None, dtype_use: bool = False) -> Any:
    if default is not None:
        try:
            return constexpr_literal(default)
        except ValueError:
            pass
    if dtype_use or re.search(r"(^|_)DTYPE$", name, re.I):
        return "tl.float32"  # ACC_TYPE used as ``dtype=ACC_TYPE``, OUT_DTYPE, dtype
    if _FLAG_NAMES.match(name):
        return False
    up = name.upper()
    if up.startswith("GROUP"):
        return 8
    if "STAGES" in up or up.startswith("NUM_"):
        return 2
    return 64


def fallback(ks: _Target) -> Specialization:
    signature: dict[str, str] = {}
    constexprs: dict[str, Any] = {}
    divisible = []
    unit = ks.unit_strides()
    constexpr, defaults, annotations = ks.constexpr, ks.defaults, ks.annotations
    for p in ks.params:
        ann = annotations.get(p, "")
        if p in constexpr:
            signature[p] = "constexpr"
            constexprs[p] = _constexpr_fallback(p, defaults.get(p), p in ks.use.dtype_constexprs)
        elif p in unit:
            signature[p] = "constexpr"  # what Triton's launcher makes of an integer argument equal to 1
            constexprs[p] = 1
        elif p in ks.use.dereferenced or _is_pointer_name(p) or "pointer" in ann:
            signature[p] = _pointer_type(p, p in ks.use.int_pointers, ks.float_type)
            divisible.append(p)
        elif _FLOAT_NAMES.match(p) and "stride" not in p.lower() or ann in ("float", "tl.float32"):
            signature[p] = "fp32"
        else:
            signature[p] = "i64" if ann in ("tl.int64",) else "i32"
            divisible.append(p)
    return Specialization(signature, constexprs, DEFAULT_NUM_WARPS, DEFAULT_NUM_STAGES,
                          tuple(divisible), label="fallback", origin="fallback")


def _override(base: Specialization, values: dict[str, Any], num_warps: int | None,
              num_stages: int | None, label: str, origin: str, declared: set[str] = frozenset(),
              guessed: tuple[str, ...] = ()) -> Specialization:
    signature = dict(base.signature)
    constexprs = dict(base.constexprs)
    divisible = set(base.divisible)
    for k, v in values.items():
        if k not in signature:
            continue
        if signature[k] == "constexpr" and k not in declared and isinstance(v, str):
            constexprs.pop(k, None)  # a stride guessed to be 1, given a type: no longer a constant
            signature[k] = "i32"
        if signature[k] == "constexpr":
            constexprs[k] = v
        elif isinstance(v, str):
            typ, _, div = v.partition(":")
            signature[k] = typ
            if div == "16" or (typ.startswith("*") and div != "1"):
                divisible.add(k)
            else:
                divisible.discard(k)
    return Specialization(signature, constexprs, num_warps or base.num_warps,
                          num_stages or base.num_stages, tuple(p for p in signature if p in divisible),
                          label=label, origin=origin, guessed=guessed)


def _describe(values: dict[str, Any], num_warps: int, num_stages: int) -> str:
    parts = [f"{k}={v}" for k, v in values.items()]
    return " ".join(parts + [f"warps={num_warps}", f"stages={num_stages}"])


def parse_specialize_comment(body: str) -> tuple[dict[str, Any], int | None, int | None]:
    """``NAME=VALUE, ...`` -> (values, num_warps, num_stages); raises ValueError when malformed."""
    call = ast.parse(f"f({body})", mode="eval").body
    assert isinstance(call, ast.Call)
    values: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise ValueError("specialize() takes NAME=VALUE pairs")
        values[kw.arg] = ast.literal_eval(kw.value)
    nw = values.pop("num_warps", None)
    ns = values.pop("num_stages", None)
    return values, nw, ns


def comment_specializations(source_lines: list[str], ks: _Target) -> list[tuple[int, str]]:
    """(line, body) of ``specialize`` comments on the kernel's header or directly above it."""
    out = []
    start = ks.first_line - 1  # 0-based index of first decorator
    i = start - 1
    while i >= 0 and source_lines[i].strip().startswith("#"):  # comment block just above
        i -= 1
    for idx in range(i + 1, ks.def_line):
        m = SPECIALIZE_COMMENT.search(source_lines[idx]) if idx < len(source_lines) else None
        if m:
            out.append((idx + 1, m.group("body")))
    return out


def specializations_for(kernel: Kernel | str, module: ModuleInfo | str, max_configs: int = DEFAULT_MAX_CONFIGS,
                        configured: dict[str, Any] | None = None) -> tuple[list[Specialization], list[str]]:
    """The specializations to compile for ``kernel`` (a Kernel or a kernel name) of ``module``: the
    source phase's model of the module (or its text, modelled here).

    ``configured``: ``NAME = value`` pairs from ``[tool.kernlint.specialize]``, compiled as a
    ``specialize`` comment would be.
    Returns (specializations, problems): problems are malformed comments/configs, reported by the
    caller as notes; they never stop the fallback from being compiled. A specialization lists in
    ``guessed`` the constexprs no comment, config, launch or default gave a value.
    """
    from kernlint.source.phase import read_module

    name = kernel if isinstance(kernel, str) else kernel.name
    info = module if isinstance(module, ModuleInfo) else read_module("<module>", module)
    found = info.discovered(kernel) if info is not None else None
    if found is None:
        return [], [f"kernel {name} not found"]
    ks = _target(info, found)
    source = info.source
    base = fallback(ks)
    problems: list[str] = []
    specs: list[Specialization] = []
    for line, body in comment_specializations(source.splitlines(), ks):
        try:
            values, nw, ns = parse_specialize_comment(body)
        except (ValueError, SyntaxError) as e:
            problems.append(f"line {line}: malformed specialize comment: {e}")
            continue
        unknown = sorted(set(values) - set(ks.params))
        if unknown:
            problems.append(f"line {line}: specialize names unknown parameters {unknown}")
        specs.append(_override(base, values, nw, ns,
                               f"comment@{line} " + _describe(values, nw or base.num_warps, ns or base.num_stages),
                               "comment", declared=ks.constexpr, guessed=_guessed(ks, values)))
    if configured:
        values = dict(configured)
        nw, ns = values.pop("num_warps", None), values.pop("num_stages", None)
        unknown = sorted(set(values) - set(ks.params))
        if unknown:
            problems.append(f"[tool.kernlint.specialize] {name} names unknown parameters {unknown}")
        specs.append(_override(base, values, nw, ns,
                               "config " + _describe(values, nw or base.num_warps, ns or base.num_stages),
                               "comment", declared=ks.constexpr, guessed=_guessed(ks, values)))
    if specs:
        return specs, problems
    launch_values = [_launch_constexprs(ks, launch) for launch in ks.launches]
    # what every launch passes alike fills the constexprs an autotune config leaves out
    common = {k: v for k, v in launch_values[0].items() if all(lv.get(k) == v for lv in launch_values)
              } if launch_values else {}
    for i, text in enumerate(ks.kernel.autotune_configs[:max_configs]):
        try:
            values, nw, ns = parse_config(text)
        except (ValueError, SyntaxError) as e:
            problems.append(f"autotune config {i}: cannot read {text!r}: {e}")
            continue
        values = {**{k: v for k, v in common.items() if k not in values}, **values}
        specs.append(_override(base, values, nw, ns,
                               f"autotune[{i}] " + _describe(values, nw or base.num_warps, ns or base.num_stages),
                               "autotune", declared=ks.constexpr, guessed=_guessed(ks, values)))
    if specs:
        return specs, problems
    seen = set()
    for launch, values in zip(ks.launches, launch_values):
        nw, ns = (v if isinstance(v := _launch_value(launch, o), int) else None for o in ("num_warps", "num_stages"))
        spec = _override(base, values, nw, ns, "launch " + _describe(values, nw or base.num_warps,
                                                                         ns or base.num_stages), "launch",
                         declared=ks.constexpr, guessed=_guessed(ks, values))
        if values and spec.key() not in seen:
            seen.add(spec.key())
            specs.append(spec)
        if len(specs) >= max_configs:
            break
    return (specs or [replace(base, guessed=_guessed(ks, {}))]), problems


def _launch_constexprs(ks: _Target, launch: Launch) -> dict[str, Any]:
    values = {}
    constexpr = ks.constexpr
    for p in ks.params:
        if p in constexpr and (v := _launch_value(launch, p)) is not _NO_VALUE:
            values[p] = v
    return values


def _guessed(ks: _Target, values: dict[str, Any]) -> tuple[str, ...]:
    """Constexprs a specialization compiles with a value kernlint chose (no literal default)."""
    out = []
    constexpr, defaults = ks.constexpr, ks.defaults
    for p in ks.params:
        if p not in constexpr or p in values:
            continue
        try:
            constexpr_literal(defaults[p])
        except (KeyError, ValueError):
            out.append(p)
    return tuple(out)
