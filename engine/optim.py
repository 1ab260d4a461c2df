"""torch.optim.SGD and Adam, following PyTorch's update rules step for step.

`param_groups` are plain lists and dicts a program can change. `step()` reads them through
`_checked_groups`: every group a dict, every parameter a tensor, every hyperparameter a number (one-
element tensors count, as in PyTorch) — else PyTorch's error for that hyperparameter — so no program
object reaches the update or the trace (`optim_step` records `lr`).
"""
from __future__ import annotations

import numpy as np

from .autograd import STATE, note_writes
from .boundary import is_number, is_tensor, plain_text, type_name
from .nn.modules import _zero_grads


def _check_params(params):
    for p in params:
        if not is_tensor(p):
            raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type_name(p)}")
    return params


def _number(value, error):
    """A hyperparameter as a number: numbers as they are, a one-element tensor as its value; else
    `error(type name)` (PyTorch's message for that hyperparameter)."""
    if is_number(value):
        return value
    if is_tensor(value) and value._data.size == 1:
        return value.item()
    raise error(type_name(value))


class Optimizer:
    def __init__(self, params, defaults):
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        if isinstance(params[0], dict):
            groups = [dict(defaults, **g) for g in params]
            for g in groups:
                g["params"] = _check_params(list(g["params"]))
        else:
            groups = [dict(defaults, params=_check_params(params))]
        self.param_groups = groups
        self.defaults = defaults
        self.state = {}

    def zero_grad(self, set_to_none=True):
        params = [p for g in self._checked_groups(numbers=False) for p in g["params"] if p.grad is not None]
        _zero_grads(params, set_to_none)

    def _checked_groups(self, numbers=True):
        """The param groups as the update reads them: copies holding tensors and numbers only."""
        groups = self.param_groups
        if type(groups) is not list:
            raise TypeError(f"param_groups must be a list, not {type_name(groups)}")
        out = []
        for g in groups:
            if type(g) is not dict:
                raise TypeError(f"param_groups must hold dicts, not {type_name(g)}")
            params = g.get("params")
            if type(params) is not list:
                raise TypeError(f"param group 'params' must be a list of Tensors, not {type_name(params)}")
            g = dict(g, params=_check_params(list(params)))
            if numbers:
                self._check_hyperparameters(g)
            out.append(g)
        return out

    def _check_hyperparameters(self, group):
        """Replace the group's numeric hyperparameters by numbers (in the copy), PyTorch's errors otherwise."""
        for key, error in self._HYPER.items():
            if key in group:
                group[key] = _number(group[key], error)
        for key in self._FLAGS:
            if key in group:
                group[key] = bool(group[key])

    _HYPER: dict = {}
    _FLAGS: tuple = ()

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        groups = self._checked_groups()
        rec = STATE.recorder
        updated = []
        state = self.state
        for group in groups:
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
                    lines.append(f"    {plain_text(k)}: {plain_text(g[k])}")
        return "\n".join(lines) + "\n)"


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize))

    _HYPER = {
        "lr": lambda t: TypeError(f"bad operand type for unary -: '{t}'"),
        "momentum": lambda t: TypeError(f"mul_(): argument 'other' (position 1) must be Tensor, not {t}"),
        "dampening": lambda t: TypeError(f"unsupported operand type(s) for -: 'int' and '{t}'"),
        "weight_decay": lambda t: TypeError(f"add(): argument 'alpha' must be Number, not {t}"),
    }
    _FLAGS = ("nesterov", "maximize")

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

    _HYPER = {
        "lr": lambda t: TypeError(f"unsupported operand type(s) for /: '{t}' and 'float'"),
        "eps": lambda t: TypeError(f"add_(): argument 'other' (position 1) must be Tensor, not {t}"),
        "weight_decay": lambda t: TypeError(f"add(): argument 'alpha' must be Number, not {t}"),
    }
    _FLAGS = ("amsgrad", "maximize")

    def _check_hyperparameters(self, group):
        super()._check_hyperparameters(group)
        if "betas" in group:
            betas = group["betas"]
            if type(betas) not in (list, tuple):
                if not is_tensor(betas):
                    raise TypeError(f"cannot unpack non-iterable {type_name(betas)} object")
                betas = list(betas)
            if len(betas) != 2:
                raise ValueError("not enough values to unpack (expected 2, got 1)" if len(betas) < 2 else
                                 "too many values to unpack (expected 2)")
            group["betas"] = (
                _number(betas[0], lambda t: TypeError(f"unsupported operand type(s) for -: 'int' and '{t}'")),
                _number(betas[1], lambda t: TypeError(f"mul_(): argument 'other' (position 1) must be Tensor, not {t}")))

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
