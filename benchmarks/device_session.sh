# Sourced by the device-session scripts once the work folder is in $w:
#   device_header   the machine, the software and the code into $w/device.txt (started afresh)
#   step NAME SECONDS CMD...   runs CMD under a time limit; its exit status and seconds go to $w/device.txt
device_header() {
    {
        nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
        python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
        ncu --version | tail -1
        nvcc --version | tail -1
        echo "code of ${KERNLINT_REV:-unknown}"
        date -u
    } > "$w/device.txt" 2>&1
}

step() {
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    timeout "$limit" "$@"
    echo "$name: exit $? in $((SECONDS - t0)) s ($(date -u +%H:%M:%S) UTC)" >> "$w/device.txt"
}
