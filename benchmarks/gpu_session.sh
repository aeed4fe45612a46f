#!/usr/bin/env bash
# Everything kernlint needs a GPU for, in one go (one device session):
#   bash benchmarks/gpu_session.sh OUT_DIR [all|confirm|eval|discover]
# writes OUT_DIR/gpu_session.tar.gz: the device description, the GPU tests' output, the --confirm
# table over every fixture (gpu_confirm_fixtures.md/.json), raw compute-sanitizer/ncu outputs for
# the parser tests (raw/<fixture>.<tool>.<variant>.txt), what --confirm costs against the raw
# tool command (confirm_cost.md) and the `kernlint eval` GPU check.
# "confirm" and "eval" run one half each (for machines that limit the length of one command);
# "discover" runs only what the dynamic phase's discovery mode needs (about 5 minutes): the GPU
# tests of --confirm, the --confirm table over fixtures/dynamic and its cost against raw memcheck.
set -u
out=${1:?usage: gpu_session.sh OUT_DIR [all|confirm|eval]}
part=${2:-all}
w="$out/work"
mkdir -p "$w/raw"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
root=$(pwd)
{
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
    compute-sanitizer --version | tail -1
    ncu --version | tail -1
    date -u
} > "$w/device.txt" 2>&1
step() { local name=$1 limit=$2; shift 2; local t0=$SECONDS; timeout "$limit" "$@"; echo "$name: exit $? in $((SECONDS - t0)) s" >> "$w/device.txt"; }

if [ "$part" = discover ]; then
step "pytest -m gpu" 130 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_confirm.py > "$w/pytest_gpu.log" 2>&1
step "confirm fixtures" 90 python3 benchmarks/gpu_confirm_fixtures.py "$w" --jobs 8 --folders fixtures/dynamic > "$w/confirm.log" 2>&1
step "confirm cost" 230 python3 benchmarks/confirm_cost.py "$w" fixtures/dynamic/oob_no_mask_bad.py fixtures/triton/layernorm_bad.py --repeats 2 > "$w/cost.log" 2>&1
elif [ "$part" != eval ]; then
step "pytest -m gpu" 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_confirm.py tests/dynamic > "$w/pytest_gpu.log" 2>&1
step "confirm fixtures" 300 python3 benchmarks/gpu_confirm_fixtures.py "$w" --jobs 8 > "$w/confirm.log" 2>&1
step "confirm cost" 240 python3 benchmarks/confirm_cost.py "$w" --repeats 2 > "$w/cost.log" 2>&1

# raw tool outputs, as a person would type the commands, for the parser tests
cd fixtures/dynamic
entry() { echo "import sys, runpy; sys.path.insert(0, '.'); runpy.run_path('$1.py', run_name='fixture')['run']()"; }
metrics=gpu__time_duration.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__thread_inst_executed_pred_on_per_inst_executed.ratio,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
step "raw memcheck" 25 env PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python3 -c "$(entry oob_no_mask_bad)" > "$w/raw/oob_no_mask_bad.memcheck.plain.txt" 2>&1
step "raw memcheck padding" 25 env PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --padding 64 python3 -c "$(entry oob_row_mask_only_bad)" > "$w/raw/oob_row_mask_only_bad.memcheck.padding.txt" 2>&1
step "raw memcheck clean" 25 env PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python3 -c "$(entry oob_no_mask_good)" > "$w/raw/oob_no_mask_good.memcheck.plain.txt" 2>&1
step "raw racecheck" 25 compute-sanitizer --tool racecheck python3 -c "$(entry smem_matmul_good)" > "$w/raw/smem_matmul_good.racecheck.plain.txt" 2>&1
step "raw synccheck" 25 compute-sanitizer --tool synccheck python3 -c "$(entry smem_matmul_good)" > "$w/raw/smem_matmul_good.synccheck.plain.txt" 2>&1
step "raw ncu" 30 ncu --clock-control none --csv --metrics "$metrics" python3 -c "$(entry smem_matmul_good)" > "$w/raw/smem_matmul_good.ncu.plain.txt" 2>&1
cd "$root"
conflicts=gpu__time_duration.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
for f in bank_conflict_bad tilelang_bank_conflict_bad; do
    step "raw ncu $f" 90 ncu --clock-control none --csv --metrics "$conflicts" python3 -c "import sys, runpy; runpy.run_path('fixtures/ir/$f.py', run_name='fixture')['run']()" > "$w/raw/$f.ncu.plain.txt" 2>&1
done
step "raw synccheck divergent" 60 compute-sanitizer --tool synccheck python3 -c "import sys, runpy; runpy.run_path('fixtures/ir/divergent_barrier_bad.py', run_name='fixture')['run']()" > "$w/raw/divergent_barrier_bad.synccheck.plain.txt" 2>&1
fi
[ "$part" = all ] || [ "$part" = eval ] && step "eval gpu check" 400 python3 benchmarks/gpu_eval_check.py "$w/eval" --repeats 10 > "$w/eval.log" 2>&1
tar czf "$out/gpu_session_$part.tar.gz" -C "$out" work
cat "$w/device.txt"; tail -3 "$w/pytest_gpu.log"; sed -n 5,6p "$w/gpu_confirm_fixtures.md"; grep -v "| yes |" "$w/gpu_confirm_fixtures.md" | tail -5; cat "$w/confirm_cost.md"; tail -15 "$w/eval.log"
