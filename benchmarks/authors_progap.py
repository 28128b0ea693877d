"""The authors' ProGAP and GAP code (sisaman/ProGAP), run on this project's graphs for side-by-side timing.

    python benchmarks/authors_progap.py --prepare --git-dir /work/.mirror/sisaman+ProGAP/repo   # once
    python benchmarks/scale_ladder.py --methods authors-progap-edge authors-gap-edge ...         # then

``--prepare`` extracts the repository's tree (``git archive`` of ``--commit``, default ``HEAD``) into ``--tree`` and
installs the packages its edge-level code imports and this project's environment lacks (``class-resolver``,
``torchmetrics``, ``tabulate``, ``lightning-utilities``, ``wandb``) into ``--site`` with ``pip install --target``;
it then imports the two methods and prints what it found. Nothing is copied into this repository.

:func:`child_train` is the scale ladder's child for the rows ``authors-progap-edge`` and ``authors-gap-edge``: it
puts the tree first and the site last on ``sys.path`` (this environment's torch, PyG, numpy and opacus win), builds
the authors' input (features, labels, the ladder's masks, ``adj_t`` as a CSR tensor, as their ``DatasetLoader``
does), and runs their ``EdgeLevelProGAP`` / ``EdgeLevelGAP`` once with the hyper-parameters of this project's
defaults (:class:`dpgnn.api.configs.ProGAPConfig`, :class:`~dpgnn.api.configs.GAPConfig`: K = 3 / H = 2, 16 hidden
units, SELU, Adam at 0.01, full batch, BatchNorm, concatenating JK, GAP's 2-layer encoder) at ``epochs`` epochs per
stage, on the CPU, with ε = 1 and their automatic δ. Epoch time is each training epoch's train and validation loops
(their ``Trainer.loop``), which is what the ladder times of this project's loop (update and evaluation).

Only the edge level runs here: the node level imports opacus 1.1's ``forbid_accumulation_hook``, which this
environment's opacus no longer has.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path("/tmp/dpgnn_authors")
TREE = ROOT / "ProGAP"
SITE = ROOT / "site"
#: what the edge-level code imports beyond this project's environment (pinned as its requirements.txt where the
#: current release breaks it: torchmetrics 1.x rejects ``compute_on_step``, 0.11 needs ``pkg_resources``; wandb is
#: imported, never used)
PACKAGES = ["class-resolver", "torchmetrics==0.11.4", "setuptools<81", "tabulate", "wandb"]
#: ladder row -> (module of the authors' tree, class, its arguments besides epsilon and the trainer's)
METHODS = {
    "authors-progap-edge": (
        "core.methods.progap.edge",
        "EdgeLevelProGAP",
        {"depth": 3, "hidden_dim": 16, "base_layers": 1, "head_layers": 1, "jk": "cat"},
    ),
    "authors-gap-edge": (
        "core.methods.gap.edge",
        "EdgeLevelGAP",
        {"hops": 2, "hidden_dim": 16, "encoder_layers": 2, "base_layers": 1, "head_layers": 1, "combine": "cat"},
    ),
}
COMMON = {"activation": "selu", "optimizer": "adam", "learning_rate": 0.01, "batch_norm": True, "batch_size": "full"}


def prepare(git_dir: Path, commit: str = "HEAD", tree: Path = TREE, site: Path = SITE) -> str:
    """Extract ``commit`` of ``git_dir`` into ``tree`` and install :data:`PACKAGES` into ``site``; the commit's id."""
    sha = subprocess.run(
        ["git", "--git-dir", str(git_dir), "rev-parse", commit], check=True, capture_output=True, text=True
    ).stdout.strip()
    tree.mkdir(parents=True, exist_ok=True)
    archive = subprocess.Popen(["git", "--git-dir", str(git_dir), "archive", sha], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(tree)], stdin=archive.stdout, check=True)
    if archive.wait():
        raise SystemExit(f"git archive {sha} failed")
    (tree / "COMMIT").write_text(sha + "\n")
    pip = [sys.executable, "-m", "pip", "install", "-q", "--target", str(site), *PACKAGES]
    subprocess.run(pip, check=True)
    return sha


def _use_tree(tree: Path = TREE, site: Path = SITE) -> None:
    if not (tree / "core").is_dir():
        raise RuntimeError(f"no authors' tree at {tree}: run python benchmarks/authors_progap.py --prepare first")
    sys.path.insert(0, str(tree))
    sys.path.append(str(site))


def _timed_loops(log: list[float]) -> None:
    """Time the train and validation loops of each epoch of the authors' ``Trainer`` into ``log`` (CPU s per
    epoch); the training is unchanged."""
    from core.trainer.trainer import Trainer

    original = Trainer.loop

    def loop(self, dataloader, phase):
        c0 = time.process_time()
        try:
            return original(self, dataloader, phase)
        finally:
            if phase == "train":
                log.append(time.process_time() - c0)
            elif phase == "val" and log:
                log[-1] += time.process_time() - c0

    Trainer.loop = loop


def child_train(method: str, data, epochs: int) -> dict:
    """Run the authors' ``method`` (:data:`METHODS`) once on ``data`` (a PyG ``Data`` with masks): the ladder's
    row fields (``epochs`` run, ``fit_s``, ``cpu_s_per_epoch``, ``test_acc`` …)."""
    import importlib

    import torch
    from torch_geometric.data import Data
    from torch_geometric.transforms import ToSparseTensor

    _use_tree()
    module, cls, extra = METHODS[method]
    Method = getattr(importlib.import_module(module), cls)
    from core.loggers.logger import Logger

    log: list[float] = []
    _timed_loops(log)
    theirs = Data(x=data.x, y=data.y, edge_index=data.edge_index, num_nodes=data.num_nodes)
    for mask in ("train_mask", "val_mask", "test_mask"):
        theirs[mask] = data[mask]
    theirs = ToSparseTensor(layout=torch.sparse_csr)(theirs)
    num_classes = int(data.y.max()) + 1
    t0 = time.perf_counter()
    quiet = Logger()  # no logger type: logs nothing (GAP needs a Logger's set_prefix; train.py's None crashes it)
    run = Method(num_classes, epsilon=1.0, epochs=epochs, device="cpu", verbose=False, logger=quiet, **COMMON, **extra)
    metrics = run.run(theirs)
    fit_s = time.perf_counter() - t0
    return {
        "edges": int(data.edge_index.size(1)),
        "epochs": len(log),
        "fit_s": round(fit_s, 3),
        "s_per_epoch": "",
        "cpu_s_per_epoch": round(sum(log) / max(len(log), 1), 4),
        "epoch_timing": "authors' train and validation loops",
        "test_acc": round(float(metrics["test/acc"]), 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prepare", action="store_true", help="extract the tree and install its packages")
    ap.add_argument("--git-dir", type=Path, help="a git directory of sisaman/ProGAP (e.g. a fetched snapshot)")
    ap.add_argument("--commit", default="HEAD")
    args = ap.parse_args()
    if args.prepare:
        if args.git_dir is None or not args.git_dir.exists():
            ap.error("--prepare needs --git-dir, an existing git directory of sisaman/ProGAP")
        print(f"extracted {prepare(args.git_dir, args.commit)} into {TREE}; packages in {SITE}")
    _use_tree()
    import importlib

    for name, (module, cls, _) in METHODS.items():
        getattr(importlib.import_module(module), cls)
        print(f"{name}: {module}.{cls} imports")


if __name__ == "__main__":
    main()
