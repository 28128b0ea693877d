"""ProGAP node level: ghost clipping (dpgnn.nn.progap.GhostClipper) against opacus' per-sample clipping."""

import copy
import warnings

import pytest
import torch
import torch.nn.functional as F
from opacus import GradSampleModule

from dpgnn.data import csbm, random_node_split
from dpgnn.methods import progap as pg
from dpgnn.nn.progap import MLP, GhostClipper, StageModel, clipped_grad_sum

torch.set_num_threads(1)


def _stage(dims, hidden, base_layers, head_layers, classes=3, *, dropout=0.0, normalize_jk=True, dtype=None):
    model = StageModel(
        [MLP(d, hidden, base_layers, norm="group", dropout=dropout) for d in dims],
        MLP(hidden * len(dims), hidden, head_layers, out_dim=classes, norm="group", dropout=dropout, plain_last=True),
        normalize_jk=normalize_jk,
    )
    return model.to(dtype) if dtype is not None else model


def _opacus_clipped_sum(model, xs, y, clip):
    """Reference: per-sample gradients from opacus' GradSampleModule, clipped and summed as DPOptimizer does."""
    gsm = GradSampleModule(copy.deepcopy(model), loss_reduction="sum")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        F.cross_entropy(gsm(*xs), y, reduction="sum").backward()
    gs = [p.grad_sample for p in gsm.parameters() if p.requires_grad]
    norms = torch.stack([g.reshape(len(g), -1).norm(2, dim=-1) for g in gs], dim=1).norm(2, dim=1)
    c = (clip / (norms + 1e-6)).clamp(max=1.0)
    return [torch.einsum("i,i...", c, g) for g in gs], norms


@pytest.mark.parametrize(
    "n_bases,base_layers,head_layers,batch,clip",
    [(1, 1, 1, 1, 1.0), (1, 2, 1, 7, 0.05), (2, 1, 2, 33, 0.5), (3, 3, 2, 64, 0.2), (4, 1, 1, 16, 100.0)],
)
def test_ghost_sum_equals_opacus_per_sample_clipping(n_bases, base_layers, head_layers, batch, clip):
    torch.manual_seed(n_bases * 10 + batch)
    dims = [5 + 3 * i for i in range(n_bases)]
    model = _stage(dims, 8, base_layers, head_layers, dtype=torch.float64)
    for p in model.parameters():  # GroupNorm's affine starts at (1, 0): move it so its gradients are generic
        p.data.add_(0.1 * torch.randn_like(p))
    xs = [torch.randn(batch, d, dtype=torch.float64) for d in dims]
    y = torch.randint(0, 3, (batch,))
    sums, norms = clipped_grad_sum(model, xs, y, clip)
    ref, ref_norms = _opacus_clipped_sum(model, xs, y, clip)
    torch.testing.assert_close(norms, ref_norms, rtol=1e-10, atol=1e-12)
    assert len(sums) == len(ref) == sum(1 for _ in model.parameters())
    for s, r in zip(sums, ref):
        torch.testing.assert_close(s, r, rtol=1e-10, atol=1e-12)
    if clip < 1.0:
        assert bool((norms > clip).any())  # the case exercises clipping


def test_ghost_handles_frozen_bases_and_plain_jk():
    torch.manual_seed(1)
    model = _stage([6, 4, 4], 8, 2, 1, normalize_jk=False, dtype=torch.float64)
    model.bases[0].requires_grad_(False)  # the layer-wise ablation freezes earlier bases
    xs = [torch.randn(20, d, dtype=torch.float64) for d in (6, 4, 4)]
    y = torch.randint(0, 3, (20,))
    params = [p for p in model.parameters() if p.requires_grad]
    sums, norms = GhostClipper(model, params)(xs, y, 0.3)
    ref, ref_norms = _opacus_clipped_sum(model, xs, y, 0.3)
    assert len(sums) == len(ref) == len(params) < sum(1 for _ in model.parameters())
    torch.testing.assert_close(norms, ref_norms)
    for s, r in zip(sums, ref):
        torch.testing.assert_close(s, r)


def test_ghost_refuses_what_it_cannot_clip():
    with pytest.raises(ValueError, match="BatchNorm"):
        GhostClipper(StageModel([MLP(4, 8, 1, norm="batch")], MLP(8, 8, 1, out_dim=2, plain_last=True)))
    with pytest.raises(ValueError, match="StageModel"):
        GhostClipper(MLP(4, 8, 1, norm="group"))
    model = _stage([4], 8, 1, 1)
    with pytest.raises(ValueError, match="not trainable parameters"):
        GhostClipper(model, [torch.nn.Parameter(torch.zeros(3))])
    with pytest.raises(ValueError, match="expects 1 inputs"):
        GhostClipper(model)([torch.randn(3, 4), torch.randn(3, 4)], torch.zeros(3, dtype=torch.long), 1.0)


# ---------------------------------------------------------------------------------------------------------------
# train_stage: the ghost path is the opacus path up to float rounding (same batches, same noise draws)
# ---------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def data():
    return random_node_split(
        csbm(num_nodes=240, num_classes=3, num_features=12, avg_degree=6.0, homophily=0.9, seed=5),
        0.75,
        0.10,
        0.15,
        seed=1,
    )


def _train(data, per_sample, *, dims_from, dp, epochs=3, dropout=0.0, seed=0):
    torch.manual_seed(seed)
    xs = [data.x] + [torch.randn(data.num_nodes, 8, generator=torch.Generator().manual_seed(i)) for i in dims_from]
    model = _stage([x.size(1) for x in xs], 8, 2, 1, dropout=dropout)
    gen = torch.Generator().manual_seed(seed)
    masks = {"train": data.train_mask, "val": data.val_mask}
    torch.manual_seed(seed + 1)  # dropout masks
    model, hist = pg.train_stage(
        model, xs, data.y, masks, epochs=epochs, lr=0.02, dp=dp, generator=gen, per_sample=per_sample
    )
    return model, hist, gen.get_state()


@pytest.mark.parametrize(
    "dims_from,batch,noise,dropout,epochs",
    [
        ((), 32, 1.0, 0.0, 3),
        ((1, 2), 16, 0.7, 0.0, 2),
        ((1,), 64, 2.0, 0.3, 3),
        ((1,), 2, 1.0, 0.0, 1),
        ((), 32, 0.0, 0.0, 2),
    ],
)
def test_train_stage_ghost_equals_opacus(data, dims_from, batch, noise, dropout, epochs):
    dp = pg.DPSettings(noise, batch, clip=0.5)
    m_ghost, h_ghost, g_ghost = _train(data, "ghost", dims_from=dims_from, dp=dp, dropout=dropout, epochs=epochs)
    m_opacus, h_opacus, g_opacus = _train(data, "opacus", dims_from=dims_from, dp=dp, dropout=dropout, epochs=epochs)
    # same Poisson batches (incl. empty ones at batch=2) and the same number of noise draws from the generator
    assert h_ghost[-1]["sample_sizes"] == h_opacus[-1]["sample_sizes"]
    assert torch.equal(g_ghost, g_opacus)
    if batch == 2:
        assert 0 in h_ghost[-1]["sample_sizes"]
    # fused vs default Adam differ by float rounding only: the trained parameters agree closely
    for a, b in zip(m_ghost.state_dict().values(), m_opacus.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    assert [h["val_acc"] for h in h_ghost] == [h["val_acc"] for h in h_opacus]


def test_train_stage_noise_is_opacus_noise(data):
    """With a huge noise multiplier the update is the noise: equal parameters mean equal draws, not just sizes."""
    dp = pg.DPSettings(1e4, 32, clip=1.0)
    m_ghost, _, _ = _train(data, "ghost", dims_from=(), dp=dp, epochs=1)
    m_opacus, _, _ = _train(data, "opacus", dims_from=(), dp=dp, epochs=1)
    m_other, _, _ = _train(data, "ghost", dims_from=(), dp=dp, epochs=1, seed=1)
    for a, b in zip(m_ghost.state_dict().values(), m_opacus.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    assert any(not torch.allclose(a, b) for a, b in zip(m_ghost.state_dict().values(), m_other.state_dict().values()))


def test_per_sample_option_is_checked(data):
    with pytest.raises(ValueError, match="per_sample"):
        _train(data, "vmap", dims_from=(), dp=pg.DPSettings(1.0, 16), epochs=1)
    with pytest.raises(ValueError, match="per_sample"):
        pg.train_progap(
            data,
            pg.ProGAPConfig(level="node", depth=1, noise=1.0, epochs=1, batch_size=32, max_degree=6),
            seed=0,
            device="cpu",
            per_sample="loop",
        )


def test_node_level_run_is_the_same_with_either_path(data):
    cfg = pg.ProGAPConfig(level="node", depth=2, noise=1.0, epochs=2, batch_size=32, max_degree=6)
    a = pg.train_progap(data, cfg, seed=0, device="cpu")
    b = pg.train_progap(data, cfg, seed=0, device="cpu", per_sample="opacus")
    assert a.ledger == b.ledger and a.queries == b.queries == 2
    assert a.stage_val_acc == b.stage_val_acc and a.test_acc == b.test_acc


def test_ghost_clips_over_the_given_parameters_only():
    torch.manual_seed(2)
    model = _stage([5, 4], 8, 1, 1, dtype=torch.float64)
    xs = [torch.randn(12, 5, dtype=torch.float64), torch.randn(12, 4, dtype=torch.float64)]
    y = torch.randint(0, 3, (12,))
    head = list(model.head.parameters())
    sums, norms = GhostClipper(model, head)(xs, y, 0.1)
    model.bases.requires_grad_(False)  # opacus clips over the parameters that require gradients
    ref, ref_norms = _opacus_clipped_sum(model, xs, y, 0.1)
    torch.testing.assert_close(norms, ref_norms)
    assert len(sums) == len(ref) == len(head)
    for s, r in zip(sums, ref):
        torch.testing.assert_close(s, r)
