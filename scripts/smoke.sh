#!/usr/bin/env bash
# Main job: set up (idempotent) and run the CPU smoke reproduction of every paper series.
# Extra arguments go to `dpgnn reproduce` (e.g. `lpgcn --force`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
dpgnn reproduce --profile smoke "$@"
dpgnn report --profile smoke
