#!/usr/bin/env bash
# GPU acceptance run of dpgnn, in one command: says what it found (Python, torch, the GPU, the wheels), installs
# the wheelhouse (scripts/build_wheelhouse.sh) into a --target folder, then runs benchmarks/gpu_check.py with the
# arguments given (see its --help). dpgnn itself runs from this checkout (PYTHONPATH), not installed.
#
#   bash benchmarks/gpu_check.sh                  # on the lent GPU machine, from the repository root
#   DPGNN_GPU_CHECK_REHEARSAL=1 DPGNN_PYTHON=/tmp/gpu_image_venv/bin/python DPGNN_WHEELHOUSE=/tmp/whl311 \
#     bash benchmarks/gpu_check.sh --cells 2 --workers-per-gpu 1 2 --epochs 50
#                                                 # the same steps on the CPU (benchmarks/README.md)
#
# Environment: DPGNN_PYTHON (default python3), DPGNN_WHEELHOUSE (default .whl; its datasets/ folder becomes the
# offline data mirror), DPGNN_GPU_CHECK_SITE (the --target folder; default /tmp/site, a new temporary folder in a
# rehearsal), DPGNN_GPU_CHECK_REHEARSAL=1 (the CPU stands in for the GPU). The log goes to $OUT/gpu_check.log when
# $OUT is set, and to benchmarks/results/gpu_check.log (gpu_check_rehearsal.log) when the run found its device.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

rehearsal="${DPGNN_GPU_CHECK_REHEARSAL:-0}"
stem=gpu_check
[ "$rehearsal" = 1 ] && stem=gpu_check_rehearsal
py="${DPGNN_PYTHON:-python3}"
wheels="${DPGNN_WHEELHOUSE:-.whl}"
made=()  # temporary files and folders this script made, removed at the end
if [ -n "${DPGNN_GPU_CHECK_SITE:-}" ]; then site="$DPGNN_GPU_CHECK_SITE"
elif [ "$rehearsal" = 1 ]; then site="$(mktemp -d /tmp/gpu_check_site.XXXXXX)"; made+=("$site")
else site=/tmp/site
fi
data_dir="$(mktemp -d /tmp/gpu_check_data.XXXXXX)"  # processed datasets: made here from the raw files
made+=("$data_dir")

check() {
  echo "== gpu_check: what is here ($(date -u +%Y-%m-%dT%H:%M:%SZ), rehearsal=$rehearsal)"
  echo "python: $(command -v "$py") = $("$py" -c 'import sys; print(sys.version.split()[0])' 2>&1)"
  "$py" - <<'EOF' 2>&1
import torch
gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none seen"
print(f"torch {torch.__version__}, built for CUDA {torch.version.cuda}; GPU: {gpu}")
EOF
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
  else
    echo "nvidia-smi: not here"
  fi
  echo "cpus: $(nproc)"
  shopt -s nullglob
  local files=("$wheels"/*.whl)
  if [ "${#files[@]}" -eq 0 ]; then
    echo "gpu_check: FAIL: no wheels in $wheels/ (bash scripts/build_wheelhouse.sh, then carry it: carry [\".whl\"])"
    return 1
  fi
  echo "wheels in $wheels/ (${#files[@]}):"
  for f in "${files[@]}"; do echo "  $(basename "$f")"; done
  echo "== gpu_check: installing them into $site"
  "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --disable-pip-version-check --upgrade \
    --target "$site" "${files[@]}" || { echo "gpu_check: FAIL: the wheels did not install into $site"; return 1; }
  export PYTHONPATH="$site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
  if [ -d "$wheels/datasets" ]; then export DPGNN_DATA_MIRROR="$(cd "$wheels/datasets" && pwd)"; fi
  export DPGNN_DATA_DIR="$data_dir" PYTHONUNBUFFERED=1 DPGNN_GPU_CHECK_REHEARSAL="$rehearsal"
  echo "PYTHONPATH=$PYTHONPATH"
  echo "DPGNN_DATA_MIRROR=${DPGNN_DATA_MIRROR:-unset} DPGNN_DATA_DIR=$DPGNN_DATA_DIR"
  echo "== gpu_check: benchmarks/gpu_check.py $*"
  "$py" benchmarks/gpu_check.py "$@"
}

# the log: $OUT when set; benchmarks/results/ only when the run wrote its results there (it found a device)
mkdir -p benchmarks/results
log="$(mktemp /tmp/gpu_check_log.XXXXXX)"
marker="$(mktemp /tmp/gpu_check_start.XXXXXX)"
made+=("$log" "$marker")
logs=("$log")
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT" && logs+=("$OUT/$stem.log"); fi
start=$SECONDS
check "$@" 2>&1 | tee "${logs[@]}"
status=${PIPESTATUS[0]}
echo "gpu_check: exit status $status after $((SECONDS - start)) s" | tee -a "${logs[@]}"
if [ "benchmarks/results/$stem.csv" -nt "$marker" ]; then
  cat "$log" > "benchmarks/results/$stem.log"
fi
rm -rf "${made[@]}"
exit "$status"
