#!/usr/bin/env bash
# Main job: set up (idempotent) and run the CPU smoke reproduction of every paper series.
# Two series side by side (each notebook single-threaded: 2 cores); extra arguments go to `dpgnn reproduce`
# (e.g. `lpgcn --force`, or `--jobs 1`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
dpgnn reproduce --profile smoke --jobs 2 "$@"
dpgnn report --profile smoke
