"""torch.nn.utils.rnn's packed sequences, and RNN / GRU / LSTM over them, as PyTorch builds them.

`pack_padded_sequence` is one op (PackPaddedSequenceBackward0): each step's rows of the sequences still running,
one after another. A recurrent layer over a PackedSequence runs each step on those rows only (PyTorch's
PackedLayer: the rows that ended leave the hidden state as they end; backwards, ReversedPackedLayer, they join it
as they start), so its output is a cat of the steps' outputs (CatBackward0) and each sequence's final hidden state
is the one at its own length. `pad_packed_sequence` copies the runs of equal batch size into a padded tensor
(CopySlices), transposed for batch_first, reordered when the packing sorted the batch (IndexSelectBackward0).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import creation
from ..dispatch import apply
from ..dtypes import float16, float32, float64, int32, int64
from ..functional import cat, stack
from ..ops import OPS
from ..tensor_core import Tensor
from . import functional_layers as FL

_PackedSequenceBase = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])

PUBLIC = ("PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence", "unpad_sequence",
          "unpack_sequence")
LEGACY_NAMES = {"torch.int64": "Long", "torch.int32": "Int", "torch.float32": "Float", "torch.float64": "Double"}
SORT_HINT = ("You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
             "requirement if you do not need ONNX exportability.")


class PackedSequence(_PackedSequenceBase):
    """(data, batch_sizes, sorted_indices, unsorted_indices), as torch's named tuple."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        # every field a tensor (the indices may be None): printing one or a layer reading one sees tensors only
        for name, t in (("data", data), ("batch_sizes", batch_sizes), ("sorted_indices", sorted_indices),
                        ("unsorted_indices", unsorted_indices)):
            if not (isinstance(t, Tensor) or (t is None and name.endswith("indices"))):
                raise TypeError(f"PackedSequence(): argument '{name}' must be Tensor, not {type(t).__name__}")
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _invert(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The data moved or cast (batch sizes and indices stay int64 on the CPU, as torch's)."""
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                          self.unsorted_indices)

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(float64)

    def float(self):
        return self.to(float32)

    def half(self):
        return self.to(float16)

    def long(self):
        return self.to(int64)

    def int(self):
        return self.to(int32)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def _invert(permutation):
    out = np.empty_like(permutation.numpy())
    out[permutation.numpy()] = np.arange(len(out))
    return creation.tensor(out, dtype=permutation.dtype)


def _lengths(lengths) -> np.ndarray:
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.ndim}D cpu "
                               f"{LEGACY_NAMES.get(str(lengths.dtype), 'Float')} tensor")
        return lengths.numpy().astype(np.int64)
    return np.asarray([int(n) for n in lengths], np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):  # noqa: A002
    """A padded batch (T, B, *) (or (B, T, *) with batch_first) and each sequence's length, packed."""
    n = _lengths(lengths)
    batch_dim = 0 if batch_first else 1
    if len(n) != input.shape[batch_dim]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(n)} (batch_size="
                           f"{input.shape[batch_dim]})")
    sorted_indices = None
    if enforce_sorted:
        if np.any(n[1:] > n[:-1]):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               + SORT_HINT)
    else:
        order = np.argsort(-n, kind="stable")
        n = n[order]
        sorted_indices = creation.tensor(order, dtype=int64)
        input = input.index_select(batch_dim, sorted_indices)
    if len(n) and n[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    steps = input.shape[1 if batch_first else 0]
    if len(n) and n[0] > steps:
        raise RuntimeError(f"Expected sequence length to be larger than 0 in RNN and all lengths to be at most the "
                           f"sequence's {steps}, got {int(n[0])}")
    batch_sizes = tuple(int((n > t).sum()) for t in range(int(n[0]) if len(n) else 0))
    data = apply(OPS["pack_padded_sequence"], (input,), (batch_sizes, bool(batch_first)))
    return PackedSequence(data, creation.tensor(batch_sizes, dtype=int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The padded batch (T, B, *) of a PackedSequence (B first with batch_first) and each sequence's length."""
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.numpy()]
    longest = len(batch_sizes)
    if total_length is not None:
        if total_length < longest:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {longest}")
        longest = total_length
    batch = batch_sizes[0]
    out = creation.full((longest, batch) + tuple(data.shape[1:]), padding_value, dtype=data.dtype)
    lengths = np.zeros(batch, np.int64)
    offset, start = 0, 0
    for t in range(len(batch_sizes) + 1):
        size = batch_sizes[t] if t < len(batch_sizes) else 0
        previous = batch_sizes[start] if start < len(batch_sizes) else 0
        if size != previous:  # a run of steps with the same batch ends: copied in one slice, as ATen does
            rows = previous * (t - start)
            out[start:t, :previous] = data[offset:offset + rows].view((t - start, previous) + tuple(data.shape[1:]))
            offset += rows
            lengths[size:previous] = t
            start = t
    if batch_first:
        out = out.transpose(0, 1)
    lengths_t = creation.tensor(lengths, dtype=int64)
    if sequence.unsorted_indices is not None:
        out = out.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths_t = lengths_t[sequence.unsorted_indices]
    return out, lengths_t


def pack_sequence(sequences, enforce_sorted=True):
    lengths = creation.tensor([s.shape[0] for s in sequences], dtype=int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :int(n)] for i, n in enumerate(_lengths(lengths))]


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """torch.nn.utils.rnn.pad_sequence: tensors of lengths L_i (and equal trailing sizes) in one (L_max, B, *) tensor
    (B first with batch_first) filled with padding_value, each copied in at the start (or the end with
    padding_side='left'); gradients flow back to each sequence through the copy."""
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    for s in sequences:
        if not isinstance(s, Tensor):
            raise TypeError(f"pad_sequence(): argument 'sequences' must be tuple of Tensors, not {type(s).__name__}")
        if s.dim() < 1 or tuple(s.shape[1:]) != tuple(sequences[0].shape[1:]):
            raise RuntimeError("The size of tensor a must match the size of tensor b: sequences need the same "
                               "trailing sizes (and at least one dimension)")
    longest = max(s.shape[0] for s in sequences)
    trailing = tuple(sequences[0].shape[1:])
    shape = (len(sequences), longest, *trailing) if batch_first else (longest, len(sequences), *trailing)
    out = creation.full(shape, padding_value, dtype=sequences[0].dtype)
    for i, s in enumerate(sequences):
        n = s.shape[0]
        where = slice(0, n) if padding_side == "right" else slice(longest - n, longest)
        if batch_first:
            out[i, where] = s
        else:
            out[where, i] = s
    return out


# ---------------------------------------------------------------- recurrent layers over a PackedSequence
def _rows(state, start, stop):
    return tuple(s[start:stop] for s in state)


def _joined(parts):
    return tuple(cat([p[k] for p in parts], 0) for k in range(len(parts[0])))


def _forward_layer(module, data, batch_sizes, state, params):
    """PyTorch's PackedLayer: the rows that ended leave the hidden state as their sequences end."""
    outputs, finished, offset, last = [], [], 0, batch_sizes[0]
    for size in batch_sizes:
        if size < last:
            finished.append(_rows(state, size, last))
            state = _rows(state, 0, size)
        last = size
        state = _cell(module, data[offset:offset + size], state, params)
        outputs.append(state[0])
        offset += size
    finished.append(state)
    return cat(outputs, 0), _joined(finished[::-1])


def _reverse_layer(module, data, batch_sizes, initial, params):
    """PyTorch's ReversedPackedLayer: from the last step back, the rows join the hidden state as they start."""
    outputs, offset, last = [], data.shape[0], batch_sizes[-1]
    state = _rows(initial, 0, last)
    for size in reversed(batch_sizes):
        if size > last:
            state = _joined([state, _rows(initial, last, size)])
        last = size
        state = _cell(module, data[offset - size:offset], state, params)
        outputs.append(state[0])
        offset -= size
    return cat(outputs[::-1], 0), state


def _cell(module, x, state, params):
    if len(state) == 2:  # an LSTM's (h, c)
        return module._step(x, state, params)
    return (module._step(x, state[0], params),)


def packed_forward(module, packed, hx, lstm=False):
    """`module(packed, hx)`: (PackedSequence output, hidden at each sequence's own length) in the caller's order;
    `lstm`: the state is (h, c)."""
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    sizes = [int(b) for b in batch_sizes.numpy()]
    if data.ndim != 2 or data.shape[-1] != module.input_size:
        raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {module.input_size}, got "
                           f"{data.shape[-1]}")
    dirs = 2 if module.bidirectional else 1
    if hx is not None and sorted_indices is not None:  # the caller's order → the packing's
        hx = tuple(h.index_select(1, sorted_indices) for h in hx) if lstm else hx.index_select(1, sorted_indices)
    states = module._initial(hx, sizes[0], data.dtype, True)
    states = [s if lstm else (s,) for s in states]
    finals = []
    layer_in = data
    for layer in range(module.num_layers):
        outs = []
        for d in range(dirs):
            run = _reverse_layer if d else _forward_layer
            out, final = run(module, layer_in, sizes, states[layer * dirs + d], module._layer_params(layer, d))
            outs.append(out)
            finals.append(final)
        layer_in = outs[0] if dirs == 1 else cat(outs, 1)
        if module.dropout and module.training and layer < module.num_layers - 1:
            layer_in = FL.dropout(layer_in, module.dropout, True)
    hidden = tuple(stack([f[k] for f in finals], 0) for k in range(2 if lstm else 1))
    if unsorted_indices is not None:
        hidden = tuple(h.index_select(1, unsorted_indices) for h in hidden)
    return PackedSequence(layer_in, batch_sizes, sorted_indices, unsorted_indices), hidden if lstm else hidden[0]
