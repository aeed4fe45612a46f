"""Comparing candidate outputs with the reference: tolerances, structure, null models, poisoning.

Tolerance: ``|c - r| <= atol + rtol * |r|`` element-wise with ``atol = max(atol_scale * rms(r),
atol_floor)``: the absolute part scales with the output's magnitude (an output of 1e4 is not held
to 1e-3 absolute, an output of 1e-3 is not waved through by it), per dtype: KernelBench's
``atol = rtol = 1e-4`` for fp32 and ``1e-2`` for fp16/bf16 (here relative to the RMS). A problem
may set its own (:func:`parse_tolerances`). Integer and boolean outputs must match exactly. NaN in
the candidate where the reference has none is a mismatch.

An fp32 (or fp64) output that misses its tolerance but meets a half-precision one has an error of
the size a low-precision computation leaves (:func:`low_precision_sized`): the judge names it
``precision-downgrade`` beside ``wrong``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

#: dtype -> (rtol, atol_scale, atol_floor)
TOLERANCES = {
    torch.float64: (1e-7, 1e-7, 1e-12),
    torch.float32: (1e-4, 1e-4, 1e-6),
    torch.float16: (1e-2, 1e-2, 1e-4),
    torch.bfloat16: (1e-2, 1e-2, 1e-3),
}
FLOAT8 = tuple(getattr(torch, n) for n in ("float8_e4m3fn", "float8_e5m2") if hasattr(torch, n))
#: what a half-precision computation of an fp32/fp64 result stays within (twice the half
#: tolerances: a few rounded steps compound); an error inside it but outside the task's tolerance
#: is low-precision-sized
LOW_PRECISION = (2e-2, 2e-2, 1e-3)
#: a problem's tolerance: these keys, for every floating dtype or under a dtype's name
TOLERANCE_KEYS = ("rtol", "atol", "atol_floor")

Tolerances = dict  # dtype -> (rtol, atol_scale, atol_floor); entries override TOLERANCES


def tolerance(dtype: torch.dtype, scale: float = 1.0, tolerances: Tolerances | None = None
              ) -> tuple[float, float, float]:
    if tolerances and dtype in tolerances:
        r, a, f = tolerances[dtype]
    elif dtype in FLOAT8:
        r, a, f = 1.25e-1, 1.25e-1, 1e-2
    else:
        r, a, f = TOLERANCES.get(dtype, TOLERANCES[torch.float32])
    return r * scale, a * scale, f * scale


def parse_tolerances(spec: Any) -> Tolerances:
    """A problem's tolerance (its module's ``TOLERANCE``) as :data:`Tolerances`: either
    ``{"rtol": .., "atol": .., "atol_floor": ..}`` for every floating dtype, or such dicts under
    dtype names (``{"float32": {"rtol": 1e-3, "atol": 1e-3}}``). ``atol`` scales with the output's
    RMS, as the defaults do; missing keys keep the dtype's default. ValueError when malformed."""
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise ValueError(f"TOLERANCE must be a dict, not {type(spec).__name__}")
    floats = [torch.float64, torch.float32, torch.float16, torch.bfloat16, *FLOAT8]
    if set(spec) <= set(TOLERANCE_KEYS):
        per = {d: spec for d in floats}
    else:
        per = {}
        for name, sub in spec.items():
            d = getattr(torch, str(name), None)
            if not isinstance(d, torch.dtype) or not isinstance(sub, dict):
                raise ValueError(f"TOLERANCE[{name!r}]: not a dtype name with a dict of {', '.join(TOLERANCE_KEYS)}")
            per[d] = sub
    out = {}
    for d, sub in per.items():
        unknown = set(sub) - set(TOLERANCE_KEYS)
        if unknown:
            raise ValueError(f"TOLERANCE: unknown key(s) {sorted(unknown)} (known: {', '.join(TOLERANCE_KEYS)})")
        base = tolerance(d)
        vals = tuple(float(sub.get(k, b)) for k, b in zip(TOLERANCE_KEYS, base))
        if not all(v >= 0 and math.isfinite(v) for v in vals):
            raise ValueError(f"TOLERANCE for {d}: values must be finite and >= 0, got {vals}")
        out[d] = vals
    return out


def tolerances_to_json(tolerances: Tolerances) -> dict:
    return {str(d).removeprefix("torch."): dict(zip(TOLERANCE_KEYS, v)) for d, v in tolerances.items()}


def flatten(out: Any, prefix: str = "out") -> list[tuple[str, Any]]:
    """Leaves of an output: tensors and scalars, keyed by their path (``out[0]``, ``out['x']``)."""
    if isinstance(out, torch.Tensor):
        return [(prefix, out)]
    if isinstance(out, dict):
        items = []
        for k in sorted(out, key=str):
            items += flatten(out[k], f"{prefix}[{k!r}]")
        return items
    if isinstance(out, (list, tuple)):
        items = []
        for i, v in enumerate(out):
            items += flatten(v, f"{prefix}[{i}]")
        return items
    return [(prefix, out)]


@dataclass
class Comparison:
    ok: bool
    reason: str = ""
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    mismatch_fraction: float = 0.0
    where: str = ""

    def to_dict(self) -> dict:
        return {k: (v if not isinstance(v, float) or math.isfinite(v) else str(v))
                for k, v in self.__dict__.items()}


def compare_tensor(c: torch.Tensor, r: torch.Tensor, scale: float = 1.0,
                   tolerances: Tolerances | None = None) -> Comparison:
    if tuple(c.shape) != tuple(r.shape):
        return Comparison(False, f"shape {tuple(c.shape)} != reference {tuple(r.shape)}")
    if r.numel() == 0:
        return Comparison(True)
    if not r.is_floating_point() and not r.is_complex():
        c2, r2 = c.detach().cpu(), r.detach().cpu()
        if c2.dtype != r2.dtype:
            c2 = c2.to(r2.dtype) if not c2.is_floating_point() else c2
        bad = (c2 != r2)
        frac = float(bad.float().mean())
        return Comparison(frac == 0.0, "" if frac == 0 else "integer values differ", mismatch_fraction=frac)
    rtol, atol_scale, floor = tolerance(r.dtype, scale, tolerances)
    cf = c.detach().to(torch.float64).cpu()
    rf = r.detach().to(torch.float64).cpu()
    finite = torch.isfinite(rf)
    rms = float(rf[finite].pow(2).mean().sqrt()) if bool(finite.any()) else 0.0
    atol = max(atol_scale * rms, floor)
    nan_c, nan_r = torch.isnan(cf), torch.isnan(rf)
    if bool((nan_c & ~nan_r).any()):
        return Comparison(False, "NaN in the output where the reference has none",
                          mismatch_fraction=float((nan_c & ~nan_r).float().mean()))
    inf_mismatch = (torch.isinf(cf) | torch.isinf(rf)) & (cf != rf)
    diff = (cf - rf).abs()
    diff = torch.where(nan_r & nan_c, torch.zeros_like(diff), diff)
    bad = (diff > atol + rtol * rf.abs()) | inf_mismatch
    bad = bad & ~(nan_r & nan_c)
    max_abs = float(diff[torch.isfinite(diff)].max()) if bool(torch.isfinite(diff).any()) else 0.0
    rel = diff / (rf.abs() + atol)
    max_rel = float(rel[torch.isfinite(rel)].max()) if bool(torch.isfinite(rel).any()) else 0.0
    frac = float(bad.float().mean())
    return Comparison(frac == 0.0, "" if frac == 0 else f"{frac:.2%} of elements outside tolerance",
                      max_abs, max_rel, frac)


def compare(cand: Any, ref: Any, scale: float = 1.0, exact_type: bool = True,
            tolerances: Tolerances | None = None) -> Comparison:
    """Compare two outputs leaf by leaf; the first failing leaf decides."""
    cl, rl = flatten(cand), flatten(ref)
    if [k for k, _ in cl] != [k for k, _ in rl]:
        return Comparison(False, f"output structure {[k for k, _ in cl][:4]} != reference {[k for k, _ in rl][:4]}")
    worst = Comparison(True)
    for (key, c), (_, r) in zip(cl, rl):
        if isinstance(r, torch.Tensor):
            if not isinstance(c, torch.Tensor):
                return Comparison(False, f"{key}: {type(c).__name__} where the reference returns a tensor", where=key)
            res = compare_tensor(c, r, scale, tolerances)
        elif isinstance(r, (int, float)) and isinstance(c, (int, float)):
            ok = math.isclose(float(c), float(r), rel_tol=1e-4, abs_tol=1e-6) or (math.isnan(c) and math.isnan(r))
            res = Comparison(ok, "" if ok else f"{c!r} != {r!r}")
        else:
            ok = type(c) is type(r) and c == r if not exact_type else c == r
            res = Comparison(bool(ok), "" if ok else f"{key}: {c!r} != {r!r}")
        if not res.ok:
            res.where = key
            return res
        worst.max_abs_err = max(worst.max_abs_err, res.max_abs_err)
        worst.max_rel_err = max(worst.max_rel_err, res.max_rel_err)
    return worst


def low_precision_sized(cand: Any, ref: Any, scale: float = 1.0, tolerances: Tolerances | None = None) -> list[str]:
    """The fp32/fp64 output leaves (their paths) that fail their own tolerance but meet
    :data:`LOW_PRECISION`, when every other leaf meets it too: the candidate's whole error is of
    the size a half-precision computation leaves (empty: not a low-precision error)."""
    cl, rl = flatten(cand), flatten(ref)
    if [k for k, _ in cl] != [k for k, _ in rl]:
        return []
    low = {d: LOW_PRECISION for d in (torch.float32, torch.float64)}
    found = []
    for (key, c), (_, r) in zip(cl, rl):
        if not isinstance(r, torch.Tensor):
            continue
        if not isinstance(c, torch.Tensor) or not r.is_floating_point():
            return []
        if not compare_tensor(c, r, scale, low).ok:
            return []
        if r.dtype in low and not compare_tensor(c, r, scale, tolerances).ok:
            found.append(key)
    return found


def constant_leaves(cand: Any, ref: Any) -> list[str]:
    """Output leaves where the candidate's tensor holds one value everywhere and the reference's
    does not (a constant answer, not a computed one)."""
    found = []
    for (key, c), (_, r) in zip(flatten(cand), flatten(ref)):
        if (isinstance(c, torch.Tensor) and isinstance(r, torch.Tensor) and c.numel() > 1 and r.numel() > 1
                and c.shape == r.shape and bool((c == c.reshape(-1)[0]).all()) and not bool((r == r.reshape(-1)[0]).all())):
            found.append(key)
    return found


def plain_tensor_leaves(out: Any) -> bool:
    """False when an output leaf is a tensor subclass (lazy tensors defer work past the timer)."""
    return all(type(v) is torch.Tensor or not isinstance(v, torch.Tensor) for _, v in flatten(out))


def output_constants(out: Any) -> dict[str, float]:
    """The mean of each floating output leaf, by its :func:`flatten` key: the constants a candidate
    could hard-code, when taken from the reference's output on other inputs."""
    return {k: float(v.float().nanmean()) for k, v in flatten(out)
            if isinstance(v, torch.Tensor) and v.is_floating_point() and v.numel()}


def _map_tensors(fn, out: Any, prefix: str = "out") -> Any:
    """``out`` with each tensor leaf replaced by ``fn(key, tensor)`` (keys as :func:`flatten`'s)."""
    if isinstance(out, torch.Tensor):
        return fn(prefix, out)
    if isinstance(out, dict):
        return {k: _map_tensors(fn, v, f"{prefix}[{k!r}]") for k, v in out.items()}
    if isinstance(out, (list, tuple)):
        return type(out)(_map_tensors(fn, v, f"{prefix}[{i}]") for i, v in enumerate(out))
    return out


def null_models(ref_out: Any, inputs: list, constants: dict[str, float] | None = None) -> dict[str, Any]:
    """Trivial answers every task must reject: zeros, a constant, the identity.

    The constant is one fixed before these inputs were seen (``constants``: :func:`output_constants`
    of the reference's output on other inputs); the output's own mean would be the answer itself
    whenever the output has one element (a full reduction), so without ``constants`` there is no
    constant model."""
    models = {"zeros": _map_tensors(lambda _, t: torch.zeros_like(t), ref_out)}
    if constants is not None:
        models["constant"] = _map_tensors(
            lambda k, t: torch.full_like(t, constants[k]) if t.is_floating_point() and k in constants
            else torch.ones_like(t), ref_out)
    if isinstance(ref_out, torch.Tensor):
        for x in inputs:
            if isinstance(x, torch.Tensor) and x.shape == ref_out.shape and x.dtype == ref_out.dtype:
                models["identity"] = x.clone()
                break
    return models


def audit_null_models(ref_out: Any, inputs: list, scale: float = 1.0, tolerances: Tolerances | None = None,
                      constants: dict[str, float] | None = None) -> list[str]:
    """Names of the null models that PASS the tolerance (non-empty: the task is degenerate)."""
    return [name for name, out in null_models(ref_out, inputs, constants).items()
            if compare(out, ref_out, scale, tolerances=tolerances).ok]


def poison_allocator(sizes_bytes: list[int], device: torch.device, copies: int = 3) -> None:
    """Fill freed allocator blocks of the given sizes with NaN.

    On CUDA the caching allocator hands a freed block back to the next request of a similar size;
    allocating those sizes, filling them with NaN and freeing them leaves NaN where a stale
    reference result could otherwise be found by a candidate's ``torch.empty``.
    """
    held = []
    for nbytes in sizes_bytes:
        n = max(1, (int(nbytes) + 3) // 4)
        for _ in range(copies):
            held.append(torch.full((n,), float("nan"), dtype=torch.float32, device=device))
    del held


def snapshot(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, (list, tuple)):
        return type(x)(snapshot(v) for v in x)
    if isinstance(x, dict):
        return {k: snapshot(v) for k, v in x.items()}
    return x


def unchanged(before: list, after: list) -> list[int]:
    """Indices of tensor inputs whose values (or NaN pattern) changed."""
    changed = []
    for i, (b, a) in enumerate(zip(before, after)):
        if isinstance(b, torch.Tensor) and isinstance(a, torch.Tensor):
            if b.shape != a.shape or not torch.equal(torch.nan_to_num(b, nan=1.2345), torch.nan_to_num(a, nan=1.2345)):
                changed.append(i)
    return changed
