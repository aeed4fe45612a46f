"""What a candidate's kernels were launched with, captured inside the candidate's process.

This is the only part of the structural checks that runs next to candidate code, and it only
records plain data: for each Triton kernel the candidate module defines, the specializations it was
launched with (argument types, constexpr values, divisibility, ``num_warps``/``num_stages``, grid)
and, when Triton compiled the launch for a GPU, the compiled kernel's TTGIR/PTX and metadata.
Everything that judges this data (the IR rules, ncu, the roofline, the verdict) runs in the
judge (:mod:`kernlint.eval.judge`, :mod:`kernlint.eval.structure`). Under ``TRITON_INTERPRET=1``
(CPU executors) nothing is compiled, so the executor compiles the captured specializations ahead
of time (:func:`compile_records`) in a fresh interpreter it starts, inside its sandbox: the
compiler imports the candidate's module, which only the candidate's side may do.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

#: distinct specializations recorded per kernel (an autotuner launches one per config)
MAX_SPECS_PER_KERNEL = 8
KEPT_ASM = ("ttgir", "ptx")
_TORCH_TO_TRITON = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64",
                    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
                    "bool": "i1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}


def _innermost(obj: Any) -> Any:
    """The JIT (or interpreted) function under autotune/heuristics wrappers."""
    from triton.runtime.jit import KernelInterface

    for _ in range(8):
        inner = getattr(obj, "fn", None)
        if not isinstance(inner, KernelInterface):
            return obj
        obj = inner
    return obj


def _python_function(fn: Any):
    inner = getattr(fn, "fn", None)
    return inner if callable(inner) and not hasattr(inner, "run") else None


def _arg_type(value: Any) -> str | None:
    """Triton's signature type of a runtime argument; None for a value Triton makes a constexpr."""
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        return "*" + _TORCH_TO_TRITON.get(str(value.dtype).replace("torch.", ""), "fp32")
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        if value == 1:
            return None  # Triton specializes an integer 1 into a constant
        return "i32" if -2**31 <= value < 2**31 else "i64"
    if isinstance(value, float):
        return "fp32"
    return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    text = str(value)
    if text.startswith(("triton.language.", "tl.")) or type(value).__name__ == "dtype":
        return "tl." + text.rsplit(".", 1)[-1]
    return text


def specialization_of(fn: Any, args: tuple, kwargs: dict) -> dict | None:
    """The compile-time facts of one launch: ``{"signature", "constexprs", "divisible",
    "num_warps", "num_stages"}`` in :class:`kernlint.ir.specialize.Specialization`'s terms."""
    py = _python_function(fn)
    if py is None:
        return None
    params = inspect.signature(py).parameters
    own = {k: v for k, v in kwargs.items() if k in params}
    try:
        bound = inspect.signature(py).bind_partial(*args, **own)
    except TypeError:
        return None
    bound.apply_defaults()
    signature, constexprs, divisible = {}, {}, []
    for name, value in bound.arguments.items():
        annotation = params[name].annotation
        if "constexpr" in str(annotation):
            constexprs[name] = _jsonable(value)
            continue
        ty = _arg_type(value)
        if ty is None:
            constexprs[name] = _jsonable(value)
            continue
        signature[name] = ty
        if ty.startswith("*"):
            if value.data_ptr() % 16 == 0:
                divisible.append(name)
        elif ty in ("i32", "i64") and value % 16 == 0:
            divisible.append(name)
    from kernlint.ir.specialize import DEFAULT_NUM_STAGES, DEFAULT_NUM_WARPS

    return {"signature": signature, "constexprs": constexprs, "divisible": divisible,
            "num_warps": int(kwargs.get("num_warps") or DEFAULT_NUM_WARPS),
            "num_stages": int(kwargs.get("num_stages") or DEFAULT_NUM_STAGES)}


def _grid(grid: Any, meta: dict) -> list[int] | None:
    try:
        g = grid(meta) if callable(grid) else grid
        return [int(x) for x in (g if isinstance(g, (tuple, list)) else (g,))]
    except Exception:  # noqa: BLE001 - the grid is informative only
        return None


def compiled_data(kernel: Any) -> dict | None:
    """TTGIR/PTX and metadata of a Triton ``CompiledKernel`` (a GPU launch's return value)."""
    asm = getattr(kernel, "asm", None)
    if not isinstance(asm, dict):
        return None
    md = getattr(kernel, "metadata", None)
    try:
        kernel._init_handles()
    except Exception:  # noqa: BLE001 - registers then stay unknown
        pass
    target = getattr(md, "target", None)
    return {
        "asm": {k: str(asm[k]) for k in KEPT_ASM if k in asm},
        "metadata": {"name": getattr(md, "name", None), "num_warps": getattr(md, "num_warps", None),
                     "num_stages": getattr(md, "num_stages", None), "shared": int(getattr(md, "shared", 0) or 0),
                     "capability": getattr(target, "arch", None)},
        "n_regs": getattr(kernel, "n_regs", None),
        "n_spills": getattr(kernel, "n_spills", None),
    }


class LaunchCapture:
    """Records the launches of the Triton kernels in a candidate module's namespace.

    ``records`` is a plain list of dicts, updated in place (the worker keeps a reference in its
    result data, so every flush writes the latest state)."""

    def __init__(self, namespace: dict) -> None:
        from kernlint.eval.census import _kernel_objects

        self.records: list[dict] = []
        self._by_key: dict[tuple, dict] = {}
        self._by_fast: dict[tuple, dict] = {}
        self._seq = 0
        for name, obj in _kernel_objects(namespace).items():
            self._wrap(name, _innermost(obj))

    def _wrap(self, name: str, fn: Any) -> None:
        original = getattr(fn, "run", None)
        if original is None:
            return
        capture = self

        def run(self_, *args, **kwargs):
            entry = capture._note(name, fn, args, kwargs)
            ret = original(*args, **kwargs)
            if entry is not None and "asm" not in entry:
                data = compiled_data(ret)
                if data:
                    entry.update(data)
            return ret

        try:
            fn.run = types.MethodType(run, fn)
        except (AttributeError, TypeError):
            pass

    def _note(self, name: str, fn: Any, args: tuple, kwargs: dict) -> dict | None:
        self._seq += 1
        try:
            fast = (name, tuple(_fast_key(a) for a in args),
                    tuple((k, _fast_key(v)) for k, v in kwargs.items() if k != "grid"))
        except Exception:  # noqa: BLE001 - capture must never change the candidate's behaviour
            return None
        entry = self._by_fast.get(fast)
        if entry is None:
            entry = self._new_entry(name, fn, args, kwargs)
            if entry is None:
                return None
            self._by_fast[fast] = entry
        entry["launches"] += 1
        entry["last_launch"] = self._seq
        return entry

    def _new_entry(self, name: str, fn: Any, args: tuple, kwargs: dict) -> dict | None:
        try:
            spec = specialization_of(fn, args, kwargs)
        except Exception:  # noqa: BLE001
            return None
        if spec is None:
            return None
        key = (name, repr(sorted(spec["signature"].items())), repr(sorted(spec["constexprs"].items())),
               tuple(spec["divisible"]), spec["num_warps"], spec["num_stages"])
        entry = self._by_key.get(key)
        if entry is None:
            if sum(1 for r in self.records if r["kernel"] == name) >= MAX_SPECS_PER_KERNEL:
                return None
            meta = {**dict(zip(getattr(fn, "arg_names", ()), args)), **kwargs}
            entry = {"kernel": name, "spec": spec, "launches": 0, "last_launch": 0,
                     "grid": _grid(kwargs.get("grid"), meta)}
            self._by_key[key] = entry
            self.records.append(entry)
        return entry


def _fast_key(v: Any) -> Any:
    """What of an argument decides Triton's specialization, cheaply (checked on every launch)."""
    if hasattr(v, "data_ptr") and hasattr(v, "dtype"):
        return (v.dtype, v.data_ptr() % 16 == 0)
    if isinstance(v, int) and not isinstance(v, bool):
        return ("int", v == 1, v % 16 == 0, -2**31 <= v < 2**31)
    if isinstance(v, (str, float, bool)) or v is None:
        return v
    return type(v).__name__


def _aot_compile(entries: list[dict], source: str, capability: int) -> dict[int, dict]:
    """Compile launches' specializations ahead of time (launches Triton's interpreter ran): the IR
    phase's compile workers on this executor's own source, under a fresh interpreter started by
    this executor (its sandbox; an interpreted run leaves ``triton.language`` patched in this
    process). Index in ``entries`` -> the IR phase's artefact record (text, metadata, resources)."""
    import json
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="compile-", dir=".") as tmp:
        path = str(Path(tmp).resolve() / "candidate.py")
        Path(path).write_text(source)
        request = {"path": path, "capability": capability,
                   "launches": [{"kernel": e["kernel"], "spec": e["spec"]} for e in entries]}
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        proc = subprocess.run([sys.executable, "-m", "kernlint.eval.structure_capture"], input=json.dumps(request),
                              capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"compiler exit code {proc.returncode}: {proc.stderr[-300:]}")
    return {int(k): v for k, v in json.loads(proc.stdout).items()}


def _compile_main() -> None:
    """``python -m kernlint.eval.structure_capture``: a request on stdin, records on stdout."""
    import hashlib
    import json
    import sys

    from kernlint.ir.compile import CompileJob, run_jobs
    from kernlint.ir.specialize import Specialization

    req = json.loads(sys.stdin.read())
    jobs = {}
    for i, entry in enumerate(req["launches"]):
        spec = Specialization.from_dict({"label": "as launched", "origin": "launch", **entry["spec"]})
        key = hashlib.sha256(f"{entry['kernel']}\0{spec.key()}\0{req['capability']}".encode()).hexdigest()
        jobs[i] = CompileJob(req["path"], entry["kernel"], spec, int(req["capability"]), key)
    done = run_jobs(list(jobs.values()), workers=1)
    out = {i: done.get(job.key, {"ok": False, "error": "no result"}) for i, job in jobs.items()}
    sys.stdout.write(json.dumps(out, default=str))


def compile_records(records: list[dict], source: str, capability: int, module_path: str
                    ) -> tuple[list[dict], dict[str, str]]:
    """The launch records for the judge: plain fields in the records, every text (TTGIR, PTX) as a
    blob named in ``record["texts"]``. Records without a compiled kernel are compiled here
    (:func:`_aot_compile`); a failure is the record's ``compile_error``. ``source_path``: the file
    the compiled text's locations name (the module's, or the copy compiled here)."""
    missing = [i for i, e in enumerate(records) if not e.get("asm")]
    try:
        compiled = _aot_compile([records[i] for i in missing], source, capability) if missing else {}
    except Exception as exc:  # noqa: BLE001 - no compiler here: the judge records why
        compiled = {j: {"ok": False, "error": f"{type(exc).__name__}: {exc}"} for j in range(len(missing))}
    compiled = {missing[j]: rec for j, rec in compiled.items()}
    out, blobs = [], {}
    for i, entry in enumerate(records):
        rec = {k: v for k, v in entry.items() if k != "asm"}
        rec["source_path"] = module_path
        asm = entry.get("asm") or {}
        if i in compiled:
            got = compiled[i]
            asm = got.get("asm") or {} if got.get("ok") else {}
            rec.update(compiled_here=True, source_path=got.get("path", module_path), metadata={**(got.get("metadata") or {}), "capability": capability},
                       resources=got.get("resources"))
            if not got.get("ok"):
                rec["compile_error"] = str(got.get("error") or "did not compile")[:500]
        rec["texts"] = {}
        for kind, text in asm.items():
            key = f"l{i}.{kind}"
            blobs[key] = str(text)
            rec["texts"][kind] = key
        out.append(rec)
    return out, blobs


if __name__ == "__main__":
    _compile_main()
