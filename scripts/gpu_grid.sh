#!/usr/bin/env bash
# A paper grid on the lent GPU machine, for the device time left after benchmarks/gpu_check.sh: installs the
# wheelhouse (.whl/, from scripts/build_wheelhouse.sh --datasets ...) into a --target folder, runs
# `dpgnn run ARGS --device cuda` for at most DPGNN_GPU_GRID_SECONDS seconds (default 300; cells in flight then are
# lost, finished ones are stored) and packs every results CSV it wrote into $OUT/results.tar.gz, from where
# `python scripts/land_rows.py <files_at>` lands them in this checkout.
#
#   bash scripts/gpu_grid.sh progap --profile paper --artifact table2 --workers-per-gpu 12
#   DPGNN_GPU_GRID_DEVICE=cpu bash scripts/gpu_grid.sh bench --profile paper --workers 16   # CPU-only grids
#
# Environment: DPGNN_PYTHON (default python3), DPGNN_WHEELHOUSE (default .whl; its datasets/ folder is the data
# mirror), DPGNN_GPU_CHECK_SITE (the --target folder, default /tmp/site: shared with gpu_check.sh),
# DPGNN_GPU_GRID_SECONDS, DPGNN_GPU_GRID_DEVICE (default cuda; cpu rehearses the script here, best with
# DPGNN_OUTPUT_ROOT set to a scratch folder so that the checkout's results/ stay as they are). Exit status: dpgnn's,
# or 0 when the time limit stopped it (the grid resumes next time).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

py="${DPGNN_PYTHON:-python3}"
wheels="${DPGNN_WHEELHOUSE:-.whl}"
site="${DPGNN_GPU_CHECK_SITE:-/tmp/site}"
seconds="${DPGNN_GPU_GRID_SECONDS:-300}"
device="${DPGNN_GPU_GRID_DEVICE:-cuda}"
root="${DPGNN_OUTPUT_ROOT:-$PWD}"
if [ $# -eq 0 ]; then
  echo "gpu_grid: give the arguments of dpgnn run, e.g. bench --profile paper --workers-per-gpu 12" >&2
  exit 2
fi
case "$seconds" in
  ''|*[!0-9]*) echo "gpu_grid: DPGNN_GPU_GRID_SECONDS must be whole seconds, got $seconds" >&2; exit 2 ;;
esac
shopt -s nullglob
files=("$wheels"/*.whl)
if [ "${#files[@]}" -eq 0 ]; then
  echo "gpu_grid: no wheels in $wheels/ (bash scripts/build_wheelhouse.sh, then carry it: carry [\".whl\"])" >&2
  exit 1
fi
"$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --disable-pip-version-check --upgrade \
  --target "$site" "${files[@]}" || { echo "gpu_grid: the wheels did not install into $site" >&2; exit 1; }
export PYTHONPATH="$site:$PWD" PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
export DPGNN_DATA_DIR="${DPGNN_DATA_DIR:-/tmp/gpu_grid_data}"
if [ -d "$wheels/datasets" ]; then export DPGNN_DATA_MIRROR="$(cd "$wheels/datasets" && pwd)"; fi
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu_grid: GPU /'

marker="$(mktemp /tmp/gpu_grid_start.XXXXXX)"
start=$SECONDS
timeout -s INT -k 30 "$seconds" "$py" -m dpgnn run "$@" --device "$device"
status=$?
if [ "$status" -eq 124 ]; then
  echo "gpu_grid: stopped after ${seconds} s as asked; finished cells are stored"
  status=0
fi
# one archive, not a folder tree: the device tool leaves nested folders under $OUT behind
rels=()
while IFS= read -r -d '' f; do rels+=("${f#"$root"/}"); done \
  < <(find "$root/results" -name '*.csv' -newer "$marker" -print0)
rm -f "$marker"
where="nowhere (OUT unset)"
if [ -n "${OUT:-}" ] && [ "${#rels[@]}" -gt 0 ]; then
  mkdir -p "$OUT" && tar -czf "$OUT/results.tar.gz" -C "$root" "${rels[@]}" && where="$OUT/results.tar.gz"
fi
echo "gpu_grid: exit status $status after $((SECONDS - start)) s; ${#rels[@]} results file(s) packed into $where"
exit "$status"
