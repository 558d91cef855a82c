#!/usr/bin/env bash
# Everything that needs a real GPU, in one go: the gpu-marked tests, then the GPU benchmarks.
# Logs go to LOGS (default ./gpu-logs); the last lines of each are printed as it finishes.
#   PYTHON=python3 LOGS=/tmp/out bash benchmarks/gpu_suite.sh [tests] [step] [trainable] [sweep]
# MPS=1 runs the parts with NVIDIA's Multi-Process Service started for them (and stopped after), so
# kernels of trials sharing the GPU run side by side instead of taking turns. STEP_ARGS and SWEEP_ARGS
# replace the benchmarks' default arguments.
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
LOGS=${LOGS:-gpu-logs}
mkdir -p "$LOGS"
export PYTHONUNBUFFERED=1
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(tests step trainable sweep)
label="MPS off"

run() {  # name, time limit in seconds, command...
    local name=$1 limit=$2; shift 2
    echo "== $name ($label): $*"
    local started=$SECONDS
    timeout "$limit" "$@" >"$LOGS/$name.log" 2>&1
    echo "== $name: exit $? after $((SECONDS - started)) s"
    tail -n "${TAIL:-25}" "$LOGS/$name.log"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
$PYTHON -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "cuDNN", torch.backends.cudnn.version())'
# Wheels unpacked with --no-compile (pack-wheels.sh) leave Ray's sources to be compiled by every trial process
# as it starts; compile them once, as pip does for a user's install.
site=$($PYTHON -c 'import os, ray; print(os.path.dirname(os.path.dirname(ray.__file__)))' 2>/dev/null) &&
    [ -w "$site" ] && $PYTHON -m compileall -q -j 0 "$site" tuner trainables >/dev/null
if [ "${MPS:-0}" = 1 ]; then
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/tuner-mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/tuner-mps/log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    if nvidia-cuda-mps-control -d; then
        label="MPS on"
        trap 'echo quit | nvidia-cuda-mps-control' EXIT
    else
        echo "could not start MPS; running without it"
    fi
fi
suffix=${MPS:+-mps$MPS}
for part in "${parts[@]}"; do
    case $part in
        tests) run "tests$suffix" 200 $PYTHON -m pytest -m gpu -p no:cacheprovider -q -rA tests ;;
        step) run "step$suffix" 200 $PYTHON benchmarks/bench_gpu_step.py --label "$label" \
                  ${STEP_ARGS:---batch-sizes 2 16 --trials 1 4 14 --steps 1500 --images 8000} ;;
        trainable) run "trainable$suffix" 200 $PYTHON benchmarks/bench_trainable.py --device cuda --images 50000 \
                       --batch-sizes 4 16 64 --threads 1 ;;
        sweep) run "sweep$suffix" "${SWEEP_LIMIT:-400}" $PYTHON benchmarks/bench_gpu_sweep.py --label "$label" \
                   --log "$LOGS/sweep$suffix-tuner.log" ${SWEEP_ARGS:-} ;;
        *) echo "unknown part $part" ;;
    esac
done
