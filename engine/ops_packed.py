"""torch.nn.utils.rnn.pack_padded_sequence's op (PackPaddedSequenceBackward0): each step's rows of the sequences
still running, one after another; its gradient goes back to those rows of the padded batch (engine/nn/packed.py)."""
from __future__ import annotations

import numpy as np

from .op_table import Params, defop


def _pack(a, batch_sizes, batch_first):
    x = np.swapaxes(a, 0, 1) if batch_first else a
    return np.concatenate([x[t, :n] for t, n in enumerate(batch_sizes)], 0)


def _pack_vjp(g, ans, a, batch_sizes, batch_first):
    """Each step's rows back in place, zeros below them (pads and a stack: recorded ops under create_graph)."""
    steps, batch = (a.shape[1], a.shape[0]) if batch_first else (a.shape[0], a.shape[1])
    flat = [(0, 0)] * (np.ndim(g) - 1)  # the trailing dims are not padded
    rows, offset = [], 0
    for n in batch_sizes:
        rows.append(np.pad(g[offset:offset + n], [(0, batch - n)] + flat))
        offset += n
    out = np.pad(np.stack(rows, 0), [(0, steps - len(batch_sizes)), (0, 0)] + flat)
    return np.swapaxes(out, 0, 1) if batch_first else out


def _pack_sizes(arrays, params):
    shape = np.shape(arrays[0])
    return ((sum(params[0]),) + tuple(shape[2:]),)


defop("pack_padded_sequence", "PackPaddedSequenceBackward0", "pack", _pack,
      (_pack_vjp, r"\text{unpack}"), saves=False, params=Params("keywords", ("batch_sizes", "batch_first")),
      sizes=_pack_sizes)
