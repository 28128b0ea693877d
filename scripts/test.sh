#!/usr/bin/env bash
# Test job: set up (idempotent; with pyproject's `dev` extras: pytest, ruff, playwright), lint and format check (`ruff check .`, `ruff format --check .`, configured in
# pyproject.toml), then run the test suite.
# The tests run on one pytest-xdist worker per core, each with one torch/BLAS thread (torch's default of a thread
# per core in every worker and notebook kernel would put more threads than cores on the machine: small kernels then
# wait for threads that are not running). Extra arguments go to pytest (`-n 0`: one process).
# The report site's browser test drives a system Chromium: installed here from Debian's packages when it is
# missing and this shell may install packages (root with apt-get); otherwise that one test is skipped with its reason.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DPGNN_EXTRAS=dev  # read by setup.sh; the smoke run's environment has no test-only packages
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
if ! command -v chromium >/dev/null 2>&1 && [ -z "${DPGNN_CHROMIUM:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "[test] installing Debian's chromium for the report site's browser test"
    (timeout 600 apt-get install -y -q chromium >/dev/null 2>&1 \
      || { timeout 300 apt-get update -q >/dev/null 2>&1 && timeout 600 apt-get install -y -q chromium >/dev/null 2>&1; }) \
      || echo "[test] chromium could not be installed: the browser test will be skipped"
  else
    echo "[test] no chromium and no way to install it here: the browser test will be skipped"
  fi
fi
ruff check .
ruff format --check .
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" MKL_NUM_THREADS="${MKL_NUM_THREADS:-1}"
python -m pytest -n "$(nproc)" "$@"
