"""Small shared helpers: devices, seeds, generators, hashing, versions, repository paths.

torch is imported inside the helpers that use it, not here: notebooks that only read stored rows and draw
(:mod:`dpgnn.plotting`, :mod:`dpgnn.results`) import this module and start without loading torch.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import json
import logging
import os
import random
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

log = logging.getLogger("dpgnn")

#: Repository root (the folder holding ``pyproject.toml``); paths in notebooks are resolved from here,
#: never from the working directory. ``DPGNN_HOME`` overrides it (e.g. for an installed, non-editable copy).
ROOT = Path(os.environ.get("DPGNN_HOME", Path(__file__).resolve().parent.parent))


def lazy_exports(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` (PEP 562) that give ``package`` its ``names`` (public name -> the
    submodule of ``package`` that defines it), each imported on first use and kept: a package's light names load
    without its heavy modules (torch, PyG), so notebooks that read stored rows start fast."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{names[name]}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__


def output_root() -> Path:
    """Where ``results/`` and ``figures/`` live: the repository root, or ``$DPGNN_OUTPUT_ROOT`` (tests use a tmp
    dir)."""
    return Path(os.environ.get("DPGNN_OUTPUT_ROOT") or ROOT)


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """Return the torch device for ``device``: ``"auto"`` picks CUDA when present, else CPU (and logs it)."""
    import torch

    if isinstance(device, torch.device):
        return device
    if not isinstance(device, str):
        raise TypeError(f"device must be a string such as 'auto', 'cpu' or 'cuda', got {device!r}")
    if device == "auto":
        chosen = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        log.info("device=auto resolved to %s", chosen)
        return chosen
    chosen = torch.device(device)
    if chosen.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} requested but CUDA is not available; use device='auto' or 'cpu'")
    return chosen


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and CUDA). A seed of 0 is a seed."""
    import torch

    if seed is None or isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int (0 is a valid seed), got {seed!r}")
    random.seed(int(seed))
    np.random.seed(int(seed) % 2**32)
    torch.manual_seed(int(seed))


@contextlib.contextmanager
def torch_global_seed(seed: int, device: str | torch.device = "auto") -> Iterator[None]:
    """Run the block with torch's global RNG (dropout masks, default initialisation) forked and seeded with
    ``seed``, on the CPU and on ``device`` when it is CUDA; the caller's RNG state is restored afterwards. A block
    then draws the same numbers whatever ran before it in the process."""
    import torch

    dev = resolve_device(device)
    with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
        torch.manual_seed(int(seed))
        yield


def make_generator(seed: int | torch.Generator | None, device: str | torch.device = "cpu") -> torch.Generator:
    """A ``torch.Generator`` from a seed (``None`` = fresh nondeterministic seed); generators pass through."""
    import torch

    if isinstance(seed, torch.Generator):
        return seed
    gen = torch.Generator(device=torch.device(device))
    if seed is None:
        gen.seed()
    else:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed must be an int, a torch.Generator or None, got {seed!r}")
        gen.manual_seed(int(seed))
    return gen


def seed_from_name(s: str) -> int:
    """The seed convention of the LPGCN code: ``sum(ord(c) for c in s)`` (e.g. ``"musae"`` -> 539)."""
    return sum(ord(c) for c in s)


def stable_seed(*parts: Any) -> int:
    """A deterministic 31-bit seed derived from arbitrary JSON-able parts (e.g. ``("cora", "pgc", 1.0, run)``)."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


def config_hash(config: dict[str, Any]) -> str:
    """Short, order-independent hash of a JSON-able configuration (identifies a sweep cell)."""
    blob = json.dumps(config, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


@functools.cache
def code_version() -> str:
    """The version of the code that runs: the package version and, in a git checkout, its commit
    (``0.1.0+g366f4d1a2b3c``), with ``.dirty`` when files under ``dpgnn/`` differ from that commit.

    Stored with every result row (inside :func:`versions`) and every manifest row, so that results computed by
    other code can be told apart from current ones.
    """
    import importlib.metadata as md
    import subprocess

    try:
        base = md.version("dpgnn")
    except md.PackageNotFoundError:
        base = "?"
    src = Path(__file__).resolve().parent.parent
    if not (src / ".git").exists():
        return base
    try:
        commit = subprocess.run(
            ["git", "-C", str(src), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(src), "status", "--porcelain", "--untracked-files=no", "--", "dpgnn"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return base
    return f"{base}+g{commit}" + (".dirty" if dirty else "")


def versions() -> str:
    """Versions of the code and the libraries results depend on, as one compact string stored with every result
    row (``dpgnn=`` is :func:`code_version`, so it names the commit)."""
    import importlib.metadata as md

    out = [f"dpgnn={code_version()}"]
    for pkg in ("torch", "torch-geometric", "opacus", "autodp"):
        try:
            out.append(f"{pkg}={md.version(pkg)}")
        except md.PackageNotFoundError:
            out.append(f"{pkg}=?")
    return ";".join(out)


def segments(count: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """For consecutive segments of lengths ``count``, each element's segment and its offset in it: the entries of
    CSR rows (``count`` = the rows' entry counts; an entry's position is its row's start plus its offset), or the
    pairs within groups."""
    import torch

    seg = torch.repeat_interleave(torch.arange(count.numel(), device=count.device), count)
    return seg, torch.arange(seg.numel(), device=count.device) - (torch.cumsum(count, 0) - count)[seg]


def to_csr(t: torch.Tensor) -> torch.Tensor:
    """``t`` (dense or sparse COO) as a sparse CSR tensor, without torch's one-time "CSR support is in beta"
    warning (CSR products are the fast sparse path on the CPU; the warning is noise in every notebook)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support", category=UserWarning)
        return t.to_sparse_csr()


def transpose_csr(t: torch.Tensor) -> torch.Tensor:
    """The sparse CSR tensor ``t`` ``[N, F]`` transposed, as CSR ``[F, N]``: its CSC form read as the transpose's
    CSR (a tenth of the time of converting the dense transpose)."""
    import torch

    csc = t.to_sparse_csc()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support", category=UserWarning)
        return torch.sparse_csr_tensor(
            csc.ccol_indices(), csc.row_indices(), csc.values(), (t.size(1), t.size(0)), check_invariants=False
        )


def density(t: torch.Tensor) -> float:
    """The fraction of the entries of the dense tensor ``t`` that are nonzero (0 for an empty one)."""
    import torch

    return int(torch.count_nonzero(t)) / t.numel() if t.numel() else 0.0


def check_features(x: Any, name: str = "features") -> torch.Tensor:
    """``x`` as a tensor after refusing NaN or infinite entries (a method must never train silently on them).

    Raises ``ValueError`` naming how many rows hold a non-finite value and the first of them.
    """
    import torch

    t = torch.as_tensor(x)
    if (t.is_floating_point() or t.is_complex()) and not all_finite(t):
        bad = ~torch.isfinite(t)
        rows = bad.reshape(bad.shape[0], -1).any(1) if t.dim() > 1 else bad
        idx = torch.nonzero(rows).view(-1)
        raise ValueError(
            f"{name} hold NaN or infinite values in {idx.numel()} of {rows.numel()} rows (first: "
            f"row {int(idx[0])}); impute or drop them before training"
        )
    return t


def all_finite(t: torch.Tensor) -> bool:
    """Whether every entry of the floating tensor ``t`` is finite. One NaN or infinite entry makes the sum
    non-finite, so a finite sum clears them all in one pass, without an ``[N, F]`` mask; a sum that is not finite
    (it may overflow on finite entries) is settled entry by entry."""
    import torch

    return bool(torch.isfinite(t.sum())) or bool(torch.isfinite(t).all())
