"""An executor: ``python -m kernlint.eval.worker``, one process that runs the code of one side.

The judge (:mod:`kernlint.eval.judge`) starts two of them per candidate, each in the sandbox of
:mod:`kernlint.eval.isolation`: a *reference* executor that imports only the problem (it makes the
inputs from seeds the judge draws, and the reference outputs), and a *candidate* executor that
imports only the candidate. An executor reads requests on stdin and answers each on its channel
(:mod:`kernlint.eval.wire` frames): outputs, the inputs as they are after the call, raw timing
samples and what its in-process guards saw. It decides nothing: no comparison, no verdict, no count
of passed trials is made here, and the judge takes a candidate's answers as data, not as claims.

The channel is the stdout the process was started with, moved to a new descriptor before any other
code runs; fd 1 then points at the log (stderr), so a ``print`` in a candidate cannot corrupt it.
"""

from __future__ import annotations

import contextlib

import importlib
import importlib.util
import inspect
import os
import random
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from kernlint.eval import guards, wire
from kernlint.eval.wire import HARNESS_FAILED

#: the profiler range around each call a TritonBench test makes of the task's function
TASK_CALL = "kernlint::task-call"


class Stage(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def classify_exception(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".lower()
    name = type(exc).__name__
    if "illegal memory access" in text or "illegal address" in text or "misaligned address" in text:
        return "illegal-address"
    if (isinstance(exc, MemoryError) or "out of memory" in text or name == "OutOfMemoryError"
            or "can't allocate memory" in text or "bad_alloc" in text):
        return "out-of-memory"
    if "compilationerror" in name.lower() or type(exc).__module__.startswith("triton.compiler"):
        return "did-not-compile"
    return "runtime-error"


def load_module(path: Path, name: str, alias: str = ""):
    """Import ``path`` as ``name``; also as ``alias`` (a TritonBench test imports the task's function
    from a module named after the task's file) where no other module has that name."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    if alias.isidentifier() and alias not in sys.modules and importlib.util.find_spec(alias) is None:
        sys.modules[alias] = mod
    spec.loader.exec_module(mod)
    return mod


def set_seed(seed: int) -> None:
    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy as np

        np.random.seed(seed % (2**32))
    except ImportError:
        pass


# -- KernelBench shape variants ---------------------------------------------------------------


def perturbed_size(n: int) -> int:
    """A non-power-of-two size near ``n`` (smaller, odd): 16 -> 13, 4096 -> 3073."""
    return (n - n // 4) | 1


def shape_variant_inputs(mod, variant: int):
    """``(init_inputs, inputs)`` for a shape variant.

    Variant 0 is the problem as written. Other variants: if ``get_inputs`` accepts a parameter,
    the problem's own hook ``get_inputs(shape_variant)`` (and ``get_init_inputs(shape_variant)``)
    decides; otherwise the module-level integer constants >= 8 that the two functions read are
    replaced by nearby non-power-of-two values (:func:`perturbed_size`) for the call.
    """
    gi, gii = mod.get_inputs, getattr(mod, "get_init_inputs", lambda: [])
    if variant == 0:
        return list(gii()), list(gi())
    if inspect.signature(gi).parameters:
        init = gii(variant) if inspect.signature(gii).parameters else gii()
        return list(init), list(gi(variant))
    names = set(gi.__code__.co_names) | set(getattr(gii, "__code__", gi.__code__).co_names)
    saved = {}
    for n in names:
        v = mod.__dict__.get(n)
        if type(v) is int and v >= 8:
            saved[n] = v
            mod.__dict__[n] = perturbed_size(v)
    if not saved:
        raise Stage("no-variant", "no module-level size constants to perturb")
    try:
        return list(gii()), list(gi())
    finally:
        mod.__dict__.update(saved)


# -- the executor -----------------------------------------------------------------------------


def _device():
    import torch

    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


_SYNCHRONIZE = []


def _sync(device) -> None:
    """The device synchronize as it was before any problem or candidate code ran (a patched
    ``torch.cuda.synchronize`` would let calls return before their work is done)."""
    if device.type == "cuda":
        _SYNCHRONIZE[0]()


def _to(x: Any, device):
    import torch

    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, (list, tuple)):
        return type(x)(_to(v, device) for v in x)
    if isinstance(x, dict):
        return {k: _to(v, device) for k, v in x.items()}
    return x


class Executor:
    """The state of one executor process: the module it loaded, its model, kept input buffers."""

    def __init__(self) -> None:
        import torch

        self.device = _device()
        _SYNCHRONIZE[:] = [torch.cuda.synchronize]
        self.mod = None
        self.model = None
        self.role = ""
        self.kind = ""
        self.counter = None
        self.capture = None
        self.source = ""
        self.module_path = ""
        self.kept: list | None = None
        self.held: list = []
        self.sets: list[list] = []
        self.cheats: list[dict] = []
        self.compiled = None  # the reference under torch.compile (the baseline)
        self.cutlass: dict | None = None  # the reference with CUTLASS GEMMs (the baseline)

    # guards: what this process saw happen to its own globals (evidence the judge may add)
    def _guard(self, when: str) -> None:
        if self.role != "candidate":
            return
        patched = guards.changed_timers(self.timers)
        if patched:
            self._cheat("timer-patched", f"{', '.join(patched)} replaced ({when})")
            guards.restore_timers(self.timers)
        flipped = guards.changed_flags(self.flags)
        if flipped:
            self._cheat("global-flag-changed", f"{', '.join(flipped)} ({when})")
        # torch.compile (a baseline) starts worker threads while timing, the profiler its own while
        # profiling; the profiler's record names a candidate's launching thread there instead
        if when not in ("timing", "profiling") and guards.thread_count() > self.threads0:
            self._cheat("background-thread", f"{guards.thread_count() - self.threads0} new thread(s) ({when})")
        if self.counter is not None and self.counter.foreign_streams:
            self._cheat("side-stream-launch",
                        f"kernels launched on stream(s) other than the harness's {self.counter.foreign_streams[:3]}")

    def _cheat(self, reason: str, detail: str) -> None:
        if reason not in [c["reason"] for c in self.cheats]:
            self.cheats.append({"reason": reason, "detail": detail[:500]})

    # -- requests ------------------------------------------------------------------------------

    def op_load(self, req: dict, values: dict, texts: dict) -> dict:
        import platform
        from importlib.metadata import version

        import torch

        self.role, self.kind = req["role"], req["kind"]
        if req.get("device_memory_fraction") and torch.cuda.is_available():
            try:
                torch.cuda.set_per_process_memory_fraction(float(req["device_memory_fraction"]))
            except Exception:  # noqa: BLE001 - a best-effort limit
                pass
        source = texts["source"] + ("\n\n" + texts["test_code"] if texts.get("test_code") else "")
        self.source = texts["source"]
        name = "reference_problem" if self.role == "reference" else "candidate_module"
        path = Path.cwd() / f"{name}.py"
        self.module_path = str(path)
        path.write_text(source)
        self.timers, self.flags = guards.timer_snapshot(), guards.flag_snapshot()
        self.threads0 = guards.thread_count()
        if req.get("seed") is not None:
            set_seed(int(req["seed"]))
        try:
            self.mod = load_module(path, name, str(req.get("module_alias") or ""))
        except BaseException as exc:  # noqa: BLE001 - everything the import raises is that module's
            if self.role == "reference":
                raise Stage("reference-error", f"the reference does not load: {type(exc).__name__}: {exc}") from exc
            if self.kind == "kernelbench" or isinstance(exc, (SyntaxError, ImportError, NameError, AttributeError)):
                raise Stage("did-not-compile", f"{type(exc).__name__}: {exc}") from exc
            raise Stage(classify_exception(exc), f"{type(exc).__name__}: {exc}") from exc
        finally:
            path.unlink(missing_ok=True)  # the source does not stay readable in the sandbox
        from kernlint.eval import census

        info = {"device": torch.cuda.get_device_name() if self.device.type == "cuda" else "cpu",
                "software": {"python": platform.python_version(), "torch": torch.__version__,
                             "triton": version("triton")}}  # not imported: a reference may not need it
        if self.role == "reference" and isinstance(getattr(self.mod, "TOLERANCE", None), dict):
            info["tolerance"] = self.mod.TOLERANCE  # the problem's own tolerances (checked by the judge)
        if self.role == "candidate":
            if self.kind == "kernelbench" and not hasattr(self.mod, "ModelNew"):
                raise Stage("did-not-compile", "the candidate defines no ModelNew")
            self.counter = census.LaunchCounter(vars(self.mod))
            from kernlint.eval.structure_capture import LaunchCapture

            self.capture = LaunchCapture(vars(self.mod))
            info["kernels_defined"] = self.counter.names()
            info["has_kernels"] = bool(self.counter.kernels)
            info["autotuned"] = self.counter.autotuned()
        self._guard("import")
        return info

    def op_inputs(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict]:
        """Reference only: the init arguments and inputs of a shape variant under ``seed``."""
        set_seed(int(req["seed"]))
        init, inputs = shape_variant_inputs(self.mod, int(req["variant"]))
        return {}, {"init": init, "inputs": inputs}

    def op_model(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict]:
        """Build the model of this side with ``init``; the reference returns its weights, the
        candidate loads those whose names and shapes agree (seeding alone covers the rest)."""
        import torch

        cls = self.mod.Model if self.role == "reference" else self.mod.ModelNew
        set_seed(int(req["init_seed"]))
        init = _to(values.get("init", []), "cpu")
        try:
            self.model = cls(*init).to(self.device).eval()
        except BaseException as exc:  # noqa: BLE001
            if self.role == "reference":
                raise Stage("reference-error", f"Model(*init) failed: {type(exc).__name__}: {exc}") from exc
            raise Stage(classify_exception(exc), f"ModelNew(*init) failed: {type(exc).__name__}: {exc}") from exc
        if self.role == "reference":
            return {}, {"state": dict(self.model.state_dict())}
        try:
            cs = self.model.state_dict()
            same = {k: v for k, v in values.get("state", {}).items()
                    if isinstance(v, torch.Tensor) and k in cs and cs[k].shape == v.shape}
            if same:
                self.model.load_state_dict(same, strict=False)
        except Exception:  # noqa: BLE001 - weights that do not fit stay as seeded
            pass
        self._guard("init")
        return {}, {}

    def _call(self, args: list):
        import torch

        with torch.no_grad():
            return self.model(*args)

    def op_call(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict]:
        """One forward on the inputs sent (or, with ``refill``, on the buffers of the previous call
        refilled with them); returns the output (unless ``"output": False``) and, with
        ``inputs_after``, the inputs as the call left them: only what the judge reads travels."""
        import torch

        from kernlint.eval import correctness as C

        args = _to(values["inputs"], self.device)
        if req.get("refill") and self.kept is not None:
            for buf, new in zip(self.kept, args):
                if isinstance(buf, torch.Tensor):
                    buf.copy_(new)
            args = self.kept
        if req.get("poison"):
            C.poison_allocator(req["poison"], self.device)
        n0 = self.counter.total() if self.counter else 0
        try:
            out = self._call(args)
            _sync(self.device)
        except BaseException as exc:  # noqa: BLE001
            if self.role == "reference":
                raise Stage("reference-error", f"the reference fails: {type(exc).__name__}: {exc}") from exc
            raise Stage(classify_exception(exc), f"{type(exc).__name__}: {exc}") from exc
        self.kept = args if req.get("keep") else None
        # every input stays allocated for the job, so a new input never lands at the address of an
        # old one: a data_ptr-keyed cache misses on them and is named by the judge's refill check
        self.held.append(args)
        head = self._output_head(out, n0)
        self._guard("forward")
        vals = {"out": out} if req.get("output", True) else {}
        if req.get("inputs_after"):
            vals["inputs_after"] = args
        return head, vals

    def op_test(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict]:
        """TritonBench: run the test function (it makes its own inputs) under ``seed``."""
        fn = getattr(self.mod, req["function"], None)
        if fn is None:
            raise Stage("no-test", f"no test function {req['function']!r}")
        set_seed(int(req["seed"]))
        n0 = self.counter.total() if self.counter else 0
        try:
            out = fn()
            _sync(self.device)
        except BaseException as exc:  # noqa: BLE001
            if self.role == "reference":
                raise Stage("reference-error", f"the reference's own test fails: {type(exc).__name__}: {exc}") from exc
            raise Stage(classify_exception(exc), f"{type(exc).__name__}: {exc}") from exc
        self._guard("test")
        return self._output_head(out, n0), {"out": out}

    def _output_head(self, out, launches_before: int) -> dict:
        """The launches a call made and whether its outputs are plain tensors; a tensor subclass is
        also this process's evidence, so that it reaches the judge even when the output cannot be sent."""
        from kernlint.eval import correctness as C

        plain = C.plain_tensor_leaves(out)
        if not plain and self.role == "candidate":
            self._cheat("tensor-subclass-output", "an output is a tensor subclass (lazy evaluation)")
        return {"launches": (self.counter.total() - launches_before) if self.counter else None, "plain_tensors": plain}

    def _timed_fn(self, req: dict):
        from kernlint.eval.device_trace import EMPTY_CALL

        if req.get("function") == EMPTY_CALL:
            return lambda *a: None
        if self.kind == "tritonbench":
            test = getattr(self.mod, req["function"])
            return lambda *a: test()
        return lambda *a: self._call(list(a))

    @contextlib.contextmanager
    def _entry_replaced(self, name: str, make):
        """A TritonBench test calls the task's function by its module-level name: ``make(original)``
        stands in for it while the block runs."""
        original = getattr(self.mod, name, None)
        if not callable(original):
            raise Stage("no-test", f"the module has no function {name!r} for its test to call")
        setattr(self.mod, name, make(original))
        try:
            yield
        finally:
            setattr(self.mod, name, original)

    def _task_kernels(self, fn, req: dict, iters: int) -> dict:
        """The kernels' device time of ``fn`` (CUPTI); with ``entry`` (a TritonBench test), also of
        the kernels its calls of the task's function launch, apart from the test's input creation."""
        from kernlint.eval import timing

        entry = req.get("entry") if self.kind == "tritonbench" else None
        try:
            if not entry:
                return timing.time_cuda_kernels(fn, self.sets, iters=iters)
            with self._entry_replaced(entry, lambda f: timing.in_range(f, TASK_CALL, marks=True)):
                return timing.time_cuda_kernels(fn, self.sets, iters=iters, within=TASK_CALL)
        except Stage:
            raise
        except Exception as exc:  # noqa: BLE001 - the profiler is optional evidence
            return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}

    def op_stage(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict]:
        """Keep input sets for the timing requests that follow."""
        self.sets = [list(_to(s, self.device)) for s in values.get("sets", [[]])] or [[]]
        return {}, {}

    def op_time(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict]:
        """This process's own timing of the staged sets (raw numbers for the judge to check)."""
        from kernlint.eval import timing

        fn = self._timed_fn(req)
        iters, warm = int(req.get("iters", 50)), int(req.get("warmup", 5))
        if self.device.type == "cuda":
            own = self.counter.harness_streams if self.counter is not None else contextlib.nullcontext
            t = timing.time_cuda(fn, self.sets, warmup=warm, iters=iters, flush_l2=req.get("flush_l2", True),
                                 own_streams=own)
            if req.get("kernels"):
                t["kernels"] = self._task_kernels(fn, req, min(20, iters))
        else:
            t = timing.time_cpu(fn, self.sets, warmup=warm, iters=iters)
        self._guard("timing")
        return {"timing": t}, {}

    def op_wall(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict]:
        """``n`` calls, each synchronized, with this process's own clock around each: the judge
        times the same request from outside. ``n = 0`` is the handshake."""
        fn = self._timed_fn(req)
        samples = []
        _sync(self.device)
        for i in range(int(req.get("n", 0))):
            t0 = time.perf_counter()
            fn(*self.sets[i % len(self.sets)])
            _sync(self.device)
            samples.append((time.perf_counter() - t0) * 1e3)
        return {"samples_ms": samples}, {}

    def op_census(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict]:
        from kernlint.eval import census

        fn = self._timed_fn(req)
        cuda = self.device.type == "cuda"
        if cuda and req.get("warm_only"):
            from kernlint.eval import device_trace

            device_trace.start_profiler_once()
            return {}, {}
        if cuda:
            import itertools

            import torch

            from kernlint.eval import device_trace

            sets = itertools.cycle(self.sets)
            head = {"kernel_symbols": self.counter.symbols() if self.counter else []}
            try:
                head["trace"] = device_trace.record_calls(lambda: fn(*next(sets)), calls=len(self.sets) + 1)
            except Exception as exc:  # noqa: BLE001 - the profiler is evidence, its absence is a note
                head["trace_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"

            props = torch.cuda.get_device_properties(0)
            kms = census.compiled_kernel_metrics(vars(self.mod))
            for k in kms:
                k["occupancy"] = census.occupancy(k["n_regs"], k["num_warps"], k["shared"], props)
            head["kernels"] = kms
            head["stream_switched"] = torch.cuda.current_stream() != torch.cuda.default_stream()
        else:
            head = {"census": census.aten_census(lambda: fn(*self.sets[0]))}
        self._guard("profiling")
        return head, {}

    def op_dtypes(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict]:
        """Candidate: one forward on ``inputs`` with the dtypes it makes recorded
        (:func:`kernlint.eval.census.dtype_census`), the dtypes its kernels received and, on CUDA,
        the device's conversion kernels: evidence of a precision downgrade."""
        from kernlint.eval import census

        args = _to(values["inputs"], self.device)
        before = census.Counter(self.counter.arg_dtypes) if self.counter else census.Counter()
        head = {"dtype_census": census.dtype_census(lambda: (self._call(args), _sync(self.device)))}
        if self.counter:
            head["kernel_arg_dtypes"] = dict(self.counter.arg_dtypes - before)
        if self.device.type == "cuda":
            from kernlint.eval import device_trace

            trace = device_trace.record_calls(lambda: self._call(args), 1)
            head["conversion_kernels"] = device_trace.conversion_kernels(trace)
        self._guard("profiling")
        return head, {}

    def op_artifacts(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict, dict]:
        """The candidate's compiled kernels, as launched: its launch records
        (:mod:`kernlint.eval.structure_capture`) with their compiled text (TTGIR, PTX, ptxas' log)
        as blobs (see :mod:`kernlint.eval.wire`); a launch Triton's interpreter ran (CPU) is compiled
        here ahead of time for ``capability``. Data for the checks and the structure in the judge."""
        from kernlint.eval.structure_capture import compile_records

        records, blobs = compile_records(self.capture.records if self.capture else [], self.source,
                                         int(req.get("capability", 90)), self.module_path)
        head: dict = {"launches": records}
        if not records and "tilelang" in self.source:
            # TileLang launches are not captured: its factories are lowered here, where its code may run
            from kernlint.eval.structure import tilelang_structure

            head["tilelang_kernels"] = tilelang_structure(self.source, str(req.get("origin", "candidate.py")),
                                                          f"sm_{int(req.get('capability', 90))}")
        return head, {}, blobs

    def op_profile(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict]:
        """One call inside the profiler range (this executor runs under ncu, started by the judge
        with ``--profile-from-start off``): on the staged inputs, or the test function."""
        import torch

        fn = self._timed_fn(req)
        fn(*self.sets[0])
        _sync(self.device)
        if req.get("warm_only"):  # compiled (and tuned); the profiled call is the next request
            return {}, {}
        cudart = torch.cuda.cudart()
        cudart.cudaProfilerStart()
        try:
            fn(*self.sets[0])
            _sync(self.device)
        finally:
            cudart.cudaProfilerStop()
        return {}, {}

    def op_flops(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict]:
        """Reference only: the FLOPs of one forward (torch's FLOP counter), for the roofline."""
        from torch.utils.flop_counter import FlopCounterMode

        with FlopCounterMode(display=False) as fc:
            self._call(self.sets[0])
        return {"flops": int(fc.get_total_flops())}, {}

    def op_compile_baseline(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict]:
        """Reference only: torch.compile of the reference, timed like the candidate. A TritonBench
        task compiles the task's function (``entry``) and times its test calling the compiled one."""
        import torch

        from kernlint.eval import timing

        entry = req.get("entry") if self.kind == "tritonbench" else None
        if self.kind == "tritonbench" and not entry:
            raise Stage("no-test", "the task names no function of the reference to compile")
        if self.compiled is None:
            self.compiled = (torch.compile(getattr(self.mod, entry)) if entry
                             else torch.compile(lambda *a: self._call(list(a))))
        compiled = self.compiled
        fn = self._timed_fn(req) if entry else (lambda *a: compiled(*a))
        with self._entry_replaced(entry, lambda f: compiled) if entry else contextlib.nullcontext():
            if req.get("build_only"):  # compiled for every staged set; timed by the next request
                for s in self.sets:
                    fn(*s)
                _sync(self.device)
                return {}, {}
            if self.device.type == "cuda":
                iters = int(req.get("iters", 50))
                t = timing.time_cuda(fn, self.sets, iters=iters)
                if req.get("kernels"):
                    t["kernels"] = self._task_kernels(fn, req, min(20, iters))
            else:
                t = timing.time_cpu(fn, self.sets, iters=2)
        return {"timing": t}, {}

    def op_cutlass_baseline(self, req: dict, values: dict, texts: dict) -> tuple[dict, dict]:
        """Reference only: the reference with its GEMMs run by CUTLASS kernels, timed like the
        candidate; ``skipped`` says why there is no timing (:mod:`kernlint.eval.cutlass_baseline`)."""
        from kernlint.eval import cutlass_baseline

        if self.cutlass is None:  # built once: the kernels, and the check of their result
            self.cutlass = cutlass_baseline.prepare(self._call, self.sets, Path(req["cache"]))
        if req.get("build_only"):
            return {k: v for k, v in self.cutlass.items() if k != "fn"}, {}
        return cutlass_baseline.measure(self.cutlass, self.sets, int(req.get("iters", 50))), {}

    def handle(self, req: dict, values: dict, texts: dict) -> bytes:
        op = getattr(self, f"op_{req.get('op')}", None)
        self.cheats = []
        try:
            if op is None:
                raise Stage("harness-error", f"unknown request {req.get('op')!r}")
            got = op(req, values, texts)
            head, vals, blobs = (tuple(got) + ({},))[:3] if isinstance(got, tuple) else (got, {}, {})
            head = {"ok": True, **head}
        except Stage as st:
            head, vals, blobs = {"ok": False, "error_kind": st.kind, "error": str(st)[:2000]}, {}, {}
        except BaseException as exc:  # noqa: BLE001
            head, vals, blobs = {"ok": False, "error_kind": classify_exception(exc),
                                 "error": f"{type(exc).__name__}: {exc}"[:2000],
                                 "traceback": traceback.format_exc()[-3000:]}, {}, {}
        head["cheats"] = self.cheats
        try:
            return wire.encode(head, vals, blobs)
        except Exception as exc:  # noqa: BLE001 - an output the format cannot carry
            return wire.encode({"ok": False, "error_kind": "runtime-error", "cheats": self.cheats,
                                "error": f"the output cannot be sent: {type(exc).__name__}: {exc}"[:500]})


def serve(channel: int) -> None:
    ex = Executor()
    while True:
        try:
            req, values, texts = wire.read(0)
        except wire.WireError:
            return  # the judge closed the requests: done
        if req.get("op") == "load":
            if req.get("block_network", True):
                guards.block_network()
            if req.get("block_writes"):
                # its folder is also its HOME and TMPDIR; the compilers' caches may be set apart
                guards.block_writes_outside(os.getcwd(), os.environ.get("TRITON_CACHE_DIR"),
                                            os.environ.get("TORCHINDUCTOR_CACHE_DIR"))
            if req.get("inject_fault"):
                _inject(req["inject_fault"])
        wire.write(channel, ex.handle(req, values, texts))


def warm_imports() -> None:
    """What every job imports, imported before its first request: a spare executor
    (:class:`kernlint.eval.isolation.Spares`) does this while the job before it is judged."""
    import torch  # noqa: F401
    import torch.profiler  # noqa: F401

    from kernlint.eval import census, correctness, structure_capture, timing  # noqa: F401

    try:
        import triton.language  # noqa: F401
    except ImportError:
        pass


def main() -> int:
    channel = os.dup(1)
    os.dup2(2, 1)  # prints go to the log, never into the channel
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    try:
        warm_imports()
    except ImportError:
        # a folder's listing cached while another process changed it hides a module once
        importlib.invalidate_caches()
        try:
            warm_imports()
        except ImportError as exc:  # before any problem or candidate code: the harness's failure
            print(f"kernlint executor: the harness's own imports failed: {exc}", file=sys.stderr, flush=True)
            os._exit(HARNESS_FAILED)
    serve(channel)
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown (candidate threads, atexit hooks)


def _inject(fault: str) -> None:
    """Faults for testing the harness itself."""
    if fault == "segfault":
        import ctypes

        ctypes.string_at(0)
    elif fault == "abort":
        os.abort()
    elif fault == "hang":
        while True:
            pass
    elif fault == "oom":
        hog = []
        while True:
            hog.append(bytearray(64 * 1024 * 1024))
    elif fault == "illegal-address":
        import torch

        if torch.cuda.is_available():
            import triton
            import triton.language as tl

            @triton.jit
            def _bad(p):
                tl.store(p + (1 << 40), 1.0)

            _bad[(1,)](torch.empty(1, device="cuda"))
            torch.cuda.synchronize()
        raise RuntimeError("an illegal memory access was encountered (simulated on CPU)")


if __name__ == "__main__":
    sys.exit(main())
