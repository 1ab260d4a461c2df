"""torch.nn.utils.rnn's packed sequences (engine/nn/packed.py) against PyTorch 2.13: pack_padded_sequence's data,
batch sizes and sort order, pad_packed_sequence's padded batch and lengths, pack_sequence / unpack_sequence, and
RNN / GRU / LSTM over a PackedSequence (one or two layers, one or two directions, batch_first both ways, sorted or
not, with or without an initial state): outputs, each sequence's final state at its own length, gradients of the
inputs and weights, grad_fn names and printed forms; torch's errors."""
import itertools

import numpy as np
import pytest

import engine as E

torch = pytest.importorskip("torch")
R = {"torch": torch.nn.utils.rnn, "engine": E.nn.utils.rnn}
LENGTHS = {True: [5, 3, 3, 1], False: [3, 5, 1, 3]}  # enforce_sorted: sorted lengths; otherwise any order


def _both(x):
    return torch.tensor(x, requires_grad=True), E.tensor(x, requires_grad=True)


def _same(a, b, exact=False, tol=1e-5):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape
    if exact:
        assert np.array_equal(a, b)
    else:
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol)


@pytest.mark.parametrize("batch_first, enforce_sorted", itertools.product([False, True], [True, False]))
def test_packing_and_padding_are_torchs(batch_first, enforce_sorted):
    lengths = LENGTHS[enforce_sorted]
    shape = (4, 5, 3) if batch_first else (5, 4, 3)
    x_t, x_e = _both(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    out = {}
    for lib, x in (("torch", x_t), ("engine", x_e)):
        p = R[lib].pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
        padded, lens = R[lib].pad_packed_sequence(p, batch_first=batch_first, padding_value=-1.0, total_length=6)
        (padded * padded).sum().backward()
        out[lib] = (p, padded, lens, x)
    (p_t, pad_t, len_t, _), (p_e, pad_e, len_e, _) = out["torch"], out["engine"]
    assert repr(p_e) == repr(p_t)
    assert type(p_e.data.grad_fn).__name__ == type(p_t.data.grad_fn).__name__ == "PackPaddedSequenceBackward0"
    assert type(pad_e.grad_fn).__name__ == type(pad_t.grad_fn).__name__
    _same(pad_t, pad_e, exact=True)
    _same(len_t, len_e, exact=True)
    _same(x_t.grad, x_e.grad, exact=True)
    for a, b in zip(R["torch"].unpack_sequence(p_t), R["engine"].unpack_sequence(p_e)):
        _same(a, b, exact=True)


def test_pack_sequence_is_torchs():
    seqs = [np.arange(n * 2, dtype=np.float32).reshape(n, 2) for n in (2, 4, 1)]
    got = [R[lib].pack_sequence([lib_t(s) for s in seqs], enforce_sorted=False)
           for lib, lib_t in (("torch", torch.tensor), ("engine", E.tensor))]
    assert repr(got[1]) == repr(got[0])
    with pytest.raises(RuntimeError) as theirs:
        R["torch"].pack_sequence([torch.tensor(s) for s in seqs])
    with pytest.raises(RuntimeError) as ours:
        R["engine"].pack_sequence([E.tensor(s) for s in seqs])
    assert str(ours.value) == str(theirs.value)


CONFIGS = list(itertools.product(["RNN", "GRU", "LSTM"], [False, True], [True, False], [(1, False), (2, True)],
                                 [False, True]))


@pytest.mark.parametrize("kind, batch_first, enforce_sorted, layers_dirs, with_hx", CONFIGS,
                         ids=lambda v: str(v))
def test_a_recurrent_layer_over_a_packed_batch_is_torchs(kind, batch_first, enforce_sorted, layers_dirs, with_hx):
    layers, bidirectional = layers_dirs
    lengths = LENGTHS[enforce_sorted]
    rng = np.random.default_rng(1)
    shape = (4, 5, 3) if batch_first else (5, 4, 3)
    x_t, x_e = _both(rng.standard_normal(shape).astype(np.float32))
    torch.manual_seed(0)
    m_t = getattr(torch.nn, kind)(3, 4, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)
    m_e = getattr(E.nn, kind)(3, 4, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)
    m_e.load_state_dict({k: E.tensor(v.detach().numpy()) for k, v in m_t.state_dict().items()})
    n = layers * (2 if bidirectional else 1)
    h0 = rng.standard_normal((n, 4, 4)).astype(np.float32)
    hx = {"torch": None, "engine": None}
    if with_hx:
        hx = {"torch": torch.tensor(h0), "engine": E.tensor(h0)}
        if kind == "LSTM":
            hx = {"torch": (torch.tensor(h0), torch.tensor(-h0)), "engine": (E.tensor(h0), E.tensor(-h0))}
    results = {}
    for lib, m, x in (("torch", m_t, x_t), ("engine", m_e, x_e)):
        p = R[lib].pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
        out, h = m(p, hx[lib])
        padded, _ = R[lib].pad_packed_sequence(out, batch_first=batch_first)
        hs = h if kind == "LSTM" else (h,)
        loss = (padded ** 2).sum() + sum((t * t).sum() for t in hs)
        loss.backward()
        results[lib] = (out, hs, padded)
    (out_t, h_t, pad_t), (out_e, h_e, pad_e) = results["torch"], results["engine"]
    assert type(out_e).__name__ == "PackedSequence"
    assert type(out_e.data.grad_fn).__name__ == type(out_t.data.grad_fn).__name__
    assert [type(t.grad_fn).__name__ for t in h_e] == [type(t.grad_fn).__name__ for t in h_t]
    _same(out_t.batch_sizes, out_e.batch_sizes, exact=True)
    _same(out_t.data, out_e.data)
    _same(pad_t, pad_e)
    for a, b in zip(h_t, h_e):
        _same(a, b)
    _same(x_t.grad, x_e.grad)
    for a, b in zip(m_t.parameters(), m_e.parameters()):
        _same(a.grad, b.grad, tol=1e-4)


@pytest.mark.parametrize("call", [
    lambda R, lib: R.pack_padded_sequence(lib.zeros(3, 2, 1), [1, 3]),
    lambda R, lib: R.pack_padded_sequence(lib.zeros(3, 2, 1), [3, 0]),
    lambda R, lib: R.pack_padded_sequence(lib.zeros(3, 2, 1), [3, 2, 1]),
    lambda R, lib: R.pad_packed_sequence(R.pack_padded_sequence(lib.zeros(3, 2, 1), [3, 2]), total_length=2),
])
def test_errors_are_torchs(call):
    with pytest.raises(Exception) as theirs:
        call(R["torch"], torch)
    with pytest.raises(Exception) as ours:
        call(R["engine"], E)
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)
