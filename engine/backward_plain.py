"""The backward loop of a plain `loss.backward()`: one root, no recorder, no capture, no create_graph, and no
node with several outputs (a custom Function's).

run_backward handles every feature in one loop; a training step needs none of them, and their per-node and
per-edge checks (capture, recorder, graphed VJPs, fan-in parts, multi-output gradients) cost a few µs per step.
Same order and results as run_backward.
"""
from __future__ import annotations

import heapq

from .autograd import STATE, AccumulateGrad, _accumulate, _retain, run_tensor_hooks


def run_plain_backward(start, g0, retain_graph: bool) -> bool:
    """run_backward(root, g0, retain_graph) for a root whose grad_fn is `start`; False (nothing run) where the
    graph holds a node with several outputs, which the general loop handles."""
    deps = {}
    stack = [start]
    while stack:
        for nxt, _ in stack.pop()._edges:
            if nxt is not None:
                if nxt in deps:
                    deps[nxt] += 1
                else:
                    if nxt._multi:
                        return False
                    deps[nxt] = 1
                    stack.append(nxt)
    grads_in = {start: g0}
    ready = [(-start._seq, 0, start)]
    order = 0
    pop, push = heapq.heappop, heapq.heappush
    prev_mode = STATE.grad_enabled
    STATE.grad_enabled = False
    try:
        while ready:
            node = pop(ready)[2]
            g = grads_in.pop(node, None)
            if g is None:
                continue
            if node._hooks is not None:
                g = run_tensor_hooks(node, g)
            if type(node) is AccumulateGrad:
                _accumulate(node.variable, g, None)
                continue
            if node._retain is not None:
                t = node._retain()
                if t is not None:
                    _retain(t, g, None)
            grads = node.apply(g)
            if not retain_graph:
                node.release()
            for (nxt, _), gi in zip(node._edges, grads):
                if nxt is None:
                    continue
                if gi is not None:
                    if nxt in grads_in:
                        grads_in[nxt] = grads_in[nxt] + gi
                    else:
                        grads_in[nxt] = gi
                n = deps[nxt] - 1
                deps[nxt] = n
                if n == 0:
                    if type(nxt) is AccumulateGrad:
                        g = grads_in.pop(nxt, None)
                        if g is not None:
                            _accumulate(nxt.variable, g, None)
                    else:
                        order += 1
                        push(ready, (-nxt._seq, order, nxt))
    finally:
        STATE.grad_enabled = prev_mode
    return True
