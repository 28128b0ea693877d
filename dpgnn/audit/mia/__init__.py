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

The package: :mod:`~dpgnn.audit.mia.models` (the attack models and their metrics), :mod:`~dpgnn.audit.mia.shadows`
(the shadow models), :mod:`~dpgnn.audit.mia.targets` (the attacked models) and :mod:`~dpgnn.audit.mia.attacks`
(the attacks end to end); every public name is importable from here.
"""

from dpgnn.audit.catalog import PROTOCOLS, SHADOW_SIZES
from dpgnn.audit.mia.attacks import run_attacks, shadow_sensitivity
from dpgnn.audit.mia.models import (
    attack_auroc,
    attack_features,
    auroc,
    batched_hard_auroc,
    full_features,
    train_attack_model,
    train_rebmigraph_attack,
)
from dpgnn.audit.mia.shadows import _shadow_split as _shadow_split
from dpgnn.audit.mia.targets import build_targets

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
