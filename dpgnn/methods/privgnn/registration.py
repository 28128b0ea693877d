"""The method contract (:mod:`dpgnn.methods`): every method registered as ``("privgnn", method, level)`` with
``prepare`` = :func:`dpgnn.methods.privgnn.data.prepare` and ``run_<method>(data, config, *, seed, device) ->
RunResult`` (``metrics["test"]``: accuracy on the public test nodes).

The teachers, students and mechanisms (torch) are imported by the functions that train, not here: registering the
methods stays light.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpgnn.fidelity import Fidelity, parse
from dpgnn.methods import RunResult, register
from dpgnn.methods.privgnn.ledgers import log_softmax_ledger, privacy_ledger
from dpgnn.methods.privgnn.paper import DATASETS, GLOBAL_SEED, PAPER, check_gamma
from dpgnn.privacy.pate import check_lam
from dpgnn.utils import make_generator, stable_seed

if TYPE_CHECKING:
    from torch import Tensor

    from dpgnn.methods.privgnn.data import PrivGNNData
    from dpgnn.methods.privgnn.teachers import TeacherOutput

#: the released model's settings (paper Sec. 4.1 / App. G.1), used where a config leaves them out
MODEL_DEFAULTS = {"hidden": 64, "dropout": 0.5, "lr": 0.01}
_REQUIRED = object()


def _opt(config: Mapping[str, Any], key: str, default: Any = _REQUIRED) -> Any:
    if key in config and config[key] is not None:
        return config[key]
    if default is _REQUIRED:
        raise ValueError(f"PrivGNN config needs {key!r} (got keys {sorted(config)})")
    return default


def _deltas(data: PrivGNNData, config: Mapping[str, Any]) -> tuple[float, float]:
    """(δ of the paper's ε, δ of the sound ε): the config's, else the dataset's (``DATASETS``: the δ that reproduces
    the printed ε, the stated δ)."""
    info = DATASETS.get(data.name)
    delta = _opt(config, "delta", info.delta_reproducing if info else _REQUIRED)
    return float(delta), float(_opt(config, "delta_sound", info.delta_stated if info else delta))


def _model_kw(config: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _opt(config, k, v) for k, v in MODEL_DEFAULTS.items()}


@dataclass(frozen=True)
class Variant:
    """How one teacher-student variant of PrivGNN builds its teachers and releases their labels."""

    #: each teacher sees the K nearest private nodes of its subsample (``False``: the whole subsample, KNNRem)
    knn: bool
    #: one teacher on one subsample answers every query (SingleGNN, Table 4)
    single: bool = False
    #: where the Laplace noise goes: ``"posterior"`` (Algorithm 1) or ``"log_softmax"`` (the authors' code)
    noise_on: str = "posterior"

    def stream(self, k: Any) -> Any:
        """The tag of the run's teacher, noise and student streams: K, or ``"knnrem"`` / ``"single"``."""
        return k if self.knn else ("single" if self.single else "knnrem")

    @property
    def ledger_method(self) -> str:
        """The :func:`dpgnn.methods.privgnn.ledgers.privacy_ledger` method of the variant's accounting."""
        return "singlegnn" if self.single else ("privgnn" if self.knn else "knnrem")


#: the PrivGNN variants by method name
VARIANTS: dict[str, Variant] = {
    "privgnn": Variant(knn=True),
    "privgnn_code": Variant(knn=True, noise_on="log_softmax"),
    "knnrem": Variant(knn=False),
    "singlegnn": Variant(knn=False, single=True),
}


def _prepare(name: str, *, order_seed: int = GLOBAL_SEED, root=None) -> PrivGNNData:
    """:func:`dpgnn.methods.privgnn.data.prepare` (the registered ``prepare``), imported when first called."""
    from dpgnn.methods.privgnn.data import prepare

    return prepare(name, order_seed=order_seed, root=root)


def teachers_for(
    data: PrivGNNData, config: Mapping[str, Any], *, seed: int, method: str = "privgnn", device: str = "auto"
) -> TeacherOutput:
    """The teachers' posteriors of one PrivGNN run (``method``: privgnn/privgnn_code, knnrem, singlegnn) for the
    first ``config["teacher_queries"]`` queries (default ``queries``), seeded from the run's ``seed`` (the
    ``(seed, "teachers", K)`` stream of :func:`teacher_posteriors`; ``"knnrem"``/``"single"`` in place of K for
    the ablations). Teachers depend neither on λ nor on the noise variant, and the |Q| queries are a prefix of any
    larger |Q|'s, so one output serves every λ and |Q| ≤ ``teacher_queries`` (pass it to ``run`` as
    ``teachers=``, with the same ``seed``, γ, K and epochs: the run's ledger is built from its own config)."""
    from dpgnn.methods.privgnn.teachers import single_gnn_posteriors, teacher_posteriors

    if method not in VARIANTS:
        raise ValueError(f"unknown PrivGNN variant {method!r}; valid: {list(VARIANTS)}")
    variant = VARIANTS[method]
    nq = int(_opt(config, "teacher_queries", _opt(config, "queries")))
    gamma = check_gamma(_opt(config, "gamma"))
    kw = dict(
        sampling=_opt(config, "sampling", "poisson"),
        epochs=int(_opt(config, "teacher_epochs", 200)),
        device=device,
        **_model_kw(config),
    )
    if variant.single:
        return single_gnn_posteriors(data, nq, gamma=gamma, seed=stable_seed(seed, "teachers", "single"), **kw)
    k = _opt(config, "k") if variant.knn else None
    teachers_seed = stable_seed(seed, "teachers", variant.stream(k))
    return teacher_posteriors(data, nq, k=k, gamma=gamma, seed=teachers_seed, knn=variant.knn, **kw)


def _student_job(
    method: str, data: PrivGNNData, config: Mapping[str, Any], seed: int, post: TeacherOutput
) -> tuple[Tensor, Tensor, int]:
    """The student a PrivGNN run trains: its query nodes, their noisy labels and its seed."""
    from dpgnn.methods.privgnn.students import student_job

    q, lam = int(_opt(config, "queries")), check_lam(_opt(config, "lam"))
    variant = VARIANTS[method]
    tag = variant.stream(_opt(config, "k") if variant.knn else None)
    if post.posteriors.size(0) < q:
        raise ValueError(f"the teachers answer {post.posteriors.size(0)} queries, fewer than queries={q}")
    return student_job(data, post.posteriors, seed=seed, noise_on=variant.noise_on, lam=lam, q=q, tag=tag)


def _student_kw(config: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "epochs": int(_opt(config, "student_epochs", 200)),
        "pretrain_epochs": int(_opt(config, "pretrain_epochs", 0)),
        **_model_kw(config),
    }


def privgnn_students(
    data: PrivGNNData,
    runs: list[tuple[str, Mapping[str, Any]]],
    *,
    seed: int,
    teachers: TeacherOutput,
    device: str = "auto",
) -> list[dict[str, Any]]:
    """The students of the PrivGNN runs ``(method, config)`` on one set of ``teachers``, in one batch
    (:func:`dpgnn.methods.privgnn.train_students`): each is the student that run, called in turn, trains, bit for
    bit, and torch's global generator ends as after those runs. Pass each to its run as ``student=``. The runs
    must share the student's epochs, pre-training and model settings."""
    from dpgnn.methods.privgnn.students import train_students

    kws = [_student_kw(config) for _, config in runs]
    if any(kw != kws[0] for kw in kws[1:]):
        raise ValueError("the runs' students need the same epochs, pretrain_epochs, hidden, dropout and lr")
    for _, config in runs:
        check_gamma(_opt(config, "gamma"))
    jobs = [_student_job(method, data, config, seed, teachers) for method, config in runs]
    return train_students(data, jobs, device=device, **kws[0]) if jobs else []


def _run_privgnn(
    method: str,
    data: PrivGNNData,
    config: Mapping[str, Any],
    seed: int,
    device: str,
    post: TeacherOutput | None,
    student: dict[str, Any] | None = None,
) -> RunResult:
    from dpgnn.methods.privgnn.student import train_student

    t0 = time.perf_counter()
    q, lam = int(_opt(config, "queries")), check_lam(_opt(config, "lam"))
    gamma = check_gamma(_opt(config, "gamma"))
    variant = VARIANTS[method]
    if post is None:
        post = teachers_for(data, config, seed=seed, method=method, device=device)
    nodes, labels, student_seed = _student_job(method, data, config, seed, post)
    if student is None:
        student = train_student(data, nodes, labels, seed=student_seed, device=device, **_student_kw(config))
    noise = variant.noise_on
    delta, delta_sound = _deltas(data, config)
    led = privacy_ledger(
        variant.ledger_method,
        lam=lam,
        queries=q,
        gamma=gamma,
        delta=delta,
        num_classes=data.num_classes,
        delta_sound=delta_sound,
        standardized=data.standardized,
    )
    if noise == "log_softmax":  # the L1-sensitivity-1 argument fails for log-probabilities
        led = log_softmax_ledger(led)
    t_acc = float((post.posteriors[:q].argmax(1) == data.y_pub[nodes]).float().mean())
    return RunResult(
        {"test": student["accuracy"]},
        led,
        history=student["history"],
        seconds=time.perf_counter() - t0,
        extra={
            "teacher_accuracy": t_acc,
            "teacher_epochs_per_s": post.teacher_epochs_per_second,
            "model": student["model"],
        },
    )


_PRIVGNN_DOC = """{what}: the |Q| pseudo-labels argmax(posterior + Lap(1/λ)^c) of the teachers (:func:`teachers_for`;
    ``teachers=`` reuses an output computed for a larger or equal |Q|), then the released student (final epoch),
    accuracy on the public test nodes (``metrics["test"]``; no validation split: nothing is selected). Config:
    ``queries``, ``lam``, ``gamma``, ``k``, ``teacher_epochs``/``student_epochs`` (200), ``delta``/``delta_sound``
    (default: the dataset's), optional ``sampling``, ``pretrain_epochs``, ``hidden``/``dropout``/``lr``. Streams
    from ``seed``: teachers ``(seed, "teachers", K)``, noise ``(seed, "noise", λ, K)``, student
    ``(seed, ("student", noise_on, λ, |Q|, K))``; dropout masks from torch's global generator."""


@register(PAPER, "privgnn", "node", prepare=_prepare, description="PrivGNN (Algorithm 1): noise on posteriors")
def run_privgnn(
    data: PrivGNNData,
    config: Mapping[str, Any],
    *,
    seed: int,
    device: str = "auto",
    teachers: TeacherOutput | None = None,
    student: dict[str, Any] | None = None,
) -> RunResult:
    """PrivGNN as the paper states it (noise on the posterior). ``student``: the run's student, already trained
    (:func:`privgnn_students`)."""
    return _run_privgnn("privgnn", data, config, seed, device, teachers, student)


@register(
    PAPER,
    "privgnn_code",
    "node",
    prepare=_prepare,
    description="PrivGNN with noise on log-softmax (the authors' code): epsilon = inf",
)
def run_privgnn_code(
    data: PrivGNNData,
    config: Mapping[str, Any],
    *,
    seed: int,
    device: str = "auto",
    teachers: TeacherOutput | None = None,
    student: dict[str, Any] | None = None,
) -> RunResult:
    """PrivGNN as the authors' code runs it (noise on the log-softmax: ε = ∞, :func:`log_softmax_ledger`).
    ``student``: the run's student, already trained (:func:`privgnn_students`)."""
    return _run_privgnn("privgnn_code", data, config, seed, device, teachers, student)


@register(PAPER, "knnrem", "node", prepare=_prepare, description="KNNRem ablation (Table 4): no KNN selection")
def run_knnrem(
    data: PrivGNNData,
    config: Mapping[str, Any],
    *,
    seed: int,
    device: str = "auto",
    teachers: TeacherOutput | None = None,
) -> RunResult:
    """KNNRem (Table 4): each teacher sees its whole Poisson subsample."""
    return _run_privgnn("knnrem", data, config, seed, device, teachers)


@register(
    PAPER,
    "singlegnn",
    "node",
    prepare=_prepare,
    description="SingleGNN ablation (Table 4): one teacher answers every query",
)
def run_singlegnn(
    data: PrivGNNData,
    config: Mapping[str, Any],
    *,
    seed: int,
    device: str = "auto",
    teachers: TeacherOutput | None = None,
) -> RunResult:
    """SingleGNN (Table 4): one teacher on one subsample answers all."""
    return _run_privgnn("singlegnn", data, config, seed, device, teachers)


for _fn in (run_privgnn, run_privgnn_code, run_knnrem, run_singlegnn):  # the one-line summary, then the shared text
    _fn.__doc__ = _PRIVGNN_DOC.format(what=_fn.__doc__.rstrip("."))


def votes_for(data: PrivGNNData, config: Mapping[str, Any], *, seed: int, kind: str, device: str = "auto") -> Tensor:
    """PATE-G (``kind="gnn"``) or PATE-M (``"mlp"``) vote counts of one run for the first ``config["queries"]``
    queries (:func:`pate_votes`, stream ``(seed, "pate", kind)``): they do not depend on λ (pass them to ``run`` as
    ``votes=``)."""
    from dpgnn.methods.privgnn.pate import pate_votes

    return pate_votes(
        data,
        int(_opt(config, "queries")),
        kind=kind,
        num_teachers=int(_opt(config, "num_teachers")),
        seed=stable_seed(seed, "pate", kind),
        epochs=int(_opt(config, "teacher_epochs", 200)),
        fidelity=parse(_opt(config, "fidelity", Fidelity.PAPER)),
        device=device,
        **_model_kw(config),
    )


def _run_pate(
    kind: str, data: PrivGNNData, config: Mapping[str, Any], seed: int, device: str, votes: Tensor | None
) -> RunResult:
    from dpgnn.methods.privgnn.data import query_nodes
    from dpgnn.methods.privgnn.mechanism import pate_labels
    from dpgnn.methods.privgnn.student import train_student

    t0 = time.perf_counter()
    q, lam = int(_opt(config, "queries")), check_lam(_opt(config, "lam"))
    if votes is None:
        votes = votes_for(data, config, seed=seed, kind=kind, device=device)
    if votes.size(0) < q:
        raise ValueError(f"the vote counts answer {votes.size(0)} queries, fewer than queries={q}")
    counts = votes[:q]
    labels = pate_labels(counts, lam, make_generator(stable_seed(seed, "pate-noise", kind, lam)))
    student = train_student(
        data,
        query_nodes(data, q),
        labels,
        seed=stable_seed(seed, ("pate", kind, lam)),
        epochs=int(_opt(config, "student_epochs", 200)),
        device=device,
        **_model_kw(config),
    )
    delta = DATASETS[data.name].pate_delta if data.name in DATASETS else None
    delta = float(_opt(config, "delta", delta if delta is not None else _deltas(data, config)[0]))
    led = privacy_ledger(
        f"pate_{kind[0]}", lam=lam, queries=q, delta=delta, counts=counts.numpy(), standardized=data.standardized
    )
    if kind == "gnn" and parse(_opt(config, "fidelity", Fidelity.PAPER)) is Fidelity.AUTHORS_CODE:
        led = {
            **led,
            "fidelity": "authors_code",
            "note": "fidelity=authors_code: the teachers vote untrained, as the official code resets them after "
            "training (pate.train_models); the votes then do not depend on the private labels, so the "
            "accounted epsilon is a valid, loose upper bound",
        }
    return RunResult(
        {"test": student["accuracy"]},
        led,
        history=student["history"],
        seconds=time.perf_counter() - t0,
        extra={"model": student["model"]},
    )


@register(PAPER, "pate_g", "node", prepare=_prepare, description="PATE-G: SAGE teachers on disjoint partitions")
def run_pate_g(
    data: PrivGNNData, config: Mapping[str, Any], *, seed: int, device: str = "auto", votes: Tensor | None = None
) -> RunResult:
    """PATE-G (Table 5): ``num_teachers`` SAGE teachers on disjoint partitions of G† (:func:`pate_votes`; ``votes=``
    reuses :func:`votes_for` of a larger or equal |Q|), noisy-argmax labels, the student. Config: ``queries``, ``lam``,
    ``num_teachers``, ``teacher_epochs``/``student_epochs``, ``delta`` (default: the dataset's ``pate_delta``).
    Streams from ``seed``: votes ``(seed, "pate", "gnn")``, noise ``(seed, "pate-noise", "gnn", λ)``, student
    ``(seed, ("pate", "gnn", λ))``."""
    return _run_pate("gnn", data, config, seed, device, votes)


@register(PAPER, "pate_m", "node", prepare=_prepare, description="PATE-M: MLP teachers on disjoint partitions")
def run_pate_m(
    data: PrivGNNData, config: Mapping[str, Any], *, seed: int, device: str = "auto", votes: Tensor | None = None
) -> RunResult:
    """PATE-M (Table 5): as :func:`run_pate_g` with MLP teachers (streams tagged ``"mlp"``)."""
    return _run_pate("mlp", data, config, seed, device, votes)


def _non_private(acc: float, t0: float, history: list[dict[str, Any]], **extra: Any) -> RunResult:
    return RunResult(
        {"test": acc}, privacy_ledger("b1"), history=history, seconds=time.perf_counter() - t0, extra=extra
    )


def _baseline(
    trainer: str, name: str, data: PrivGNNData, config: Mapping[str, Any], seed: int, device: str, graph: bool = True
) -> RunResult:
    """The non-private baseline ``trainer`` (a function of :mod:`dpgnn.methods.privgnn.student`) as a run."""
    from dpgnn.methods.privgnn import student

    fn = getattr(student, trainer)
    t0 = time.perf_counter()
    kw = _model_kw(config) if graph else {"lr": _opt(config, "lr", MODEL_DEFAULTS["lr"])}
    out = fn(data, seed=stable_seed(seed, name), epochs=int(_opt(config, "epochs", 200)), device=device, **kw)
    return _non_private(out["accuracy"], t0, out["history"], **({"model": out["model"]} if "model" in out else {}))


_BASELINE_DOC = """{what}; accuracy on the public test nodes at the final epoch (non-private, ε = ∞). Config: ``epochs``
    (200), ``lr`` and (SAGE) ``hidden``/``dropout``; stream ``(seed, "{name}")``."""


@register(PAPER, "b1", "none", prepare=_prepare, description="B1 (non-private, inductive): SAGE on the private graph")
def run_b1(data: PrivGNNData, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
    """B1 (:func:`baseline_b1`)."""
    return _baseline("baseline_b1", "b1", data, config, seed, device)


@register(
    PAPER,
    "b2",
    "none",
    prepare=_prepare,
    description="B2 (non-private, transductive): SAGE on the public graph with its true labels",
)
def run_b2(data: PrivGNNData, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
    """B2 (:func:`baseline_b2`)."""
    return _baseline("baseline_b2", "b2", data, config, seed, device)


@register(PAPER, "b3", "none", prepare=_prepare, description="B3 (App. D.4): SAGE on the union of both graphs")
def run_b3(data: PrivGNNData, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
    """B3 (:func:`baseline_b3`)."""
    return _baseline("baseline_b3", "b3", data, config, seed, device)


@register(PAPER, "mlp", "none", prepare=_prepare, description="Table 7 MLP: features only, true public labels")
def run_mlp(data: PrivGNNData, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
    """Table 7's MLP (:func:`mlp_baseline`)."""
    return _baseline("mlp_baseline", "mlp", data, config, seed, device, graph=False)


for _fn in (run_b1, run_b2, run_b3, run_mlp):  # the one-line summary, then the shared text
    _fn.__doc__ = _BASELINE_DOC.format(what=_fn.__doc__.rstrip("."), name=_fn.__name__.removeprefix("run_"))
del _fn


@register(PAPER, "b4", "none", prepare=_prepare, description="B4 noisy oracle (App. D.5): soft true labels")
def run_b4(data: PrivGNNData, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
    """B4 (App. D.5): the student on the TRUE labels of the |Q| queries turned into noisy soft labels
    (:func:`b4_soft_labels`); it reads the public ground truth, so it is not a private mechanism of G† (ε = ∞).
    Config: ``queries``, ``lam``, ``student_epochs``, ``labels`` (``"soft"``, the paper's words, default; or
    ``"hard"``: the argmax of the same noisy vector, a reading docs/papers/privgnn.md#baselines measures);
    streams ``(seed, "b4", λ)`` (noise), ``(seed, "b4s", λ)`` (student)."""
    from dpgnn.methods.privgnn.data import query_nodes
    from dpgnn.methods.privgnn.mechanism import b4_noisy_onehot, b4_soft_labels
    from dpgnn.methods.privgnn.student import train_student

    t0 = time.perf_counter()
    q, lam = int(_opt(config, "queries")), check_lam(_opt(config, "lam"))
    kind = _opt(config, "labels", "soft")
    if kind not in ("soft", "hard"):
        raise ValueError(f"B4 labels must be 'soft' or 'hard', got {kind!r}")
    nodes = query_nodes(data, q)
    gen = make_generator(stable_seed(seed, "b4", lam))
    if kind == "soft":
        labels = b4_soft_labels(data.y_pub[nodes], data.num_classes, lam, gen)
    else:
        labels = b4_noisy_onehot(data.y_pub[nodes], data.num_classes, lam, gen).argmax(1)
    out = train_student(
        data,
        nodes,
        labels,
        seed=stable_seed(seed, "b4s", lam),
        epochs=int(_opt(config, "student_epochs", 200)),
        device=device,
        **_model_kw(config),
    )
    return _non_private(out["accuracy"], t0, out["history"], model=out["model"])
