#!/usr/bin/env bash
# Everything the dynamic phase needs a GPU for, in one go (one device session):
#   bash benchmarks/gpu_session.sh OUT_DIR
# writes OUT_DIR/gpu_session.tar.gz with the device description, the --confirm table over every
# fixture (gpu_confirm_fixtures.md/.json), the GPU tests' output and the raw sanitizer/ncu
# outputs recorded for the parser tests.
set -u
out=${1:?usage: gpu_session.sh OUT_DIR}
w="$out/work"
mkdir -p "$w"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
{
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
    compute-sanitizer --version | tail -1
    ncu --version | tail -1
    date -u
} > "$w/device.txt" 2>&1
timeout 290 python3 benchmarks/gpu_confirm_fixtures.py "$w" --jobs 6 --raw 3 > "$w/confirm.log" 2>&1
echo "confirm: exit $?" >> "$w/device.txt"
timeout 110 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_confirm.py tests/dynamic > "$w/pytest_gpu.log" 2>&1
echo "pytest -m gpu: exit $?" >> "$w/device.txt"
timeout 140 python3 benchmarks/dynamic_gpu_check.py "$w/dyn" --repeat 1 --fixtures oob_no_mask smem_matmul_clean > "$w/dyn.log" 2>&1
echo "dynamic_gpu_check: exit $?" >> "$w/device.txt"
tar czf "$out/gpu_session.tar.gz" -C "$out" work
cat "$w/device.txt"; tail -5 "$w/pytest_gpu.log"; head -12 "$w/work/gpu_confirm_fixtures.md" 2>/dev/null || head -12 "$w/gpu_confirm_fixtures.md"
