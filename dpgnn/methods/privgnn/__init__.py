"""PrivGNN -- Olatunji, Funke & Khosla, "Releasing Graph Neural Networks with Differential Privacy Guarantees"
(TMLR 2023); docs/papers/privgnn.md.

Setting: a labelled private graph G† and an unlabelled public graph G (induced subgraphs of one dataset, no shared
edges). For each public query node v ∈ Q (Algorithm 1): Poisson-subsample the private nodes with rate γ, keep the K
nearest (Euclidean feature distance to v), train a GraphSAGE teacher on the induced private subgraph, answer v
inductively on the public graph, add Laplace(0, 1/λ) noise to each coordinate of the posterior and release the
argmax. A student GraphSAGE trained transductively on the public graph with the |Q| pseudo-labels is the only
released model; its ε comes from :mod:`dpgnn.privacy.pate`.

What is here, by module (the series layer :mod:`dpgnn.series.privgnn` calls only this package):

* :mod:`~dpgnn.methods.privgnn.data`: :func:`prepare` (private/public graphs of
  docs/papers/privgnn.md#data-and-splits, query order), :func:`query_nodes`, :func:`flip` (App. D.2), the
  datasets' settings (:data:`DATASETS`);
* :mod:`~dpgnn.methods.privgnn.mechanism`: :func:`poisson_subsample` (and the authors' fixed-size variant),
  :func:`knn_select`, :func:`induced_subgraph`, :func:`noisy_argmax`, B4's :func:`b4_soft_labels` (App. D.5);
* :mod:`~dpgnn.methods.privgnn.teachers`: :func:`teacher_posteriors` (many teachers trained at once with
  :class:`dpgnn.nn.privgnn.BatchedSAGETeachers`; KNNRem with ``knn=False``), SingleGNN's
  :func:`single_gnn_posteriors`;
* :mod:`~dpgnn.methods.privgnn.student`: :func:`train_student` (hard or soft labels, optional pre-training,
  App. D.7), :func:`baseline_b1`, :func:`baseline_b2`, :func:`baseline_b3`, :func:`mlp_baseline` (Table 7);
* :mod:`~dpgnn.methods.privgnn.students`: :func:`train_students`, many students of one cell in one batched
  training, each bit for bit its sequential :func:`train_student`; :func:`student_job`, a student's query nodes,
  noisy labels and seed;
* :mod:`~dpgnn.methods.privgnn.pate`: :func:`pate_votes` (PATE-M with MLP teachers, PATE-G with SAGE teachers);
* :mod:`~dpgnn.methods.privgnn.ledgers`: :func:`privacy_ledger` (:func:`log_softmax_ledger` for the
  authors'-code noise);
* :mod:`~dpgnn.methods.privgnn.authors_code` and :mod:`~dpgnn.methods.privgnn.official_split`:
  ``fidelity="authors_code"``, the official code's teachers, student, baselines and split (unsound);
* :mod:`~dpgnn.methods.privgnn.registration`, the method contract (:mod:`dpgnn.methods`): every method
  registered as ``("privgnn", method, level)`` --
  ``privgnn``, ``privgnn_code``, ``knnrem``, ``singlegnn``, ``pate_g``, ``pate_m`` at level ``node`` (the ledger's
  unit: one private node replaced), ``b1``, ``b2``, ``b3``, ``mlp``, ``b4`` at ``none`` -- with ``prepare`` =
  :func:`prepare` and ``run_<method>(data, config, *, seed, device) -> RunResult`` (``metrics["test"]``: accuracy on
  the public test nodes). The PrivGNN variants take ``teachers=`` (:func:`teachers_for`) and PATE ``votes=`` so that
  one set of teachers serves every λ and |Q| prefix, as the series does.

Training: the student, B1-B3, the MLP and the pre-training run on :func:`dpgnn.train.fit` (no selection: the final
epoch is released, docs/papers/privgnn.md#algorithm); the batched teachers run the same step
(:func:`dpgnn.nn.privgnn.teacher_step`) in their
own fast loop. Dropout masks come from torch's global generator (seed it for bit-identical reruns).

Teacher posteriors do not depend on λ, and the |Q| = 500 queries are a prefix of the |Q| = 1000 ones, so one set of
teachers serves a whole λ sweep and both |Q| settings (:func:`teacher_posteriors` is computed for the largest |Q|).
"""

from __future__ import annotations

from dpgnn.fidelity import FIDELITIES
from dpgnn.methods.privgnn.ledgers import (
    SUBSAMPLING_OF,
    authors_split_ledger,
    log_softmax_ledger,
    pate_statement,
    privacy_ledger,
)
from dpgnn.methods.privgnn.paper import (
    DATASETS,
    GLOBAL_SEED,
    LAMBDAS,
    PAPER,
    SEEDS,
    STANDARDIZED,
    DatasetInfo,
    check_gamma,
    check_k,
    dataset_info,
)
from dpgnn.methods.privgnn.registration import (
    MODEL_DEFAULTS,
    VARIANTS,
    Variant,
    privgnn_students,
    run_b1,
    run_b2,
    run_b3,
    run_b4,
    run_knnrem,
    run_mlp,
    run_pate_g,
    run_pate_m,
    run_privgnn,
    run_privgnn_code,
    run_singlegnn,
    teachers_for,
    votes_for,
)
from dpgnn.utils import lazy_exports

#: the data, mechanisms and training code (torch, PyG), imported on first use (PEP 562): the settings, the ledgers
#: and the registration stay light, so series that read stored rows and build grids start without torch
_LAZY = {
    **dict.fromkeys(
        (
            "AUTHORS_CODE_EPOCHS",
            "AUTHORS_CODE_ISSUES",
            "AuthorsTeacherOutput",
            "authors_code_baseline",
            "authors_code_ledger",
            "authors_code_student",
            "authors_code_teacher_posteriors",
        ),
        "authors_code",
    ),
    **dict.fromkeys(("PrivGNNData", "flip", "prepare", "prepare_from_data", "query_nodes"), "data"),
    **dict.fromkeys(
        (
            "b4_noisy_onehot",
            "b4_soft_labels",
            "induced_subgraph",
            "knn_select",
            "noisy_argmax",
            "pate_labels",
            "poisson_subsample",
            "teacher_subgraphs",
        ),
        "mechanism",
    ),
    **dict.fromkeys(
        ("AUTHORS_SPLITS", "authors_code_graph", "authors_code_split", "authors_code_split_nodes", "split_overlap"),
        "official_split",
    ),
    "pate_votes": "pate",
    **dict.fromkeys(
        ("baseline_b1", "baseline_b2", "baseline_b3", "fit_sage", "log_posteriors", "mlp_baseline", "train_student"),
        "student",
    ),
    **dict.fromkeys(("student_job", "train_students"), "students"),
    **dict.fromkeys(
        ("TeacherOutput", "single_gnn_posteriors", "teacher_posteriors", "train_teacher_batch"), "teachers"
    ),
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "FIDELITIES",
    "DATASETS",
    "GLOBAL_SEED",
    "LAMBDAS",
    "PAPER",
    "SEEDS",
    "STANDARDIZED",
    "DatasetInfo",
    "check_gamma",
    "check_k",
    "dataset_info",
    "SUBSAMPLING_OF",
    "authors_split_ledger",
    "log_softmax_ledger",
    "pate_statement",
    "privacy_ledger",
    "MODEL_DEFAULTS",
    "VARIANTS",
    "Variant",
    "run_b1",
    "run_b2",
    "run_b3",
    "run_b4",
    "run_knnrem",
    "run_mlp",
    "run_pate_g",
    "run_pate_m",
    "run_privgnn",
    "run_privgnn_code",
    "run_singlegnn",
    "privgnn_students",
    "teachers_for",
    "votes_for",
    *_LAZY,
]
