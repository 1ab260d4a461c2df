"""torch.autograd.gradcheck / gradgradcheck: PyTorch 2.13's slow mode (central differences against backward run
row by row, twice for reentrancy) with its defaults, checks and messages; reached as torch.autograd.gradcheck.

The numerical Jacobian perturbs each input element in place on the input's own array, as PyTorch does, so a
function that closes over the input sees the perturbation too.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import registry
from .backward import grad as autograd_grad
from .creation import rand, zeros_like
from .dtypes import float64
from .grad_mode import STATE

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """torch.autograd.gradcheck.GradcheckError: raised by gradcheck and gradgradcheck."""


GradcheckError.__module__ = "torch.autograd.gradcheck"

FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


def _is_tensor(x):
    return isinstance(x, registry.Tensor)


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _check_inputs(tupled_inputs):
    any_input_requiring_grad = False
    for idx, inp in enumerate(tupled_inputs):
        if _is_tensor(inp) and inp.requires_grad:
            if inp.dtype != float64:
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or "
                              "complex. This check will likely fail if all the inputs are not of double precision "
                              "floating point or complex. ", stacklevel=3)
            if any(st == 0 and sz > 1 for st, sz in zip(inp._data.strides, inp._data.shape)):
                raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs "
                                   "that are non-overlapping to be able to compute the numerical gradients "
                                   "correctly. You should call .contiguous on the input before passing it to "
                                   "gradcheck.")
            any_input_requiring_grad = True
    if not any_input_requiring_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")


def _check_result_size(n):
    if STATE.limits is not None:  # the Jacobians are checked against the run's limits before any is computed
        STATE.limits.before_alloc((n,))


def _numerical_jacobians(func, inputs, outputs, eps):
    """[input][output]: the (input numel, output numel) central-difference Jacobian, perturbing in place."""
    result = []
    for inp in inputs:
        if not (_is_tensor(inp) and inp.requires_grad):
            continue
        _check_result_size(inp.numel() * sum(o.numel() for o in outputs))
        data = inp._data
        if not (isinstance(data, np.ndarray) and data.flags.c_contiguous and data.flags.writeable):
            data = inp._data = np.array(data)  # (a 0-d number or a read-only view): its own array, same values
        flat = data.reshape(-1)  # a view: the input's array is changed in place, as PyTorch's copy_ does
        cols = [np.zeros((inp.numel(), o.numel()), dtype=o._data.dtype) for o in outputs]
        for k in range(flat.size):
            if STATE.tick is not None:  # a step of the program's budget per perturbation
                STATE.tick()
            orig = flat[k].copy()
            flat[k] = orig - eps
            out_a = [o.detach()._data.copy() for o in _as_tuple(func(*inputs))]
            flat[k] = orig + eps
            out_b = [o.detach()._data.copy() for o in _as_tuple(func(*inputs))]
            flat[k] = orig
            for i, (a, b) in enumerate(zip(out_a, out_b)):
                if a.shape != b.shape:
                    raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs are "
                                         f"perturbed on index {np.unravel_index(k, data.shape)} by {eps}, but got: "
                                         f"shapes {registry.Tensor._wrap(a).shape} and {registry.Tensor._wrap(b).shape}.")
                cols[i][k] = ((b - a) / (2 * eps)).reshape(-1)
        result.append(cols)
    return result


def _analytical_jacobian(inputs, output, nondet_tol, check_grad_dtypes):
    """[input]: the (input numel, output numel) Jacobian from backward, row by row; computed twice (reentrancy)."""
    diff_inputs = [t for t in inputs if _is_tensor(t) and t.requires_grad]
    _check_result_size(output.numel() * sum(t.numel() for t in diff_inputs))

    def rows():
        jac = [np.zeros((t.numel(), output.numel()), dtype=t._data.dtype) for t in diff_inputs]
        sizes_ok = types_ok = True
        base = np.zeros(output.shape, dtype=output._data.dtype)
        flat = base.reshape(-1)
        for j in range(flat.size):
            if STATE.tick is not None:  # a step of the program's budget per backward pass
                STATE.tick()
            flat[:] = 0
            flat[j] = 1
            grads = autograd_grad(output, diff_inputs, registry.Tensor._wrap(base.copy()), retain_graph=True,
                                  allow_unused=True)
            for i, (g, t) in enumerate(zip(grads, diff_inputs)):
                if g is None:
                    continue
                if g.shape != t.shape:
                    sizes_ok = False
                    continue
                if g.dtype != t.dtype:
                    types_ok = False
                jac[i][:, j] = g._data.reshape(-1)
        return jac, sizes_ok, types_ok

    jac1, sizes_ok, types_ok = rows()
    jac2, _, _ = rows()
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not all(np.array_equal(a, b) if nondet_tol == 0 else np.all(np.abs(a - b) <= nondet_tol)
               for a, b in zip(jac1, jac2)):
        raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and grad_output "
                             "multiple times gives different values, although analytical gradient matches numerical "
                             f"gradient.The tolerance for nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG)
    return jac1


def _notallclose_msg(analytical, numerical, output_idx, input_idx):
    wrap = registry.Tensor._wrap
    return (f"Jacobian mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{wrap(numerical)}\nanalytical:{wrap(analytical)}\n")


def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol):
    func_out = _as_tuple(func_out)
    numerical = _numerical_jacobians(func, inputs, func_out, eps)
    if not outputs:
        for per_input in numerical:
            for jac in per_input:
                if np.count_nonzero(jac):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    by_output = list(zip(*numerical)) if numerical else []
    by_output = [n for o, n in zip(func_out, by_output) if o.requires_grad]
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, by_output[i])):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j))
    return True


def _test_backward_mul_by_grad_output(outputs, inputs):
    diff_inputs = [t for t in inputs if _is_tensor(t) and t.requires_grad]
    grads = autograd_grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if np.any(gi._data != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")


def _test_undefined_backward_mode(func, inputs):
    """All-zero output gradients (PyTorch's undefined ones) must give zero or no input gradients (a fresh graph)."""
    outputs = _differentiable_outputs(func(*inputs))
    diff_inputs = [t for t in inputs if _is_tensor(t) and t.requires_grad]
    try:
        grads = autograd_grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], allow_unused=True)
    except RuntimeError as e:
        raise GradcheckError('Expected backward function to handle undefined output grads. Please look at "Notes '
                             'about undefined output gradients" in "tools/autograd/derivatives.yaml"') from e
    for gi in grads:
        if gi is not None and np.any(gi._data != 0):
            raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are "
                                 'undefined or zero. Please look at "Notes about undefined output gradients" in '
                                 '"tools/autograd/derivatives.yaml"')
    return True


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes):
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    for i, o in enumerate(_as_tuple(func_out)):
        if not _is_tensor(o):
            raise TypeError(f"gradcheck: the function's output {i} is a {type(o).__name__}, not a Tensor")
    outputs = _differentiable_outputs(func_out)
    _slow_gradcheck(func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, tupled_inputs)
        if check_undefined_grad:
            _test_undefined_backward_mode(func, tupled_inputs)
    return True


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """True when backward's Jacobian matches central differences (slow mode; fast_mode checks the same, fully)."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        return _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the gradients (create_graph) against their finite differences, grad_outputs random in [-1, 1)."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        # torch.testing.make_tensor(low=-1, high=1): uniform_ on the global generator
        tupled_grad_outputs = tuple((rand(tuple(x.shape), dtype=x.dtype if x.is_floating_point() else float64) * 2
                                     - 1).requires_grad_(True) for x in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_args_indices = {i for i, x in enumerate(tupled_inputs) if _is_tensor(x) and x.requires_grad}
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs) if x.requires_grad}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_args_indices else x
                           for i, x in enumerate(args[:-num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        grad_outputs = tuple(x.requires_grad_() if i in diff_grad_output_indices else x
                             for i, x in enumerate(args[-num_outputs:]))
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_args_indices)
        grad_inputs = autograd_grad(outputs, diff_input_args, grad_outputs, create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked)
