"""The CUTLASS baseline (kernlint.eval.cutlass_baseline): which problems are GEMM-family, the
operand layouts and alignments it derives, the C++ it emits through nvidia-cutlass, the build
(nvcc, when present) and the baseline itself (GPU)."""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from kernlint.eval import cutlass_baseline as CB  # noqa: E402
from kernlint.eval.problems import load_problems  # noqa: E402
from kernlint.eval.worker import load_module  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = ROOT / "fixtures" / "eval" / "problems"
needs_cutlass = pytest.mark.skipif(CB.unavailable(True) is not None and "nvidia-cutlass" in (CB.unavailable(True) or ""),
                                   reason="nvidia-cutlass is not installed")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc")


def family_of(forward, *args) -> tuple[bool, str]:
    with CB.AtenOps() as ops:
        forward(*args)
    return CB.gemm_family(ops.names)


def test_gemm_family_is_read_from_the_references_aten_ops():
    a, b, x = torch.randn(8, 4), torch.randn(4, 6), torch.randn(3, 8, 4)
    lin, lin_nb = torch.nn.Linear(4, 5), torch.nn.Linear(4, 5, bias=False)
    assert family_of(torch.matmul, a, b)[0]
    assert family_of(torch.bmm, x, torch.randn(3, 4, 2))[0]
    assert family_of(lambda t: t @ b, x)[0]  # a batched matmul ATen lowers to a view + mm
    assert family_of(lin, a)[0]  # addmm
    assert family_of(lin_nb, x)[0]
    assert family_of(lambda p, q: p.t() @ q.t(), torch.randn(4, 8), torch.randn(6, 4))[0]
    no, why = family_of(lambda p, q: torch.relu(p @ q), a, b)
    assert not no and "relu" in why
    no, why = family_of(torch.relu, a)
    assert not no and "no GEMM" in why
    assert not family_of(lambda p, q: (p @ q).sum(), a, b)[0]


def test_the_matmul_fixture_is_gemm_family_and_the_elementwise_ones_are_not():
    probs = load_problems(PROBLEMS)
    seen = {}
    for pid, prob in probs.items():
        if prob.kind != "kernelbench":
            continue
        mod = load_module(Path(prob.path), f"_problem_{pid}")
        model = mod.Model(*mod.get_init_inputs())
        seen[pid] = family_of(model, *mod.get_inputs())[0]
    assert seen["matmul"] is True
    assert seen["relu"] is False and seen["vector_add"] is False


def test_layouts_are_those_of_packed_matrices_and_their_transposes():
    a = torch.randn(6, 4)
    assert CB.layout(a) == "row"
    assert CB.layout(a.t()) == "col"
    assert CB.layout(torch.randn(3, 6, 4)) == "row"
    assert CB.layout(torch.randn(3, 4, 6).transpose(1, 2)) == "col"
    assert CB.layout(torch.randn(6, 8)[:, :4]) is None  # a leading dimension that is not packed
    assert CB.layout(torch.randn(6, 3, 4).transpose(0, 1)) is None  # batch stride not packed


def test_alignment_is_the_largest_dividing_every_extent_and_address():
    assert CB.alignment("float16", (64, 48, 48), (0, 256)) == 8
    assert CB.alignment("bfloat16", (64, 12, 48), (0, 256)) == 4
    assert CB.alignment("float16", (64, 48, 48), (0, 4)) == 2  # an address off by 4 bytes
    assert CB.alignment("float16", (63, 48, 48), (0, 0)) == 1
    assert CB.alignment("float32", (64, 64, 64), (0, 0)) == 1  # SIMT kernels: any alignment


def test_the_sm90_tile_is_the_large_one_only_when_its_tiles_fill_the_gpu():
    assert CB.sm90_tile(4096, 4096, 1, 132) == "large"  # 32 x 16 tiles of 128x256
    assert CB.sm90_tile(1024, 1024, 1, 132) == "small"  # 8 x 4
    assert CB.sm90_tile(1024, 1024, 8, 132) == "large"  # batched: 256
    assert CB.sm90_tile(64, 48, 1, 132) == "small"


def test_only_aligned_half_precision_on_sm90_takes_the_tma_kernels():
    assert CB.GemmConfig("float16", "row", "col", 8).sm90
    assert not CB.GemmConfig("float16", "row", "col", 4).sm90
    assert not CB.GemmConfig("float32", "row", "row", 1).sm90
    assert not CB.GemmConfig("bfloat16", "row", "row", 8, cc=80).sm90


def test_without_a_device_or_the_package_the_baseline_says_why(monkeypatch, tmp_path):
    sets = [[torch.randn(4, 4), torch.randn(4, 4)]]
    got = CB.measure(CB.prepare(lambda args: args[0] @ args[1], sets, tmp_path), sets)
    assert set(got) == {"skipped", "info"} and got["info"]["gemm_family"] is True
    if not torch.cuda.is_available():
        assert got["skipped"] in ("no CUDA device", "nvcc is not on PATH (the CUTLASS kernels are compiled with it)") \
            or "nvidia-cutlass" in got["skipped"]
    got = CB.measure(CB.prepare(lambda args: torch.relu(args[0]), sets, tmp_path), sets)
    assert got["skipped"] == "not GEMM-family: the reference runs no GEMM (mm, bmm, addmm)"
    monkeypatch.setitem(sys.modules, "cutlass_cppgen", None)  # an import of it fails as if it were absent
    assert "nvidia-cutlass is not installed" in CB.unavailable(True)
    assert "kernlint[cutlass]" in CB.unavailable(True)
    assert "nvidia-cutlass is not installed" in CB.measure(CB.prepare(lambda args: args[0] @ args[1], sets, tmp_path), sets)["skipped"]
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
@needs_cutlass
@needs_nvcc  # the interface reads nvcc's version to pick the kernels it may emit
def test_the_interface_emits_each_kind_of_kernel_with_the_entry_points():
    for cfg, kind in [(CB.GemmConfig("float16", "row", "row", 8), "cutlass3x_sm90_tensorop"),
                      (CB.GemmConfig("bfloat16", "row", "col", 8, tile="small"), "cutlass3x_sm90_tensorop"),
                      (CB.GemmConfig("float16", "col", "row", 2, tile=""), "cutlass_tensorop_f16_s16816gemm"),
                      (CB.GemmConfig("float32", "row", "col", 1, tile=""), "cutlass_simt_sgemm")]:
        text, kernel = CB.source(cfg)
        assert kernel.startswith(kind), (cfg, kernel)
        if cfg.sm90:  # the CTA tile asked for (the interface's name gives the cluster's extent)
            (tm, tn, tk), (cm, cn, ck) = CB.SM90_TILES[cfg.tile]
            assert f"_{tm * cm}x{tn * cn}x{tk}_{cm}x{cn}x{ck}_" in kernel, kernel
            assert f"cute::Shape<cute::_{tm}, cute::_{tn}, cute::_{tk}>" in text
        assert f"_align{cfg.alignment}" in kernel
        assert "using DeviceKernel" in text and 'extern "C" int kernlint_gemm(' in text
        assert ("cutlass::arch::Sm90" in text) == cfg.sm90
    with pytest.raises(NotImplementedError, match="alignment"):
        CB.source(CB.GemmConfig("float16", "row", "row", 1))


@pytest.mark.slow
@needs_cutlass
@needs_nvcc
@pytest.mark.skipif(not os.environ.get("KERNLINT_TEST_NVCC"),
                    reason="nvcc builds a CUTLASS kernel for 1 to 3 minutes: set KERNLINT_TEST_NVCC=1 to run it")
def test_nvcc_builds_a_loadable_library_and_the_cache_serves_it_again(tmp_path):
    # about 1 to 3 minutes of nvcc per kernel on two cores; the SIMT kernel is the cheapest kind
    cfg = CB.GemmConfig("float32", "row", "row", 1)
    so, info = CB.build(cfg, tmp_path)
    assert not info["cached"] and info["kernel"].startswith("cutlass_simt_sgemm") and info["compile_s"] > 0
    lib = ctypes.CDLL(str(so))
    assert lib.kernlint_gemm and lib.kernlint_gemm_workspace
    again, info2 = CB.build(cfg, tmp_path)
    assert again == so and info2["cached"] and info2["kernel"] == info["kernel"]


@pytest.mark.gpu
@needs_cutlass
@needs_nvcc
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_the_cutlass_gemms_agree_with_torch(dtype):
    major, minor = torch.cuda.get_device_capability()
    a = torch.randn(3, 128, 64, device="cuda", dtype=dtype)
    b = torch.randn(64, 96, device="cuda", dtype=dtype)
    w = torch.randn(96, 64, device="cuda", dtype=dtype)

    def calls():
        return [a[0] @ b, a @ b, torch.bmm(a, b.expand(3, 64, 96).contiguous()), torch.nn.functional.linear(a[1], w, b[0, :96])]

    # the shared cache (benchmarks/gpu_cutlass_check.py fills it), the kernels built in parallel
    planned = CB.CutlassGemms(CB.default_cache(), 10 * major + minor, dry=True)
    with planned:
        want = calls()
    CB.build_many(planned.configs, CB.default_cache(), jobs=os.cpu_count() or 1)
    gemms = CB.CutlassGemms(CB.default_cache(), 10 * major + minor)
    with gemms:
        got = calls()
    assert gemms.calls == 4
    tol = 1e-2 if dtype != torch.float32 else 1e-4
    for g, e in zip(got, want):
        assert g.shape == e.shape and torch.allclose(g.float(), e.float(), rtol=tol, atol=tol * e.abs().max().item())


def test_the_planning_pass_names_one_kernel_per_dtype_layout_and_alignment(tmp_path):
    plan = CB.CutlassGemms(tmp_path, 90, dry=True)
    h = torch.randn(64, 32).half()
    with plan:
        torch.matmul(torch.randn(64, 32), torch.randn(32, 48))  # the matmul fixture: fp32, SIMT
        torch.nn.functional.linear(h, torch.randn(16, 32).half())  # x @ W.t(): B column-major
        torch.bmm(torch.randn(2, 8, 6).bfloat16(), torch.randn(2, 6, 4).bfloat16().transpose(1, 2).contiguous().transpose(1, 2))
        h @ torch.randn(32, 48).half()[:, :6]  # B not packed: copied, row-major; 6 columns: alignment 2
    assert plan.configs == [CB.GemmConfig("float32", "row", "row", 1, tile=""), CB.GemmConfig("float16", "row", "col", 8, tile="small"),
                            CB.GemmConfig("bfloat16", "row", "col", 2, tile=""), CB.GemmConfig("float16", "row", "row", 2, tile="")]
    assert plan.calls == 0 and not list(tmp_path.iterdir())  # nothing built
    with plan:
        torch.randn(2048, 64).half() @ torch.randn(64, 8192).half()
    assert plan.configs[-1] == CB.GemmConfig("float16", "row", "row", 8, tile="large")
    with pytest.raises(NotImplementedError, match="float64"), plan:
        torch.randn(2, 2).double() @ torch.randn(2, 2).double()


@pytest.mark.slow
@pytest.mark.parametrize("asked", [None, True])
def test_the_judge_records_the_cutlass_baseline_or_says_why_not(asked, tmp_path):
    """On a GPU with the package and nvcc, the matmul problem's record has ``timings.cutlass`` and
    ``speedup.vs_cutlass``; elsewhere a note says why, whether the judge skips the stage (the
    default off a GPU) or the reference executor is asked anyway (``asked``)."""
    import json

    from kernlint.eval.api import EvalOptions
    from kernlint.eval.problems import load_candidates
    from kernlint.eval.runner import run_batch

    probs = {"matmul": load_problems(PROBLEMS)["matmul"]}
    cands = [c for c in load_candidates(ROOT / "fixtures" / "eval" / "candidates", probs) if c.id == "matmul/honest"]
    out = tmp_path / "records.jsonl"
    run_batch(probs, cands, out, EvalOptions(seeds=(0,), shape_variants=(0,), timeout_s=120, mem_limit_mb=4096,
                                             cutlass_baseline=asked, cuda=None))
    (rec,) = map(json.loads, out.read_text().splitlines())
    assert rec["verdict"] != "runtime-error", rec
    notes = [n for n in rec.get("notes", []) if "CUTLASS" in n]
    if torch.cuda.is_available() and CB.unavailable(True) is None:
        assert rec["timings"]["cutlass"]["median_ms"] > 0 and rec["speedup"]["vs_cutlass"] > 0, notes
        assert rec["metrics"]["cutlass"]["gemm_family"] is True
    else:
        assert notes and all(n.startswith("CUTLASS baseline skipped: ") for n in notes), rec.get("notes")
        assert "cutlass" not in rec["timings"] and "vs_cutlass" not in rec["speedup"]
        if asked:
            assert any(("no CUDA device" in n) or ("not installed" in n) or ("nvcc" in n) for n in notes)


def test_speedups_and_the_report_cover_the_three_baselines():
    from kernlint.eval import policy, report_html

    timings = {"candidate": {"median_ms": 1.0}, "reference": {"median_ms": 2.0}, "cutlass": {"median_ms": 0.5}}
    assert policy.speedups(timings) == {"vs_reference": 2.0, "vs_cutlass": 0.5}
    recs = [{"id": "matmul/a", "problem": "matmul", "verdict": "passed", "reasons": [], "reward": 1.0,
             "speedup": policy.speedups(timings)},
            {"id": "relu/a", "problem": "relu", "verdict": "passed", "reasons": [], "reward": 1.0,
             "speedup": {"vs_reference": 4.0, "vs_torch_compile": 1.0}}]
    page = report_html.render(recs)
    assert "<th>vs CUTLASS</th>" in page and "<th>vs torch.compile</th>" in page
    # per baseline: candidates timed against it, geometric mean, how many beat it
    assert "<tr><td>CUTLASS</td><td>1</td><td>0.50x</td><td>0</td></tr>" in page
    assert "<tr><td>torch.compile</td><td>1</td><td>1.00x</td><td>0</td></tr>" in page
    assert "<td>2.83x</td><td>2</td></tr>" in page  # the reference: sqrt(2 * 4)
