#!/usr/bin/env bash
# One device session of the TritonBench-T study, for a machine held in short calls:
#   bash benchmarks/study_t/gpu_session.sh CORPUS_DIR WORK_DIR [SECONDS] [RECORDS]
# 1. the GPU tests of eval (the task-call timer, the profiler's kernel trace, per-problem reuse, the
#    CUTLASS baseline);
# 2. the study over the whole seeded task list (run_gpu.sh: resumable, capped at SECONDS, 1500 by default).
# Each step's exit status and seconds go to WORK_DIR/device.txt; WORK_DIR/DONE is written last, so a
# caller that started this in the background can tell when it ended and fetch WORK_DIR/study/batch.
# RECORDS: a records.jsonl of an earlier call (carried to the machine) to resume from; the GPU tests
# are then skipped. A machine can be given back between two calls: run each call in the foreground,
# under the call's limit, and carry its records to the next one.
set -u
corpus=${1:?usage: gpu_session.sh CORPUS_DIR WORK_DIR [SECONDS] [RECORDS]}
w=${2:?usage: gpu_session.sh CORPUS_DIR WORK_DIR [SECONDS] [RECORDS]}
budget=${3:-1500}
resume=${4:-}
mkdir -p "$w/study/batch"
export PYTHONUNBUFFERED=1
source "$(dirname "$0")/../device_session.sh"
device_header
if [ -n "$resume" ]; then cp "$resume" "$w/study/batch/records.jsonl"; else
step "pytest -m gpu (eval)" 360 python3 -m pytest -q -m gpu -p no:cacheprovider tests/eval/test_task_call_timing.py \
    tests/eval/test_device_trace.py tests/eval/test_reuse.py tests/eval/test_cutlass_baseline.py > "$w/pytest_gpu.log" 2>&1
fi
# run_gpu.sh keeps to the budget itself; the limit only catches a run that hangs
step "study" $((budget + 300)) bash "$(dirname "$0")/run_gpu.sh" "$corpus" "$w/study" 0 "$budget" > "$w/study.log" 2>&1
echo "study: $(wc -l < "$w/study/batch/records.jsonl" 2>/dev/null || echo 0) records" >> "$w/device.txt"
date -u > "$w/DONE"
