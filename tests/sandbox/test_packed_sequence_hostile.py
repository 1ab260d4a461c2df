"""Packed sequences inside programs (torch.nn.utils.rnn: pack_padded_sequence, pad_packed_sequence, pack_sequence,
PackedSequence): an LSTM classifier over variable-length sequences prints PyTorch's stdout; bad lengths give
PyTorch's errors; huge ones are bounded; a PackedSequence is a named tuple with nothing behind it."""
import pytest
from sandbox_testing import err, leaks, ok

PROGRAM = """import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)
seqs = [torch.randn(n, 3) for n in (5, 2, 4, 3)]
labels = torch.tensor([0, 1, 1, 0])
lengths = torch.tensor([len(s) for s in seqs])


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 6, batch_first=True, bidirectional=True)
        self.head = nn.Linear(12, 2)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        padded, lens = pad_packed_sequence(out, batch_first=True)
        return self.head(torch.cat([h[0], h[1]], dim=1)), padded, lens


model = Classifier()
opt = torch.optim.Adam(model.parameters(), lr=0.05)
x = pad_sequence(seqs, batch_first=True)
for step in range(4):
    logits, padded, lens = model(x, lengths)
    loss = nn.functional.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 4))
print(padded.shape, lens, logits.argmax(1))
packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
data, batch_sizes, sorted_indices, unsorted_indices = packed
print(batch_sizes, sorted_indices, unsorted_indices, data.shape, packed.data.grad_fn is None)
gru = nn.GRU(3, 2, num_layers=2)
out, h = gru(nn.utils.rnn.pack_sequence([torch.ones(3, 3), torch.ones(1, 3)]))
print(type(out).__name__, out.batch_sizes, h.shape, h.grad_fn.name())
"""


def test_a_classifier_over_packed_sequences_prints_what_pytorch_prints():
    pytest.importorskip("torch")
    from sandbox_testing import same_as_cpython

    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("line, kind", [
    ("pack_padded_sequence(torch.zeros(3, 2, 1), [1, 3])", "RuntimeError"),
    ("pack_padded_sequence(torch.zeros(3, 2, 1), [3, 0])", "RuntimeError"),
    ("pack_padded_sequence(torch.zeros(3, 2, 1), [-5, -6], enforce_sorted=False)", "RuntimeError"),
    ("pack_padded_sequence(torch.zeros(3, 2, 1), [3, 2, 1])", "RuntimeError"),
    ("pack_padded_sequence(torch.zeros(3, 2, 1), [10 ** 12, 2])", "RuntimeError"),
    ("pack_padded_sequence(torch.zeros(3, 2, 1), list(range(10 ** 8, 0, -1)))", "LimitExceeded"),
    ("pack_padded_sequence(torch.zeros(3, 2, 1), torch.tensor([[3, 2]]))", "RuntimeError"),
    ("pad_packed_sequence(pack_padded_sequence(torch.zeros(3, 2, 1), [3, 2]), total_length=10 ** 9)", "LimitExceeded"),
    ("pad_packed_sequence(pack_padded_sequence(torch.zeros(3, 2, 1), [3, 2]), total_length=1)", "ValueError"),
    ("pack_sequence([torch.ones(1), torch.ones(2)])", "RuntimeError"),
])
def test_what_they_are_handed_is_bounded(line, kind):
    e = err("import torch\nfrom torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pack_sequence\n"
            f"y = {line}\n")
    assert e["type"] == kind, e
    assert e["line"] == 3 and not leaks(e["message"])


@pytest.mark.parametrize("line", [
    "p._make", "p.__class__.__bases__", "p._asdict", "type(p).__new__", "p.data.grad_fn._saved_self",
    "p.__class__.__init__.__globals__", "torch.nn.utils.rnn.PackedSequence.__mro__", "p.count.__self__",
])
def test_a_packed_sequence_reaches_nothing_outside(line):
    e = err("import torch\np = torch.nn.utils.rnn.pack_padded_sequence(torch.ones(2, 2, 1, requires_grad=True), "
            f"[2, 1])\ny = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "NameError", "TypeError"), e
    assert not leaks(e["message"])


def test_a_packed_sequence_unpacks_as_a_tuple_and_prints_as_torchs():
    out = ok("import torch\np = torch.nn.utils.rnn.pack_sequence([torch.tensor([1., 2.]), torch.tensor([3.])])\n"
             "d, b, s, u = p\nprint(p)\nprint(len(p), p[1], p.batch_sizes.tolist(), s, u)\n")
    assert out == ("PackedSequence(data=tensor([1., 3., 2.]), batch_sizes=tensor([2, 1]), sorted_indices=None, "
                   "unsorted_indices=None)\n4 tensor([2, 1]) [2, 1] None None\n")


def test_a_packed_sequence_moves_and_casts_as_torchs():
    out = ok("import torch\np = torch.nn.utils.rnn.pack_sequence([torch.tensor([1., 2.]), torch.tensor([3.])])\n"
             "q = p.to('cpu').double()\nprint(q.data.dtype, q.batch_sizes.dtype, q.is_cuda, p.float() is p, "
             "p.to(torch.device('cpu')) is p, type(q).__name__)\n")
    assert out == "torch.float64 torch.int64 False True True PackedSequence\n"  # (torch 2.13 prints the same)
    e = err("import torch\np = torch.nn.utils.rnn.PackedSequence([print], torch.tensor([1]))\n")
    assert e["type"] == "TypeError" and e["line"] == 2 and not leaks(e["message"])
