"""Every op that can make more elements than its largest input has a size rule on its table entry (`sizes=`),
and the rule covers what the op makes: the run's limits check those shapes before numpy allocates anything."""
import math

import numpy as np
from test_gradcheck import CASES  # noqa: I001 — the gradcheck cases, shared

from engine.ops import OPS

rng = np.random.default_rng(3)
_X = rng.uniform(-2, 2, (3, 4))
_EMPTY = np.zeros((0, 5, 7))
# cases for the ops without a derivative (gradcheck has none), and inputs that make an op outgrow them: a
# reduction over a zero-size dim, a product of a column by a row, broadcasting, concatenation
EXTRA = {
    "heaviside": [((_X, _X[:1]), ()), ((rng.uniform(size=(5, 1)), rng.uniform(size=(1, 6))), ())],  # issue 21
    "nonzero": [((_X > 0,), ()), ((np.ones((3, 4), dtype=bool),), ())],
    "index_select": [((_X, np.zeros(10, dtype=np.int64)), (0,))],
    "index": [((_X,), (np.zeros(10, dtype=np.int64),))],
    "adaptive_avg_pool2d": [((rng.uniform(size=(1, 1, 2, 2)),), ((5, 5),))],
    "eq": [((_X, _X[:1]), ()), ((rng.uniform(size=(5, 1)), rng.uniform(size=(1, 6))), ())],
    "ne": [((_X, _X.T[:, :1].T), ())], "lt": [((_X, 0.5), ())], "le": [((_X, _X), ())], "gt": [((_X, 0.0), ())],
    "ge": [((rng.uniform(size=(5, 1)), rng.uniform(size=(6,))), ())],
    "sign": [((_X,), ())], "invert": [((_X > 0,), ())],
    **{name: [((_X,), ()), ((np.array([np.nan, np.inf, -np.inf, 1.0]),), ()), ((np.arange(3),), ())]
       for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal")},
    "logical_and": [((rng.uniform(size=(5, 1)) > 0.5, rng.uniform(size=(6,)) > 0.5), ())],
    "logical_or": [((_X > 0, _X < 1), ())],
    **{f"bitwise_{w}": [((np.arange(5)[:, None], np.arange(6, dtype=np.int8)), ()), ((np.arange(6), 300), ())]
       for w in ("and", "or", "xor")},
    **{f"bitwise_{w}_shift": [((np.arange(5)[:, None], np.arange(6, dtype=np.int8)), ()), ((np.arange(6), 70), ())]
       for w in ("left", "right")},
    "isclose": [((rng.uniform(size=(5, 1)), rng.uniform(size=(1, 6)), 1e-5, 1e-8, False), ())],
    "argmax": [((_X,), (1, False)), ((_EMPTY,), (1, False))],
    "argmin": [((_X,), (0, True)), ((_EMPTY,), (2, True))],
    "argsort": [((_X,), (1, False))], "topk_indices": [((_X,), (2, 1, True))],
    "sum_dim": [((_EMPTY,), ((0,), False))], "mean_dim": [((_EMPTY,), ((0,), True))],
    "prod_dim": [((_EMPTY,), (0, False))], "logsumexp": [((_EMPTY,), ((0,), False))],
    "var": [((_EMPTY,), ((0,), 1, False))], "std": [((_EMPTY,), ((0,), 1, False))],
    "vector_norm": [((_EMPTY,), (2, (0,), False))],
    "mm": [((rng.uniform(size=(40, 1)), rng.uniform(size=(1, 40))), ())],
    "bmm": [((rng.uniform(size=(2, 40, 1)), rng.uniform(size=(2, 1, 40))), ())],
    "addmm": [((rng.uniform(size=(40,)), rng.uniform(size=(40, 1)), rng.uniform(size=(1, 40))), ())],
    "mv": [((np.zeros((30, 0)), np.zeros((0,))), ())],
    "add": [((rng.uniform(size=(30, 1)), rng.uniform(size=(1, 30))), ())],
    "cat": [(([_X, _X],), (0,))], "stack": [(([_X, _X],), (0,))],
    "expand": [((_X[:1],), ((50, 4),))],
    "floor_divide": [((_X, rng.uniform(1, 2, (5, 1, 4))), ())], "rfloor_divide": [((_X,), (3.0,))],
    "rremainder": [((_X,), (3.0,))],
    "bernoulli_scalar_draw": [((_X,), (np.ones(_X.shape),))],
    "all": [((_X,), (None, False)), ((_EMPTY,), ((0,), False))], "any": [((_X,), ((1,), True)), ((_EMPTY,), ((0,), True))],
    "repeat": [((_X,), ((3, 2),))],
    "convolution": [((rng.uniform(size=(1, 1, 8, 8)), rng.uniform(size=(16, 1, 1, 1)), None), ((1, 1), (0, 0), (1, 1), 1))],
    # a long sequence of one feature through a wider layer: the states outgrow every input
    "cummax_indices": [((_X,), (1,))], "cummin_indices": [((_X,), (0,))],  # issue 21 §3
    # issue 21 (engine/ops_stats.py): ops without a gradient
    "median_indices": [((_X,), (1, False))], "kthvalue_indices": [((_X,), (2, 1, False))],
    "mode_indices": [((_X,), (0, True))], "bincount": [((np.array([0, 3, 3, 1]),), (10,))],
    "bincount_weighted": [((np.array([0, 3, 3, 1]), np.ones(4)), (2,))],
    "linalg_slogdet_sign": [((np.eye(3),), ())],
    "lstm_layer": [((rng.uniform(size=(40, 1, 1)), *(rng.uniform(size=s) for s in ((20, 1), (20, 5), (20,), (20,))),
                     np.zeros((1, 5)), np.zeros((1, 5))), (False,))],
    "lstm_cell_state": [((rng.uniform(size=(40, 1, 1)), *(rng.uniform(size=s) for s in ((20, 1), (20, 5), (20,), (20,))),
                          np.zeros((1, 5)), np.zeros((1, 5))), (False,))],
}


def _cases(name):
    return list(CASES.get(name, [])) + EXTRA.get(name, [])


def _size(x):
    return sum(int(np.size(a)) for a in x) if isinstance(x, list) else int(np.size(x))


def _outputs(op, inputs, params):
    arrays = [None if x is None else ([np.asarray(a) for a in x] if isinstance(x, list) else x) for x in inputs]
    if op.variadic:  # cat, stack: apply hands the rule the list of input arrays
        return arrays[0], op.forward(arrays[0], *params)
    return arrays, op.forward(*arrays, *params)


def test_every_op_has_cases():
    missing = sorted(name for name in OPS if not _cases(name))
    assert not missing, f"add cases for {missing} (tests/engine/test_gradcheck.py or EXTRA here)"


def test_an_op_that_outgrows_its_inputs_has_a_size_rule_that_covers_it():
    unruled, short = [], []
    for name, op in OPS.items():
        for inputs, params in _cases(name):
            try:
                arrays, out = _outputs(op, inputs, params)
            except ValueError:  # numpy refuses the case (argmax of an empty dim): nothing is allocated
                continue
            largest = max([_size(a) for a in arrays if a is not None] + [1])
            if int(np.size(out)) <= largest:
                continue
            if op.sizes is None:
                unruled.append(name)
                continue
            biggest = max(math.prod(map(int, shape)) for shape in op.sizes(arrays, params))
            if biggest < np.size(out):
                short.append((name, np.shape(out), list(op.sizes(arrays, params))))
    assert sorted(set(unruled)) == [], "ops that outgrow their inputs without `sizes=`"
    assert short == []


def test_the_size_rules_do_not_fail_on_the_cases():
    """Every rule runs on its op's cases (shapes only) and gives shapes of ints."""
    for name, op in OPS.items():
        if op.sizes is None:
            continue
        for inputs, params in _cases(name):
            arrays, _ = _outputs(op, inputs, params)
            for shape in op.sizes(arrays, params):
                assert all(int(n) == n for n in shape), (name, shape)
