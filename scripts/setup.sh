#!/usr/bin/env bash
# Idempotent set-up of the project environment in ./.venv (sourced by smoke.sh and test.sh).
#   - installs the pinned CPU build of torch first (a plain `torch` requirement would pull a CUDA build),
#   - installs dpgnn in editable mode with its pinned dependencies,
#   - registers the Jupyter kernel `python3` inside the venv so papermill/JupyterLab find it,
#   - points DPGNN_DATA_MIRROR at ../shared/datasets when that offline mirror exists and nothing else is set.
# Re-running is cheap: a stamp keyed on pyproject.toml + this script skips pip when nothing changed.
# Environment knobs: DPGNN_PYTHON (interpreter, default python3), DPGNN_TORCH_VERSION (default 2.13.0),
# DPGNN_TORCH_INDEX_URL (e.g. https://download.pytorch.org/whl/cu121 for a CUDA build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${DPGNN_PYTHON:-python3}"
TORCH_VERSION="${DPGNN_TORCH_VERSION:-2.13.0}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating $VENV"
  "$PY" -m venv "$VENV"
fi

stamp="$VENV/.dpgnn-setup"
want="$(cat "$ROOT/pyproject.toml" "$ROOT/scripts/setup.sh" | sha256sum | cut -d' ' -f1)-$TORCH_VERSION"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "[setup] installing dependencies into $VENV (once; later runs skip this)"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  if [ -n "${DPGNN_TORCH_INDEX_URL:-}" ]; then
    "$VENV/bin/python" -m pip install -q "torch==$TORCH_VERSION" --index-url "$DPGNN_TORCH_INDEX_URL"
  else
    "$VENV/bin/python" -m pip install -q "torch==$TORCH_VERSION"
  fi
  "$VENV/bin/python" -m pip install -q -e "$ROOT[dev]"
  "$VENV/bin/python" -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (dpgnn)" >/dev/null
  echo "$want" > "$stamp"
fi

if [ -z "${DPGNN_DATA_MIRROR:-}" ] && [ -d "$ROOT/../shared/datasets" ]; then
  DPGNN_DATA_MIRROR="$(cd "$ROOT/../shared/datasets" && pwd)"
  export DPGNN_DATA_MIRROR
fi
export PATH="$VENV/bin:$PATH"
export MPLBACKEND="${MPLBACKEND:-Agg}"
