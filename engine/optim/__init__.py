"""torch.optim: SGD, Adam, AdamW, RMSprop and Adagrad, following PyTorch's single-tensor update rules
operation for operation (in the parameter's dtype), so N steps give PyTorch's parameters to rounding.

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
import warnings
from collections import defaultdict
from operator import itemgetter

import numpy as np

from ..autograd import STATE, enable_grad, note_writes
from ..boundary import is_number, is_tensor, plain_text, type_name
from ..dtypes import legacy_tensor_type
from ..nn.modules import _zero_grads
from ..tensor_core import Tensor
from . import blas_axpy, fused, group_cache
from .fma import _fma32_numpy as fma_numpy
from .fma import fma32


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(x):
    if isinstance(x, Tensor):
        return "torch." + legacy_tensor_type(x._data.dtype)
    return type_name(x)


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


def _neg_error(t):
    """Python's error for `-value` (the type name of value is `t`)."""
    return TypeError(f"bad operand type for unary -: '{t}'")


def _div_error(t):
    """Python's error for `value / 1.0`."""
    return TypeError(f"unsupported operand type(s) for /: '{t}' and 'float'")


def _alpha_error(t):
    """PyTorch's error for `torch.add(a, b, alpha=value)`."""
    return TypeError(f"add(): argument 'alpha' must be Number, not {t}")


def _rsub_error(t):
    """Python's error for `1 - value`."""
    return TypeError(f"unsupported operand type(s) for -: 'int' and '{t}'")


def _tensor_arg_error(fn):
    """PyTorch's error for `tensor.fn(value)` where value must be a Tensor."""
    def error(t):
        return TypeError(f"{fn}(): argument 'other' (position 1) must be Tensor, not {t}")
    return error


def _mul_error(left, right):
    """Python's error for `left * right` when one side is the program's value (its type name is `t`)."""
    def error(t):
        if t in ("str", "list", "tuple"):
            return TypeError("can't multiply sequence by non-int of type 'float'")
        return TypeError(f"unsupported operand type(s) for *: '{left or t}' and '{right or t}'")
    return error


_BETA_ERRORS = (_rsub_error,
                _tensor_arg_error("mul_"))


def _hp(group, key):
    """A hyperparameter of a group as a number (a one-element tensor, `lr=torch.tensor(0.01)`, gives its
    item). Anything else is a TypeError: a program can put any value into `param_groups`, and numpy would
    broadcast a list or take an object where PyTorch refuses."""
    v = group[key]
    if type(v) in (int, float, bool):
        return v
    if isinstance(v, Tensor) and v.numel() == 1:
        return v.item()
    if isinstance(v, (int, float)):  # numpy scalars and other number types
        return float(v)
    raise TypeError(f"optimizer hyperparameter '{key}' must be a number, not {_typename(v)}")


def _betas(group):
    betas = group["betas"]
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise TypeError(f"optimizer hyperparameter 'betas' must be a pair of numbers, not {_typename(betas)}")
    return _hp({"betas[0]": betas[0]}, "betas[0]"), _hp({"betas[1]": betas[1]}, "betas[1]")


def _state_tensor(v, p, key):
    """A state entry about to be updated in place: it must be one of the engine's tensors shaped like p
    (a program can write anything into `optimizer.state[p]`)."""
    if not isinstance(v, Tensor):
        raise TypeError(f"optimizer state '{key}' must be a Tensor, not {_typename(v)}")
    data = v._data
    if type(data) is not np.ndarray or data.shape != p._data.shape:
        raise RuntimeError(f"optimizer state '{key}' has shape {tuple(np.shape(data))}, but the parameter has "
                           f"shape {tuple(p._data.shape)}")
    if data.dtype != p._data.dtype:
        data = v._data = data.astype(p._data.dtype)
    return data


def _new_state(p, fill=0.0):
    return Tensor._wrap(np.full_like(p._data, fill))


def _new_step():
    return Tensor._wrap(np.array(0.0, dtype=np.float32))


def _bump_step(state, p):
    """`state['step'] += 1` (a float32 0-d tensor, as PyTorch keeps it); the new step as a Python float."""
    st = state.get("step")
    if not isinstance(st, Tensor) or np.shape(st._data) != ():
        raise TypeError(f"optimizer state 'step' must be a 0-d Tensor, not {_typename(st)}")
    st._data = np.asarray(st._data + 1, dtype=np.float32)
    return float(st._data)


# ATen's CPU kernels fuse a multiply and an add (`vec::fmadd`) in add(alpha=), addcmul and lerp: one
# rounding (engine/optim/fma.py for float32); other dtypes round twice (off by an ulp at most).
def _fma(x, y, z):
    """x * y + z with one rounding, in the dtype of the arrays (x may be a Python number)."""
    if z.dtype != np.float32:
        return x * y + z
    return fma32(x, y, z)


def _add(z, y, alpha):
    """z.add(y, alpha=alpha) (a new array)."""
    return _fma(alpha, y, z)


def _add_(z, y, alpha):
    """z.add_(y, alpha=alpha), in place."""
    if z.dtype != np.float32:
        z += alpha * y
        return
    fma32(alpha, y, z, out=z)


def _addcmul_(z, a, b, value):
    """z.addcmul_(a, b, value=value): z + (value * a) * b, the last multiply-add fused."""
    z[...] = _fma(value * a, b, z)


def _lerp_(a, b, w):
    """a.lerp_(b, w) as ATen computes it."""
    if abs(w) < 0.5:
        a[...] = _fma(w, b - a, a)
    else:
        one_minus = np.float32(1) - np.float32(w) if a.dtype == np.float32 else 1 - w
        a[...] = _fma(-one_minus, b - a, b)


def _sqrt(x):
    """Elementwise float sqrt, correctly rounded (numpy). NOTE: PyTorch's CPU sqrt is MKL's vsSqrt, which is
    not correctly rounded (0.75 ulp at most, off by one ulp on ~20% of float32 inputs on an AMD EPYC, by a
    CPU-dependent rule): the optimizers that divide by a sqrt differ from PyTorch by that ulp and nothing else."""
    return np.sqrt(x)


def _require_nonnegative(*checks):
    """PyTorch's argument checks `if not 0.0 <= value: raise ValueError(f"Invalid {label}: {value}")`, in
    order, for each (label, value)."""
    for label, value in checks:
        if not 0.0 <= value:
            raise ValueError(f"Invalid {label}: {value}")


class Optimizer:
    def __init__(self, params, defaults):
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_typename(params)}")
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(dict(group) if isinstance(group, dict) else group)

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {_typename(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(p))
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(group["params"])
        if not seen.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
        self._init_group_state(param_group)

    def _init_group_state(self, group):
        """State an optimizer creates up front (Adagrad's `sum`); the others create it on the first step."""

    def zero_grad(self, set_to_none=True):
        params = [p for g in self._checked_groups(numbers=False) for p in g["params"] if p._grad is not None]
        _zero_grads(params, set_to_none)

    def _checked_groups(self, numbers=True):
        """The param groups as the update reads them: copies holding tensors and numbers only (the last
        copies while the groups are unchanged: group_cache)."""
        groups = self.param_groups
        checked = group_cache.lookup(self.__dict__.get("_groups_snapshot"), groups)
        if checked is not None:
            return checked
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
        if numbers:
            self._groups_snapshot = group_cache.snapshot(groups, out)
        return out

    def _check_hyperparameters(self, group):
        """Replace the group's numeric hyperparameters by numbers (in the copy), PyTorch's errors otherwise."""
        for key, error in self._HYPER.items():
            if key in group:
                group[key] = _number(group[key], error)
        for key in self._FLAGS:
            if key in group:
                group[key] = bool(group[key])
        if "betas" in group:
            betas = group["betas"]
            if type(betas) is str:  # PyTorch unpacks it: its characters
                betas = list(betas)
            if type(betas) not in (list, tuple):
                if not is_tensor(betas):
                    raise TypeError(f"cannot unpack non-iterable {type_name(betas)} object")
                betas = list(betas)
            if len(betas) != 2:
                raise ValueError("not enough values to unpack (expected 2, got 1)" if len(betas) < 2 else
                                 "too many values to unpack (expected 2)")
            group["betas"] = (_number(betas[0], _BETA_ERRORS[0]), _number(betas[1], _BETA_ERRORS[1]))

    _HYPER: dict = {}
    _FLAGS: tuple = ()

    def _update_group(self, items, group, state):
        """Update the (parameter, its array, its gradient array) of one group, one parameter at a time."""
        for p, data, g in items:
            st = state.get(p)
            if st is None:
                st = {}
                self._update(p, data, g, group, st)
                if st:  # plain SGD keeps no state (and PyTorch's state_dict lists none)
                    state[p] = st
            else:
                self._update(p, data, g, group, st)
                if not st:
                    del state[p]

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():  # as PyTorch: the closure's forward and backward run with grad mode on
                loss = closure()
        groups = self._checked_groups()
        rec = STATE.recorder
        updated = []
        state = self.state
        for group in groups:
            items = []
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                data = p._data
                if type(data) is not np.ndarray:
                    data = p._data = np.asarray(data)
                g = grad._data
                if type(g) is not np.ndarray:
                    g = np.asarray(g)
                if g.dtype is not data.dtype and g.dtype != data.dtype:
                    g = g.astype(data.dtype)
                items.append((p, data, g))
            self._update_group(items, group, state)  # in place: aliases such as p.data see it
            updated += [p for p, _, _ in items]
        self._opt_called = True  # for the schedulers' "step() order" warning
        note_writes([p._data for p in updated])  # what backward saved of these parameters is stale now
        if rec is not None:
            rec.on_optim_step(self, updated)
        return loss

    def state_dict(self):
        mapping = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                mapping.setdefault(id(p), len(mapping))
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError("optimizer state_dict must be a dict with 'state' and 'param_groups'")
        groups = self.param_groups
        saved_groups = list(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {}
        for g, s in zip(groups, saved_groups):
            for old, p in zip(s["params"], g["params"]):
                id_map[old] = p
        state = defaultdict(dict)
        for k, v in dict(state_dict["state"]).items():
            if k in id_map:
                p = id_map[k]
                state[p] = {key: self._load_state_value(p, key, val) for key, val in dict(v).items()}
            else:
                state[k] = v
        new_groups = []
        for g, s in zip(groups, saved_groups):
            ng = {k: v for k, v in s.items() if k != "params"}
            ng["params"] = g["params"]
            new_groups.append(ng)
        self.state = state
        self.param_groups = new_groups

    @staticmethod
    def _load_state_value(p, key, v):
        """As PyTorch: `step` as it is, the others `.to(param.dtype)`, so the same tensor when the dtype
        matches (the loaded optimizer shares them with the state_dict's, as in PyTorch)."""
        if not isinstance(v, Tensor) or key == "step" or v._data.dtype == p._data.dtype:
            return v
        return Tensor._wrap(np.asarray(v._data, dtype=p._data.dtype))

    def __repr__(self):
        s = f"{type(self).__name__} ("
        for i, g in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for k in sorted(g):
                if k != "params":
                    s += f"    {plain_text(k)}: {plain_text(g[k])}\n"
        return s + ")"


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


__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]



def __getattr__(name):
    """torch.optim.lr_scheduler, loaded on first use: it subclasses nothing here but checks for Optimizer, so it
    imports this package (importing it from here too would be an import cycle)."""
    if name == "lr_scheduler":
        return importlib.import_module(f"{__name__}.lr_scheduler")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
