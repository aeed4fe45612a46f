#!/usr/bin/env bash
# The TritonBench-T study on a GPU machine:
#   bash benchmarks/study_t/run_gpu.sh CORPUS_DIR OUT_DIR [N_TASKS] [SECONDS]
# CORPUS_DIR holds T/ (the task list and references) and llm_T/ (the four models' answers).
# Evaluates the first N_TASKS (default: all) of benchmarks/study_t/tasks.txt, every model's answer
# per task; records go to OUT_DIR/<model>/records.jsonl as they finish, and a rerun resumes.
# SECONDS caps the whole run (default: no cap), shared out over the models.
# Then, on a machine with the repository: python benchmarks/study_t/collect.py OUT_DIR (merges the
# records into docs/study-t/records.jsonl) and python benchmarks/study_t/report.py (the document).
set -u
corpus=${1:?usage: run_gpu.sh CORPUS_DIR OUT_DIR [N_TASKS] [SECONDS]}
out=${2:?usage: run_gpu.sh CORPUS_DIR OUT_DIR [N_TASKS] [SECONDS]}
n=${3:-0}
budget=${4:-0}
here=$(dirname "$0")
ids=$(grep -v '^#' "$here/tasks.txt" | sed '/^$/d' | { if [ "$n" -gt 0 ]; then head -n "$n"; else cat; fi; } | paste -sd, -)
export TRITON_CACHE_DIR="$out/triton-cache"
models=("$corpus"/llm_T/output_*.jsonl)
share=$(( budget > 0 ? budget / ${#models[@]} : 0 ))
for answers in "${models[@]}"; do
    model=$(basename "$answers" .jsonl); model=${model#output_}
    t0=$SECONDS
    cmd=(python3 -m kernlint eval "$corpus/T/TritonBench_T_v1.jsonl" "$answers" --problem-ids "$ids"
         -o "$out/$model" --seeds 0,1 --iters 20 --timeout 90 --no-progress)
    if [ "$share" -gt 0 ]; then timeout "$share" "${cmd[@]}"; else "${cmd[@]}"; fi
    echo "$model: exit $? after $((SECONDS - t0)) s; $(wc -l < "$out/$model/records.jsonl" 2>/dev/null || echo 0) records"
done
