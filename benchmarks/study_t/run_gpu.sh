#!/usr/bin/env bash
# The TritonBench-T study on a GPU machine:
#   bash benchmarks/study_t/run_gpu.sh CORPUS_DIR OUT_DIR [N_TASKS] [SECONDS] [CHUNK]
# CORPUS_DIR holds T/ (the task list and references) and llm_T/ (the four models' answers).
# Evaluates the first N_TASKS (default: all) of benchmarks/study_t/tasks.txt, CHUNK tasks at a time
# (default 20), every model's answer per task in one batch, so each task's reference and baselines are
# measured once for the four models and a run that stops early has judged whole tasks for every model.
# Records go to OUT_DIR/batch/records.jsonl as they finish; a rerun resumes. SECONDS caps the whole run.
# Then, on a machine with the repository: python benchmarks/study_t/collect.py OUT_DIR (merges the
# records into docs/study-t/records.jsonl) and python benchmarks/study_t/report.py (the document).
set -u
corpus=${1:?usage: run_gpu.sh CORPUS_DIR OUT_DIR [N_TASKS] [SECONDS] [CHUNK]}
out=${2:?usage: run_gpu.sh CORPUS_DIR OUT_DIR [N_TASKS] [SECONDS] [CHUNK]}
n=${3:-0}
budget=${4:-0}
chunk=${5:-20}
here=$(dirname "$0")
mapfile -t ids < <(grep -v '^#' "$here/tasks.txt" | sed '/^$/d' | { if [ "$n" -gt 0 ]; then head -n "$n"; else cat; fi; })
export TRITON_CACHE_DIR="$out/triton-cache"
start=$SECONDS
for ((i = 0; i < ${#ids[@]}; i += chunk)); do
    part=$(IFS=,; echo "${ids[*]:i:chunk}")
    cmd=(python3 -m kernlint eval "$corpus/T/TritonBench_T_v1.jsonl" "$corpus"/llm_T/output_*.jsonl
         --problem-ids "$part" -o "$out/batch" --seeds 0,1 --iters 20 --timeout 90 --slots-per-gpu "${SLOTS:-8}"
         --no-progress)
    left=$(( budget > 0 ? budget - (SECONDS - start) : 0 ))
    if [ "$budget" -gt 0 ] && [ "$left" -le 0 ]; then echo "time is up before tasks $((i + 1))-"; break; fi
    if [ "$budget" -gt 0 ]; then timeout "$left" "${cmd[@]}"; else "${cmd[@]}"; fi
    echo "tasks $((i + 1))-$((i + chunk)): exit $? at $((SECONDS - start)) s; $(wc -l < "$out/batch/records.jsonl" 2>/dev/null || echo 0) records"
done
