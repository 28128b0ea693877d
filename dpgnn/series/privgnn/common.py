"""What every PrivGNN notebook's cells share: the run seeds, the row layout, the cached datasets, the teachers
of either mode and the students drawn from their noisy labels, with their ledgers."""

from __future__ import annotations

import functools
from typing import Any

from dpgnn.fidelity import Fidelity, parse
from dpgnn.methods import privgnn as P
from dpgnn.methods.privgnn import PAPER
from dpgnn.profiles import Settings
from dpgnn.utils import stable_seed, torch_global_seed


def _unknown(what: str, name: str, valid) -> ValueError:
    return ValueError(f"unknown PrivGNN {what} {name!r}; valid: {list(valid)}")


def _run_seed(cfg: Settings, dataset: str, run: int) -> int:
    return stable_seed(PAPER, dataset, int(cfg.seed), P.SEEDS[run % len(P.SEEDS)], run)


#: the ledger of a ``privgnn_code`` row (built by the method, :func:`dpgnn.methods.privgnn.log_softmax_ledger`)
log_softmax_ledger = P.log_softmax_ledger


def _acc_row(artifact, dataset, method, setting, acc, run, seed, ledger, **extra):
    return {
        "artifact": artifact,
        "dataset": dataset,
        "method": method,
        "setting": setting,
        "metric": "accuracy",
        "value": float(acc),
        "run": run,
        "seed": seed,
        "level": ledger.get("level"),
        "epsilon": ledger.get("epsilon"),
        "delta": ledger.get("delta"),
        "ledger": {k: v for k, v in ledger.items() if k != "event"},
        **extra,
    }


#: the tables each non-private baseline's accuracy is reported in (B2 is Table 7's "GNN" row too)
BASELINE_ARTIFACTS = {
    "b1": ("table5", "table8"),
    "b2": ("table5", "table8", "table7"),
    "b3": ("table8",),
    "mlp": ("table7",),
}


@functools.lru_cache(maxsize=8)
def _data(name: str) -> P.PrivGNNData:
    """The prepared dataset, loaded once per process (a notebook's kernel or a Dask worker) and reused by every
    cell that runs there (the notebooks' modules call it as ``common._data``, so a test can replace it here)."""
    return P.prepare(name)


def _seeded(fn):
    """Run a cell with torch's global RNG (dropout masks) forked and seeded from the cell itself, so a cell gives
    the same rows whatever ran before it in the process (the caller's RNG state is restored)."""

    @functools.wraps(fn)
    def wrapper(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
        with torch_global_seed(stable_seed(PAPER, fn.__name__, cell["dataset"], cell["run"], int(cfg.seed)), device):
            return fn(cfg, cell, device)

    return wrapper


#: method names per (teacher, noise): the paper's teachers with noise on posteriors (``privgnn``, as the paper
#: states) or on log-softmax (``privgnn_code``, the authors' code), and the same with the authors'-code teachers
METHOD_NAMES = {
    ("paper", "posterior"): "privgnn",
    ("paper", "log_softmax"): "privgnn_code",
    ("authors_code", "posterior"): "privgnn_authors_teacher",
    ("authors_code", "log_softmax"): "privgnn_authors_code",
}
#: method names of the rows whose student is also the official code's
#: (:func:`dpgnn.methods.privgnn.authors_code_student`,
#: ``fidelity_student="authors_code"``), per noise variant: ``privgnn_official`` is the official code end to end
OFFICIAL_NAMES = {"posterior": "privgnn_official_posterior", "log_softmax": "privgnn_official"}


def _teachers(
    graphs: P.PrivGNNData, teacher: str, num_queries: int, *, k: int, gamma: float, seed: int, epochs: int, device: str
) -> P.TeacherOutput:
    """The |Q| teachers' posteriors in the chosen mode, from the same per-(run, K) seed as the accuracy cell (so a
    figure cell's paper-mode teachers have the subsamples and initialisations of the stored Table 5/6 rows' teachers;
    their dropout masks come from the global RNG, which the accuracy grid does not seed per cell)."""
    fn = P.teacher_posteriors if parse(teacher, "teacher") is Fidelity.PAPER else P.authors_code_teacher_posteriors
    return fn(
        graphs, num_queries, k=k, gamma=gamma, seed=stable_seed(seed, "teachers", k), epochs=epochs, device=device
    )


def _privgnn_ledger(
    graphs: P.PrivGNNData,
    dataset: str,
    *,
    lam: float,
    queries: int,
    gamma: float,
    noise: str,
    teacher: str,
    student: str = "paper",
) -> dict[str, Any]:
    info = P.DATASETS[dataset]
    led = P.privacy_ledger(
        "privgnn",
        lam=lam,
        queries=queries,
        gamma=gamma,
        delta=info.delta_reproducing,
        num_classes=graphs.num_classes,
        delta_sound=info.delta_stated,
        standardized=graphs.standardized,
    )
    if noise == "log_softmax":
        led = log_softmax_ledger(led)
    if parse(teacher, "teacher") is Fidelity.AUTHORS_CODE:
        led = P.authors_code_ledger(
            led, lam=lam, queries=queries, num_classes=graphs.num_classes, noise_on=noise, student=student
        )
    return led


def _student_accuracies(
    graphs: P.PrivGNNData, post: P.TeacherOutput, points, *, seed: int, k: int, student_epochs: int, device: str
) -> dict[tuple[str, float, int], float]:
    """The paper student's accuracy per distinct ``(noise, lam, q)`` of ``points``, trained in the order the points
    first name them, all in one batch (:func:`dpgnn.methods.privgnn.train_students`: the sequential numbers)."""
    keys = list(dict.fromkeys((noise, lam, q) for _, noise, lam, q, _, _ in points))
    jobs = [
        P.student_job(graphs, post.posteriors, seed=seed, noise_on=noise, lam=lam, q=q, tag=k) for noise, lam, q in keys
    ]
    res = P.train_students(graphs, jobs, epochs=student_epochs, device=device)
    return {key: r["accuracy"] for key, r in zip(keys, res)}


def _official_student_accuracies(
    graphs: P.PrivGNNData, post: P.TeacherOutput, points, *, seed: int, k: int, student_epochs: int, device: str
) -> dict[tuple[str, float, int], float]:
    """The official student's accuracy per distinct ``(noise, lam, q)`` of ``points``, one after another (each
    continues the teachers' Adam: :func:`dpgnn.methods.privgnn.authors_code_student`)."""
    done = {}
    for _, noise, lam, q, _, _ in points:
        if (noise, lam, q) in done:
            continue
        nodes, labels, student_seed = P.student_job(
            graphs, post.posteriors, seed=seed, noise_on=noise, lam=lam, q=q, tag=k
        )
        done[(noise, lam, q)] = P.authors_code_student(
            graphs,
            nodes,
            labels,
            seed=student_seed,
            epochs=student_epochs,
            optimizer_state=post.optimizer_state,
            device=device,
        )["accuracy"]
    return done


def _privgnn_students(
    graphs: P.PrivGNNData,
    dataset: str,
    post: P.TeacherOutput,
    points,
    *,
    seed: int,
    k: int,
    gamma: float,
    teacher: str,
    student_epochs: int,
    device: str,
    suffix: str = "",
    student: str = "paper",
) -> list[dict[str, Any]]:
    """One student per ``(artifact, noise, lam, q, setting)`` point, on the first ``q`` noisy labels; the labels
    and the student seed are drawn exactly as in :func:`_accuracy_cell` (only the dropout masks differ). Students
    shared by two points (e.g. Fig. 3 and App. D.6 at λ = 0.4) are trained once, the paper's students all in one
    batch (:func:`_student_accuracies`), with the numbers of the sequential loop. ``student="authors_code"``
    (authors'-code teachers only): the official student (:func:`dpgnn.methods.privgnn.authors_code_student`, which
    continues the teachers' Adam), rows :data:`OFFICIAL_NAMES`."""
    teacher, student = parse(teacher, "teacher"), parse(student, "student")
    if student is Fidelity.AUTHORS_CODE and not isinstance(post, P.AuthorsTeacherOutput):
        raise ValueError(
            "the official student continues the authors'-code teachers' optimizer: use "
            "teacher='authors_code' with student='authors_code'"
        )
    fn = _official_student_accuracies if student is Fidelity.AUTHORS_CODE else _student_accuracies
    done = fn(graphs, post, points, seed=seed, k=k, student_epochs=student_epochs, device=device)
    rows = []
    for art, noise, lam, q, setting, run in points:
        key = (noise, lam, q)
        led = _privgnn_ledger(
            graphs, dataset, lam=lam, queries=q, gamma=gamma, noise=noise, teacher=teacher, student=student
        )
        t_acc = float((post.posteriors[:q].argmax(1) == graphs.y_pub[P.query_nodes(graphs, q)]).float().mean())
        extra = {"optimizer_steps": post.optimizer_steps} if isinstance(post, P.AuthorsTeacherOutput) else {}
        name = OFFICIAL_NAMES[noise] if student is Fidelity.AUTHORS_CODE else METHOD_NAMES[(teacher, noise)]
        rows.append(
            _acc_row(
                art,
                dataset,
                name + suffix,
                setting,
                done[key],
                run,
                seed,
                led,
                queries=q,
                lam=lam,
                k=k,
                gamma=gamma,
                fidelity=teacher,
                teacher_accuracy=t_acc,
                teacher_seconds=post.seconds,
                **extra,
            )
        )
    return rows


def mirrored_cell(dataset: str, k: int, q: int, lam: float, main_queries: int) -> str:
    """The paper cell a ``fidelity`` row mirrors, ``"<artifact>:<setting>"``: Table 5 at the main |Q| and the
    dataset's K, Table 6 at |Q| = 500, Table 1 at another K and the main |Q|; ``fidelity:K=..,Q=..,lam=..`` when
    the paper has no such cell."""
    info = P.DATASETS[dataset]
    if q == main_queries:
        return f"table5:lam={lam:g}" if k == info.k else f"table1:K={k},lam={lam:g}"
    if q == 500 and k == info.k:
        return f"table6:Q={q},lam={lam:g}"
    return f"fidelity:K={k},Q={q},lam={lam:g}"
