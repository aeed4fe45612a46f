#!/usr/bin/env bash
# Every GPU check of `kernlint eval` in one go, for one device session (about 25 minutes on an H200):
#   bash benchmarks/gpu_eval_session.sh WORK_DIR
# 1. the GPU tests of eval (the profiler's kernel trace, per-problem reuse, the CUTLASS baseline);
# 2. the honest suite at the default options (gpu_honest_check.py: none may be flagged);
# 3. throughput at the default options on the fixture suite, each verdict checked against
#    fixtures/eval/expected.json (gpu_eval_throughput.py);
# 4. the CUTLASS baseline against cuBLAS and torch.compile (gpu_cutlass_check.py).
# Each step's exit status and seconds go to WORK_DIR/device.txt; WORK_DIR/DONE is written last, so a
# caller that started this in the background can tell when it ended.
set -u
w=${1:?usage: gpu_eval_session.sh WORK_DIR}
mkdir -p "$w"
export PYTHONUNBUFFERED=1
source "$(dirname "$0")/device_session.sh"
device_header
step "pytest -m gpu" 300 python3 -m pytest -q -m gpu -p no:cacheprovider tests/eval/test_device_trace.py \
    tests/eval/test_reuse.py tests/eval/test_cutlass_baseline.py > "$w/pytest_gpu.log" 2>&1
step "honest suite" 960 python3 benchmarks/gpu_honest_check.py --out "$w/honest" > "$w/honest.log" 2>&1
step "throughput" 420 python3 benchmarks/gpu_eval_throughput.py --out "$w/throughput" --repeat 2 --cold 2 \
    > "$w/throughput.log" 2>&1
step "cutlass check" 300 python3 benchmarks/gpu_cutlass_check.py --out "$w/cutlass" > "$w/cutlass.log" 2>&1
date -u > "$w/DONE"
