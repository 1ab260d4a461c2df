"""`np.linalg` in a program: the functions tutorials use (norm, inv, det, solve, eigh, svd, lstsq) on real ndarrays.

Arguments pass the run's NumpyGate (numbers, numeric arrays, tensors as arrays; nothing else reaches numpy).
Before LAPACK runs, what it will allocate is checked against the tensor limits (a full SVD of a thin
(10^6, 1) matrix is a 10^12-element U) and its time against `max_op_flops` (these are O(n^3) where a matrix
product of the same arrays is O(n^2)). Results are counted as live elements; numpy's named results
(`EighResult`, `SVDResult`) stay numpy's, so they print as NumPy prints them.
"""
from __future__ import annotations

import math

import numpy as np

from .numpy_costs import Cost, broadcast, conversions, shape_of
from .objects import Builtin, ModuleProxy

# keyword arguments per function (numpy's names); anything else is refused before numpy sees it
KEYWORDS = {
    "norm": frozenset({"ord", "axis", "keepdims"}),
    "inv": frozenset(),
    "det": frozenset(),
    "solve": frozenset(),
    "eigh": frozenset({"UPLO"}),
    "svd": frozenset({"full_matrices", "compute_uv", "hermitian"}),
    "lstsq": frozenset({"rcond"}),
}
LINALG_NAMES = tuple(KEYWORDS)


def _square(name, shape):
    if len(shape) < 2:
        raise np.linalg.LinAlgError(f"{len(shape)}-dimensional array given. Array must be at least two-dimensional")
    if shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")


def _costs(name, args, kwargs):
    """(shapes numpy will allocate, multiply-adds LAPACK will take) for `np.linalg.<name>(*args, **kwargs)`."""
    a = (shape_of(args[0]) or ()) if args else ()
    batch = math.prod(int(s) for s in a[:-2]) if len(a) > 2 else 1
    if name == "norm":
        return [], 0 if kwargs.get("ord", args[1] if len(args) > 1 else None) not in ("nuc", 2, -2) or len(a) < 2 \
            else batch * a[-2] * a[-1] * min(a[-2], a[-1])
    if name in ("inv", "det", "eigh"):
        _square(name, a)
        return [a], batch * a[-1] ** 3
    if name == "solve":
        # numpy broadcasts the stacks of a and b against each other (a copy of a per pair, then the answers)
        _square(name, a)
        b = shape_of(args[1]) if len(args) > 1 else ()
        b = b or ()
        tail = tuple(b[-1:]) if len(b) == 1 else tuple(b[-2:])
        lead = broadcast(tuple(a[:-2]), tuple(b[:-2]) if len(b) > 1 else ()) or ()
        pairs = math.prod(int(s) for s in lead)
        return [lead + tuple(a[-2:]), lead + tail], pairs * a[-1] ** 3 + pairs * math.prod(int(s) for s in tail) * a[-1]
    if len(a) < 2:
        raise np.linalg.LinAlgError(f"{len(a)}-dimensional array given. Array must be at least two-dimensional")
    m, n = int(a[-2]), int(a[-1])
    flops = batch * m * n * min(m, n)
    if name == "svd":
        full = kwargs.get("full_matrices", args[1] if len(args) > 1 else True)
        k = min(m, n)
        lead = tuple(a[:-2])
        return ([lead + (m, m), lead + (n, n)] if full else [lead + (m, k), lead + (k, n)]), flops
    # lstsq
    b = (shape_of(args[1]) or ()) if len(args) > 1 else ()
    cols = int(b[-1]) if len(b) == 2 else 1
    return [(n, cols)], flops + m * n * cols


def linalg_module(gate, interp) -> ModuleProxy:
    """`np.linalg` of one run, its functions bound to the run's gate."""
    def bound(name):
        fn = getattr(np.linalg, name)

        def call(*args, **kwargs):
            interp.check_data(args, kwargs)
            for k in kwargs:
                if k not in KEYWORDS[name]:
                    raise TypeError(f"{name}() got an unexpected keyword argument '{k}' (not available in flowgrad)")
            args = [gate.arg(a) for a in args]
            kwargs = {k: gate.arg(v) for k, v in kwargs.items()}
            gate.check_cost(name, Cost(), conversions(dict(enumerate(args))) + conversions(kwargs))
            shapes, flops = _costs(name, args, kwargs)
            gate.check_cost(name, Cost(outputs=shapes))
            limits = gate.limits
            if limits is not None and limits.max_op_flops is not None and flops > limits.max_op_flops:
                raise gate.B.LimitExceeded(f"np.linalg.{name} takes about {flops:,} multiply-adds; the limit is "
                                           f"max_op_flops = {limits.max_op_flops:,}")
            r = fn(*args, **kwargs)
            if isinstance(r, tuple) and hasattr(type(r), "_fields"):  # EighResult, SVDResult: numpy's own printing
                return type(r)(*(gate.result(x) for x in r))
            return gate.result(r)

        return call

    return ModuleProxy("numpy.linalg", {name: Builtin(name, bound(name), interp) for name in LINALG_NAMES})
