"""torch.optim.SGD and Adam, following PyTorch's update rules step for step."""
from __future__ import annotations

import numpy as np

from ..autograd import STATE, note_writes
from ..nn.modules import _zero_grads


class Optimizer:
    def __init__(self, params, defaults):
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        if isinstance(params[0], dict):
            groups = [dict(defaults, **g) for g in params]
            for g in groups:
                g["params"] = list(g["params"])
        else:
            groups = [dict(defaults, params=params)]
        self.param_groups = groups
        self.defaults = defaults
        self.state = {}

    def zero_grad(self, set_to_none=True):
        params = [p for g in self.param_groups for p in g["params"] if p.grad is not None]
        _zero_grads(params, set_to_none)

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        rec = STATE.recorder
        updated = []
        state = self.state
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                data = p._data
                if type(data) is not np.ndarray:
                    data = p._data = np.asarray(data)
                step = self._update(p, np.asarray(grad._data), group, state.setdefault(id(p), {}))
                np.subtract(data, step, out=data, casting="unsafe")  # in place: aliases such as p.data see it
                updated.append(p)
        note_writes([p._data for p in updated])  # what backward saved of these parameters is stale now
        if rec is not None:
            rec.on_optim_step(self, updated)
        return loss

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k != "params":
                    lines.append(f"    {k}: {g[k]}")
        return "\n".join(lines) + "\n)"


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize))

    def _update(self, p, grad, group, state):
        """The step to subtract from the parameter."""
        d_p = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            d_p = d_p + group["weight_decay"] * p._data
        momentum = group["momentum"]
        if momentum:
            buf = state.get("momentum_buffer")
            buf = np.array(d_p, copy=True) if buf is None else buf * momentum + (1 - group["dampening"]) * d_p
            state["momentum_buffer"] = buf
            d_p = d_p + momentum * buf if group["nesterov"] else buf
        # NOTE: into a buffer kept per parameter: a fresh lr * d_p each step costs an allocation as big as the weight.
        buffer = state.get("step_buffer")
        if buffer is None:
            buffer = state["step_buffer"] = np.empty_like(p._data)
        return np.multiply(d_p, group["lr"], out=buffer, casting="unsafe")


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, maximize=False):
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))

    def _update(self, p, grad, group, state):
        b1, b2 = group["betas"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p._data
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(p._data), exp_avg_sq=np.zeros_like(p._data))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(p._data)
        state["step"] += 1
        t = state["step"]
        state["exp_avg"] = b1 * state["exp_avg"] + (1 - b1) * grad
        state["exp_avg_sq"] = b2 * state["exp_avg_sq"] + (1 - b2) * grad * grad
        v = state["exp_avg_sq"]
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = v = np.maximum(state["max_exp_avg_sq"], v)
        bias1 = 1 - b1 ** t
        bias2 = 1 - b2 ** t
        denom = np.sqrt(v) / np.sqrt(bias2) + group["eps"]
        return (group["lr"] / bias1) * state["exp_avg"] / denom


__all__ = ["Optimizer", "SGD", "Adam"]
