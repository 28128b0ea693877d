"""The attack models of PrivGNN's membership inference and their metrics (:mod:`dpgnn.audit.mia`): the usual
MLP on sorted posteriors scored by AUROC (``protocol="score"``), and the published implementation's model scored by
its batched hard-label "AUROC" (``protocol="rebmigraph"``)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from scipy import stats

from dpgnn.train import GradientStep, fit
from dpgnn.utils import make_generator, stable_seed


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


def _fit_attack(f_mem: torch.Tensor, f_non: torch.Tensor, seed: int, protocol: str) -> torch.nn.Module:
    if protocol == "score":
        return train_attack_model(f_mem, f_non, seed=seed)
    return train_rebmigraph_attack(f_mem, f_non, seed=seed)


def _features(protocol: str):
    return attack_features if protocol == "score" else full_features


def _fit_on(lp_mem: torch.Tensor, lp_non: torch.Tensor, seed: int, protocol: str) -> torch.nn.Module:
    """The protocol's attack model fitted on (member, non-member) log-posteriors."""
    feats = _features(protocol)
    return _fit_attack(feats(lp_mem), feats(lp_non), seed, protocol)


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
