"""torch.optim: SGD, Adam, AdamW, RMSprop and Adagrad here, Adadelta, Adamax, NAdam and RAdam in adaptive.py,
LBFGS (PyTorch's lbfgs.py ported, its strong-Wolfe line search too) in lbfgs.py, the base class in optimizer.py;
each follows PyTorch's single-tensor update rules operation for operation (in the parameter's dtype), so N steps
give PyTorch's parameters to rounding.

`param_groups` are plain lists and dicts a program can change. `step()` reads them through
`_checked_groups`: every group a dict, every parameter a tensor, every hyperparameter a number (one-
element tensors count, as in PyTorch) — else PyTorch's error for that hyperparameter — so no program
object reaches the update or the trace (`optim_step` records `lr`). The state (`optimizer.state[p]`)
is checked where it is read: tensors shaped like the parameter. The checked groups are reused while the
program leaves `param_groups` unchanged (group_cache.py); float32 multiply-adds round once (fma.py; big
in-place ones through a checked BLAS saxpy, blas_axpy.py); plain SGD fuses small parameters (fused.py).
"""
from __future__ import annotations

import importlib
from operator import itemgetter

import numpy as np

from ..tensor_core import Tensor
from . import blas_axpy, fused
from .adaptive import Adadelta, Adamax, NAdam, RAdam
from .fma import _fma32_numpy as fma_numpy
from .fma import fma32
from .lbfgs import LBFGS
from .optimizer import (  # noqa: F401 - the shared helpers stay reachable as engine.optim's (tests patch _sqrt)
    _BETA_ERRORS,
    Optimizer,
    _add,
    _add_,
    _addcmul_,
    _alpha_error,
    _betas,
    _bump_step,
    _check_params,
    _div_error,
    _fma,
    _hp,
    _lerp_,
    _mul_error,
    _neg_error,
    _new_state,
    _new_step,
    _number,
    _require_nonnegative,
    _rsub_error,
    _sqrt,
    _state_tensor,
    _tensor_arg_error,
    _typename,
    required,
)

_grad_of = itemgetter(2)  # an update item's gradient array


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    _HYPER = {
        "lr": _neg_error,
        "momentum": _tensor_arg_error("mul_"),
        "dampening": _rsub_error,
        "weight_decay": _alpha_error,
    }
    _FLAGS = ("nesterov", "maximize")

    def _update_group(self, items, group, state):
        """Plain SGD (no momentum, no weight decay, no state) on float32 parameters that share no memory:
        the small ones updated by one exact multiply-add over their concatenation (per-call overhead, not
        arithmetic, is what a small parameter's update costs); the same numbers as one at a time."""
        if state or len(items) < 2 or _hp(group, "momentum") != 0 or _hp(group, "weight_decay") != 0:
            return super()._update_group(items, group, state)
        plans = self.__dict__.get("_fused_plans")  # per checked group (a plan is checked before use)
        if plans is None:
            plans = self._fused_plans = {}
        key = id(group)
        cached = plans.get(key)
        plan = fused.plan_for(cached, items)
        if plan is not cached:
            if len(plans) > len(self.param_groups) + 8:  # groups re-checked many times: drop the old groups' plans
                plans.clear()
            plans[key] = plan
        if plan is None or len(plan.small) < 2:
            return super()._update_group(items, group, state)
        if plan.big:
            super()._update_group([items[i] for i in plan.big], group, state)
        lr = _hp(group, "lr")
        alpha = lr if group["maximize"] else -lr  # maximize: add_(-grad, alpha=-lr), the same product negated exactly
        grads = list(map(_grad_of, items)) if not plan.big else [items[i][2] for i in plan.small]
        new, g, z_address, g_address, size, write_backs = plan.views()
        np.concatenate(plan.small_arrays, axis=None, out=new)
        np.concatenate(grads, axis=None, out=g)
        if not blas_axpy.add_at(np.float32(alpha), g_address, z_address, size, fma_numpy):
            fma32(alpha, g, new, out=new)
        for flat, result in write_backs:
            flat[...] = result
        return None

    def _update(self, p, param, grad, group, state):
        lr, momentum = _hp(group, "lr"), _hp(group, "momentum")
        weight_decay = _hp(group, "weight_decay")
        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            grad = _add(grad, param, weight_decay)
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                state["momentum_buffer"] = Tensor._wrap(np.array(grad, copy=True))
                buf = state["momentum_buffer"]._data
            else:
                buf = _state_tensor(buf, p, "momentum_buffer")
                buf *= momentum
                _add_(buf, grad, 1 - _hp(group, "dampening"))
            grad = _add(grad, buf, momentum) if group["nesterov"] else buf
        _add_(param, grad, -lr)


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _require_nonnegative(("learning rate", lr), ("epsilon value", eps))
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        _require_nonnegative(("weight_decay value", weight_decay))
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    _HYPER = {
        "lr": _div_error,
        "eps": _tensor_arg_error("add_"),
        "weight_decay": _alpha_error,
    }
    _FLAGS = ("amsgrad", "maximize", "decoupled_weight_decay")

    def _update(self, p, param, grad, group, state):
        lr = _hp(group, "lr")
        beta1, beta2 = _betas(group)
        weight_decay, eps = _hp(group, "weight_decay"), _hp(group, "eps")
        if group["maximize"]:
            grad = -grad
        if not state:
            state["step"] = _new_step()
            state["exp_avg"] = _new_state(p)
            state["exp_avg_sq"] = _new_state(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = _new_state(p)
        exp_avg = _state_tensor(state.get("exp_avg"), p, "exp_avg")
        exp_avg_sq = _state_tensor(state.get("exp_avg_sq"), p, "exp_avg_sq")
        step = _bump_step(state, p)
        if weight_decay != 0:
            if group.get("decoupled_weight_decay"):
                param *= 1 - lr * weight_decay
            else:
                grad = _add(grad, param, weight_decay)
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        _addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        v = exp_avg_sq
        if group["amsgrad"]:
            if "max_exp_avg_sq" not in state:
                state["max_exp_avg_sq"] = _new_state(p)
            v = _state_tensor(state["max_exp_avg_sq"], p, "max_exp_avg_sq")
            np.maximum(v, exp_avg_sq, out=v)
        denom = _sqrt(v) / bias_correction2_sqrt
        denom += eps
        param += -step_size * exp_avg / denom


class AdamW(Adam):
    _HYPER = {**Adam._HYPER, "lr": _mul_error(None, "float"), "weight_decay": _mul_error("float", None)}
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _require_nonnegative(("learning rate", lr),
                             ("epsilon value", eps),
                             ("momentum value", momentum),
                             ("weight_decay value", weight_decay),
                             ("alpha value", alpha))
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    _HYPER = {
        "lr": _neg_error,
        "alpha": _tensor_arg_error("mul_"),
        "eps": _tensor_arg_error("add_"),
        "momentum": lambda t: TypeError(f"'>' not supported between instances of '{t}' and 'int'"),
        "weight_decay": _alpha_error,
    }
    _FLAGS = ("centered", "maximize")

    def _update(self, p, param, grad, group, state):
        lr = _hp(group, "lr")
        alpha, eps, momentum = _hp(group, "alpha"), _hp(group, "eps"), _hp(group, "momentum")
        if not state:
            state["step"] = _new_step()
            state["square_avg"] = _new_state(p)
            if momentum > 0:
                state["momentum_buffer"] = _new_state(p)
            if group["centered"]:
                state["grad_avg"] = _new_state(p)
        _bump_step(state, p)
        if group["maximize"]:
            grad = -grad
        if _hp(group, "weight_decay") != 0:
            grad = _add(grad, param, _hp(group, "weight_decay"))
        square_avg = _state_tensor(state.get("square_avg"), p, "square_avg")
        square_avg *= alpha
        _addcmul_(square_avg, grad, grad, 1 - alpha)
        if group["centered"]:
            if "grad_avg" not in state:
                state["grad_avg"] = _new_state(p)
            grad_avg = _state_tensor(state["grad_avg"], p, "grad_avg")
            _lerp_(grad_avg, grad, 1 - alpha)
            avg = square_avg.copy()
            _addcmul_(avg, grad_avg, grad_avg, -1)
            avg = _sqrt(avg)
        else:
            avg = _sqrt(square_avg)
        avg += eps
        if momentum > 0:
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = _new_state(p)
            buf = _state_tensor(state["momentum_buffer"], p, "momentum_buffer")
            buf *= momentum
            buf += grad / avg
            _add_(param, buf, -lr)
        else:
            param += -lr * grad / avg


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _require_nonnegative(("learning rate", lr),
                             ("lr_decay value", lr_decay),
                             ("weight_decay value", weight_decay),
                             ("initial_accumulator_value value", initial_accumulator_value),
                             ("epsilon value", eps))
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))

    _HYPER = {
        "lr": _div_error,
        "lr_decay": _mul_error("float", None),
        "eps": _tensor_arg_error("add_"),
        "weight_decay": _alpha_error,
        "initial_accumulator_value": lambda t: TypeError(f"full_like(): argument 'fill_value' must be Number, "
                                                         f"not {t}"),
    }
    _FLAGS = ("maximize",)

    def _init_group_state(self, group):
        for p in group["params"]:
            state = self.state[p]
            state["step"] = _new_step()
            state["sum"] = _new_state(p, _hp(group, "initial_accumulator_value"))

    def _update(self, p, param, grad, group, state):
        if not state:
            state["step"] = _new_step()
            state["sum"] = _new_state(p, _hp(group, "initial_accumulator_value"))
        step = _bump_step(state, p)
        if group["maximize"]:
            grad = -grad
        if _hp(group, "weight_decay") != 0:
            grad = _add(grad, param, _hp(group, "weight_decay"))
        clr = _hp(group, "lr") / (1 + (step - 1) * _hp(group, "lr_decay"))
        state_sum = _state_tensor(state.get("sum"), p, "sum")
        _addcmul_(state_sum, grad, grad, 1)
        std = _sqrt(state_sum)
        std += _hp(group, "eps")
        param += -clr * grad / std


__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "LBFGS", "lr_scheduler"]



def __getattr__(name):
    """torch.optim.lr_scheduler, loaded on first use: it subclasses nothing here but checks for Optimizer, so it
    imports this package (importing it from here too would be an import cycle)."""
    if name == "lr_scheduler":
        return importlib.import_module(f"{__name__}.lr_scheduler")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
