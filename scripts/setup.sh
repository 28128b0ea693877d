#!/usr/bin/env bash
# Idempotent set-up of the project environment in ./.venv. Run it (`bash scripts/setup.sh`) or source it
# (`source scripts/setup.sh`, which also activates the environment in your shell); smoke.sh and test.sh source it.
#   - installs with uv (parallel downloads and byte-compilation; several times faster than pip): the venv's uv, else
#     one on PATH, else `pip install uv` into the venv. uv reads none of pip's configuration, so scripts/uv_options.py
#     asks pip for it (`pip config list`: pip.conf files and PIP_* variables) and passes the index, extra indexes,
#     find-links, constraints and certificate on to uv, with pip's pick of the best version over all indexes.
#     When uv cannot be installed or fails, one line says so and pip installs instead (DPGNN_INSTALLER=pip: always),
#   - upgrades the venv's pip only when it is older than 23 (the pip of Python >= 3.11's venv is recent enough),
#   - installs the pinned CPU build of torch first, from PyTorch's CPU wheel index when that is reachable
#     (a plain `pip install torch` on Linux resolves the multi-GB CUDA build), else from the default index,
#   - installs dpgnn in editable mode with its pinned dependencies, and the optional dependencies named by
#     DPGNN_EXTRAS (test.sh asks for `dev`: pytest, ruff, playwright; the smoke run needs none of them),
#   - registers the Jupyter kernel `python3` inside the venv so papermill/JupyterLab find it,
#   - points DPGNN_DATA_MIRROR at ../shared/datasets when that offline mirror exists and nothing else is set.
# Sourcing never changes the caller's shell options (no `set -e` left behind) and a failed install returns a
# non-zero status instead of closing the terminal. Matplotlib's backend is left alone, so figures show inline in
# JupyterLab and in executed notebooks.
# Re-running is cheap: a stamp keyed on pyproject.toml + this script + uv_options.py skips the installer when nothing
# changed (and one stamp per set of extras, so asking for `dev` later installs only those). Installs are
# byte-compiled (`uv pip install --compile-bytecode`; pip compiles by default): imports in the notebooks' kernels
# then read the compiled files (no `--no-compile`: with PYTHONDONTWRITEBYTECODE set, every process would recompile
# torch on import).
# Environment knobs: DPGNN_PYTHON (interpreter, default python3), DPGNN_VENV (default ./.venv),
# DPGNN_TORCH_VERSION (default 2.13.0), DPGNN_TORCH_INDEX_URL (default: https://download.pytorch.org/whl/cpu when
# reachable; e.g. https://download.pytorch.org/whl/cu121 for a CUDA build), DPGNN_EXTRAS (optional dependencies of
# pyproject.toml to add, comma-separated, e.g. `dev`; default none), DPGNN_INSTALLER (`uv`, the default, or `pip`).

_dpgnn_install() (
  # a subshell: strict options apply to the installation only, never to the caller's shell
  set -euo pipefail
  root="$1"
  venv="$2"
  py="${DPGNN_PYTHON:-python3}"
  torch_version="${DPGNN_TORCH_VERSION:-2.13.0}"
  # uv: the venv's own, else one on PATH, else installed into the venv by pip; prints its path
  _find_uv() {
    if [ ! -x "$venv/bin/uv" ] && command -v uv >/dev/null 2>&1 && uv --version >/dev/null 2>&1; then
      command -v uv
      return 0
    fi
    if [ ! -x "$venv/bin/uv" ]; then
      _pip_current && "$venv/bin/python" -m pip install -q uv >/dev/null 2>&1 || return 1
    fi
    [ -x "$venv/bin/uv" ] && "$venv/bin/uv" --version >/dev/null 2>&1 && echo "$venv/bin/uv"
  }
  _pip_current() {
    if ! "$venv/bin/python" -c "import sys, pip; sys.exit(int(pip.__version__.split('.')[0]) < 23)" 2>/dev/null; then
      "$venv/bin/python" -m pip install -q --upgrade pip
    fi
  }
  # uv reads no pip configuration: uv_options.py maps pip's (index, find-links, constraints, certificate) to uv's
  # options; pip's choice of the best version over all indexes (a plain default index must not win torch)
  _uv_install() {
    local cfg_index="" line
    local -a opts=(--python "$venv/bin/python" -q --compile-bytecode --index-strategy unsafe-best-match)
    while IFS= read -r line; do
      case "$line" in
        "") ;;
        env:*) export "${line#env:}" ;;
        --index-url=*) cfg_index="$line" ;;
        *) opts+=("$line") ;;
      esac
    done <<< "$uv_opts"
    if [ "$base_done" = 0 ]; then
      if [ -n "$index" ]; then
        "$uv" pip install "${opts[@]}" --index-url="$index" "torch==$torch_version" || return 1
      else
        "$uv" pip install "${opts[@]}" ${cfg_index:+"$cfg_index"} "torch==$torch_version" || return 1
      fi
    fi
    "$uv" pip install "${opts[@]}" ${cfg_index:+"$cfg_index"} -e "$target"
  }
  _pip_install() {
    if [ "$base_done" = 0 ]; then
      _pip_current
      if [ -n "$index" ]; then
        "$venv/bin/python" -m pip install -q "torch==$torch_version" --index-url "$index"
      else
        "$venv/bin/python" -m pip install -q "torch==$torch_version"
      fi
    fi
    "$venv/bin/python" -m pip install -q -e "$target"
  }
  if [ ! -x "$venv/bin/python" ]; then
    echo "[setup] creating $venv"
    "$py" -m venv "$venv"
  fi
  stamp="$venv/.dpgnn-setup"
  want="$(cat "$root/pyproject.toml" "$root/scripts/setup.sh" "$root/scripts/uv_options.py" | sha256sum | cut -d' ' -f1)"
  want="$want-$torch_version"
  extras="${DPGNN_EXTRAS:-}"
  extras_stamp="$stamp-extras-${extras//[^A-Za-z0-9]/_}"
  base_done=0
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    base_done=1
    if [ -z "$extras" ] || { [ -f "$extras_stamp" ] && [ "$(cat "$extras_stamp")" = "$want" ]; }; then
      exit 0
    fi
  fi
  installer=pip
  if [ "${DPGNN_INSTALLER:-uv}" = uv ]; then
    if uv="$(_find_uv)" && uv_opts="$("$venv/bin/python" "$root/scripts/uv_options.py")"; then
      installer=uv
    else
      echo "[setup] uv is not available: installing with pip"
    fi
  fi
  if [ "$base_done" = 0 ]; then
    echo "[setup] installing dependencies into $venv with $installer (once; later runs skip this)"
    index="${DPGNN_TORCH_INDEX_URL:-}"
    if [ -z "$index" ]; then
      cpu_index="https://download.pytorch.org/whl/cpu"
      if "$venv/bin/python" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/torch/', timeout=10)" \
          "$cpu_index" >/dev/null 2>&1; then
        index="$cpu_index"
      else
        echo "[setup] $cpu_index is not reachable: torch==$torch_version from the default index"
      fi
    fi
    [ -z "$index" ] || echo "[setup] torch==$torch_version from $index"
  else
    echo "[setup] installing the optional dependencies [$extras] into $venv with $installer (once)"
  fi
  target="$root${extras:+[$extras]}"
  if [ "$installer" = uv ] && ! _uv_install; then
    echo "[setup] uv failed: installing with pip instead"
    installer=pip
  fi
  if [ "$installer" = pip ]; then
    _pip_install
  fi
  if [ "$base_done" = 0 ]; then
    "$venv/bin/python" -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (dpgnn)" >/dev/null
    echo "$want" > "$stamp"
  fi
  if [ -n "$extras" ]; then
    echo "$want" > "$extras_stamp"
  fi
)

_dpgnn_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_dpgnn_venv="${DPGNN_VENV:-$_dpgnn_root/.venv}"
# not inside `if`: bash ignores `set -e` in a subshell that runs as an `if` condition
_dpgnn_install "$_dpgnn_root" "$_dpgnn_venv"
_dpgnn_status=$?
if [ "$_dpgnn_status" -eq 0 ]; then
  if [ -z "${DPGNN_DATA_MIRROR:-}" ] && [ -d "$_dpgnn_root/../shared/datasets" ]; then
    DPGNN_DATA_MIRROR="$(cd "$_dpgnn_root/../shared/datasets" && pwd)"
    export DPGNN_DATA_MIRROR
  fi
  export PATH="$_dpgnn_venv/bin:$PATH"
  unset -f _dpgnn_install
  unset _dpgnn_root _dpgnn_venv _dpgnn_status
else
  echo "[setup] failed (exit status $_dpgnn_status); the environment is not activated" >&2
  unset -f _dpgnn_install
  unset _dpgnn_root _dpgnn_venv
  # sourced: return to the caller's shell; executed: exit
  return "$_dpgnn_status" 2>/dev/null || exit "$_dpgnn_status"
fi
