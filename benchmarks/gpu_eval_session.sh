#!/usr/bin/env bash
# Every GPU check of `kernlint eval` (about 30 minutes on an H100 or H200 in all), in parts that each
# fit a call of at most 10 minutes:
#   bash benchmarks/gpu_eval_session.sh WORK_DIR [all|tests|structure|honest|throughput|cutlass] [RESUME_DIR]
# - tests: the GPU tests of eval (the profiler's kernel trace, per-problem reuse, the CUTLASS
#   baseline, the suite and the task-call timer), less test_gpu_verdicts_with_profile: its eight
#   candidates take 55-94 s each with their ncu pass, so their verdicts are the "structure" part's;
# - structure: the structural verdicts with the ncu pass (gpu_structure_check.py), resumed from
#   RESUME_DIR/gpu_structure_records.jsonl where an earlier call left one;
# - honest: the honest suite at the default options (gpu_honest_check.py: none may be flagged),
#   resumed from RESUME_DIR/honest_records.jsonl where an earlier call left one;
# - throughput: throughput at the default options on the fixture suite, each verdict checked against
#   fixtures/eval/expected.json (gpu_eval_throughput.py);
# - cutlass: the CUTLASS baseline against cuBLAS and torch.compile (gpu_cutlass_check.py).
# A part cut off by its limit is continued by running it again with RESUME_DIR holding the records
# the last call brought back. Each step's exit status and seconds go to WORK_DIR/device.txt;
# WORK_DIR/DONE is written last, so a caller that started this in the background can tell when it ended.
set -u
w=${1:?usage: gpu_eval_session.sh WORK_DIR [part] [RESUME_DIR]}
part=${2:-all}
resume=${3:-}
mkdir -p "$w"
export PYTHONUNBUFFERED=1
source "$(dirname "$0")/device_session.sh"
device_header
want() { [ "$part" = all ] || [ "$part" = "$1" ]; }

if want tests; then
    step "pytest -m gpu" 420 python3 -m pytest -q -m gpu -p no:cacheprovider --durations=10 tests/eval \
        --deselect tests/eval/test_structure.py::test_gpu_verdicts_with_profile > "$w/pytest_gpu.log" 2>&1
fi
if want structure; then
    from=()
    [ -n "$resume" ] && [ -f "$resume/gpu_structure_records.jsonl" ] && from=(--resume-from "$resume/gpu_structure_records.jsonl")
    step "structure check" 560 python3 benchmarks/gpu_structure_check.py --out "$w/structure" "${from[@]}" \
        > "$w/structure.log" 2>&1
fi
if want honest; then
    mkdir -p "$w/honest"
    again=()
    if [ -n "$resume" ] && [ -f "$resume/honest_records.jsonl" ]; then
        cp "$resume/honest_records.jsonl" "$w/honest/"
        again=(--resume)
    fi
    step "honest suite" 560 python3 benchmarks/gpu_honest_check.py --out "$w/honest" "${again[@]}" > "$w/honest.log" 2>&1
fi
if want throughput; then
    step "throughput" 420 python3 benchmarks/gpu_eval_throughput.py --out "$w/throughput" --repeat 2 --cold 2 \
        > "$w/throughput.log" 2>&1
fi
if want cutlass; then
    step "cutlass check" 300 python3 benchmarks/gpu_cutlass_check.py --out "$w/cutlass" > "$w/cutlass.log" 2>&1
fi
date -u > "$w/DONE"
