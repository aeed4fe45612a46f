"""The TritonBench-T study's record collection and report (benchmarks/study_t/collect.py, report.py),
on synthetic records and on a few real ones (tests/data/study_t/, paths already stripped)."""

import json
import re
from pathlib import Path

import pytest

from kernlint.eval.worker import load_module as load_script

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "study_t"


@pytest.fixture(scope="module")
def report():
    return load_script(ROOT / "benchmarks" / "study_t" / "report.py", "study_t_report")


@pytest.fixture(scope="module")
def collect():
    return load_script(ROOT / "benchmarks" / "study_t" / "collect.py", "study_t_collect")


def record(task: str, model: str, verdict: str = "passed", eager_ms: float | None = None, compiled_ms: float | None = None,
           cand_ms: float = 1.0, regs: int | None = None, warps: int = 4, achieved: float | None = None,
           flaws=(), lint=(), **extra) -> dict:
    """A record shaped like kernlint eval's: kernel times (CUPTI) in timings.*.kernels, the IR phase's
    kernel facts in structure.kernels, ncu's in structure.profile."""
    timings = {}
    if eager_ms is not None:
        timings = {"candidate": {"median_ms": 9.0, "kernels": {"median_ms": cand_ms}},
                   "reference": {"median_ms": 9.0, "kernels": {"median_ms": eager_ms}}}
        if compiled_ms is not None:
            timings["torch_compile"] = {"median_ms": 9.0, "kernels": {"median_ms": compiled_ms}}
    structure = {"flaws": [{"kind": k} for k in flaws]}
    if regs:
        structure["kernels"] = [{"kernel": "k", "hot": True, "registers": regs, "num_warps": warps,
                                 "shared_bytes": 0, "target": "sm_90"}]
    if achieved is not None:
        structure["profile"] = {"kernels": {"k": {"achieved_occupancy": achieved, "seconds": 2e-5}}}
    rec = {"id": f"{task}/output_{model}-0", "problem": task, "model": model, "verdict": verdict, "stage": "timing",
           "error_kind": None, "error": None, "reasons": [], "timings": timings, "speedup": {}, "structure": structure,
           "metrics": {}, "policy": {"max_slowdown": 0.05, "structure": {"min_achieved_occupancy": 0.25}},
           "lint_findings": [{"rule": r, "level": lvl, "line": 1, "message": ""} for r, lvl in lint],
           "findings": [], "mapping": "checked"}
    rec.update(extra)
    return rec


def test_each_candidate_falls_in_the_first_category_that_applies(report):
    cat = report.category
    assert cat(record("a", "m", "did-not-compile"), set()) == "did-not-compile"
    assert cat(record("a", "m", "wrong", eager_ms=5.0), set()) == "wrong"
    assert cat(record("a", "m", eager_ms=None), set()) == report.NOT_TIMED
    assert cat(record("a", "m", eager_ms=0.9), set()) == report.SLOWER_EAGER  # 0.9x: more than 5% slower
    assert cat(record("a", "m", eager_ms=0.96, compiled_ms=0.96), set()) == report.PASSED  # within the tolerance
    assert cat(record("a", "m", eager_ms=3.0, compiled_ms=0.5), set()) == report.SLOWER_COMPILE
    # the judge's verdict slower-than-baseline (CUDA events) is a correct candidate: the kernels' time decides
    assert cat(record("a", "m", "slower-than-baseline", eager_ms=3.0, compiled_ms=3.0), set()) == report.PASSED
    low = record("a", "m", eager_ms=3.0, compiled_ms=3.0, regs=255, warps=8)  # 255 regs x 8 warps: 1 block, 12.5%
    assert report.theoretical_occupancy_of(low) == pytest.approx(0.125)
    assert cat(low, set()) == report.LOW_OCCUPANCY
    # where ncu measured, its verdict stands: high theoretical, the judge's low-occupancy flaw
    measured = record("a", "m", "structurally-flawed", eager_ms=3.0, compiled_ms=3.0, regs=32, achieved=0.1,
                      flaws=["low-occupancy"])
    assert report.occupancy_check(measured) == (False, "achieved")
    assert cat(measured, set()) == report.LOW_OCCUPANCY
    # measured low but not flagged (short or not latency-bound): passes, even with a low theoretical
    assert report.occupancy_check(record("a", "m", regs=255, warps=8, achieved=0.1)) == (True, "achieved")
    assert cat(record("a", "m", stage="load-reference"), set()) == "skipped"
    assert cat(record("a", "m", eager_ms=3.0), {"a"}) == "excluded"


def test_speedups_prefer_the_kernels_device_time_and_fall_back_to_the_judges(report):
    rec = record("a", "m", eager_ms=4.0, cand_ms=2.0, compiled_ms=1.0)
    assert report.speedup(rec, "reference") == (2.0, "cupti")
    assert report.speedup(rec, "torch_compile") == (0.5, "cupti")
    del rec["timings"]["torch_compile"]["kernels"]
    rec["speedup"] = {"vs_torch_compile": 0.8}
    assert report.speedup(rec, "torch_compile") == (0.8, "events")
    assert report.speedup(record("a", "m"), "reference") == (None, "")
    # the kernels of the test's calls of the task's function, without its input creation, come first
    rec["timings"]["candidate"]["kernels"]["within"] = {"median_ms": 0.5}
    assert report.speedup(rec, "reference") == (2.0, "cupti")  # the reference has no such time: all kernels
    rec["timings"]["reference"]["kernels"]["within"] = {"median_ms": 1.5}
    assert report.speedup(rec, "reference") == (3.0, "cupti-calls")


def test_wilson_interval(report):
    from study_common import wilson

    lo, hi = wilson(7, 10)
    assert lo == pytest.approx(0.3968, abs=1e-4) and hi == pytest.approx(0.8922, abs=1e-4)  # the textbook values
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(0, 20)
    assert lo == 0.0 and 0.15 < hi < 0.17


def _synthetic() -> list[dict]:
    recs = []
    for i in range(10):
        recs.append(record(f"t{i}", "A", eager_ms=0.5 + i, compiled_ms=0.4 + i / 2, regs=32 + 24 * i,
                           lint=[("KL104", "warning")] if i % 3 == 0 else ()))
        recs.append(record(f"t{i}", "B", "runtime-error" if i % 2 else "wrong", lint=[("KL101", "error")]))
    recs.append(record("broken", "A", "runtime-error", stage="load-reference",
                       error="RuntimeError: the reference's test fails\nmore"))
    return recs


def _write(folder: Path, recs: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


def test_the_report_counts_shares_and_the_claim_per_model(report, tmp_path):
    recs = _synthetic()
    _write(tmp_path, recs)
    text, svgs = report.render(tmp_path)
    cats = {r["id"]: report.category(r, set()) for r in recs}
    passed_a = sum(c == report.PASSED for i, c in cats.items() if "output_A" in i)
    judged_a = sum(c != "skipped" for i, c in cats.items() if "output_A" in i)
    assert 0 < passed_a < judged_a == 10

    def row(label):
        line = next(x for x in text.splitlines() if x.startswith(f"| {label}"))
        return [c.strip() for c in line.strip("|").split("|")][1:]

    assert row("judged candidates") == ["20", "10", "10"]
    fail_all = 20 - passed_a
    assert row("fail the strict checks")[0].startswith(f"{fail_all}/20 ({fail_all / 20:.0%}, 95% CI")
    assert row("fail the strict checks")[2] == "10/10 (100%, 95% CI 72%-100%)"  # model B: nothing correct
    assert row("correct (every seed")[1:] == ["10/10 (100%, 95% CI 72%-100%)", "0/10 (0%, 95% CI 0%-28%)"]
    assert row("skipped:") == ["1", "1", "0"]
    assert "- `broken`: in the run, RuntimeError: the reference's test fails" in text
    assert "**20 of the 320 needed**" in text
    assert row("runtime-error")[2] == "5" and row("wrong")[2] == "5"
    # static findings by category: model B's 10 candidates each carry one error-level finding
    findings = {c: line for line in text.splitlines() for c in ("runtime-error", "wrong") if line.startswith(f"| {c} | 5 |")}
    assert findings["wrong"] == "| wrong | 5 | 5 | 5 | 5 | 0 | 0 |"
    assert "KL101 10, KL104 4" in text
    # speed and occupancy of the correct ones (model A): t0 runs at 0.5x eager; KL304's floor on 248 registers
    assert row("&nbsp;&nbsp;more than 5% slower than eager PyTorch") == ["1", "1", "0"]
    assert row("judged on theoretical occupancy (IR phase)") == ["10", "10", "0"]
    low = sum(report.theoretical_occupancy_of(r) < 0.25 for r in recs if r["model"] == "A" and r["problem"] != "broken")
    assert row("low occupancy") == [str(low), str(low), "0"] and 0 < low < 10
    # figures: one bar per model (and all), every correct candidate a dot
    assert set(svgs) == {"verdicts.svg", "speedup_eager.svg", "speedup_compile.svg", "occupancy.svg"}
    assert svgs["verdicts.svg"].count("(10)</text>") == 2 and "all (20)" in svgs["verdicts.svg"]
    assert svgs["speedup_eager.svg"].count("<circle") == 10
    assert svgs["occupancy.svg"].count("<circle") == 10  # theoretical only: no ncu in these records
    assert "none measured yet" in svgs["speedup_eager.svg"]  # model B has no correct candidate


def test_an_empty_study_says_the_claim_is_not_tested(report, tmp_path):
    _write(tmp_path, [])
    text, svgs = report.render(tmp_path)
    assert "No candidate judged yet" in text and "**0 of the 320 needed**" in text
    assert all(svg.startswith("<svg") for svg in svgs.values())


def _device_out(tmp_path: Path, files: dict[str, Path]) -> Path:
    out = tmp_path / "device-out"
    for model, path in files.items():
        (out / model).mkdir(parents=True)
        (out / model / "records.jsonl").write_text(path.read_text())
    return out


def test_collect_merges_models_strips_machine_paths_and_grows_without_duplicates(collect, tmp_path):
    out = _device_out(tmp_path, {"DeepSeek-R1": DATA / "DeepSeek-R1.records.jsonl",
                                 "fixture": DATA / "fixture-matmul.records.jsonl"})
    # what a device run writes: machine paths in log tails, errors and notes, the host's name
    rec = json.loads((out / "fixture" / "records.jsonl").read_text().splitlines()[0])
    rec.update(id="matmul/planted", host="gpu-node-7",
               log_tail="/opt/env/lib/python3.12/site-packages/torch/profiler/profiler.py:224: UserWarning\n"
                        f"  File \"{out.resolve()}/triton-cache/ab/k.py\", line 3 on gpu-node-7",
               error="IndexError in /root/work/cand/module.py:12 (see /tmp/x/log.txt); ratio 3/4 in ms/call",
               notes=["traceback kept at /usr/lib/python3.12/traceback.py"])
    with (out / "fixture" / "records.jsonl").open("a") as fh:
        fh.write(json.dumps(rec) + "\n")
    into = tmp_path / "docs" / "records.jsonl"
    assert collect.main([str(out), "--into", str(into)]) == 0
    merged = [json.loads(x) for x in into.read_text().splitlines()]
    assert len(merged) == 2 + 3 + 1
    assert {r["model"] for r in merged} == {"DeepSeek-R1", "fixture"}
    text = into.read_text()
    assert not re.search(r"(?<![\w<>])/(opt|root|tmp|usr|home|work)/", text), "a machine path is left"
    assert "gpu-node-7" not in text and str(tmp_path) not in text
    planted = next(r for r in merged if r["id"] == "matmul/planted")
    assert planted["host"] == "<host>"
    assert planted["log_tail"].startswith("<site-packages>/torch/profiler/profiler.py:224: UserWarning")
    assert '"<triton-cache>/ab/k.py", line 3 on <host>' in planted["log_tail"]
    assert planted["error"] == "IndexError in <path>/module.py:12 (see <path>/log.txt); ratio 3/4 in ms/call"
    assert planted["notes"] == ["traceback kept at <python>/traceback.py"]
    # a second run into the same folder, grown by one model: added, nothing doubled
    (out / "Qwen2.5-72B-Instruct").mkdir()
    (out / "Qwen2.5-72B-Instruct" / "records.jsonl").write_text((DATA / "Qwen2.5-72B-Instruct.records.jsonl").read_text())
    assert collect.main([str(out), "--into", str(into)]) == 0
    again = [json.loads(x) for x in into.read_text().splitlines()]
    assert len(again) == 6 + 2 and len({(r["model"], r["id"]) for r in again}) == 8
    # a committed record stays unless --replace
    changed = json.loads((out / "DeepSeek-R1" / "records.jsonl").read_text().splitlines()[0])
    changed["verdict"] = "wrong"
    (out / "DeepSeek-R1" / "records.jsonl").write_text(json.dumps(changed) + "\n")
    collect.main([str(out), "--into", str(into)])
    assert next(json.loads(x) for x in into.read_text().splitlines() if changed["id"] in x)["verdict"] == "runtime-error"
    collect.main([str(out), "--into", str(into), "--replace"])
    assert next(json.loads(x) for x in into.read_text().splitlines() if changed["id"] in x)["verdict"] == "wrong"


def test_collect_takes_each_records_model_from_its_answer_file(collect, tmp_path):
    """run_gpu.sh judges every model's answers in one batch folder: the model is the answer file's."""
    out = tmp_path / "device-out" / "batch"
    out.mkdir(parents=True)
    out.joinpath("records.jsonl").write_text((DATA / "DeepSeek-R1.records.jsonl").read_text()
                                             + (DATA / "Qwen2.5-72B-Instruct.records.jsonl").read_text())
    into = tmp_path / "records.jsonl"
    assert collect.main([str(out.parent), "--into", str(into)]) == 0
    merged = [json.loads(x) for x in into.read_text().splitlines()]
    assert {(r["model"], r["origin"].split(":")[0]) for r in merged} == {
        ("DeepSeek-R1", "output_DeepSeek-R1.jsonl"), ("Qwen2.5-72B-Instruct", "output_Qwen2.5-72B-Instruct.jsonl")}


def test_collect_rejects_a_folder_without_records(collect, tmp_path, capsys):
    assert collect.main([str(tmp_path), "--into", str(tmp_path / "r.jsonl")]) == 2
    assert "no <folder>/records.jsonl" in capsys.readouterr().err
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "records.jsonl").write_text("{not json\n")
    assert collect.main([str(tmp_path), "--into", str(tmp_path / "r.jsonl")]) == 2
    assert "records.jsonl:1: not a JSON line" in capsys.readouterr().err


def test_the_report_reads_collected_device_records(collect, report, tmp_path):
    out = _device_out(tmp_path, {"DeepSeek-R1": DATA / "DeepSeek-R1.records.jsonl",
                                 "fixture": DATA / "fixture-matmul.records.jsonl"})
    folder = tmp_path / "study"
    collect.collect(out, folder / "records.jsonl")
    text, _ = report.render(folder)
    honest = next(line for line in text.splitlines() if line.startswith("| `matmul/honest`"))
    # the judge's CUDA-event ratio says 0.48x the reference; the kernels' device time says faster than eager,
    # slower than torch.compile (its record has no kernel time: the event ratio)
    assert "| slower than torch.compile | 2.83x | 0.74x | cupti/events | 62% | 6% | - | - | KL302 |" in honest
    assert "| cheating |" in next(line for line in text.splitlines() if line.startswith("| `matmul/hack_allow_tf32`"))


def test_the_committed_document_and_figures_are_regenerated_exactly(report):
    folder = ROOT / "docs" / "study-t"
    text, svgs = report.render(folder)
    assert text == (ROOT / "docs" / "study-tritonbench-t.md").read_text(), "run: python benchmarks/study_t/report.py"
    for name, svg in svgs.items():
        assert svg == (folder / name).read_text(), name
