"""The backward pass: one loop for `loss.backward()`, `autograd.grad`, `backward(inputs=...)` and create_graph.

What differs between them (where gradients go, whether VJPs run as recorded ops, what the recorder sees) is a
policy picked once before the loop (`PLAIN`, `GRAPHED`): per node, a training step's backward tests a few local
flags, never the recorder, the capture table or a node's output count.
"""
from __future__ import annotations

import heapq

import numpy as np

from . import registry
from .formatting import format_size as size_text
from .grad_mode import FREED_MESSAGE, STATE
from .graphed import Graphed, as_graphed, op
from .nodes import (
    LEAF_HOOKS,
    AccumulateGrad,
    Node,
    _accumulate,
    _retain,
    accumulator,
    leaf_pre_hooks,
    run_node_post_hooks,
    run_tensor_hooks,
)
from .op_table import unbroadcast


# ---------------------------------------------------------------- create_graph: the VJPs as recorded ops
def _saved_input(arr, edge_fn):
    """A saved input as the rules see it: Graphed, wired to where its gradient goes (its producer, or a leaf's
    AccumulateGrad), when a gradient flows into it; else the plain saved array."""
    if edge_fn is None or type(arr) is not np.ndarray and not isinstance(arr, np.generic):
        return arr
    t = registry.Tensor._wrap(arr, requires_grad=True)
    t._grad_fn = edge_fn  # the value the op read (not the tensor's current data), with the op's edge
    return Graphed(t)


def apply_node(node, g):
    """Node.apply with the rules run on Graphed values: each input's gradient is a Tensor with its own graph."""
    if not isinstance(node, Node):  # a custom autograd.Function's node: its backward is the program's code
        return node.apply_graphed(g)
    op = node.op
    if node._freed and op.saves:
        raise RuntimeError(FREED_MESSAGE)
    if STATE.last_write > node._seq and op.needs:
        node._check_versions()
    ans, *arrays = node._saved
    Tensor = registry.Tensor
    out_t = Tensor._wrap(ans, requires_grad=True)
    out_t._grad_fn = node  # the op's saved output, wired to the op itself (as PyTorch saves outputs)
    gg, ans_g = Graphed(g), Graphed(out_t)  # one of each per node: a layer's VJPs memoise on them (the LSTM)
    rec = STATE.recorder
    if op.variadic:
        ins = arrays
        vjp = op.vjps[0]
        calls = [(fn, lambda i=i: vjp(gg, ans_g, i, arrays, *node._params)) for i, (fn, _) in enumerate(node._edges)]
    else:
        ins = [_saved_input(a, fn) for a, (fn, _) in zip(arrays, node._edges)]
        if rec is not None:
            rec.stamp_saved(node, out_t, [x.t if type(x) is Graphed else None for x in ins])
        calls = [(fn if vjp is not None else None, lambda vjp=vjp: vjp(gg, ans_g, *ins, *node._params))
                 for (fn, _), vjp in zip(node._edges, op.vjps)]
    out = []
    for (fn, call), shape in zip(calls, node._shapes):
        if fn is None:
            out.append(None)
            continue
        gi = unbroadcast(as_graphed(call()), shape)
        out.append(gi.t)
    return out


def _accumulate_graphed(t, g, rec):
    """AccumulateGrad under create_graph, as PyTorch's: `.grad` is a copy of the gradient (CopyBackwards), a
    second backward adds out of place, so `.grad` stays differentiable."""
    before = t._grad._data if t._grad is not None else None
    if g._data.dtype != t._data.dtype:
        g = Graphed(g).astype(t._data.dtype).t
    t._grad = op("grad_copy", (g,)).t if t._grad is None else t._grad + g
    if rec is not None:
        rec.on_accumulate(t, g._data, before)


def _retain_graphed(t, g, rec):
    t._grad = g
    if rec is not None:
        rec.on_retain_grad(t)


class _Policy:
    """What the loop does at a node, a leaf and a retained tensor: chosen once per backward, before the loop."""

    __slots__ = ("apply", "accumulate", "retain", "record")

    def __init__(self, apply, accumulate, retain, record):
        self.apply = apply  # node, g -> input gradients; None: the node's own apply (numpy VJPs)
        self.accumulate = accumulate  # leaf tensor, g, recorder
        self.retain = retain  # tensor that called retain_grad(), g, recorder
        self.record = record  # recorder, node, g, the parts a fan-in gradient is the sum of, input gradients


def _record_step(rec, node, g, parts, grads):
    rec.on_backward_step(node, g, parts, grads)


def _record_graphed_step(rec, node, g, parts, grads):
    g = [None if x is None else x._data for x in g] if type(g) is list else g._data  # a Function's: one per output
    rec.on_backward_step(node, g, None if parts is None else [p._data for p in parts],
                         [None if x is None else x._data for x in grads])


PLAIN = _Policy(None, _accumulate, _retain, _record_step)  # a training step's backward: numpy arrays throughout
# create_graph: gradients are Tensors and every VJP runs as recorded ops (engine/graphed.py)
GRAPHED = _Policy(apply_node, _accumulate_graphed, _retain_graphed, _record_graphed_step)


def run_backward(root, grad, retain_graph: bool, capture=None, more_roots=(), create_graph=False):
    """Run the graph below `root` in PyTorch's order: among ready nodes the newest runs first, and an
    AccumulateGrad runs the moment its last gradient arrives. With `capture` (node -> None), the
    gradients reaching those nodes are returned in it instead of accumulated into `.grad`.
    `more_roots`: further (tensor, gradient) pairs run in the same pass (autograd.grad of several outputs).
    With `create_graph`, gradients are Tensors and every VJP runs as recorded ops (engine/graphed.py).
    The features a pass uses are settled before the loop: a plain `loss.backward()` tests a few locals per node."""
    policy = GRAPHED if create_graph else PLAIN
    apply_node, accumulate, retain = policy.apply, policy.accumulate, policy.retain
    rec = STATE.recorder
    record = policy.record if rec is not None else None
    # Count each node's incoming edges so it runs only once all its gradients have arrived.
    deps = {}
    grads_in = {}
    if more_roots:  # autograd.grad of several outputs: a root another root reaches is walked once, from the start
        starts = []
        for t, g0 in ((root, grad), *more_roots):
            start = t._grad_fn if t._grad_fn is not None else accumulator(t)
            if start not in grads_in:
                starts.append(start)
            _add_root_grad(grads_in, start, t, g0)
        multi = any(s._multi for s in starts)
    else:
        start = root._grad_fn if root._grad_fn is not None else accumulator(root)
        starts = [start]
        multi = start._multi  # a custom Function with several outputs: its gradients travel one per output
        if multi:
            _add_root_grad(grads_in, start, root, grad)
        else:
            grads_in[start] = grad
    stack = list(starts)
    while stack:
        for nxt, _ in stack.pop()._edges:
            if nxt is not None:
                if nxt in deps:
                    deps[nxt] += 1
                else:
                    deps[nxt] = 1
                    if nxt._multi:
                        multi = True
                    if not more_roots or nxt not in grads_in:
                        stack.append(nxt)
    parts_in = {} if rec is not None else None  # the separate gradients of fan-in nodes, to show their sum
    # a root another root reaches waits for that gradient too (autograd.grad([y.sum(), y], ...))
    if more_roots:
        ready = [(-s._seq, 0, s) for s in starts if s not in deps]
        heapq.heapify(ready)
    else:
        ready = [(-start._seq, 0, start)]  # one root: nothing reaches it
    pop, push = heapq.heappop, heapq.heappush
    watched = apply_node is not None or record is not None
    anomaly = STATE.anomaly
    order = 0
    prev_mode = STATE.grad_enabled
    STATE.grad_enabled = create_graph  # backward builds a graph only for higher-order gradients
    try:
        while ready:
            node = pop(ready)[2]
            g = grads_in.pop(node, None)
            if g is None:
                continue
            if node._hooks is not None:  # the output tensor's register_hook hooks see (and may replace) g first
                g = run_tensor_hooks(node, g)
            if capture is not None and node in capture:
                if type(node) is AccumulateGrad:
                    capture[node] = leaf_pre_hooks(node.variable, g) if LEAF_HOOKS else g
                    continue
                capture[node] = g
            if type(node) is AccumulateGrad:
                if capture is None:
                    accumulate(node.variable, g, rec)
                continue
            if node._retain is not None:
                t = node._retain()
                if t is not None:
                    retain(t, g, rec)
            if watched:  # create_graph's recorded VJPs, or the recorder
                grads = node.apply(g) if apply_node is None else apply_node(node, g)
                if record is not None:
                    record(rec, node, g, parts_in.pop(node, None), grads)
            else:
                grads = node.apply(g)
            if node._post_hooks is not None:  # Module.register_backward_hook: sees (and may replace) them
                grads = run_node_post_hooks(node, grads, g)
            if anomaly:
                _check_nan(node, grads)
            if not retain_graph:
                node.release()
            for (nxt, slot), gi in zip(node._edges, grads):
                if nxt is None:
                    continue
                if gi is not None:
                    if multi and nxt._multi:
                        _add_output_grad(grads_in, nxt, slot, gi)
                    elif nxt in grads_in:
                        if parts_in is not None:  # a second gradient arrives: keep the parts the sum is made of
                            parts = parts_in.get(nxt)
                            if parts is None:
                                parts_in[nxt] = [grads_in[nxt], gi]
                            else:
                                parts.append(gi)
                        grads_in[nxt] = grads_in[nxt] + gi
                    else:
                        grads_in[nxt] = gi
                n = deps[nxt] - 1
                deps[nxt] = n
                if n == 0:
                    if type(nxt) is AccumulateGrad and capture is None:
                        g = grads_in.pop(nxt, None)
                        if g is not None:
                            accumulate(nxt.variable, g, rec)
                    else:
                        order += 1
                        push(ready, (-nxt._seq, order, nxt))
    finally:
        STATE.grad_enabled = prev_mode


def _check_nan(node, grads):
    """Anomaly mode: a node whose gradients hold a nan is named, as torch names it."""
    for i, gi in enumerate(grads):
        data = getattr(gi, "_data", gi)
        if data is not None and np.isnan(np.asarray(data)).any():
            raise RuntimeError(f"Function '{type(node).__name__}' returned nan values in its {i}th output.")


def _add_root_grad(grads_in, node, t, g):
    if node._multi:
        _add_output_grad(grads_in, node, node.output_nr(t), g)
    elif node in grads_in:
        grads_in[node] = grads_in[node] + g
    else:
        grads_in[node] = g


def _add_output_grad(grads_in, node, slot, g):
    gs = grads_in.get(node)
    if gs is None:
        gs = grads_in[node] = [None] * node.n_outputs
    gs[slot] = g if gs[slot] is None else gs[slot] + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         is_grads_batched=False, materialize_grads=False):
    """torch.autograd.grad: gradients of `outputs` with respect to `inputs`, leaving `.grad` untouched."""
    Tensor = registry.Tensor
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by flowgrad")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    allow_unused = bool(allow_unused) or bool(materialize_grads)
    single = isinstance(inputs, Tensor)
    inputs = [inputs] if single else list(inputs)
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    if grad_outputs is None:
        gos = [None] * len(outs)
    else:
        gos = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
    if len(gos) != len(outs):
        raise RuntimeError(f"grad requires one grad_output per output, but got {len(gos)} grad_outputs and "
                           f"{len(outs)} outputs")
    roots = []
    for i, (out, go) in enumerate(zip(outs, gos)):
        if not isinstance(out, Tensor):
            raise TypeError(f"grad(): outputs must be Tensors, but got {type(out).__name__} at index {i}")
        g0 = root_gradient(out, go, i)
        if create_graph:  # the backward pass is itself a graph: its gradients are Tensors
            g0 = go if isinstance(go, Tensor) else Tensor._wrap(np.asarray(g0))
        roots.append((out, g0))
    nodes = []
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, but got {type(t).__name__} at index {i}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        nodes.append(t._grad_fn if t._grad_fn is not None else accumulator(t))
    capture = {n: None for n in nodes}
    retain = create_graph if retain_graph is None else retain_graph  # PyTorch's default
    run_backward(roots[0][0], roots[0][1], bool(retain), capture=capture, more_roots=roots[1:],
                 create_graph=bool(create_graph))
    result = []
    for i, (t, n) in enumerate(zip(inputs, nodes)):
        g = capture[n]
        if g is not None and n._multi:
            g = g[n.output_nr(t)]
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            result.append(Tensor._wrap(np.zeros_like(t._data)) if materialize_grads else None)
        elif isinstance(g, Tensor):  # create_graph: the gradient is a graph's output
            result.append(g)
        else:
            result.append(Tensor._wrap(np.array(g, dtype=t._data.dtype)))
    return tuple(result)


def root_gradient(out, gradient, index):
    """The gradient a backward starts from: ones for a one-element output, else the given one, checked as torch does."""
    Tensor = registry.Tensor
    if not out._requires_grad:
        raise RuntimeError(f"element {index} of tensors does not require grad and does not have a grad_fn")
    data = out._data
    if gradient is None:
        if data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        return data.dtype.type(1) if data.ndim == 0 else np.ones(data.shape, dtype=data.dtype)
    g = gradient._data if isinstance(gradient, Tensor) else np.asarray(gradient, dtype=data.dtype)
    if g.shape != data.shape:
        raise RuntimeError(f"Mismatch in shape: grad_output[{index}] has a shape of {size_text(g.shape)} and "
                           f"output[{index}] has a shape of {size_text(data.shape)}.")
    return g


def backward_into(root, g, retain, inputs, create_graph=False):
    """`t.backward(inputs=[...])`: gradients go into those tensors' .grad only (a non-leaf's too, as in torch)."""
    Tensor = registry.Tensor
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    nodes = []
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"backward(): inputs must be Tensors, but got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        nodes.append(t._grad_fn if t._grad_fn is not None else accumulator(t))
    capture = {n: None for n in nodes}
    run_backward(root, g, retain, capture=capture, create_graph=create_graph)
    rec = STATE.recorder
    for t, n in zip(inputs, nodes):
        got = capture[n]
        if got is not None and n._multi:
            got = got[n.output_nr(t)]
        if got is None:
            continue
        if create_graph:  # .grad stays a graph (CopyBackwards, then out-of-place sums), as torch's
            _accumulate_graphed(t, got, rec)
        else:
            _accumulate(t, got, rec, pre_hooks=False)  # the capture already ran the leaf's hooks


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """torch.autograd.backward(t) is t.backward()."""
    t = tensors if not isinstance(tensors, (list, tuple)) else tensors[0]
    g = grad_tensors if not isinstance(grad_tensors, (list, tuple)) else grad_tensors[0]
    t.backward(g, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)


registry.grad = grad  # Graphed takes a composed op's VJPs with it (vjps_by_decomposition)
