"""torch.optim's Adadelta, Adamax, NAdam and RAdam, each PyTorch's single-tensor update operation for operation
in the parameter's dtype (float32 bit for bit given PyTorch's sqrt: tests/engine/test_optim_more_bits_vs_torch.py).

A Python number meeting a float32 array is rounded to float32 first, as ATen does with a scalar operand; numpy
does the same for a Python float, so `array * lr` is PyTorch's `tensor * lr`.
"""
from __future__ import annotations

import numpy as np

from ..tensor_core import Tensor
from .optimizer import (
    Optimizer,
    _add,
    _add_,
    _addcmul_,
    _alpha_error,
    _betas,
    _bump_step,
    _div_error,
    _hp,
    _lerp_,
    _mul_error,
    _neg_error,
    _new_state,
    _new_step,
    _require_nonnegative,
    _sqrt,
    _state_tensor,
    _tensor_arg_error,
    _zero_buffers,
)


def _check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    _require_nonnegative(("learning rate", lr))


def _decay(param, grad, group, lr):
    """weight_decay: L2 (added to the gradient) or, with decoupled_weight_decay, shrinking the parameter."""
    weight_decay = _hp(group, "weight_decay")
    if weight_decay == 0:
        return grad
    if group.get("decoupled_weight_decay"):
        param *= 1 - lr * weight_decay
        return grad
    return _add(grad, param, weight_decay)


def _scalar_state(state, key, fill):
    """A 0-d float32 tensor of the state (NAdam's mu_product), checked: a program can write anything there."""
    if key not in state:
        state[key] = Tensor._wrap(np.array(fill, dtype=np.float32))
    v = state[key]
    if not isinstance(v, Tensor) or np.shape(v._data) != ():
        raise TypeError(f"optimizer state '{key}' must be a 0-d Tensor, not {type(v).__name__}")
    return v


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _require_nonnegative(("epsilon value", eps), ("weight_decay value", weight_decay))
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    _HYPER = {
        "lr": _neg_error,
        "rho": _tensor_arg_error("mul_"),
        "eps": _tensor_arg_error("add"),
        "weight_decay": _alpha_error,
    }
    _FLAGS = ("maximize",)

    def _update(self, p, param, grad, group, state):
        lr, rho, eps = _hp(group, "lr"), _hp(group, "rho"), _hp(group, "eps")
        square_avg, acc_delta = _zero_buffers(state, p, "square_avg", "acc_delta")
        _bump_step(state, p)
        if group["maximize"]:
            grad = -grad
        if _hp(group, "weight_decay") != 0:
            grad = _add(grad, param, _hp(group, "weight_decay"))
        square_avg *= rho
        _addcmul_(square_avg, grad, grad, 1 - rho)
        std = _sqrt(square_avg + eps)
        delta = _sqrt(acc_delta + eps)
        delta /= std
        delta *= grad
        acc_delta *= rho
        _addcmul_(acc_delta, delta, delta, 1 - rho)
        _add_(param, delta, -lr)


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _require_nonnegative(("epsilon value", eps))
        _check_betas(betas)
        _require_nonnegative(("weight_decay value", weight_decay))
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    _HYPER = {
        "lr": _div_error,
        "eps": _tensor_arg_error("add_"),
        "weight_decay": _alpha_error,
    }
    _FLAGS = ("maximize",)

    def _update(self, p, param, grad, group, state):
        lr, eps = _hp(group, "lr"), _hp(group, "eps")
        beta1, beta2 = _betas(group)
        exp_avg, exp_inf = _zero_buffers(state, p, "exp_avg", "exp_inf")
        if group["maximize"]:
            grad = -grad
        step = _bump_step(state, p)
        if _hp(group, "weight_decay") != 0:
            grad = _add(grad, param, _hp(group, "weight_decay"))
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_inf *= beta2
        bound = np.abs(grad)
        bound += eps
        np.maximum(exp_inf, bound, out=exp_inf)  # NOTE: a NaN in either side propagates, as torch.maximum does
        clr = lr / (1 - beta1 ** step)
        param += -clr * exp_avg / exp_inf


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_lr(lr)
        _require_nonnegative(("epsilon value", eps))
        _check_betas(betas)
        _require_nonnegative(("weight_decay value", weight_decay), ("momentum_decay value", momentum_decay))
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    _HYPER = {
        "lr": _mul_error("float", None),
        "eps": _tensor_arg_error("add_"),
        "weight_decay": _alpha_error,
        "momentum_decay": _mul_error(None, "float"),
    }
    _FLAGS = ("maximize", "decoupled_weight_decay")

    def _update(self, p, param, grad, group, state):
        lr, eps, momentum_decay = _hp(group, "lr"), _hp(group, "eps"), _hp(group, "momentum_decay")
        beta1, beta2 = _betas(group)
        if not state:
            state["step"] = _new_step()
            state["mu_product"] = Tensor._wrap(np.array(1.0, dtype=np.float32))
            state["exp_avg"] = _new_state(p)
            state["exp_avg_sq"] = _new_state(p)
        exp_avg = _state_tensor(state.get("exp_avg"), p, "exp_avg")
        exp_avg_sq = _state_tensor(state.get("exp_avg_sq"), p, "exp_avg_sq")
        mu_product = _scalar_state(state, "mu_product", 1.0)
        if group["maximize"]:
            grad = -grad
        step = _bump_step(state, p)
        bias_correction2 = 1 - beta2 ** step
        grad = _decay(param, grad, group, lr)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        # `mu_product *= mu` on a float32 0-d tensor: mu rounds to float32 first
        mu_product._data = np.asarray(mu_product._data * np.float32(mu), dtype=np.float32)
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        _addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
        denom = _sqrt(exp_avg_sq / bias_correction2)
        denom += eps
        product = float(mu_product._data)
        param += (-lr * (1.0 - mu) / (1.0 - product)) * grad / denom
        param += ((-lr * mu_next) / (1.0 - product * mu_next)) * exp_avg / denom


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _require_nonnegative(("epsilon value", eps))
        _check_betas(betas)
        _require_nonnegative(("weight_decay value", weight_decay))
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    _HYPER = {
        "lr": _mul_error("float", None),
        "eps": _tensor_arg_error("add_"),
        "weight_decay": _alpha_error,
    }
    _FLAGS = ("maximize", "decoupled_weight_decay")

    def _update(self, p, param, grad, group, state):
        lr, eps = _hp(group, "lr"), _hp(group, "eps")
        beta1, beta2 = _betas(group)
        exp_avg, exp_avg_sq = _zero_buffers(state, p, "exp_avg", "exp_avg_sq")
        if group["maximize"]:
            grad = -grad
        step = _bump_step(state, p)
        grad = _decay(param, grad, group, lr)
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        _addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            root = _sqrt(exp_avg_sq)
            root += eps
            # NOTE: PyTorch's `number / tensor` is `tensor.reciprocal() * number`: two roundings, not one division
            adaptive = np.reciprocal(root) * (bias_correction2 ** 0.5)
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            _add_(param, corrected * lr * adaptive * rect, -1.0)
        else:
            _add_(param, corrected * lr, -1.0)


__all__ = ["Adadelta", "Adamax", "NAdam", "RAdam"]
