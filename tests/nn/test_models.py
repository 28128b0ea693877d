import pytest
import torch
from torch_geometric.nn import VGAE

from dpgnn.nn import GCN, MODELS, VGAEEncoder, count_parameters, get_model, register_model


def _graph(n=6):
    # a path 0-1-2-3-4-5 plus the chord 0-3, both directions
    und = torch.tensor([[0, 1, 2, 3, 4, 0], [1, 2, 3, 4, 5, 3]])
    return torch.cat([und, und.flip(0)], dim=1)


def _dense_norm_adj(edge_index, n):
    a = torch.zeros(n, n)
    a[edge_index[1], edge_index[0]] = 1.0
    a = a + torch.eye(n)
    d = a.sum(1).rsqrt()
    return d[:, None] * a * d[None, :]


def test_gcn_first_layer_is_symmetric_normalised_convolution():
    torch.manual_seed(0)
    n, f = 6, 4
    ei = _graph(n)
    x = torch.randn(n, f)
    model = GCN(f, 3, 2, dropout=0.5)
    conv = model.conv1
    expected = _dense_norm_adj(ei, n) @ x @ conv.lin.weight.T + conv.bias
    assert torch.allclose(conv(x, ei), expected, atol=1e-5)


@pytest.mark.parametrize("cached", [False, True])
def test_gcn_output_is_log_softmax_and_dropout_only_in_training(cached):
    torch.manual_seed(1)
    ei = _graph()
    x = torch.randn(6, 5)
    model = GCN(5, 8, 3, dropout=0.5, cached=cached)
    model.eval()
    out = model(x, ei)
    assert out.shape == (6, 3)
    assert torch.allclose(out.exp().sum(-1), torch.ones(6), atol=1e-5)
    assert torch.equal(out, model(x, ei))  # eval: deterministic
    model.train()
    outs = [model(x, ei) for _ in range(5)]
    assert any(not torch.allclose(outs[0], o) for o in outs[1:])  # dropout active


def test_gcn_rejects_bad_dropout():
    with pytest.raises(ValueError, match="dropout"):
        GCN(3, 4, 2, dropout=1.0)


def test_vgae_encoder_shapes_and_vgae_integration():
    torch.manual_seed(2)
    ei = _graph()
    x = torch.rand(6, 7)
    enc = VGAEEncoder(7)  # defaults 32 -> 16
    assert enc.conv1.out_channels == 32 and enc.conv_mu.out_channels == 16 == enc.conv_logstd.out_channels
    assert isinstance(enc.bn, torch.nn.BatchNorm1d)
    mu, logstd = enc(x, ei)
    assert mu.shape == logstd.shape == (6, 16)
    model = VGAE(enc)
    model.train()
    z = model.encode(x, ei)
    loss = model.recon_loss(z, ei) + model.kl_loss() / 6
    loss.backward()
    assert all(p.grad is not None for p in enc.parameters())
    model.eval()
    assert torch.allclose(model.encode(x, ei), enc(x, ei)[0])  # eval encodes to mu


def test_registry_resolves_and_lists_names():
    assert {"gcn", "vgae_encoder"} <= set(MODELS)
    m = get_model("GCN", in_channels=3, hidden_channels=4, out_channels=2)
    assert isinstance(m, GCN)
    assert count_parameters(m) == 3 * 4 + 4 + 4 * 2 + 2
    with pytest.raises(ValueError, match="valid names"):
        get_model("no-such-model")
    with pytest.raises(ValueError, match="already registered"):
        register_model("gcn", VGAEEncoder)
