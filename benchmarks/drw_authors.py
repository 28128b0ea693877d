"""DRW side by side with the authors' code (MorganeAyle/NodeDP): seconds per DP-SGD step on the same cell.

    python benchmarks/drw_authors.py --prepare --git-dir /work/.mirror/MorganeAyle+NodeDP/repo   # once
    DPGNN_DATA_MIRROR=... python benchmarks/drw_authors.py [--datasets cora citeseer] [--layers 1 2] [--steps 60]

``--prepare`` extracts the repository's ``src/`` (``git archive`` of ``--commit``) into ``/tmp/dpgnn_authors/NodeDP``;
its imports (autodp, networkx, scikit-learn, scipy, torch) are this project's. Nothing is copied into this repository.

One cell per ``--layers`` (Table 1's DRW: a GCN of L layers with 256 hidden units, walks of length L, the paper's
roots per batch (:func:`dpgnn.methods.drw.batch_size`), Adam at 0.01, per-parameter clipping at 0.001 of the initial
gradient norm, noise multiplier 4, evaluation on the validation nodes after every step), on the same graph, features
(z-scored with training statistics, as both codes do), split and ``--steps`` steps, in one process, one thread:

- ``ours``: :func:`dpgnn.methods.drw.train_dp` with ``max_steps``; each step's update and evaluation is timed
  around :func:`dpgnn.train.fit`'s step and evaluation (as the scale ladder does);
- ``authors``: their ``Minibatch`` (sampler ``drw``, degree bound = the graph's maximum degree, i.e. none),
  ``Trainer.dp_train_step_fast`` on one sampled batch with their accountant's ``σ = z · 2C``, then
  ``Evaluator.eval_step`` + ``calc_metrics`` on the validation nodes, the two timed per step.

CPU seconds per step (update and evaluation) are compared, ``authors / ours``. Accounting is left out on both sides:
ours computes the ε schedule once before training; theirs composes with autodp after every step, and its
``replace_one`` flag predates the autodp installed here, which refuses the composition. networkx 3 renamed
``from_scipy_sparse_matrix`` to ``from_scipy_sparse_array``; the harness aliases the old name before importing their
code. Writes ``results/drw_authors.csv`` (one row per code and cell).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
BEGIN, END = "<!-- begin drw_authors -->", "<!-- end drw_authors -->"
TREE = Path("/tmp/dpgnn_authors/NodeDP")
OUT = HERE / "results" / "drw_authors.csv"
COLUMNS = [
    "code",
    "dataset",
    "layers",
    "roots",
    "steps",
    "cpu_s_per_step",
    "update_s",
    "evaluate_s",
    "ratio",
    "threads",
    "load",
    "date",
]
CELL = {"hidden": 256, "lr": 0.01, "clip_fraction": 0.001, "noise_multiplier": 4.0}
#: ours stops when the ε schedule runs out; a target no run of ``--steps`` reaches leaves ``max_steps`` to stop it
TIMING_EPSILON = 100.0


def prepare(git_dir: Path, commit: str = "HEAD", tree: Path = TREE) -> str:
    """Extract ``src/`` of ``commit`` of ``git_dir`` into ``tree``; the commit's id."""
    sha = subprocess.run(
        ["git", "--git-dir", str(git_dir), "rev-parse", commit], check=True, capture_output=True, text=True
    ).stdout.strip()
    tree.mkdir(parents=True, exist_ok=True)
    archive = subprocess.Popen(["git", "--git-dir", str(git_dir), "archive", sha, "src"], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(tree)], stdin=archive.stdout, check=True)
    if archive.wait():
        raise SystemExit(f"git archive {sha} failed")
    (tree / "COMMIT").write_text(sha + "\n")
    return sha


def write_saint(d, folder: Path) -> None:
    """``d`` (a :class:`dpgnn.methods.drw.DRWData`) in the GraphSAINT files their ``load_data`` reads. Features are
    written unscaled-back: their loader z-scores them with training statistics again, which leaves ours unchanged
    up to float rounding (mean 0, deviation 1 on the training nodes already)."""
    folder.mkdir(parents=True, exist_ok=True)
    n = d.num_nodes
    ei = d.edge_index.numpy()
    adj = sp.csr_matrix((np.ones(ei.shape[1]), (ei[0], ei[1])), shape=(n, n))
    sp.save_npz(folder / "adj_full.npz", adj)
    sp.save_npz(folder / "adj_train.npz", adj)
    np.save(folder / "feats.npy", d.x.numpy())
    (folder / "class_map.json").write_text(json.dumps({str(i): int(c) for i, c in enumerate(d.y.tolist())}))
    role = {"tr": [int(i) for i in d.train], "va": d.val.nonzero().view(-1).tolist(), "te": []}
    role["te"] = d.test.nonzero().view(-1).tolist()
    (folder / "role.json").write_text(json.dumps(role))


def ours(d, layers: int, steps: int) -> dict:
    """Our DRW cell for ``steps`` steps: CPU seconds per step (update and evaluation)."""
    import scale_ladder

    from dpgnn.methods import drw

    log: list[tuple[float, float]] = []
    progress = Path(tempfile.mkstemp(suffix=".log")[1])
    scale_ladder._time_epochs(log, progress)
    options = {"num_layers": layers, "max_steps": steps, "target_epsilon": TIMING_EPSILON, **CELL}
    drw.train_dp(d, "drw", seed=1234, device="cpu", **options)
    progress.unlink()
    cpu = [c for _, c in log]
    return {"steps": len(cpu), "cpu_s_per_step": sum(cpu) / len(cpu), "update_s": "", "evaluate_s": ""}


def authors(d, layers: int, steps: int, roots: int, workdir: Path) -> dict:
    """The authors' DRW for ``steps`` steps on the same data: CPU seconds per step, split into update, evaluation
    and accounting."""
    import networkx as nx

    if not hasattr(nx, "from_scipy_sparse_matrix"):
        nx.from_scipy_sparse_matrix = nx.from_scipy_sparse_array
    sys.path.insert(0, str(TREE))
    from src.evaluator import Evaluator
    from src.minibatch import Minibatch
    from src.trainer import Trainer
    from src.utils import configure_seeds, load_data

    write_saint(d, workdir / "data" / d.name)
    here = os.getcwd()
    os.chdir(workdir)  # their loader reads ./data/<name>
    quiet = lambda *_: None  # noqa: E731  (their log function)
    configure_seeds(1234, "cpu")
    try:
        adj_full, adj_train, feats, class_arr, role = load_data(f"data/{d.name}", quiet)
    finally:
        os.chdir(here)
    max_degree = int(np.asarray(adj_train.sum(1)).max())
    sampler = {"method": "drw", "depth": layers, "num_root": roots, "max_degree": max_degree}
    sampler["split_lots_into_batches"] = False
    model = {"arch": "GCN", "num_layers": layers, "hidden_channels": CELL["hidden"], "dropout": 0.0}
    model["activation"] = "relu"
    training = {"dp_training": True, "accountant": "rdp_uniform_autodp", "loss": "softmax", "optim": "Adam"}
    training |= {"lr": CELL["lr"], "clip_norm_per": CELL["clip_fraction"], "delta": 1.0 / len(role["tr"]) ** 1.1}
    training |= {"noise_multiplier": CELL["noise_multiplier"], "early_stopping_after": 10**9, "max_eps": 1e9}
    batches = Minibatch(adj_full, adj_train, role, False, sampler, model, quiet)
    trainer = Trainer(training, model, feats, class_arr, False, batches, quiet, sampler)
    evaluator = Evaluator(model, feats, class_arr, "softmax", training["early_stopping_after"])
    sigma = CELL["noise_multiplier"] * 2 * trainer.clip_norm  # their accountant's σ: z · 2C (replace-one, K = 1)
    update = evaluate = 0.0
    for _ in range(steps):
        c0 = time.process_time()
        trainer.dp_train_step_fast(*batches.sample_one_batch(quiet), sigma=sigma)
        c1 = time.process_time()
        evaluator.model.load_state_dict(trainer.model.state_dict())
        evaluator.calc_metrics(*evaluator.eval_step(*batches.sample_one_batch(quiet, mode="val")), mode="val")
        c2 = time.process_time()
        update, evaluate = update + c1 - c0, evaluate + c2 - c1
    return {
        "steps": steps,
        "cpu_s_per_step": (update + evaluate) / steps,
        "update_s": round(update / steps, 5),
        "evaluate_s": round(evaluate / steps, 5),
    }


def readme_block(path: Path = OUT) -> str:
    """The README's table from ``path``: per cell, both codes' CPU seconds per step and the ratio."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    lines = [
        BEGIN,
        f"Generated by `python benchmarks/drw_authors.py --readme` from `results/drw_authors.csv` ({len(rows)} rows, "
        f"{', '.join(sorted({r['date'] for r in rows}))}; one torch thread; load average "
        f"{min(float(r['load']) for r in rows):.1f}–{max(float(r['load']) for r in rows):.1f}, both codes in one "
        "process, one after the other).",
        "",
        "| dataset | layers | roots per step | steps | authors' code: CPU s per step (update + evaluation) | ours | "
        "authors / ours |",
        "|---|---|---|---|---|---|---|",
    ]
    by = {(r["dataset"], r["layers"], r["code"]): r for r in rows}
    for (dataset, layers, code), r in by.items():
        if code != "authors" or (dataset, layers, "ours") not in by:
            continue
        mine = by[(dataset, layers, "ours")]
        lines.append(
            f"| {dataset} | {layers} | {r['roots']} | {r['steps']} | {float(r['cpu_s_per_step']):.4f} "
            f"({float(r['update_s']):.4f} + {float(r['evaluate_s']):.4f}) | {float(mine['cpu_s_per_step']):.4f} | "
            f"**{float(r['ratio']):.1f}×** |"
        )
    return "\n".join([*lines, END])


def write_readme(path: Path = OUT, readme: Path = README) -> None:
    """Replace (or append) the block between :data:`BEGIN` and :data:`END` of ``readme``."""
    text, block = readme.read_text(), readme_block(path)
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + block + text[text.index(END) + len(END) :]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    readme.write_text(text)
    print(f"wrote the drw_authors block of {readme}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prepare", action="store_true", help="extract the authors' src/ and exit")
    ap.add_argument("--git-dir", type=Path, help="a git directory of MorganeAyle/NodeDP (e.g. a fetched snapshot)")
    ap.add_argument("--commit", default="HEAD")
    ap.add_argument("--datasets", nargs="+", default=["cora", "citeseer"])
    ap.add_argument("--layers", type=int, nargs="+", default=[1, 2], choices=[1, 2])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--readme", action="store_true", help="rewrite benchmarks/README.md's block from the CSV, exit")
    args = ap.parse_args()
    if args.readme:
        if not args.out.exists():
            ap.error(f"{args.out} does not exist: run the benchmark first")
        write_readme(args.out)
        return
    if args.prepare:
        if args.git_dir is None or not args.git_dir.exists():
            ap.error("--prepare needs --git-dir, an existing git directory of MorganeAyle/NodeDP")
        print(f"extracted {prepare(args.git_dir, args.commit)} into {TREE}")
        return
    if not (TREE / "src").is_dir():
        ap.error(f"no authors' tree at {TREE}: run with --prepare first")
    if args.steps < 2:
        ap.error("--steps must be >= 2")
    from dpgnn.methods import drw

    torch.set_num_threads(1)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for d, layers in [(drw.prepare(name), layers) for name in args.datasets for layers in args.layers]:
            roots = drw.batch_size(d.name, "drw", layers)
            theirs = authors(d, layers, args.steps, roots, Path(tmp))
            mine = ours(d, layers, args.steps)
            common = {"dataset": d.name, "layers": layers, "roots": roots, "threads": 1}
            common |= {"load": round(os.getloadavg()[0], 2), "date": time.strftime("%Y-%m-%d")}
            ratio = theirs["cpu_s_per_step"] / mine["cpu_s_per_step"]
            rows.append({"code": "authors", **common, **theirs, "ratio": round(ratio, 3)})
            rows.append({"code": "ours", **common, **mine, "ratio": 1.0})
            print(f"{d.name} L={layers}: {theirs['cpu_s_per_step']:.4f} vs {mine['cpu_s_per_step']:.4f} s/step")
    for r in rows:
        r["cpu_s_per_step"] = round(r["cpu_s_per_step"], 5)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
