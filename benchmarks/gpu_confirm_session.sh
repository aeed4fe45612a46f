#!/usr/bin/env bash
# One device call: the GPU tests of --confirm, then --confirm over fixtures/bounds (judge mode), KL111's
# fixture pairs run as they are, and --confirm over fixtures/dynamic (discovery mode):  bash benchmarks/gpu_confirm_session.sh OUT_DIR
# (wheels the device lacks are installed from .whl/ into /tmp/deps, the checkout on PYTHONPATH)
set -u
out=$1; w=$out/work; mkdir -p $w
python3 -m pip install -q --no-index --no-deps --target /tmp/deps .whl/*.whl > $w/pip.log 2>&1
export PYTHONPATH=/tmp/deps:$PWD PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; compute-sanitizer --version | tail -1; date -u; } > $w/device.txt 2>&1
step() { local name=$1 limit=$2; shift 2; local t0=$SECONDS; timeout "$limit" "$@"; echo "$name: exit $? in $((SECONDS - t0)) s" >> $w/device.txt; }
step "pytest gpu confirm" 250 env PYTORCH_NO_CUDA_MEMORY_CACHING=1 python3 -m pytest -v --durations=10 -m gpu -p no:cacheprovider tests/test_gpu_confirm.py tests/dynamic/test_confirm_plan.py > $w/pytest_confirm.log 2>&1
step "confirm bounds" 330 python3 benchmarks/gpu_confirm_fixtures.py $w/bounds --jobs 16 --folders fixtures/bounds --confirm-mode judge > $w/confirm_bounds.log 2>&1
step "launch check" 90 python3 benchmarks/gpu_launch_check.py $w/launch_check.md > $w/launch_check.log 2>&1
step "confirm dynamic" 120 python3 benchmarks/gpu_confirm_fixtures.py $w/dynamic --jobs 8 --folders fixtures/dynamic > $w/confirm_dynamic.log 2>&1
date -u >> $w/device.txt
cat $w/device.txt; grep -E "PASS|FAIL|ERROR|passed|failed|s call" $w/pytest_confirm.log | tail -25; cat $w/launch_check.md; for d in bounds dynamic; do sed -n 1,8p $w/$d/gpu_confirm_fixtures.md; grep -v "| yes |" $w/$d/gpu_confirm_fixtures.md | tail -12; done
