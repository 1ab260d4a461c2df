"""torch.optim.Optimizer and what every optimizer's update shares: the checks of `param_groups` and of the
state a program can write, PyTorch's errors for bad hyperparameters, and the float32 arithmetic that rounds as
ATen's CPU kernels do (one rounding for add(alpha=), addcmul and lerp: fma.py)."""
from __future__ import annotations

import warnings
from collections import defaultdict

import numpy as np

from .. import vml
from ..autograd import STATE, enable_grad, note_writes
from ..boundary import is_number, is_tensor, plain_text, type_name
from ..dispatch import _broadcast_message
from ..dtypes import legacy_tensor_type
from ..nn.modules import _zero_grads
from ..tensor_core import Tensor
from . import group_cache
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
        # PyTorch's words where its in-place update (`buf.mul_(m).add_(grad)`) meets the parameter's gradient
        mine, theirs = np.shape(data), p._data.shape
        try:
            both = np.broadcast_shapes(mine, theirs)
        except ValueError:
            raise RuntimeError(_broadcast_message([np.broadcast_to(0, mine), np.broadcast_to(0, theirs)])) from None
        raise RuntimeError(f"output with shape {list(mine)} doesn't match the broadcast shape {list(both)}")
    if data.dtype != p._data.dtype:
        data = v._data = data.astype(p._data.dtype)
    return data


def _new_state(p, fill=0.0):
    return Tensor._wrap(np.full_like(p._data, fill))


def _new_step():
    return Tensor._wrap(np.array(0.0, dtype=np.float32))


def _zero_buffers(state, p, *names):
    """On the first step the step counter and the named zero buffers (in PyTorch's order); then each buffer,
    checked as `_state_tensor` does."""
    if not state:
        state["step"] = _new_step()
        for name in names:
            state[name] = _new_state(p)
    return [_state_tensor(state.get(name), p, name) for name in names]


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
    """Elementwise float sqrt as PyTorch's CPU sqrt: MKL's vsSqrt where present (engine/vml.py). NOTE: it is not
    correctly rounded (0.75 ulp at most, off by one ulp on ~20% of float32 inputs on an AMD EPYC, by a
    CPU-dependent rule): without MKL the optimizers that divide by a sqrt differ from PyTorch by that ulp."""
    return vml.sqrt(x)


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
