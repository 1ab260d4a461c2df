"""nn.MultiheadAttention (engine/nn/attention.py) against PyTorch 2.13: parameters named, shaped and initialised as
torch's under the same seed; outputs, attention weights and gradients to float32 rounding (batched products and the
softmax's exp round otherwise here) for self-, key-value and cross-attention, batch_first, unbatched input, masks
(boolean, float, key padding), per-head weights and need_weights=False; its errors."""
import numpy as np
import pytest

import engine as E

torch = pytest.importorskip("torch")


def _pair(**kw):
    E.manual_seed(0)
    torch.manual_seed(0)
    return E.nn.MultiheadAttention(8, 2, **kw), torch.nn.MultiheadAttention(8, 2, **kw)


def _close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_parameters_are_torchs():
    ours, theirs = _pair()
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    for a, b in zip(ours.parameters(), theirs.parameters()):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("mode", ["self", "self_masked", "kv", "cross", "per_head", "padding", "float_mask",
                                  "unbatched", "no_weights"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_outputs_weights_and_gradients_are_torchs(mode, batch_first):
    ours, theirs = _pair(batch_first=batch_first)
    torch.manual_seed(1)
    shape = (3, 8) if mode == "unbatched" else (3, 2, 8)
    x, y = torch.randn(*shape), torch.randn(*shape)
    seq = 3 if (mode == "unbatched" or not batch_first) else 2
    batch = 1 if mode == "unbatched" else (2 if not batch_first else 3)
    args_t, kw_t = (x, x, x), {}
    if mode == "self_masked":
        kw_t["attn_mask"] = torch.tensor([[False, True, True], [False, False, True], [False, False, False]])[:seq, :seq]
    elif mode == "kv":
        args_t = (x, y, y)
    elif mode == "cross":
        args_t = (x, y, x)
    elif mode == "per_head":
        kw_t["average_attn_weights"] = False
    elif mode == "padding":
        kw_t["key_padding_mask"] = torch.zeros(batch, seq, dtype=torch.bool)
        kw_t["key_padding_mask"][0, -1] = True
    elif mode == "float_mask":
        kw_t["attn_mask"] = torch.randn(seq, seq)
    elif mode == "no_weights":
        kw_t["need_weights"] = False
    out_t, w_t = theirs(*args_t, **kw_t)
    table = {id(t): E.tensor(t.numpy()) for t in (x, y)}
    out_e, w_e = ours(*(table[id(t)] for t in args_t),
                      **{k: E.tensor(v.numpy()) if hasattr(v, "numpy") else v for k, v in kw_t.items()})
    _close(out_e, out_t)
    if w_t is None:
        assert w_e is None
    else:
        _close(w_e, w_t)
    out_t.sum().backward()
    out_e.sum().backward()
    for a, b in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_errors_are_torchs():
    ours, _ = _pair()
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        ours(E.ones(3, 2, 8), E.ones(3, 2, 8), E.ones(3, 2, 8), is_causal=True)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask"):
        ours(E.ones(3, 2, 8), E.ones(3, 2, 8), E.ones(3, 2, 8), attn_mask=E.ones(2, 2))
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        E.nn.MultiheadAttention(8, 3)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_a_transformer_encoder_is_torchs(norm_first, batch_first):
    E.manual_seed(0)
    torch.manual_seed(0)
    layer_e = E.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=batch_first,
                                           norm_first=norm_first)
    layer_t = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=batch_first,
                                               norm_first=norm_first)
    enc_e = E.nn.TransformerEncoder(layer_e, 2)
    enc_t = torch.nn.TransformerEncoder(layer_t, 2, enable_nested_tensor=False)
    assert E.randn(3).tolist() == torch.randn(3).tolist()  # the copies drew no random numbers, as torch's deepcopy
    assert [n for n, _ in enc_e.named_parameters()] == [n for n, _ in enc_t.named_parameters()]
    for a, b in zip(enc_e.parameters(), enc_t.parameters()):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    assert repr(layer_e) == repr(layer_t)
    torch.manual_seed(1)
    x = torch.randn(5, 3, 8)
    size = 3 if batch_first else 5
    mask_t = torch.nn.Transformer.generate_square_subsequent_mask(size)
    mask_e = E.nn.Transformer.generate_square_subsequent_mask(size)
    assert np.array_equal(mask_e.numpy(), mask_t.numpy())
    out_t = enc_t(x, mask=mask_t)
    out_e = enc_e(E.tensor(x.numpy()), mask=mask_e)
    _close(out_e, out_t)
    out_t.sum().backward()
    out_e.sum().backward()
    for a, b in zip(enc_e.parameters(), enc_t.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_deepcopy_is_torchs():
    import copy

    w = E.ones(2, requires_grad=True)
    w.grad = E.full((2,), 3.0)
    w2 = copy.deepcopy(w)
    assert w2 is not w and w2.requires_grad and w2.grad.tolist() == [3.0, 3.0] and w2.is_leaf
    layer = E.nn.Linear(2, 1)
    layer(E.ones(1, 2)).sum().backward()
    clone = copy.deepcopy(layer)
    assert type(clone.weight) is E.nn.Parameter and clone.weight.grad is None  # Parameter.__deepcopy__ drops .grad
    assert np.array_equal(clone.weight.detach().numpy(), layer.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(w * 2)
    with pytest.raises(NotImplementedError):
        E.nn.Transformer(8, 2, custom_decoder=E.nn.Linear(8, 8))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_the_encoder_decoder_transformer_is_torchs(norm_first, batch_first):
    """nn.Transformer under a seed: the same weights (xavier_uniform_ re-drawn in parameters() order), the same repr
    (repeated layers grouped as PyTorch's ModuleList prints them), outputs and gradients to float32's last bits."""
    models = []
    for lib in (torch, E):
        lib.manual_seed(0)
        models.append(lib.nn.Transformer(8, 2, num_encoder_layers=2, num_decoder_layers=3, dim_feedforward=16,
                                         dropout=0.0, batch_first=batch_first, norm_first=norm_first))
    m_t, m_e = models
    assert repr(m_e) == repr(m_t)
    assert [n for n, _ in m_e.named_parameters()] == [n for n, _ in m_t.named_parameters()]
    for a, b in zip(m_e.parameters(), m_t.parameters()):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    torch.manual_seed(1)
    src, tgt = torch.randn(5, 3, 8), torch.randn(4, 3, 8)
    if batch_first:
        src, tgt = src.transpose(0, 1).contiguous(), tgt.transpose(0, 1).contiguous()
    mask_t = torch.nn.Transformer.generate_square_subsequent_mask(4)
    out_t = m_t(src, tgt, tgt_mask=mask_t, tgt_key_padding_mask=torch.tensor([[False] * 3 + [True]] * 3))
    out_e = m_e(E.tensor(src.numpy()), E.tensor(tgt.numpy()), tgt_mask=E.tensor(mask_t.numpy()),
                tgt_key_padding_mask=E.tensor([[False] * 3 + [True]] * 3))
    _close(out_e, out_t)
    out_t.sum().backward()
    out_e.sum().backward()
    for a, b in zip(m_e.parameters(), m_t.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_a_decoder_layer_alone_is_torchs():
    outs = []
    for lib in (torch, E):
        lib.manual_seed(3)
        layer = lib.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, bias=False)
        dec = lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(8))
        lib.manual_seed(4)
        tgt, memory = lib.randn(4, 2, 8), lib.randn(6, 2, 8)
        outs.append((repr(dec), dec(tgt, memory, memory_mask=lib.zeros(4, 6)).detach().numpy()))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-5, atol=1e-6)
