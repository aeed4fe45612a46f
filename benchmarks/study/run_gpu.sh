#!/usr/bin/env bash
# The TritonBench-G study on a GPU machine (every visible GPU gets one worker):
#   bash benchmarks/study/run_gpu.sh CORPUS_DIR OUT_DIR [SECONDS]
# CORPUS_DIR: TritonBench_G_v1.json and the <model>_simp.jsonl answers. Evaluates the tasks of
# benchmarks/study/tasks.txt that have test code, in that order, both models' answers per task;
# records go to OUT_DIR/eval/records.jsonl as they finish, and a rerun resumes. SECONDS caps the
# evaluation (default: no cap); then the static findings are judged on the GPU for what time is left.
set -u
corpus=${1:?usage: run_gpu.sh CORPUS_DIR OUT_DIR [SECONDS]}
out=${2:?usage: run_gpu.sh CORPUS_DIR OUT_DIR [SECONDS]}
budget=${3:-0}
mkdir -p "$out"
python3 benchmarks/study/candidates.py "$corpus" "$out/candidates"
ids=$(grep -v '^#' benchmarks/study/tasks.txt | while read -r t; do
    [ -n "$t" ] && [ -f "benchmarks/study/tritonbench_tests/$t.py" ] && echo "$t"; done | paste -sd, -)
export TRITON_CACHE_DIR="$out/triton-cache"
cap() { if [ "$budget" -gt 0 ]; then timeout "$budget" "$@"; else "$@"; fi; }
t0=$SECONDS
cap python3 -m kernlint eval "$corpus/TritonBench_G_v1.json" "$out/candidates" \
    --tests benchmarks/study/tritonbench_tests --problem-ids "$ids" -o "$out/eval" \
    --seeds 0,1 --iters 20 --timeout 90 --no-progress
echo "eval: exit $? after $((SECONDS - t0)) s; $(wc -l < "$out/eval/records.jsonl") records"
