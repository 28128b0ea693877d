#!/usr/bin/env bash
# The wheelhouse of the GPU acceptance run (benchmarks/gpu_check.sh): the Python packages that run needs and the
# lent GPU machine lacks, plus the raw files of the datasets it trains on, in .whl/ (git-ignored). Run it here,
# where pip reaches the package index; the GPU machine has no network and installs .whl/*.whl with
#   python3 -m pip install --no-index --no-deps --target /tmp/site .whl/*.whl
#
#   bash scripts/build_wheelhouse.sh                          # .whl/ for the GPU image (CPython 3.12, x86-64)
#   bash scripts/build_wheelhouse.sh --python-version 3.11 --dest /tmp/whl311   # the same set for a CPU rehearsal
#
# What is carried, and why (the image's packages, read from its package list on 2026-11-17, are not downloaded):
# - opacus, autodp, dp-accounting, dask, distributed: dpgnn's own dependencies that the image lacks, at the
#   versions pinned in pyproject.toml (read from it here). autodp publishes only a source archive: built here
#   into a pure-Python wheel.
# - partd, locket, tblib, zict, tornado (dask / distributed), dm-tree (dp-accounting): their dependencies that the
#   image lacks, at the versions of the project environment; importlib_metadata (and its lazy-importer) only for
#   Python < 3.12 (dask's marker). Not carried: dask-jobqueue (SLURM only), papermill, nbconvert, nbformat and
#   ipywidgets, which are not on the check's path.
# - NOT torch: the image's CUDA build (2.11.0+cu130) is what the check is about; the CPU rows it is compared with
#   were made with the project's pinned CPU build, so the check's accuracy tolerance covers that difference too.
# - NOT torch-geometric: pyproject pins 2.8.1, the image has 2.8.0.post1. The two releases differ only in the
#   version string, code formatting and the Hydra config store (torch_geometric/config_store.py, which dpgnn never
#   imports), so they compute the same numbers; carrying 2.8.1 would add 1.3 MB for the version string alone.
#   Rows made on the GPU record the version they ran with (versions column).
# - datasets/: the raw files of the check's datasets (`python benchmarks/gpu_check.py --mirror-files`), laid out
#   as in the offline mirror, so the GPU run points DPGNN_DATA_MIRROR at it.
#
# - with --datasets NAME...: the raw files of those datasets too (`dpgnn data` lists the names), for the paper
#   grids the rest of the GPU time goes to (scripts/gpu_grid.sh).
#
# Options: --python-version X.Y (default 3.12), --dest DIR (default .whl), --no-data (wheels only), --datasets
# NAME... (one or more dataset names).
# Environment: DPGNN_DATA_MIRROR, the mirror the dataset files are copied from (default ../shared/datasets).
# Prints every file's size and the total, and what would travel to the GPU machine with the repository; fails when
# that exceeds 60 MiB (the device tool's limit is 64 MiB).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

pyver=3.12
dest=.whl
data=1
datasets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --python-version) pyver="$2"; shift 2 ;;
    --dest) dest="$2"; shift 2 ;;
    --no-data) data=0; shift ;;
    --datasets) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do datasets+=("$1"); shift; done ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "build_wheelhouse: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$pyver" in
  3.1[0-9]) ;;
  *) echo "build_wheelhouse: --python-version must be 3.10 to 3.19, got $pyver" >&2; exit 2 ;;
esac

PY="$ROOT/.venv/bin/python"
[ -x "$PY" ] || PY=python3
PY_TAG="cp${pyver/./}"

# the raw files of --datasets, resolved before anything is written (an unknown name: one line, nothing written)
more=
if [ "${#datasets[@]}" -gt 0 ]; then
  named='import sys
from dpgnn.data.registry import get_spec
try:
    print(" ".join(r.mirror for n in sys.argv[1:] for r in get_spec(n).raw_files if r.mirror))
except (KeyError, ValueError) as e:
    sys.exit(f"build_wheelhouse: {e}")'
  more="$(PYTHONPATH="$ROOT" "$PY" -c "$named" "${datasets[@]}")" || exit 1
fi

# dpgnn's pins (pyproject.toml) of the packages the image lacks
mapfile -t pinned < <("$PY" - <<'EOF'
import re, tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
want = {"opacus", "autodp", "dp-accounting", "dask", "distributed"}
for d in deps:
    m = re.match(r"^([A-Za-z0-9_.-]+)==([^;\s]+)", d)
    if m and m.group(1).lower() in want:
        print(f"{m.group(1)}=={m.group(2)}")
EOF
)
if [ "${#pinned[@]}" -ne 5 ]; then
  echo "build_wheelhouse: expected 5 pins in pyproject.toml (opacus autodp dp-accounting dask distributed)," \
    "got: ${pinned[*]}" >&2
  exit 1
fi
# their dependencies the image lacks, at the project environment's versions
extra=(partd==1.4.2 locket==1.0.0 tblib==3.2.2 zict==3.0.0 tornado==6.6.1 dm-tree==0.1.10)
if [ "${pyver#3.}" -lt 12 ]; then extra+=(importlib_metadata==10.2.0 lazy-importer==0.1.0); fi

binary=()
sdist=()
for p in "${pinned[@]}"; do
  case "$p" in autodp==*) sdist+=("$p") ;; *) binary+=("$p") ;; esac
done
binary+=("${extra[@]}")

mkdir -p "$dest"
rm -f "$dest"/*.whl
echo "[wheelhouse] CPython $pyver x86-64 wheels into $dest/: ${binary[*]} ${sdist[*]}"
"$PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: --python-version "$pyver" \
  --implementation cp --abi "$PY_TAG" --abi abi3 --abi none \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any \
  -d "$dest" "${binary[@]}"
# source-only releases: a pure-Python wheel built here (no compiled code, so it installs on any CPython 3)
"$PY" -m pip wheel -q --disable-pip-version-check --no-deps -w "$dest" "${sdist[@]}"

# every requirement of every wheel (for that Python, extras aside) is in the wheelhouse or in the image
"$PY" - "$dest" "$pyver" <<'EOF'
import sys, zipfile
from pathlib import Path
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

dest, pyver = Path(sys.argv[1]), sys.argv[2]
# the image's packages that these wheels require (its full list: the device tool's KINDS.md)
image = {"absl-py", "aiohttp", "attrs", "click", "cloudpickle", "fsspec", "jinja2", "matplotlib", "mpmath",
         "msgpack", "numpy", "opt-einsum", "packaging", "psutil", "pyparsing", "pyyaml", "requests", "scipy",
         "sortedcontainers", "toolz", "torch", "tqdm", "urllib3", "wrapt", "xxhash", "zipp"}
env = {"python_version": pyver, "python_full_version": pyver + ".0", "sys_platform": "linux",
       "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
       "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}
have, missing = {}, []
wheels = sorted(dest.glob("*.whl"))
for w in wheels:
    have[canonicalize_name(w.name.split("-")[0])] = w.name
for w in wheels:
    with zipfile.ZipFile(w) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        lines = z.read(meta).decode().splitlines()
    for line in lines:
        if not line.startswith("Requires-Dist:"):
            continue
        req = Requirement(line.split(":", 1)[1].strip())
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        name = canonicalize_name(req.name)
        if name not in have and name not in image:
            missing.append(f"{w.name} needs {req}")
if missing:
    sys.exit("build_wheelhouse: requirements in neither the wheelhouse nor the image:\n  " + "\n  ".join(missing))
print(f"[wheelhouse] {len(wheels)} wheels; every requirement is in the wheelhouse or in the image")
EOF

if [ "$data" = 1 ]; then
  mirror="${DPGNN_DATA_MIRROR:-$ROOT/../shared/datasets}"
  [ -d "$mirror" ] || { echo "build_wheelhouse: no dataset mirror at $mirror (set DPGNN_DATA_MIRROR)" >&2; exit 1; }
  rm -rf "$dest/datasets"
  files="$(PYTHONPATH="$ROOT" "$PY" benchmarks/gpu_check.py --mirror-files)"
  files="$(printf '%s\n' $files $more | sort -u)"
  for f in $files; do
    [ -f "$mirror/$f" ] || { echo "build_wheelhouse: $mirror/$f is missing" >&2; exit 1; }
    mkdir -p "$dest/datasets/$(dirname "$f")"
    cp "$mirror/$f" "$dest/datasets/$f"
  done
  echo "[wheelhouse] $(echo "$files" | wc -w) dataset files from $mirror into $dest/datasets/"
fi

echo "[wheelhouse] contents:"
(cd "$dest" && find . -type f -printf '%s\t%p\n' | sort -k2 | awk -F'\t' '{printf "  %9.1f KiB  %s\n", $1/1024, $2}')
total=$(du -sb "$dest" | cut -f1)
echo "[wheelhouse] total $(awk -v b="$total" 'BEGIN{printf "%.1f", b/1048576}') MiB in $dest"
case "$(realpath "$dest")" in
  "$ROOT"/*)
    tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 -r du -cb 2>/dev/null | tail -1 | cut -f1)
    all=$((tree + total))
    mib() { awk -v b="$1" 'BEGIN{printf "%.1f", b/1048576}'; }
    echo "[wheelhouse] travelling to the GPU machine: repository $(mib "$tree") MiB + wheelhouse = $(mib "$all") MiB" \
      "(limit 64 MiB)"
    if [ "$all" -gt $((60 * 1048576)) ]; then
      echo "build_wheelhouse: $((all / 1048576)) MiB would travel, over the 60 MiB this check allows itself" >&2
      exit 1
    fi ;;
esac
