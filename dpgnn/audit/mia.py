"""PrivGNN's membership-inference attacks (Olatunji, Funke & Khosla, TMLR 2023, Appendix C, Fig. 4).

Both attacks follow Olatunji et al. (2021): a **shadow model** with the target's architecture (the 2-layer SAGE of
B1 and the student, :func:`dpgnn.methods.privgnn.fit_sage`) is trained on data the attacker holds; its posteriors
on its own training nodes (label "member") and on held-out nodes ("non-member") train an **attack model** (an MLP
on the descending-sorted posterior vector); the attack model then scores the **target's** posteriors of the
queried nodes, and the attack's AUROC is reported (0.5 = random guess).

- **Attack-1** (App. C.1): members = the private nodes (queried on the private graph), non-members = public test
  nodes (queried on the public graph). Target: the non-private B1 (trained on the private graph) or the PrivGNN
  student (λ = 1, the weakest privacy of the paper's grid). Shadow: inductive, like B1 — half of a random half of
  the public graph's nodes trains the shadow on their induced subgraph, the other half is queried on theirs.
- **Attack-2** (App. C.2): members = the pseudo-labelled public query nodes, non-members = the public test nodes,
  all queried on the public graph. Target: the PrivGNN student, and as its non-private counterpart ("B1" in Fig. 4b)
  the same student trained on the same queries with B1's noise-free labels [AMBIG in the paper: "the MI attack on
  Baseline B1"; B1 itself never trains on public nodes]. Shadow: transductive, like the student — a SAGE on the
  induced public subgraph of a random half of the public nodes, trained on the labels of half of them.

Choices the paper leaves open (docs/papers/privgnn.md#open-questions: shadow split and attack model) are the ones above;
the attack model is a 2-layer MLP (hidden 64, Adam, 200 full-batch epochs) on the top ``min(c, 10)`` sorted
probabilities, and the AUROC is the usual one on its scores (``protocol="score"``).

``protocol="rebmigraph"`` instead follows the public implementation the paper points to (Olatunji et al. 2021,
repository ``iyempissy/rebMIGraph``, ``TSTF.py``; read for facts, nothing copied): the attack features are the whole
probability vector in class order; the attack model is C→100→50→2 with a softmax output that the cross-entropy loss
then applies a softmax to again (Adam 0.01, 100 epochs, minibatches of 32, Xavier-uniform weights, biases 0.01);
the shadow's non-members of Attack-1 are scored on the whole public graph (members on their own subgraph, as the
target's are); and the reported "AUROC" is the mean over shuffled batches of 64 of the AUROC of the attack's
**hard** 0/1 predictions, i.e. the batches' mean balanced accuracy (:func:`batched_hard_auroc`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from scipy import stats

from dpgnn.methods import privgnn as P
from dpgnn.train import GradientStep, fit
from dpgnn.utils import make_generator, resolve_device, stable_seed, torch_global_seed

__all__ = [
    "PROTOCOLS",
    "auroc",
    "attack_features",
    "train_attack_model",
    "attack_auroc",
    "full_features",
    "train_rebmigraph_attack",
    "batched_hard_auroc",
    "SHADOW_SIZES",
    "build_targets",
    "run_attacks",
    "shadow_sensitivity",
]

#: how the attack is built and scored: the usual score AUROC, or the published implementation's (module docstring)
PROTOCOLS = ("score", "rebmigraph")


def auroc(pos: np.ndarray, neg: np.ndarray) -> float:
    """Area under the ROC curve of scores ``pos`` (members) against ``neg`` (non-members), ties counted half
    (the Mann–Whitney U statistic divided by ``|pos|·|neg|``)."""
    pos, neg = np.asarray(pos, dtype=float), np.asarray(neg, dtype=float)
    if pos.size == 0 or neg.size == 0:
        raise ValueError("auroc needs at least one member and one non-member score")
    u = stats.mannwhitneyu(pos, neg, alternative="two-sided").statistic
    return float(u) / (pos.size * neg.size)


def attack_features(log_probs: torch.Tensor) -> torch.Tensor:
    """Descending-sorted posterior probabilities, the top ``min(c, 10)`` of each node (Olatunji et al. 2021)."""
    p = log_probs.exp()
    k = min(p.size(1), 10)
    return p.sort(dim=1, descending=True).values[:, :k]


def train_attack_model(
    member: torch.Tensor, non_member: torch.Tensor, *, seed: int, epochs: int = 200, hidden: int = 64, lr: float = 0.01
) -> torch.nn.Module:
    """Binary MLP classifier (member = 1) on attack features, full-batch Adam, balanced by subsampling."""
    n = min(member.size(0), non_member.size(0))
    gen = make_generator(stable_seed("attack-balance", seed))
    mem = member[torch.randperm(member.size(0), generator=gen)[:n]]
    non = non_member[torch.randperm(non_member.size(0), generator=gen)[:n]]
    x = torch.cat([mem, non]).float()
    y = torch.cat([torch.ones(n), torch.zeros(n)])
    torch.manual_seed(stable_seed("attack-init", seed))
    model = torch.nn.Sequential(torch.nn.Linear(x.size(1), hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))
    step = GradientStep(
        torch.optim.Adam(model.parameters(), lr=lr),
        lambda epoch: F.binary_cross_entropy_with_logits(model(x).squeeze(1), y),
    )
    if epochs > 0:
        fit(model, step, epochs=epochs, monitor=None, restore_best=False)
    model.eval()
    return model


def attack_auroc(
    attack: torch.nn.Module, member: torch.Tensor, non_member: torch.Tensor, *, seed: int, max_nodes: int | None = None
) -> float:
    """AUROC of the attack model's scores on the target's member / non-member posteriors (balanced samples)."""
    n = min(member.size(0), non_member.size(0), max_nodes or 10**12)
    gen = make_generator(stable_seed("attack-eval", seed))
    mem = member[torch.randperm(member.size(0), generator=gen)[:n]]
    non = non_member[torch.randperm(non_member.size(0), generator=gen)[:n]]
    with torch.no_grad():
        return auroc(attack(mem.float()).squeeze(1).numpy(), attack(non.float()).squeeze(1).numpy())


def full_features(log_probs: torch.Tensor) -> torch.Tensor:
    """The whole posterior probability vector in class order (the rebMIGraph attack's input)."""
    return log_probs.exp()


def train_rebmigraph_attack(
    member: torch.Tensor, non_member: torch.Tensor, *, seed: int, epochs: int = 100, batch: int = 32, lr: float = 0.01
) -> torch.nn.Module:
    """The published attack model: C→100→50→2 ending in a softmax, trained with cross-entropy on that softmax
    output (so the loss applies a second softmax), Adam, shuffled minibatches; members are class 1. Returns a
    module whose output is the member-class probability."""
    x = torch.cat([member, non_member]).float()
    y = torch.cat([torch.ones(member.size(0)), torch.zeros(non_member.size(0))]).long()
    torch.manual_seed(stable_seed("rebmigraph-attack-init", seed))
    net = torch.nn.Sequential(
        torch.nn.Linear(x.size(1), 100),
        torch.nn.ReLU(),
        torch.nn.Linear(100, 50),
        torch.nn.ReLU(),
        torch.nn.Linear(50, 2),
        torch.nn.Softmax(dim=1),
    )
    for layer in net:
        if isinstance(layer, torch.nn.Linear):
            torch.nn.init.xavier_uniform_(layer.weight)
            torch.nn.init.constant_(layer.bias, 0.01)
    # the softmax output taken as logits, as published
    step = GradientStep(torch.optim.Adam(net.parameters(), lr=lr), lambda idx: F.cross_entropy(net(x[idx]), y[idx]))
    gen = make_generator(stable_seed("rebmigraph-attack-batches", seed))

    def epoch_step(epoch: int) -> None:  # shuffled minibatches
        for idx in torch.randperm(x.size(0), generator=gen).split(batch):
            step(idx)

    if epochs > 0:
        fit(net, epoch_step, epochs=epochs, monitor=None, restore_best=False)
    net.eval()
    return torch.nn.Sequential(net, _MemberColumn())


class _MemberColumn(torch.nn.Module):
    def forward(self, p: torch.Tensor) -> torch.Tensor:
        return p[:, 1:2]


def batched_hard_auroc(
    attack: torch.nn.Module,
    member: torch.Tensor,
    non_member: torch.Tensor,
    *,
    seed: int,
    batch: int = 64,
    max_nodes: int | None = None,
) -> tuple[float, float]:
    """(published "AUROC", score AUROC) of ``attack`` on a balanced sample of members and non-members.

    The first is the published metric: the members and as many non-members are shuffled into batches of ``batch``;
    per batch, the AUROC of the hard predictions (member probability > 1/2) against the truth, which for 0/1
    predictions is the batch's balanced accuracy; the mean over batches (a batch holding one class only has no
    AUROC and is left out). The second is the usual AUROC of the member probabilities on the same sample."""
    n = min(member.size(0), non_member.size(0), max_nodes or 10**12)
    gen = make_generator(stable_seed("attack-eval", seed))
    mem = member[torch.randperm(member.size(0), generator=gen)[:n]]
    non = non_member[torch.randperm(non_member.size(0), generator=gen)[:n]]
    with torch.no_grad():
        score = torch.cat([attack(mem.float()), attack(non.float())]).squeeze(1)
    truth = torch.cat([torch.ones(n), torch.zeros(n)])
    hard = (score > 0.5).double()
    per_batch = []
    for idx in torch.randperm(2 * n, generator=gen).split(batch):
        t, h = truth[idx], hard[idx]
        if 0 < int(t.sum()) < t.numel():
            per_batch.append(auroc(h[t == 1].numpy(), h[t == 0].numpy()))
    if not per_batch:
        raise ValueError("no batch holds both members and non-members")
    return float(np.mean(per_batch)), auroc(score[:n].numpy(), score[n:].numpy())


#: shadow sizes of :func:`shadow_sensitivity`; ``"quarter"`` is the default design of :func:`run_attacks`
SHADOW_SIZES = ("quarter", "half", "target")


def _shadow_split(
    graphs: P.PrivGNNData, seed: int, size: str = "quarter", n_target: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(shadow members, shadow non-members), disjoint random sets of public nodes.

    ``"quarter"``: a random half of the public nodes, halved (the default design); ``"half"``: all of them, halved;
    ``"target"``: as many members as the target has (``n_target``, at most half the public nodes) and as many
    non-members."""
    if size not in SHADOW_SIZES:
        raise ValueError(f"shadow size must be one of {SHADOW_SIZES}, got {size!r}")
    gen = make_generator(stable_seed("shadow-split", seed))
    n = graphs.x_pub.size(0)
    perm = torch.randperm(n, generator=gen)
    if size == "quarter":
        mem, non = perm[: (n // 2) // 2], perm[(n // 2) // 2 : n // 2]
    else:
        if size == "target" and (n_target is None or n_target < 1):
            raise ValueError("shadow size 'target' needs the target's member count n_target >= 1")
        m = n // 2 if size == "half" else min(int(n_target), n // 2)
        mem, non = perm[:m], perm[m : 2 * m]
    return torch.sort(mem).values, torch.sort(non).values


def _fit_attack(f_mem: torch.Tensor, f_non: torch.Tensor, seed: int, protocol: str) -> torch.nn.Module:
    if protocol == "score":
        return train_attack_model(f_mem, f_non, seed=seed)
    return train_rebmigraph_attack(f_mem, f_non, seed=seed)


def _features(protocol: str):
    return attack_features if protocol == "score" else full_features


def _shadow1_posteriors(
    graphs: P.PrivGNNData, *, seed: int, epochs: int, device: str, size: str = "quarter", n_target: int | None = None
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Attack-1's shadow (inductive, like B1): trained on its members' induced subgraph. Its log-posteriors on
    (members, non-members) per protocol: members on their own subgraph; non-members on theirs (``"score"``) or, as
    published, on the whole public graph (``"rebmigraph"``)."""
    mem, non = _shadow_split(graphs, seed, size, n_target)
    n = graphs.x_pub.size(0)
    e_mem = P.induced_subgraph(graphs.edge_pub, mem, n)
    shadow = P.fit_sage(
        graphs.x_pub[mem],
        e_mem,
        torch.arange(mem.numel()),
        graphs.y_pub[mem],
        seed=stable_seed(seed, "shadow1"),
        epochs=epochs,
        num_classes=graphs.num_classes,
        device=device,
    )
    lp_mem = P.log_posteriors(shadow, graphs.x_pub[mem], e_mem, device)
    lp_own = P.log_posteriors(shadow, graphs.x_pub[non], P.induced_subgraph(graphs.edge_pub, non, n), device)
    lp_whole = P.log_posteriors(shadow, graphs.x_pub, graphs.edge_pub, device)[non]
    return {"score": (lp_mem, lp_own), "rebmigraph": (lp_mem, lp_whole)}


def _shadow2_posteriors(
    graphs: P.PrivGNNData, *, seed: int, epochs: int, device: str, size: str = "quarter", n_target: int | None = None
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Attack-2's shadow (transductive, like the student): trained on its members' labels within the induced
    subgraph of its members and non-members, or, with ``size="target"`` (as many members as the student's queries),
    within the whole public graph as the student is. Its log-posteriors on (members, non-members), any protocol."""
    mem, non = _shadow_split(graphs, seed, size, n_target)
    n = graphs.x_pub.size(0)
    nodes = torch.arange(n) if size == "target" else torch.sort(torch.cat([mem, non])).values
    edges = graphs.edge_pub if size == "target" else P.induced_subgraph(graphs.edge_pub, nodes, n)
    pos = torch.full((n,), -1, dtype=torch.long)
    pos[nodes] = torch.arange(nodes.numel())
    shadow = P.fit_sage(
        graphs.x_pub[nodes],
        edges,
        pos[mem],
        graphs.y_pub[mem],
        seed=stable_seed(seed, "shadow2"),
        epochs=epochs,
        num_classes=graphs.num_classes,
        device=device,
    )
    logp = P.log_posteriors(shadow, graphs.x_pub[nodes], edges, device)
    pair = (logp[pos[mem]], logp[pos[non]])
    return {"score": pair, "rebmigraph": pair}


def _shadow_posteriors(
    graphs: P.PrivGNNData,
    attack: str,
    *,
    seed: int,
    epochs: int,
    device: str,
    size: str = "quarter",
    n_target: int | None = None,
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """``attack``'s shadow, trained with dropout masks seeded from ``seed`` and its role."""
    shadow = _shadow1_posteriors if attack == "attack1" else _shadow2_posteriors
    with torch_global_seed(stable_seed(seed, "dropout", "shadow" + attack[-1]), device):
        return shadow(graphs, seed=seed, epochs=epochs, device=device, size=size, n_target=n_target)


def _fit_on(lp_mem: torch.Tensor, lp_non: torch.Tensor, seed: int, protocol: str) -> torch.nn.Module:
    """The protocol's attack model fitted on (member, non-member) log-posteriors."""
    feats = _features(protocol)
    return _fit_attack(feats(lp_mem), feats(lp_non), seed, protocol)


def _check_targets(targets: tuple[str, ...], noise_on: str | tuple[str, ...]) -> tuple[str, ...]:
    unknown = set(targets) - {"b1", "privgnn"}
    if unknown or not targets:
        raise ValueError(f"targets must be a non-empty subset of ('b1', 'privgnn'), got {targets!r}")
    placements = (noise_on,) if isinstance(noise_on, str) else tuple(noise_on)
    if not placements or set(placements) - {"posterior", "log_softmax"} or len(set(placements)) < len(placements):
        raise ValueError(f"noise_on must be 'posterior', 'log_softmax' or a tuple of both, got {noise_on!r}")
    return placements


def build_targets(
    graphs: P.PrivGNNData,
    *,
    queries: int,
    k: int,
    gamma: float,
    lam: float,
    seed: int,
    teacher_epochs: int,
    student_epochs: int,
    noise_on: str | tuple[str, ...] = "posterior",
    targets: tuple[str, ...] = ("b1", "privgnn"),
    device: str = "auto",
) -> list[dict[str, Any]]:
    """The attacked models of one (dataset, run) and what the attacks query them on: one entry per (attack,
    target) with ``attack``, ``method`` (``b1``, ``privgnn``, ``privgnn_code``), the target's log-posteriors on
    the attack's members (``member``) and non-members (``non_member``) and on every public node (``public``), and
    ``extra`` (the pseudo-label diagnostics). Targets as in :func:`run_attacks`, which attacks them."""
    placements = _check_targets(targets, noise_on)
    device = str(resolve_device(device))
    q_nodes = P.query_nodes(graphs, queries)
    test = graphs.pub_test
    attack1_targets: list[tuple[str, torch.nn.Module, dict[str, float]]] = []
    attack2_targets: list[tuple[str, torch.nn.Module, dict[str, float]]] = []
    if "b1" in targets:
        with torch_global_seed(stable_seed(seed, "dropout", "b1"), device):
            b1 = P.baseline_b1(graphs, seed=stable_seed(seed, "b1"), epochs=student_epochs, device=device)["model"]
        b1_labels = P.log_posteriors(b1, graphs.x_pub, graphs.edge_pub, device)[q_nodes].argmax(1)
        with torch_global_seed(stable_seed(seed, "dropout", "student-b1"), device):
            b1_student = P.train_student(
                graphs, q_nodes, b1_labels, seed=stable_seed(seed, "student-b1"), epochs=student_epochs, device=device
            )["model"]
        attack1_targets.append(("b1", b1, {}))
        attack2_targets.append(("b1", b1_student, {"label_accuracy": _label_accuracy(b1_labels, graphs, q_nodes)}))
    if "privgnn" in targets:
        with torch_global_seed(stable_seed(seed, "dropout", "teachers"), device):
            post = P.teacher_posteriors(
                graphs,
                queries,
                k=k,
                gamma=gamma,
                seed=stable_seed(seed, "teachers", k),
                epochs=teacher_epochs,
                device=device,
            )
        for placement in placements:
            noisy = P.noisy_argmax(
                post.posteriors, lam, make_generator(stable_seed(seed, "noise", lam, k)), noise_on=placement
            )
            with torch_global_seed(stable_seed(seed, "dropout", "student"), device):
                student = P.train_student(
                    graphs,
                    q_nodes,
                    noisy[:queries],
                    seed=stable_seed(seed, "student", lam),
                    epochs=student_epochs,
                    device=device,
                )["model"]
            extra = {"label_accuracy": _label_accuracy(noisy[:queries], graphs, q_nodes)}
            if placement != "posterior":
                paper = P.noisy_argmax(post.posteriors, lam, make_generator(stable_seed(seed, "noise", lam, k)))
                extra["label_accuracy_posterior"] = _label_accuracy(paper[:queries], graphs, q_nodes)
            name = "privgnn" if placement == "posterior" else "privgnn_code"
            attack1_targets.append((name, student, extra))
            attack2_targets.append((name, student, extra))
    out = []
    for method, target, extra in attack1_targets:
        pub = P.log_posteriors(target, graphs.x_pub, graphs.edge_pub, device)
        out.append(
            {
                "attack": "attack1",
                "method": method,
                "public": pub,
                "non_member": pub[test],
                "extra": extra,
                "member": P.log_posteriors(target, graphs.x_priv, graphs.edge_priv, device),
            }
        )
    for method, target, extra in attack2_targets:
        pub = P.log_posteriors(target, graphs.x_pub, graphs.edge_pub, device)
        out.append(
            {
                "attack": "attack2",
                "method": method,
                "public": pub,
                "member": pub[q_nodes],
                "non_member": pub[test],
                "extra": extra,
            }
        )
    return out


def _score(
    atk: torch.nn.Module,
    mem: torch.Tensor,
    non: torch.Tensor,
    *,
    protocol: str,
    seed: int,
    max_nodes: int | None = None,
) -> dict[str, float]:
    if protocol == "score":
        return {"value": attack_auroc(atk, mem, non, seed=seed, max_nodes=max_nodes)}
    hard, soft = batched_hard_auroc(atk, mem, non, seed=seed, max_nodes=max_nodes)
    return {"value": hard, "score_auroc": soft}


def run_attacks(
    graphs: P.PrivGNNData,
    *,
    queries: int,
    k: int,
    gamma: float,
    lam: float,
    seed: int,
    teacher_epochs: int,
    student_epochs: int,
    shadow_epochs: int,
    max_nodes: int | None = None,
    noise_on: str | tuple[str, ...] = "posterior",
    targets: tuple[str, ...] = ("b1", "privgnn"),
    protocol: str = "score",
    device: str = "auto",
) -> list[dict[str, Any]]:
    """Attack-1 and Attack-2 against the ``targets`` of one (dataset, run); one row per AUROC.

    ``targets``: ``"b1"`` (B1 for Attack-1, the student trained on B1's labels for Attack-2) and ``"privgnn"`` (the
    student). ``noise_on="log_softmax"`` trains the student on the authors'-code labels (Laplace noise on
    log-probabilities) and names its rows ``privgnn_code``; those rows also carry ``label_accuracy_posterior``, the
    accuracy of the paper-noise labels drawn from the same teachers and the same noise (the teachers, the query
    nodes and the noise draws do not depend on ``noise_on``). Every student row carries ``label_accuracy`` (its
    pseudo-labels against the query nodes' true labels), and every row the target's mean top probability on the
    attack's members and non-members (``member_confidence``, ``non_member_confidence``) and its public test
    accuracy (``test_accuracy``). Each training draws its dropout masks from torch's global RNG seeded from
    ``seed`` and its role, so a call gives the same rows whatever ran before it and whichever ``targets`` it has.

    ``noise_on`` may name both placements (a tuple): one student per placement, all from the same teachers and
    noise draws (the teachers are trained once). ``protocol`` (:data:`PROTOCOLS`, module docstring) picks the attack
    model, its features and the metric; with ``"rebmigraph"`` the value is the published batched hard-label AUROC
    and ``score_auroc`` the same attack's usual AUROC; every row names its ``protocol``."""
    _check_targets(targets, noise_on)
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    device = str(resolve_device(device))  # once: "auto" would be resolved (and logged) by every training below
    attacked = build_targets(
        graphs,
        queries=queries,
        k=k,
        gamma=gamma,
        lam=lam,
        seed=seed,
        teacher_epochs=teacher_epochs,
        student_epochs=student_epochs,
        noise_on=noise_on,
        targets=targets,
        device=device,
    )
    atk = {}
    for attack, epochs in (
        ("attack1", student_epochs if shadow_epochs is None else shadow_epochs),
        ("attack2", shadow_epochs),
    ):
        lp_mem, lp_non = _shadow_posteriors(graphs, attack, seed=seed, epochs=epochs, device=device)[protocol]
        atk[attack] = _fit_on(lp_mem, lp_non, stable_seed(seed, attack), protocol)
    feats = _features(protocol)
    rows = []
    for t in attacked:
        mem, non = feats(t["member"]), feats(t["non_member"])
        rows.append(
            {
                "attack": t["attack"],
                "method": t["method"],
                **_score(atk[t["attack"]], mem, non, protocol=protocol, seed=seed, max_nodes=max_nodes),
                "protocol": protocol,
                **_diagnostics(mem, non, t["public"], graphs),
                **t["extra"],
            }
        )
    return rows


def shadow_sensitivity(
    graphs: P.PrivGNNData,
    *,
    queries: int,
    k: int,
    gamma: float,
    lam: float,
    seed: int,
    teacher_epochs: int,
    student_epochs: int,
    shadow_sizes: tuple[str, ...] = SHADOW_SIZES,
    shadow_epochs: tuple[int, ...] = (50, 200, 500),
    protocols: tuple[str, ...] = PROTOCOLS,
    noise_on: str | tuple[str, ...] = ("posterior", "log_softmax"),
    targets: tuple[str, ...] = ("b1", "privgnn"),
    max_nodes: int | None = None,
    device: str = "auto",
) -> list[dict[str, Any]]:
    """How much the attacker's choices the paper leaves open move Attack-1 / Attack-2 against fixed targets.

    The targets of one (dataset, run) are trained once (:func:`build_targets`, the same models as
    :func:`run_attacks` with the same arguments), then attacked by every shadow design: each size of
    :data:`SHADOW_SIZES` (members / non-members drawn from the public nodes; ``"target"`` sizes the shadow's members
    like the target's: the private nodes for Attack-1, the queries for Attack-2) × each shadow training length ×
    each protocol. Two references need no shadow: ``design="oracle"``, an attack model of the protocol trained on a
    random half of the target's *own* members and non-members and scored on the other half (what an attacker who
    could label the target's nodes would reach: for the score AUROC the reference a shadow design approaches; the
    published attack model's hard calls may still fall on one side of its threshold, 0.5), and
    ``design="confidence"``, the AUROC of the target's top probability alone (a threshold attack, no model).

    One row per (attack, target, design): ``attack``, ``method``, ``design`` (``shadow`` / ``oracle`` /
    ``confidence``), ``shadow`` (size, or ``""``), ``shadow_epochs`` (0 without a shadow), ``protocol``, ``value``
    (the protocol's metric) and, for ``"rebmigraph"``, ``score_auroc``; the target's ``extra`` diagnostics."""
    if not protocols or set(protocols) - set(PROTOCOLS):
        raise ValueError(f"protocols must be a non-empty subset of {PROTOCOLS}, got {protocols!r}")
    if not shadow_sizes or set(shadow_sizes) - set(SHADOW_SIZES):
        raise ValueError(f"shadow_sizes must be a non-empty subset of {SHADOW_SIZES}, got {shadow_sizes!r}")
    if not shadow_epochs or min(shadow_epochs) < 1:
        raise ValueError(f"shadow_epochs must be positive training lengths, got {shadow_epochs!r}")
    device = str(resolve_device(device))
    attacked = build_targets(
        graphs,
        queries=queries,
        k=k,
        gamma=gamma,
        lam=lam,
        seed=seed,
        teacher_epochs=teacher_epochs,
        student_epochs=student_epochs,
        noise_on=noise_on,
        targets=targets,
        device=device,
    )
    n_members = {t["attack"]: t["member"].size(0) for t in attacked}
    rows: list[dict[str, Any]] = []

    def add(t, design, size, epochs, protocol, scored):
        rows.append(
            {
                "attack": t["attack"],
                "method": t["method"],
                "design": design,
                "shadow": size,
                "shadow_epochs": epochs,
                "protocol": protocol,
                **scored,
                **t["extra"],
            }
        )

    for t in attacked:  # the references without a shadow
        top_mem, top_non = t["member"].exp().max(1).values, t["non_member"].exp().max(1).values
        add(t, "confidence", "", 0, "score", {"value": auroc(top_mem.cpu().numpy(), top_non.cpu().numpy())})
        gen = make_generator(stable_seed("oracle-split", seed, t["attack"], t["method"]))
        pm, pn = (
            torch.randperm(t["member"].size(0), generator=gen),
            torch.randperm(t["non_member"].size(0), generator=gen),
        )
        hm, hn = pm.numel() // 2, pn.numel() // 2
        for protocol in protocols:
            feats = _features(protocol)
            fm, fn = feats(t["member"]).cpu(), feats(t["non_member"]).cpu()
            atk = _fit_attack(fm[pm[:hm]], fn[pn[:hn]], stable_seed(seed, "oracle", t["attack"]), protocol)
            add(
                t,
                "oracle",
                "",
                0,
                protocol,
                _score(atk, fm[pm[hm:]], fn[pn[hn:]], protocol=protocol, seed=seed, max_nodes=max_nodes),
            )
    for attack in ("attack1", "attack2"):
        if attack not in n_members:
            continue
        for size in shadow_sizes:
            for epochs in shadow_epochs:
                lps = _shadow_posteriors(
                    graphs, attack, seed=seed, epochs=epochs, device=device, size=size, n_target=n_members[attack]
                )
                for protocol in protocols:
                    atk = _fit_on(*lps[protocol], stable_seed(seed, attack), protocol)
                    feats = _features(protocol)
                    for t in attacked:
                        if t["attack"] == attack:
                            add(
                                t,
                                "shadow",
                                size,
                                epochs,
                                protocol,
                                _score(
                                    atk,
                                    feats(t["member"]),
                                    feats(t["non_member"]),
                                    protocol=protocol,
                                    seed=seed,
                                    max_nodes=max_nodes,
                                ),
                            )
    return rows


def _label_accuracy(labels: torch.Tensor, graphs: P.PrivGNNData, q_nodes: torch.Tensor) -> float:
    """Share of the query nodes whose pseudo-label equals their true label."""
    return float((labels.cpu() == graphs.y_pub[q_nodes]).double().mean())


def _diagnostics(
    mem: torch.Tensor, non: torch.Tensor, pub_logp: torch.Tensor, graphs: P.PrivGNNData
) -> dict[str, float]:
    """The target's mean top probability on members and non-members, and its public test accuracy (``mem`` and
    ``non``: attack features of either protocol)."""
    test = graphs.pub_test
    return {
        "member_confidence": float(mem.max(1).values.mean()),
        "non_member_confidence": float(non.max(1).values.mean()),
        "test_accuracy": float((pub_logp[test].argmax(1).cpu() == graphs.y_pub[test]).double().mean()),
    }
