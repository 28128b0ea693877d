"""Students per second of PrivGNN's students of one cell trained in one batch
(``dpgnn.methods.privgnn.train_students``, what the accuracy and figure cells run) against the sequential loop
(``train_student`` on each student in turn, what they ran before), both measured in one run, on one CPU thread.

    DPGNN_DATA_MIRROR=/work/shared/datasets python benchmarks/privgnn_students.py [--dataset cora]
        [--queries 300] [--student-epochs 200] [--threads 1]
    python benchmarks/privgnn_students.py --table      # the table from the CSV (results/*.md, README block)

The cell's students are those of one (run, K, |Q|) of the figure grids: one per noise placement (posteriors,
log-softmax) and λ of the paper (:data:`dpgnn.methods.privgnn.LAMBDAS`), ``S`` = 10, on the first |Q| noisy labels
of one set of teachers (trained before the clocks, ``--teacher-epochs``). Cora is not one of the paper's datasets:
it gets PrivGNN's private/public partition (:func:`dpgnn.data.transforms.private_public_split`, 100 private nodes
per class, public 1,000 train and 1,000 test nodes). Both loops start from the same seeded global generator (the
dropout masks' stream); ``same_accuracy`` and ``same_history`` count the students whose accuracy and per-epoch
losses are identical batched and sequential, ``same_generator`` whether the global generator ends in the same state
(the batch is the sequential loop bit for bit on the CPU). Wall and CPU (process) seconds are both recorded: on a
shared machine compare CPU ratios.

Rows go to ``benchmarks/results/privgnn_students.csv``, replacing an earlier row of the same dataset, |Q|, student
epochs and threads; ``--table`` writes ``benchmarks/results/privgnn_students.md`` from it and puts the same table
between the ``privgnn_students`` markers of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse

import repeats_race
import torch

from dpgnn.data import load_dataset
from dpgnn.data.transforms import private_public_split
from dpgnn.methods import privgnn as P
from dpgnn.utils import make_generator, stable_seed

MARKER = "privgnn_students"
OUT = repeats_race.RESULTS / f"{MARKER}.csv"
KEY = ("dataset", "queries", "student_epochs", "threads")
COLUMNS = repeats_race.race_columns(
    ["dataset", "public_nodes", "public_edges", "features", "queries", "k", "student_epochs", "students", "threads"],
    ["same_accuracy", "same_history", "same_generator", "mean_accuracy"],
)
SEED = 0


def graphs_for(dataset: str) -> P.PrivGNNData:
    """A paper dataset as the series prepares it; another graph with PrivGNN's partition (module docstring)."""
    if dataset in P.DATASETS:
        return P.prepare(dataset)
    data = private_public_split(
        load_dataset(dataset), seed=P.GLOBAL_SEED, private_per_class=100, num_public_train=1000, num_public_test=1000
    )
    return P.prepare_from_data(data, dataset)


def student_jobs(graphs: P.PrivGNNData, queries: int, k: int, teacher_epochs: int) -> list[P.students.StudentJob]:
    """The cell's students: one per (noise placement, λ), seeds and labels drawn as the figure cells draw them."""
    post = P.teacher_posteriors(
        graphs, queries, k=k, gamma=0.3, seed=stable_seed(SEED, "teachers", k), epochs=teacher_epochs, device="cpu"
    )
    nodes = P.query_nodes(graphs, queries)
    jobs = []
    for noise in ("posterior", "log_softmax"):
        for lam in P.LAMBDAS:
            labels = P.noisy_argmax(
                post.posteriors, lam, make_generator(stable_seed(SEED, "noise", lam, k)), noise_on=noise
            )
            jobs.append((nodes, labels[:queries], stable_seed(SEED, ("student", noise, lam, queries, k))))
    return jobs


def measure(graphs: P.PrivGNNData, jobs: list, epochs: int) -> dict:
    """Both clocks of the sequential loop and of the batch, from the same seeded global generator, and how their
    students compare."""

    def seeded(fn):
        def run():
            torch.manual_seed(SEED)
            out = fn()
            return out, torch.default_generator.get_state()

        return run

    (seq, seq_state), (bat, bat_state), timing = repeats_race.race(
        seeded(lambda: [P.train_student(graphs, n, y, seed=s, epochs=epochs, device="cpu") for n, y, s in jobs]),
        seeded(lambda: P.train_students(graphs, jobs, epochs=epochs, device="cpu")),
        len(jobs),
    )
    return {
        **timing,
        "same_accuracy": sum(a["accuracy"] == b["accuracy"] for a, b in zip(seq, bat)),
        "same_history": sum(a["history"] == b["history"] for a, b in zip(seq, bat)),
        "same_generator": bool(torch.equal(seq_state, bat_state)),
        "mean_accuracy": round(100 * sum(a["accuracy"] for a in seq) / len(seq), 2),
    }


def table() -> str:
    """The CSV as a markdown table (what the README cites)."""
    head = repeats_race.race_head(
        ["dataset (public nodes, features)", "|Q|", "student epochs", "S"],
        ["identical accuracy, history", "same generator after", "mean accuracy %"],
        unit="students",
    )
    body = []
    for r in repeats_race.read_rows(OUT):
        dataset = f"{r['dataset']} ({int(r['public_nodes']):,}, {int(r['features']):,})"
        same = f"{r['same_accuracy']} and {r['same_history']} of {r['students']}"
        setup = [dataset, r["queries"], r["student_epochs"], r["students"]]
        body.append(repeats_race.race_cells(r, setup, [same, r["same_generator"], r["mean_accuracy"]]))
    return repeats_race.markdown(head, body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--k", type=int, default=100, help="teachers' K nearest private nodes")
    ap.add_argument("--teacher-epochs", type=int, default=50, help="teachers' epochs (before the clocks)")
    ap.add_argument("--student-epochs", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    args = repeats_race.parse(ap, MARKER, table)
    graphs = graphs_for(args.dataset)
    jobs = student_jobs(graphs, args.queries, args.k, args.teacher_epochs)
    row = {
        **repeats_race.stamp(args.threads),
        "dataset": args.dataset,
        "public_nodes": int(graphs.x_pub.size(0)),
        "public_edges": int(graphs.edge_pub.size(1)),
        "features": graphs.num_features,
        "queries": args.queries,
        "k": args.k,
        "student_epochs": args.student_epochs,
        "students": len(jobs),
        **measure(graphs, jobs, args.student_epochs),
    }
    print({k: row[k] for k in ("dataset", "sequential_s", "batched_s", "ratio", "cpu_ratio", "same_history")})
    repeats_race.save(MARKER, COLUMNS, KEY, [row])


if __name__ == "__main__":
    main()
