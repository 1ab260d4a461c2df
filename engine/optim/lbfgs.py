"""torch.optim.LBFGS: PyTorch 2.13's torch/optim/lbfgs.py ported line for line over numpy arrays.

PyTorch mixes Python floats (losses, `lr`) with 0-d tensors (each dot product and what follows from it); here those are
numpy scalars of the parameters' dtype, which numpy (NEP 50) combines and compares with a Python float rounded to float32
first, as ATen does, so each step keeps PyTorch's precision and order (`_div`, `_dot`, `_sqrt` do the rest). State a
program can write is checked where read; what a step keeps is bounded by the run's limits. No complex dtypes here.
NOTE: float64 drifts from PyTorch by ulps: the engine's float64 add(alpha=) rounds twice, ATen's fmadd once (optimizer.py).
"""
from __future__ import annotations

import ctypes
import math

import numpy as np

from .. import mkl, vml
from ..autograd import STATE, enable_grad, note_writes
from ..boundary import is_number, is_tensor, type_name
from ..cascade_sum import torch_sum
from ..limits import LimitExceeded
from ..tensor_core import Tensor, counted
from .optimizer import Optimizer, _add_, _typename

_ENTRY_COST = 2000  # a history pair's Python overhead in the two-loop recursion, in multiply-adds (~3 us)
_DOTS = {}
if mkl.AVAILABLE:
    for _dtype, _name, _ctype in ((np.float32, "cblas_sdot", ctypes.c_float), (np.float64, "cblas_ddot", ctypes.c_double)):
        _fn = getattr(mkl.LIBRARY, _name)
        _fn.restype, _fn.argtypes = _ctype, (ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
        _DOTS[np.dtype(_dtype)] = _fn


def _dot(a, b):
    """a.dot(b) as ATen's CPU dot: BLAS's sdot/ddot, MKL's (engine/mkl.py), on one thread as the engine runs.
    NOTE: without MKL numpy's BLAS sums in another order (the last bit of most float32 dots differs), and PyTorch
    on several threads lets MKL split a dot of ~30,000 elements and more (other last bits again)."""
    fn = _DOTS.get(a.dtype)
    if fn is None or b.dtype != a.dtype or a.size >= 2 ** 31:
        return a.dtype.type(np.dot(a, b))
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype.type(fn(a.size, a.ctypes.data, 1, b.ctypes.data, 1))


def _div(a, b):
    """a / b. NOTE: a Python number over a 0-d tensor is `b.reciprocal() * a` in PyTorch (Tensor.__rdiv__): two roundings."""
    if isinstance(b, np.generic) and not isinstance(a, np.generic):
        return (b.dtype.type(1) / b) * a
    return a / b


_sqrt = lambda x: vml.sqrt(np.asarray(x))[()] if isinstance(x, np.generic) else math.sqrt(x)  # NOTE: MKL's (vml.py)
_scale = lambda x, s: np.multiply(x, x.dtype.type(s))  # x.mul(s): s converted to x's dtype first, as ATen does
_zero_d = lambda x: Tensor._wrap(np.asarray(x)) if isinstance(x, np.generic) else x  # as PyTorch's state holds x


def _amax(x):
    if x.size:
        return np.max(x)
    raise RuntimeError("max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                       "dim with the 'dim' argument.")


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    # ported from https://github.com/torch/optim/blob/master/polyinterp.lua
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - _div(3 * (f1 - f2), x1 - x2)
    d2_square = (d1 * d1 if isinstance(d1, np.generic) else d1 ** 2) - g1 * g2  # (ATen's pow(x, 2) is x * x)
    if d2_square >= 0:
        d2 = _sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return _div(xmin_bound + xmax_bound, 2.0)


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    # ported from https://github.com/torch/optim/blob/master/lswolfe.lua
    d_norm = _amax(np.abs(d))
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = _dot(g_new, d)
    # bracket an interval containing a point satisfying the Wolfe criteria
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g, done = [t], [f_new], [g_new], True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # interpolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        # next step
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    # reached max number of iterations?
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    # zoom phase: refine the bracket until a point satisfies the criteria
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:  # line-search bracket is so small
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # t too close to a boundary after insufficient progress (or on it): 0.1 * len(bracket) away from the nearest
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # Armijo condition not satisfied or not lower than lowest point
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True  # Wolfe conditions satisfied
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # old high becomes new low
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            # new point becomes new low
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _loss_value(v):  # float(closure()) with Python's and PyTorch's errors, no program object handed to float()
    if is_tensor(v) and np.size(v._data) != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    if is_tensor(v) or is_number(v) or type(v) is str:
        return float(v)
    raise TypeError(f"float() argument must be a string or a real number, not '{type_name(v)}'")


def _hyper(group, key):  # a number as it is, a 1-element tensor as a numpy scalar (`_to_scalar`'s 0-d tensor)
    v = group[key]
    if is_number(v):
        return v
    if is_tensor(v) and np.size(v._data) == 1 and np.asarray(v._data).dtype.kind in "biuf":
        return np.asarray(v._data).reshape(())[()]
    raise TypeError(f"optimizer hyperparameter '{key}' must be a number, not {_typename(v)}")


def _state_flat(v, key, n, dtype):  # d, prev_flat_grad, a history entry: a program may have written anything there
    data = v if type(v) is np.ndarray else v._data if is_tensor(v) else None
    if type(data) is not np.ndarray or data.shape != (n,) or data.dtype != dtype:
        raise TypeError(f"LBFGS state '{key}' must be a flat {dtype.name} Tensor of {n} elements, not {_typename(v)}")
    return data


def _state_scalar(v, key):  # t, H_diag, a ro entry: a 1-element tensor as a numpy scalar (PyTorch's 0-d tensor)
    if type(v) in (int, float) or isinstance(v, np.floating):
        return v
    if is_tensor(v) and type(v._data) is np.ndarray and v._data.size == 1 and v._data.dtype.kind == "f":
        return v._data.reshape(())[()]
    raise TypeError(f"LBFGS state '{key}' must be a number or a 1-element Tensor, not {_typename(v)}")


def _state_list(v, key):
    if type(v) is list:
        return v
    raise TypeError(f"LBFGS state '{key}' must be a list, not {_typename(v)}")


def _history_list(history_size):
    """`[None] * history_size`, its items counted as tensor elements for good (10**9 would be 8 GB of list)."""
    limits = STATE.limits
    if limits is not None and isinstance(history_size, (int, np.integer)) and history_size > 0:
        n = int(history_size)
        if n > limits.max_tensor_elements or limits.over_live(n):
            raise LimitExceeded(f"LBFGS's history list (state['al']) would have history_size = {n:,} items; the limits are "
                                f"max_tensor_elements = {limits.max_tensor_elements:,} (one list) and max_live_elements = "
                                f"{limits.max_live_elements:,} (with the run's tensors)")
        limits.count_external(n)
    return [None] * history_size


class LBFGS(Optimizer):
    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            if not (is_number(max_iter) or is_tensor(max_iter)):  # Python's error for `max_iter * 5 // 4`
                op = "//" if type(max_iter) in (str, list, tuple) else "*"
                raise TypeError(f"unsupported operand type(s) for {op}: '{type_name(max_iter)}' and 'int'")
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                    "tolerance_change": tolerance_change, "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None  # (the parameters' elements at the first step, as PyTorch's _numel())
        self._step_params = []  # this step's parameters, checked (the group's list is the program's to change)

    def _gather_flat_grad(self):
        views = [np.zeros(p._data.size, p._data.dtype) if p._grad is None else np.asarray(p._grad._data).reshape(-1)
                 for p in self._step_params]
        return np.concatenate(views) if views else np.zeros(0, np.float32)

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._step_params:
            data, numel = p._data, p._data.size
            # p.add_(update[offset:offset + numel].view_as(p), alpha=step_size): one rounding, ATen's fmadd
            _add_(data, update[offset:offset + numel].reshape(data.shape).astype(data.dtype, copy=False), step_size)
            offset += numel
        note_writes([p._data for p in self._step_params])  # what a graph saved of the parameters is stale now
        if self._numel_cache is None:
            self._numel_cache = sum(p._data.size for p in self._step_params)
        if offset != self._numel_cache:
            raise AssertionError(f"Expected offset {offset} to equal {self._numel_cache}")

    def _set_param(self, params_data):
        for p, pdata in zip(self._step_params, params_data, strict=True):
            np.copyto(p._data, pdata)
        note_writes([p._data for p in self._step_params])

    def step(self, closure):
        """Up to max_iter iterations calling `closure` (it reevaluates the model, returns the loss); its first result."""
        groups = self.param_groups
        if type(groups) is not list or any(type(g) is not dict for g in groups):
            raise TypeError("param_groups must be a list of dicts")
        if len(groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(groups)}")
        names = ("lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change", "history_size")
        hyper = {k: _hyper(groups[0], k) for k in names}
        params = list(self._params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(p))
            p._data = np.asarray(p._data)
        if STATE.limits is not None:  # the flat vectors, refused past the run's limits before one is made
            STATE.limits.before_alloc((sum(p._data.size for p in params),))
        self._step_params = params
        with np.errstate(all="ignore"):  # inf and nan as in PyTorch, without numpy's warnings
            orig_loss = self._step(closure, groups[0]["line_search_fn"], **hyper)
        self._opt_called = True  # for the schedulers' "step() order" warning
        if STATE.recorder is not None:
            STATE.recorder.on_optim_step(self, params)
        return orig_loss

    def _step(self, user_closure, line_search_fn, lr, max_iter, max_eval, tolerance_grad, tolerance_change, history_size):
        def closure():  # torch.enable_grad()(closure): the closure always runs with grad enabled
            with enable_grad():
                return user_closure()

        def obj_func(x, t, d):  # PyTorch's _directional_evaluate
            self._add_grad(t, d)
            loss = _loss_value(closure())
            flat_grad = self._gather_flat_grad()
            self._set_param(x)
            return loss, flat_grad

        # NOTE: LBFGS has only global state, registered as the first parameter's (as PyTorch's)
        state = self.state[self._params[0]]
        if type(state) is not dict:
            raise TypeError(f"optimizer state must be a dict, not {_typename(state)}")
        for key in ("func_evals", "n_iter"):
            if type(state.setdefault(key, 0)) not in (int, float):
                raise TypeError(f"LBFGS state '{key}' must be a number, not {_typename(state[key])}")
        # evaluate initial f(x) and df/dx
        orig_loss = closure()
        loss = _loss_value(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        n, dtype = flat_grad.size, flat_grad.dtype
        opt_cond = _amax(np.abs(flat_grad)) <= tolerance_grad
        if opt_cond:  # optimal condition
            return orig_loss
        # what the state keeps between steps, checked where it is read
        d, t, H_diag = state.get("d"), state.get("t"), state.get("H_diag")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:  # optimize for a max of max_iter iterations
            n_iter += 1
            state["n_iter"] += 1
            # compute gradient descent direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                # do lbfgs update (update memory)
                old_dirs, old_stps, ro = _state_list(old_dirs, "old_dirs"), _state_list(old_stps, "old_stps"), _state_list(ro, "ro")
                y = flat_grad - _state_flat(prev_flat_grad, "prev_flat_grad", n, dtype)
                s = _scale(_state_flat(d, "d", n, dtype), _state_scalar(t, "t"))
                ys = _dot(y, s)  # y*s
                if ys > 1e-10:
                    if len(old_dirs) == history_size:  # shift history by one (limited-memory)
                        for history in (old_dirs, old_stps, ro):
                            history.pop(0)
                    # store new direction/step (counted: the run's live elements bound a long history)
                    old_dirs.append(counted(Tensor._wrap(y)))
                    old_stps.append(counted(Tensor._wrap(s)))
                    ro.append(_zero_d(_div(1.0, ys)))
                    H_diag = ys / _dot(y, y)  # update scale of initial Hessian approximation (y*y)
                H_diag = _state_scalar(H_diag, "H_diag")
                # compute the approximate (L-BFGS) inverse Hessian multiplied by the gradient
                num_old = len(old_dirs)
                limits = STATE.limits  # no program step interrupts the recursion: bounded as a product (the history
                work = num_old * (4 * n + _ENTRY_COST)  # is the program's to write, a million entries of one tensor)
                if limits is not None and limits.max_op_flops is not None and work > limits.max_op_flops:
                    raise LimitExceeded(f"LBFGS's two-loop recursion over {num_old:,} history pairs of {n:,} elements takes "
                                        f"about {work:,} multiply-adds; the limit is max_op_flops = {limits.max_op_flops:,}")
                if "al" not in state:
                    state["al"] = _history_list(history_size)
                al = _state_list(state["al"], "al")
                dirs = [_state_flat(v, "old_dirs", n, dtype) for v in old_dirs]
                stps = [_state_flat(v, "old_stps", n, dtype) for v in old_stps[:num_old]]
                ros = [_state_scalar(v, "ro") for v in ro[:num_old]]
                alphas = [None] * num_old  # al's values as numpy scalars (al holds them as 0-d tensors)
                # iteration in L-BFGS loop collapsed to use just one buffer
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    alphas[i] = _dot(stps[i], q) * ros[i]
                    al[i] = _zero_d(alphas[i])
                    _add_(q, dirs[i], -alphas[i])
                # multiply by initial Hessian; r/d is the final direction
                d = r = _scale(q, H_diag)
                for i in range(num_old):
                    be_i = _dot(dirs[i], r) * ros[i]
                    _add_(r, stps[i], alphas[i] - be_i)
            if prev_flat_grad is None:
                prev_flat_grad = counted(Tensor._wrap(flat_grad.copy()))
            else:
                np.copyto(_state_flat(prev_flat_grad, "prev_flat_grad", n, dtype), flat_grad)
            prev_loss = loss
            # compute step length: reset initial guess for step size
            t = min(1.0, _div(1.0, dtype.type(torch_sum(np.abs(flat_grad))))) * lr if state["n_iter"] == 1 else lr
            gtd = _dot(flat_grad, d)  # directional derivative: g * d
            if gtd > -tolerance_change:  # directional derivative is below tolerance
                break
            # optional line search: user function
            ls_func_evals = 0
            if line_search_fn is not None:
                if type(line_search_fn) is not str or line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._data.copy() for p in self._step_params]  # PyTorch's _clone_param
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = _amax(np.abs(flat_grad)) <= tolerance_grad
            else:
                # no line search, simply move with fixed-step
                self._add_grad(t, d)
                if n_iter != max_iter:  # re-evaluate only if not in the last iteration (no use when stochastic)
                    loss = _loss_value(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = _amax(np.abs(flat_grad)) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            # check conditions
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if _amax(np.abs(_scale(d, t))) <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break  # lack of progress
        state.update(d=counted(Tensor._wrap(d)) if type(d) is np.ndarray else d, t=_zero_d(t), old_dirs=old_dirs,
                     old_stps=old_stps, ro=ro, H_diag=_zero_d(H_diag), prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss
