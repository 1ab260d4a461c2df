"""Op table rows: nn.LSTM's layer as PyTorch's CPU kernel runs it, one node for the whole sequence."""
from __future__ import annotations

import weakref

import numpy as np

from . import vml
from .graphed import Graphed, vjps_by_decomposition
from .op_table import Params, defop
from .ops_nn import sigmoid
from .ops_shape import _scatter


# ---------------------------------------------------------------- recurrent cells
def _chunk_key(shape, i, chunks, dim):
    size = -(-shape[dim] // chunks)
    return (slice(None),) * dim + (slice(i * size, (i + 1) * size),)


def chunk_forward(a, i, chunks, dim):
    return a[_chunk_key(a.shape, i, chunks, dim)]


def chunk_vjp(g, ans, a, i, chunks, dim):
    if type(g) is Graphed:

        return _scatter(a.shape, g.dtype, _chunk_key(a.shape, i, chunks, dim), g)
    z = np.zeros(a.shape, dtype=g.dtype)
    z[_chunk_key(a.shape, i, chunks, dim)] = g
    return z


def _sig(a):
    return 0.5 * (np.tanh(0.5 * a) + 1)  # overflow-free logistic


def _gate_order(hsz):
    """PyTorch's gate rows are (i, f, g, o); the loops use (o, i, f, g): the three sigmoid gates side by side
    for the forward, the three that c's gradient feeds side by side for the backward."""
    return np.r_[3 * hsz:4 * hsz, 0:3 * hsz]


def _lstm_run(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
    """One LSTM layer over a whole sequence (PyTorch's fused CPU layer): the step states backward needs.
    sigmoid(a) = (tanh(a/2) + 1)/2, so the sigmoid gates' pre-activations are halved up front (in the
    weights) and one tanh per step serves all four gates. The states are kept transposed, features by batch
    ((4H, N) gates, (H, N) h and c): each gate is then a contiguous block, so every elementwise call of the
    step runs over contiguous memory (~25 % faster than (N, 4H) rows). Each step's gates are one matrix
    product [W_hh | W_ih | b_ih + b_hh] @ [h; x_t; 1]: the input projection and the biases ride along in the
    recurrent product (one call a step, no separate projection of the sequence)."""
    xs = x[::-1] if reverse else x
    steps, batch, isz = xs.shape
    hsz = w_hh.shape[1]
    dt = np.result_type(x.dtype, w_ih.dtype)
    order = _gate_order(hsz)
    bias = b_ih is not None
    k = hsz + isz + bias
    weights = np.empty((4 * hsz, k), dtype=dt)
    weights[:, :hsz] = w_hh[order]
    weights[:, hsz:hsz + isz] = w_ih[order]
    if bias:
        weights[:, -1] = (b_ih + b_hh)[order]
    weights[:3 * hsz] *= 0.5
    # per step [h_t; x_t; 1], features by batch: h_{t+1} is written straight into the next step's operand
    operands = np.empty((steps + 1, k, batch), dtype=dt)
    operands[:steps, hsz:hsz + isz] = xs.transpose(0, 2, 1)
    if bias:
        operands[:, -1] = 1
    hs = operands[:, :hsz]
    # Each step's block holds (o, i, f, g) after the activations, then the step's incoming cell state: i, f
    # and g, c_prev are then side by side, so i*g and f*c_prev are one multiply.
    block = np.empty((steps + 1, 5 * hsz, batch), dtype=dt)
    gates, cs = block[:steps, :4 * hsz], block[:, 4 * hsz:]
    tcs = np.empty((steps, hsz, batch), dtype=dt)
    prods = np.empty((2 * hsz, batch), dtype=dt)
    hs[0], cs[0] = h0.T, c0.T
    sig_rows = 3 * hsz
    # every view the loop touches, made once: slicing in the loop costs as much as a small ufunc call
    mul, add, tanh, matmul = np.multiply, np.add, np.tanh, np.matmul
    p_i, p_f = prods[:hsz], prods[hsz:]
    steps_views = zip(block[:steps, :4 * hsz], block[:steps, :sig_rows], block[:steps, hsz:sig_rows],
                      block[:steps, sig_rows:], block[:steps, :hsz], operands, hs[1:], cs[1:], tcs)
    one, half = dt.type(1), dt.type(0.5)
    for a, sig, ifx, gcx, o, z, h_next, c, tc in steps_views:  # out= passed by position: no keyword parsing
        matmul(weights, z, a)
        tanh(a, a)
        add(sig, one, sig)
        mul(sig, half, sig)
        mul(ifx, gcx, prods)  # i*g, f*c_prev
        add(p_i, p_f, c)
        tanh(c, tc)
        mul(o, tc, h_next)
    return xs, gates, cs, hs, tcs, operands


_LSTM_RUNS: dict = {}  # id(output array) -> (weakref to it, its run): backward reuses the forward's states


_LSTM_LAST = [None]  # (input arrays, run) of the latest layer forward, for its cell-state twin


def _remember(out, run):
    key = id(out)
    _LSTM_RUNS[key] = (weakref.ref(out, lambda _: _LSTM_RUNS.pop(key, None)), run)
    return out


def _recall(ans, args):
    entry = _LSTM_RUNS.get(id(ans))
    if entry is not None and entry[0]() is ans:
        return entry[1]
    return _lstm_run(*args)


def lstm_layer_forward(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
    args = (x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse)
    run = _lstm_run(*args)
    _LSTM_LAST[0] = (args, run)
    hs = run[3][1:].transpose(0, 2, 1)
    return _remember(np.ascontiguousarray(hs[::-1] if reverse else hs), run)


def lstm_cell_state_forward(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
    args = (x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse)
    last, _LSTM_LAST[0] = _LSTM_LAST[0], None
    same = last is not None and all(a is b for a, b in zip(last[0], args))
    run = last[1] if same else _lstm_run(*args)
    return _remember(np.ascontiguousarray(run[2][-1].T), run)


_LSTM_GRADS = [None]  # (g, ans, pass) of the latest backward: one node's seven VJPs share one pass through time


def _lstm_backward(g, ans, x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, last_c):
    """The pass through time: every step's gate gradients in PyTorch's (i, f, g, o) order, and d h0, d c0.
    The VJPs below take their input's gradient from it, so nobody pays for a gradient no input wants.
    Transposed like the forward: (T, 4H, N) gates, (H, N) states."""
    memo = _LSTM_GRADS[0]
    if memo is not None and memo[0] is g and memo[1] is ans:  # ans: this node's own output, so never another's
        return memo[2]
    xs, gates, cs, hs, tcs, operands = _recall(ans, (x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse))
    steps, hsz, batch = tcs.shape
    o, i, f, gg = (gates[:, k * hsz:(k + 1) * hsz] for k in range(4))
    # Everything but the recurrence, for all steps at once, in place: d(c_t)/d(h_t) and each gate's local
    # derivative, laid out as PyTorch's gates (i, f, g, o) so the step's gradients need no reordering.
    local = np.empty_like(gates)
    li, lf, lg, lo = (local[:, k * hsz:(k + 1) * hsz] for k in range(4))
    for out, s, other in ((lo, o, tcs), (li, i, gg), (lf, f, cs[:-1])):
        np.subtract(1, s, out=out)
        out *= s
        out *= other
    np.multiply(gg, gg, out=lg)
    np.subtract(1, lg, out=lg)
    lg *= i
    dcdh = tcs * tcs
    np.subtract(1, dcdh, out=dcdh)
    dcdh *= o
    if last_c:
        d_out, dc = None, np.array(g.T, dtype=gates.dtype)
    else:
        d_out, dc = np.ascontiguousarray((g[::-1] if reverse else g).transpose(0, 2, 1)), \
            np.zeros((hsz, batch), gates.dtype)
    dh = np.zeros((hsz, batch), gates.dtype)
    dgates = np.empty_like(gates)
    tmp = np.empty((hsz, batch), gates.dtype)
    whh_t = np.ascontiguousarray(w_hh.T)
    ifg = 3 * hsz
    mul, matmul = np.multiply, np.matmul
    local3 = local[:, :ifg].reshape(steps, 3, hsz, batch)  # views made once (see the forward)
    dgates3 = dgates[:, :ifg].reshape(steps, 3, hsz, batch)
    add = np.add
    # out= passed by position, and the steps' views made by iterating over arrays, as in the forward
    per_step = zip(dcdh[::-1], dgates[::-1], local[::-1, ifg:], dgates[::-1, ifg:], local3[::-1], dgates3[::-1],
                   f[::-1], d_out[::-1] if d_out is not None else [None] * steps)
    for dcdh_t, d, local_o, d_o, local_ifg, d_ifg, f_t, d_out_t in per_step:
        if d_out_t is not None:
            add(dh, d_out_t, dh)
        mul(dh, dcdh_t, tmp)
        add(dc, tmp, dc)
        mul(local_o, dh, d_o)
        mul(local_ifg, dc, d_ifg)
        mul(dc, f_t, dc)
        matmul(whh_t, d, dh)
    result = {"dgates": dgates, "xs": xs, "operands": operands, 5: dh.T, 6: dc.T}
    _LSTM_GRADS[0] = (g, ans, result)
    return result


def _lstm_grad(k, bw, w_ih, reverse):
    """Input k's gradient from the pass: x, w_ih, w_hh, b_ih, b_hh (the same sum), h0, c0."""
    if k in bw:
        return bw[k]
    dgates = bw["dgates"]  # T, 4H, N
    if "flat" not in bw:
        bw["flat"] = np.ascontiguousarray(dgates.transpose(1, 0, 2)).reshape(dgates.shape[1], -1)  # 4H, T*N
    if k == 0:
        steps, _, batch = dgates.shape
        dx = (bw["flat"].T @ w_ih).reshape(steps, batch, -1)  # one matrix product for every step
        grad = dx[::-1] if reverse else dx
    else:
        # w_hh, w_ih and the biases from one product: the forward's per-step operands [h; x_t; 1] against the
        # gate gradients, (4H, T*N) @ (T*N, H + I + 1); each part copied out C-ordered like its weight
        operands = bw["operands"][:-1]  # T, H + I + 1, N
        hsz, isz = dgates.shape[1] // 4, bw["xs"].shape[2]
        whole = bw["flat"] @ operands.transpose(0, 2, 1).reshape(-1, operands.shape[1])
        bw[2], bw[1] = np.ascontiguousarray(whole[:, :hsz]), np.ascontiguousarray(whole[:, hsz:hsz + isz])
        if whole.shape[1] > hsz + isz:
            bw[3] = bw[4] = np.ascontiguousarray(whole[:, -1])
        grad = bw[k]
    bw[k] = grad
    return grad


def _lstm_composed(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, last_c):
    """The layer as PyTorch's cell equations in table ops (i, f, g, o gates): what create_graph differentiates."""
    steps, hsz = x.shape[0], w_hh.shape[1]
    h, c = h0, c0
    hs = [None] * steps
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        gates = x[t] @ w_ih.T + h @ w_hh.T
        if b_ih is not None:
            gates = gates + b_ih + b_hh
        i, f, o = (sigmoid(gates[:, k * hsz:(k + 1) * hsz]) for k in (0, 1, 3))
        c = f * c + i * vml.tanh(gates[:, 2 * hsz:3 * hsz])
        h = o * vml.tanh(c)
        hs[t] = h
    return c if last_c else np.stack(hs, axis=0)


_LSTM_GRAPHED = [None]  # (g, ans, grads): under create_graph too, one node's seven VJPs share one pass


def _lstm_graphed_backward(g, ans, x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, last_c):
    memo = _LSTM_GRAPHED[0]
    if memo is not None and memo[0] is g and memo[1] is ans:
        return memo[2]

    # NOTE: the fused kernel writes its states in place (out=), which no graph can record: this op alone
    # differentiates its composition instead of running its rule on tensors.
    grads = vjps_by_decomposition(lambda *a: _lstm_composed(*a, reverse, last_c), g, (x, w_ih, w_hh, b_ih, b_hh, h0, c0))
    _LSTM_GRAPHED[0] = (g, ans, grads)
    return grads


def lstm_vjp(k, last_c=False):
    def vjp(g, ans, x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
        if type(g) is Graphed:
            return _lstm_graphed_backward(g, ans, x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, last_c=last_c)[k]
        return _lstm_grad(k, _lstm_backward(g, ans, x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, last_c), w_ih,
                          reverse)

    return vjp


# nn.LSTM's layer as PyTorch's CPU kernel runs it: one node for the whole sequence (inputs x, w_ih, w_hh, b_ih,
# b_hh, h0, c0; param reverse), backward through time in one pass. The layer's last cell state is a second op
# of the same node name (an op has one output).
_LSTM_LATEX = (r"\partial h/\partial x", r"\partial h/\partial W_{ih}", r"\partial h/\partial W_{hh}", "1", "1",
               r"\partial h/\partial h_0", r"\partial h/\partial c_0")


def _lstm_sizes(arrays, params):
    """The layer's step operands [h; x; 1] and gate blocks (_lstm_run), each per step and batch."""
    steps, batch, isz = np.shape(arrays[0])
    hsz = np.shape(arrays[2])[1]
    return ((steps + 1, 5 * hsz, batch), (steps + 1, hsz + isz + 1, batch))


defop("lstm_layer", "MkldnnRnnLayerBackward0", "lstm", lstm_layer_forward,
      *[(lstm_vjp(k), _LSTM_LATEX[k]) for k in range(7)], needs=("abc",) * 7, params=Params("args", ("reverse",)), sizes=_lstm_sizes)


defop("lstm_cell_state", "MkldnnRnnLayerBackward0", "lstm c", lstm_cell_state_forward,
      *[(lstm_vjp(k, last_c=True), _LSTM_LATEX[k]) for k in range(7)], needs=("abc",) * 7,
      params=Params("args", ("reverse",)), sizes=_lstm_sizes)


# One chunk of PyTorch's unsafe_chunk (the recurrent cells' gates): PyTorch draws one UnsafeSplit node with
# several outputs; an op here has one output, so each chunk is its own node of that name.
defop("unsafe_chunk", "UnsafeSplitBackward0", "chunk", chunk_forward, (chunk_vjp, "1"), saves=False,
      params=Params("args", ("index", "chunks", "dim")))
