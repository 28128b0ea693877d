"""The PATE baselines' teachers (Table 5): PATE-G (SAGE teachers) and PATE-M (MLP teachers) on disjoint
partitions of the private nodes, and their noisy-argmax aggregation."""

from __future__ import annotations

import torch
from torch import Tensor

from dpgnn.fidelity import Fidelity, parse
from dpgnn.methods.privgnn.data import PrivGNNData, query_nodes
from dpgnn.methods.privgnn.student import _fit, _graph_inputs
from dpgnn.methods.privgnn.teachers import train_teacher_batch
from dpgnn.nn.privgnn import MLP, BatchedSAGETeachers
from dpgnn.privacy.pate import vote_counts
from dpgnn.utils import make_generator, resolve_device, stable_seed


def pate_votes(
    graphs: PrivGNNData,
    num_queries: int,
    *,
    kind: str,
    num_teachers: int,
    seed: int,
    epochs: int = 200,
    hidden: int = 64,
    dropout: float = 0.5,
    lr: float = 0.01,
    fidelity: str | Fidelity = Fidelity.PAPER,
    device: str = "auto",
) -> Tensor:
    """Vote counts [|Q|, c] of ``num_teachers`` teachers on disjoint random partitions of the private nodes.

    ``kind="gnn"`` (PATE-G): a SAGE teacher per induced partition subgraph, predicting each query by a forward pass
    over the public graph. ``kind="mlp"`` (PATE-M): an MLP teacher on the partition's features and labels.
    ``fidelity="authors_code"`` (PATE-G only): the teachers vote untrained, as in the official code, whose
    ``pate.train_models`` calls ``reset_parameters()`` on each SAGE teacher right after training it (every conv and
    BatchNorm re-initialised, running statistics included); the reset of its MLP teachers is a no-op, so PATE-M is
    unchanged. Training and then resetting equals not training, so the teachers are freshly initialised networks.
    """
    if kind not in ("gnn", "mlp"):
        raise ValueError(f"kind must be 'gnn' (PATE-G) or 'mlp' (PATE-M), got {kind!r}")
    fidelity = parse(fidelity)
    if (
        isinstance(num_teachers, bool)
        or not isinstance(num_teachers, int)
        or not 1 <= num_teachers <= graphs.num_private
    ):
        raise ValueError(f"num_teachers must be an integer in [1, {graphs.num_private}], got {num_teachers!r}")
    queries = query_nodes(graphs, num_queries)
    dev = resolve_device(device)
    perm = torch.randperm(graphs.num_private, generator=make_generator(stable_seed(seed, "pate-partition")))
    parts = [torch.sort(p).values for p in torch.tensor_split(perm, num_teachers)]
    preds = []
    if kind == "gnn":
        for start in range(0, num_teachers, 64):
            chunk = parts[start : start + 64]
            seeds = [stable_seed(seed, "pate-teacher", start + j) for j in range(len(chunk))]
            if fidelity is Fidelity.AUTHORS_CODE:  # trained, then reset by the official code: fresh networks vote
                model = (
                    BatchedSAGETeachers(
                        len(chunk),
                        graphs.num_features,
                        hidden,
                        graphs.num_classes,
                        dropout=dropout,
                        generators=[make_generator(s) for s in seeds],
                    )
                    .to(dev)
                    .eval()
                )
            else:
                model = train_teacher_batch(
                    graphs, chunk, seeds, hidden=hidden, dropout=dropout, epochs=epochs, lr=lr, device=str(dev)
                )
            xx, src, dst, inv = _graph_inputs(graphs.x_pub, graphs.edge_pub, dev)
            logp = model.predict_graph(xx, src, dst, inv)[:, queries.to(dev)]
            preds.extend(logp.argmax(-1).cpu())
    else:
        for t, nodes in enumerate(parts):
            torch.manual_seed(stable_seed(seed, "pate-mlp", t))
            model = _fit(
                MLP(graphs.num_features, graphs.num_classes),
                graphs.x_priv[nodes],
                graphs.edge_priv[:, :0],
                torch.arange(nodes.numel()),
                graphs.y_priv[nodes],
                epochs=epochs,
                lr=lr,
                device=dev,
            )
            with torch.no_grad():
                preds.append(model(graphs.x_pub[queries].to(dev)).argmax(1).cpu())
    return torch.as_tensor(vote_counts(torch.stack(preds).numpy(), graphs.num_classes))
