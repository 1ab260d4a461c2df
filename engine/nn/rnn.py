"""RNN / LSTM / GRU and their cells, composed per time step as PyTorch's CPU layers compose them: the input
projection for the whole sequence at once (addmm over a view, unbound per step), then per step addmm + add,
unsafe_chunk into gates, sigmoid/tanh, mul/add; each step runs in its own recorder scope (`rnn.t=3` on the
page). The sequence output is a stack of the steps' hidden states (StackBackward0, as PyTorch's GRU/RNN on
CPU). nn.LSTM is one fused node per layer and direction, as PyTorch's (MkldnnRnnLayerBackward0, ops_rnn.py);
LSTMCell, looped by hand, draws every step."""
from __future__ import annotations

import math
import warnings

from .. import creation
from ..autograd import STATE
from ..devices import resolve as resolve_device
from ..dispatch import apply
from ..dtypes import scalar_type_name
from ..functional import cat, stack
from ..ops import OPS
from . import functional_layers as FL
from . import init
from .modules import Module, Parameter, _optional_parameters
from .packed import PackedSequence, packed_forward


def _linear(x, w, b):
    wt = w.t()
    return apply(OPS["addmm"], (b, x, wt)) if b is not None else apply(OPS["mm"], (x, wt))


def _chunks(t, n):
    return [apply(OPS["unsafe_chunk"], (t,), (i, n, 1)) for i in range(n)]


def rnn_tanh_cell(x, h, w_ih, w_hh, b_ih, b_hh, relu=False, gi=None):
    """gi: the step's input projection when the layer computed it for the whole sequence (PyTorch's layers do)."""
    pre = _linear(h, w_hh, b_hh) + (_linear(x, w_ih, b_ih) if gi is None else gi)
    return pre.relu() if relu else pre.tanh()


def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    gates = _linear(h, w_hh, b_hh) + _linear(x, w_ih, b_ih)
    i, f, g, o = _chunks(gates, 4)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * c + i * g
    return o * cy.tanh(), cy


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh, gi=None):
    ir, iz, inn = _chunks(_linear(x, w_ih, b_ih) if gi is None else gi, 3)
    hr, hz, hn = _chunks(_linear(h, w_hh, b_hh), 3)
    r = (hr + ir).sigmoid()
    z = (hz + iz).sigmoid()
    n = (inn + hn * r).tanh()
    return (h - n) * z + n


class _RNNModule(Module):
    """What the cells and the layers share: uniform(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) initialisation
    and the head of extra_repr."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _repr_head(self):
        return f"{self.input_size}, {self.hidden_size}"


class RNNCellBase(_RNNModule):
    _gates = 1

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__()
        resolve_device(device)  # CPU, or the error a CPU-only torch raises
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = self._gates * hidden_size
        self.weight_ih = Parameter(creation.empty(g, input_size, dtype=dtype))
        self.weight_hh = Parameter(creation.empty(g, hidden_size, dtype=dtype))
        _optional_parameters(self, bias, ("bias_ih", "bias_hh"), g, dtype=dtype)
        self.reset_parameters()

    def extra_repr(self):
        s = self._repr_head()
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, hx):  # noqa: A002
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if hx is not None and hx.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected hidden to be 1D or 2D, got {hx.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}")
        if input.dtype != self.weight_ih.dtype:  # the cell's first product is addmm's: torch's message for it
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {scalar_type_name(input._data.dtype)} "
                               f"and {scalar_type_name(self.weight_ih._data.dtype)}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        return x, batched

    def _zeros(self, x):
        return creation.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)

    def _params(self):
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        self.nonlinearity = nonlinearity
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):  # noqa: A002
        x, batched = self._prepare(input, hx)
        h = self._zeros(x) if hx is None else (hx if batched else hx.unsqueeze(0))
        out = rnn_tanh_cell(x, h, *self._params(), relu=self.nonlinearity == "relu")
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    _gates = 4

    def forward(self, input, hx=None):  # noqa: A002
        x, batched = self._prepare(input, None)
        if hx is None:
            h = c = self._zeros(x)
        else:
            h, c = hx if batched else (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = lstm_cell(x, h, c, *self._params())
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    _gates = 3

    def forward(self, input, hx=None):  # noqa: A002
        x, batched = self._prepare(input, hx)
        h = self._zeros(x) if hx is None else (hx if batched else hx.unsqueeze(0))
        out = gru_cell(x, h, *self._params())
        return out if batched else out.squeeze(0)


class RNNBase(_RNNModule):
    _gates = 1
    mode = "RNN_TANH"

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None, nonlinearity="tanh"):
        super().__init__()
        resolve_device(device)  # CPU, or the error a CPU-only torch raises
        if proj_size:
            raise NotImplementedError("LSTM proj_size is not supported by flowgrad")
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be an integer greater than zero") if isinstance(hidden_size, int) \
                else TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        self.nonlinearity = nonlinearity
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        dirs = 2 if bidirectional else 1
        g = self._gates * hidden_size
        for layer in range(num_layers):
            for d in range(dirs):
                size = input_size if layer == 0 else hidden_size * dirs
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                self.register_parameter("weight_ih" + sfx, Parameter(creation.empty(g, size, dtype=dtype)))
                self.register_parameter("weight_hh" + sfx, Parameter(creation.empty(g, hidden_size, dtype=dtype)))
                if bias:
                    self.register_parameter("bias_ih" + sfx, Parameter(creation.empty(g, dtype=dtype)))
                    self.register_parameter("bias_hh" + sfx, Parameter(creation.empty(g, dtype=dtype)))
        self.reset_parameters()

    def extra_repr(self):
        s = self._repr_head()
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _layer_params(self, layer, d):
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        return (self._parameters["weight_ih" + sfx], self._parameters["weight_hh" + sfx],
                self._parameters.get("bias_ih" + sfx), self._parameters.get("bias_hh" + sfx))

    def _step(self, x, state, params):
        raise NotImplementedError

    def _check(self, input, hx):  # noqa: A002
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")

    def _time_major(self, input, hx):  # noqa: A002
        """The checked input as (steps, batch, features), and whether it came batched."""
        self._check(input, hx)
        batched = input.ndim == 3
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        return x, batched

    def _layer_output(self, outs, layer):
        """One layer's output from its directions' outputs, with dropout between layers."""
        layer_in = outs[0] if len(outs) == 1 else FL_cat(outs)
        if self.dropout and self.training and layer < self.num_layers - 1:
            layer_in = FL.dropout(layer_in, self.dropout, True)
        return layer_in

    def _batch_major(self, out, batched):
        """The last layer's output back in the input's layout."""
        if batched and self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(1)
        return out

    def forward(self, input, hx=None):  # noqa: A002
        if isinstance(input, PackedSequence):
            return packed_forward(self, input, hx)
        x, batched = self._time_major(input, hx)
        _check_input_dtype(x, self)
        steps, batch = x.shape[0], x.shape[1]
        dirs = 2 if self.bidirectional else 1
        states = self._initial(hx, batch, x.dtype, batched)
        finals = []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                params = self._layer_params(layer, d)
                state = states[layer * dirs + d]
                seq = []
                order = range(steps - 1, -1, -1) if d else range(steps)
                gi = _sequence_projection(layer_in, params[0], params[2])
                rec = STATE.recorder
                where = "" if self.num_layers == 1 and dirs == 1 else f"l{layer}{'_reverse' if d else ''}."
                for t in order:
                    if rec is not None:  # each step its own scope on the page: rnn → t=0, t=1, …
                        rec.enter_step(f"{where}t={t}")
                    try:
                        state = self._step(None, state, params, apply(OPS["unbind_step"], (gi,), (t,)))
                    finally:
                        if rec is not None:
                            rec.exit_step()
                    seq.append(self._output(state))
                if d:
                    seq.reverse()
                outs.append(stack(seq, 0))
                finals.append(state)
            layer_in = self._layer_output(outs, layer)
        out = self._batch_major(layer_in, batched)
        return out, self._final(finals, batched)

    def _output(self, state):
        return state

    def _initial(self, hx, batch, dtype, batched):
        n = self.num_layers * (2 if self.bidirectional else 1)
        if hx is None:
            return [creation.zeros(batch, self.hidden_size, dtype=dtype) for _ in range(n)]
        h = hx if batched else hx.unsqueeze(1)
        expected = (n, batch, self.hidden_size)
        if tuple(h.shape) != expected:
            raise RuntimeError(f"Expected hidden size {expected}, got {list(h.shape)}")
        return [h[i] for i in range(n)]

    def _final(self, finals, batched):
        h = stack(finals, 0)
        return h if batched else h.squeeze(1)


def _sequence_projection(x, w_ih, b_ih):
    """x W_ih^T + b_ih for every step at once, as PyTorch's layers precompute it: addmm over the (T*N, I) view,
    viewed back to (T, N, G) (without a bias: a matmul)."""
    steps, batch = x.shape[0], x.shape[1]
    if b_ih is None:
        return x.matmul(w_ih.t())
    flat = apply(OPS["addmm"], (b_ih, x.reshape(steps * batch, x.shape[2]), w_ih.t()))
    return flat.view(steps, batch, flat.shape[1])


def FL_cat(outs):  # noqa: N802 — concatenation of the two directions

    return cat(outs, 2)


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):
        if "nonlinearity" in kwargs and kwargs["nonlinearity"] not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{kwargs['nonlinearity']}'. Select from 'tanh' or 'relu'.")
        super().__init__(*args, **kwargs)

    def _step(self, x, h, params, gi=None):
        return rnn_tanh_cell(x, h, *params, relu=self.nonlinearity == "relu", gi=gi)


class GRU(RNNBase):
    _gates = 3

    def _step(self, x, h, params, gi=None):
        return gru_cell(x, h, *params, gi=gi)


class LSTM(RNNBase):
    """PyTorch's CPU LSTM runs each layer (and direction) as one fused kernel, so its output's grad_fn is
    MkldnnRnnLayerBackward0; here too: one op per layer and direction, backward through time inside it.
    (LSTMCell, looped by hand, draws every step.)"""

    _gates = 4

    def forward(self, input, hx=None):  # noqa: A002
        if isinstance(input, PackedSequence):  # per step, as PyTorch's packed LSTM (no fused layer node)
            return packed_forward(self, input, hx, lstm=True)
        x, batched = self._time_major(input, hx)
        _check_input_dtype(x, self)
        dirs = 2 if self.bidirectional else 1
        states = self._initial(hx, x.shape[1], x.dtype, batched)
        hn, cn = [], []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                h0, c0 = states[layer * dirs + d]
                inputs = (layer_in,) + self._layer_params(layer, d) + (h0, c0)
                out = apply(OPS["lstm_layer"], inputs, (bool(d),))
                outs.append(out)
                hn.append(out[0] if d else out[-1])
                cn.append(apply(OPS["lstm_cell_state"], inputs, (bool(d),)))
            layer_in = self._layer_output(outs, layer)
        out = self._batch_major(layer_in, batched)
        h, c = stack(hn, 0), stack(cn, 0)
        return out, ((h, c) if batched else (h.squeeze(1), c.squeeze(1)))

    def _step(self, x, state, params):
        return lstm_cell(x, state[0], state[1], *params)

    def _output(self, state):
        return state[0]

    def _initial(self, hx, batch, dtype, batched):
        n = self.num_layers * (2 if self.bidirectional else 1)
        if hx is None:
            z = [creation.zeros(batch, self.hidden_size, dtype=dtype) for _ in range(n)]
            return list(zip(z, z))
        h, c = hx if batched else (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        expected = (n, batch, self.hidden_size)
        for t in (h, c):
            if tuple(t.shape) != expected:
                raise RuntimeError(f"Expected hidden size {expected}, got {list(t.shape)}")
        return [(h[i], c[i]) for i in range(n)]

    def _final(self, finals, batched):
        h = stack([s[0] for s in finals], 0)
        c = stack([s[1] for s in finals], 0)
        return (h, c) if batched else (h.squeeze(1), c.squeeze(1))


def _check_input_dtype(x, rnn):
    """PyTorch's check before an RNN / LSTM / GRU runs: it never casts the input to the weights' dtype."""
    weight = next(iter(rnn._parameters.values()), None)
    if weight is not None and x.dtype != weight.dtype:
        raise ValueError(f"RNN input dtype ({x.dtype}) does not match weight dtype ({weight.dtype}). Convert input: "
                         f"input.to({weight.dtype}), or convert model: model.to({x.dtype})")
