#!/usr/bin/env bash
# A short device session: the GPU tests, the evidence behind the ncu bank-conflict verdict, and the
# `kernlint eval` GPU check (bash benchmarks/gpu_diagnose.sh OUT_DIR).
set -u
out=${1:?usage: gpu_diagnose.sh OUT_DIR}
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
timeout 95 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_confirm.py tests/dynamic > "$out/pytest_gpu.log" 2>&1
echo "pytest -m gpu: exit $?" | tee "$out/summary.txt"
timeout 45 python3 -m kernlint check fixtures/ir/bank_conflict_bad.py --ir --confirm --require-gpu --select KL302 --output-format json > "$out/kl302.json" 2>&1
echo "kl302: exit $?" | tee -a "$out/summary.txt"
timeout 150 python3 benchmarks/gpu_eval_check.py "$out/eval" --repeats 10 > "$out/eval.log" 2>&1
echo "eval: exit $?" | tee -a "$out/summary.txt"
tail -4 "$out/pytest_gpu.log"; python3 -c "import json,sys; d=json.load(open('$out/kl302.json')); [print(f['verdict'], f['evidence'].get('dynamic'), f['measurements']) for f in d['findings']]" 2>&1 | head -5
sed -n 1,30p "$out/eval/gpu_eval_check.md" 2>/dev/null
