"""The recorder: captures the graph, every forward value and every backward step as plain dicts.

Active only inside `with Recorder() as rec:`; when none is active the engine pays one `is None`
check per op. Events are JSON-ready (see docs/trace.md): non-finite numbers become "nan"/"inf"/"-inf",
and tensors above `value_limit` elements are kept as summaries rather than copied whole.
"""
from __future__ import annotations

import math

import numpy as np

from .autograd import STATE, AccumulateGrad
from .ops import OPS

_BROADCASTING = {"add", "sub", "mul", "div", "pow", "where", "maximum", "minimum", "addmm"}
_NONFINITE = {math.inf: "inf", -math.inf: "-inf"}


def _number(x):
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if x != x else _NONFINITE[x]
    return x


def _clean(values):
    if isinstance(values, list):
        return [_clean(v) for v in values]
    return _number(values)


def encode_value(arr, limit: int = 256):
    """A JSON-ready value: number, nested list, or a summary for arrays above `limit` elements."""
    a = np.asarray(arr)
    if a.dtype.kind == "b":
        a = a.astype(np.int64)
    if a.size <= limit:
        out = a.tolist()
        if a.dtype.kind == "f" and a.size and not np.isfinite(a).all():
            out = _clean(out)
        return out
    flat = a.reshape(-1)
    finite = flat[np.isfinite(flat)] if a.dtype.kind == "f" else flat
    stats = (finite.min(), finite.max(), finite.mean()) if finite.size else (math.nan,) * 3
    return {"summary": True, "shape": list(a.shape), "min": _number(float(stats[0])), "max": _number(float(stats[1])),
            "mean": _number(float(stats[2])), "sample": _clean(flat[:16].tolist())}


class Recorder:
    def __init__(self, value_limit: int = 256, max_events: int = 200_000):
        self.value_limit = value_limit
        self.max_events = max_events
        self.events: list[dict] = []
        self.truncated = False
        self.line = None  # the user's current line, set by the interpreter
        self._ids = {"t": 0, "n": 0, "m": 0, "b": 0}
        self._node_io = {}  # node rid -> (input tensor rids, output tensor rid)
        self._modules = {}  # id(module) -> (module, rid)
        self._module_stack: list[str] = []
        self._backward = None
        self._prev = None

    # ----- lifecycle -----
    def __enter__(self):
        self._prev = STATE.recorder
        STATE.recorder = self
        return self

    def __exit__(self, *exc):
        STATE.recorder = self._prev
        return False

    def _new_id(self, prefix):
        self._ids[prefix] += 1
        return f"{prefix}{self._ids[prefix]}"

    def _emit(self, event):
        if len(self.events) >= self.max_events:
            self.truncated = True
            return
        self.events.append(event)

    def value(self, arr):
        return encode_value(arr, self.value_limit)

    # ----- tensors -----
    def tid(self, t, origin=None, op=None):
        """The tensor's id, emitting its `tensor` event the first time it is seen."""
        if t._rid is not None:
            return t._rid
        rid = self._new_id("t")
        t._rid = rid
        if origin is None:
            origin = "leaf" if t._grad_fn is None else "op"
        self._emit({"kind": "tensor", "id": rid, "shape": list(np.shape(t._data)), "dtype": str(t._data.dtype),
                    "requires_grad": t._requires_grad, "is_leaf": t._grad_fn is None, "value": self.value(t._data),
                    "origin": origin, "op": op, "module": self._module_stack[-1] if self._module_stack else None,
                    "line": self.line})
        return rid

    def _const(self, x):
        rid = self._new_id("t")
        self._emit({"kind": "tensor", "id": rid, "shape": [], "dtype": type(x).__name__, "requires_grad": False,
                    "is_leaf": True, "value": _number(x if isinstance(x, (int, float, bool)) else float(x)),
                    "origin": "const", "op": None, "module": self._module_stack[-1] if self._module_stack else None,
                    "line": self.line})
        return rid

    def on_create(self, t):
        pass  # leaves are emitted lazily, when first used or named, so discarded temporaries stay out

    def name_tensor(self, t, name):
        self._emit({"kind": "name", "tensor": self.tid(t), "name": name})

    def on_requires_grad(self, t):
        if t._rid is not None:
            self._emit({"kind": "requires_grad", "tensor": t._rid, "value": t._requires_grad})

    def on_grad_mode(self, enabled):
        self._emit({"kind": "grad_mode", "enabled": enabled, "line": self.line})

    # ----- forward -----
    def on_op(self, op, inputs, params, result):
        from .tensor import Tensor

        ins = [self.tid(x) if isinstance(x, Tensor) else (self._const(x) if x is not None else None) for x in inputs]
        nid = self._new_id("n")
        node = result._grad_fn
        if node is not None and node.op is op:
            node._rid = nid
        out = self.tid(result, origin="op", op=nid)
        self._node_io[nid] = (ins, out)
        self._emit({"kind": "op", "id": nid, "op": op.name, "label": op.label,
                    "grad_fn": type(node).__name__ if node is not None and node.op is op else None,
                    "inputs": ins, "output": out, "module": self._module_stack[-1] if self._module_stack else None,
                    "line": self.line, "grad_enabled": STATE.grad_enabled})

    def on_detach(self, src, out):
        s = self.tid(src)
        o = self.tid(out, origin="detach")
        self._emit({"kind": "detach", "source": s, "tensor": o, "line": self.line})

    def alias(self, out, src):
        """`x.data`: a view of the same storage, drawn as the same tensor."""
        out._rid = self.tid(src)

    def on_inplace(self, t, name):
        self._emit({"kind": "inplace", "tensor": self.tid(t), "op": name, "value": self.value(t._data),
                    "grad_fn": type(t._grad_fn).__name__ if t._grad_fn is not None else None, "line": self.line})

    # ----- modules -----
    def _mid(self, m):
        entry = self._modules.get(id(m))
        if entry is not None and entry[0] is m:
            return entry[1]
        rid = self._new_id("m")
        self._modules[id(m)] = (m, rid)
        extra = m.extra_repr() if hasattr(m, "extra_repr") else ""
        self._emit({"kind": "module", "id": rid, "cls": type(m).__name__ if not hasattr(m, "_get_name") else m._get_name(),
                    "repr": f"{m._get_name() if hasattr(m, '_get_name') else type(m).__name__}({extra})",
                    "parent": self._module_stack[-1] if self._module_stack else None})
        return rid

    def enter_module(self, m):
        self._module_stack.append(self._mid(m))

    def exit_module(self, m):
        if self._module_stack:
            self._module_stack.pop()

    def name_modules(self, top_level: dict):
        """Resolve module ids to paths such as `model.layer1` from the program's top-level variables."""
        from .nn import Module

        names = {}
        for var, obj in top_level.items():
            if isinstance(obj, Module):
                for path, m in obj.named_modules(prefix=var):
                    entry = self._modules.get(id(m))
                    if entry is not None and entry[0] is m and entry[1] not in names:
                        names[entry[1]] = path
        params = {}
        for var, obj in top_level.items():
            if isinstance(obj, Module):
                for path, p in obj.named_parameters(prefix=var):
                    if p._rid is not None:
                        params[p._rid] = path
        self._emit({"kind": "module_names", "names": names, "parameters": params})
        return names

    # ----- backward -----
    def on_backward_begin(self, root, g, retain):
        self._backward = self._new_id("b")
        self._emit({"kind": "backward_begin", "id": self._backward, "root": self.tid(root), "gradient": self.value(g),
                    "retain_graph": retain, "line": self.line})

    def on_backward_step(self, node, g, parts, grads):
        nid = node._rid
        ins, out = self._node_io.get(nid, ([None] * len(grads), None))
        ans = node._saved[0] if node._saved is not None else None
        contributions = []
        for i, gi in enumerate(grads):
            if gi is None:
                continue
            in_shape = list(np.shape(gi))
            from_shape = None
            if node.op.name in _BROADCASTING and ans is not None and tuple(in_shape) != np.shape(ans):
                from_shape = list(np.shape(ans))
            contributions.append({"input": ins[i] if i < len(ins) else None, "index": i, "grad": self.value(gi),
                                  "local": node.op.latex[0 if node.op.variadic else i], "unbroadcast_from": from_shape})
        event = {"kind": "backward_step", "id": self._backward, "node": nid, "grad_fn": type(node).__name__,
                 "output": out, "upstream": self.value(g), "contributions": contributions}
        if len(parts) > 1:
            event["upstream_parts"] = [self.value(p) for p in parts]
        self._emit(event)

    def on_accumulate(self, t, g, before):
        self._emit({"kind": "accumulate", "id": self._backward, "tensor": self.tid(t), "incoming": self.value(g),
                    "before": None if before is None else self.value(before), "after": self.value(t._grad._data)})

    def on_retain_grad(self, t):
        self._emit({"kind": "retain_grad", "id": self._backward, "tensor": self.tid(t), "grad": self.value(t._grad._data)})

    def on_mark_retain(self, t):
        self._emit({"kind": "mark_retain_grad", "tensor": self.tid(t), "line": self.line})

    def on_backward_end(self, retain):
        self._emit({"kind": "backward_end", "id": self._backward, "freed": not retain})

    def on_backward_error(self, root, error):
        self._emit({"kind": "backward_error", "id": self._backward, "root": self.tid(root),
                    "type": type(error).__name__, "message": str(error), "line": self.line})

    # ----- training -----
    def on_zero_grad(self, tensors, set_to_none):
        self._emit({"kind": "zero_grad", "tensors": [self.tid(t) for t in tensors], "set_to_none": set_to_none,
                    "line": self.line})

    def on_optim_step(self, optimizer, params):
        self._emit({"kind": "optim_step", "optimizer": type(optimizer).__name__,
                    "params": [self.tid(p) for p in params], "lr": optimizer.param_groups[0].get("lr"),
                    "values": {self.tid(p): self.value(p._data) for p in params}, "line": self.line})


def op_table() -> dict:
    """The op table as the page needs it: label, grad_fn name and local-derivative LaTeX per op."""
    return {name: {"label": op.label, "grad_fn": op.grad_fn, "latex": list(op.latex), "saves": op.saves}
            for name, op in OPS.items()}


__all__ = ["Recorder", "encode_value", "op_table", "AccumulateGrad"]
