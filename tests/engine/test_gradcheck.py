"""Finite-difference gradcheck (float64) over every entry of the op table.

Every differentiable op must have cases here (a test fails otherwise), including broadcasting and
0-d scalars, so a new op cannot land untested.
"""
import numpy as np
import pytest

from engine.ops import OPS
from engine.tensor_core import Tensor, apply

rng = np.random.default_rng(0)


def r(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape)


def pos(*shape):
    return rng.uniform(0.5, 2.0, shape)


def distinct(*shape):
    """Values far apart, so max/min/relu/abs/clamp are differentiable at every point."""
    n = int(np.prod(shape)) if shape else 1
    vals = rng.permutation(n) * 0.37 - n * 0.17 + 0.05
    return vals.reshape(shape)


IDX = np.array([2, 0, 2])
# op name -> list of (inputs, params); inputs that are numpy float arrays get gradients checked.
CASES = {
    "add": [((r(3, 4), r(3, 4)), ()), ((r(3, 4), r(4)), ()), ((r(3, 1), r(1, 4)), ()), ((r(), r(2, 3)), ())],
    "sub": [((r(3, 4), r(3, 4)), ()), ((r(2, 3), r(3)), ()), ((r(), r()), ())],
    "mul": [((r(3, 4), r(3, 4)), ()), ((r(3, 4), r(3, 1)), ()), ((r(), r(5)), ())],
    "div": [((r(3, 4), pos(3, 4)), ()), ((r(2, 3), pos(3)), ()), ((r(), pos()), ())],
    "pow": [((pos(3, 4), r(3, 4)), ()), ((pos(2, 3), r(3)), ()), ((pos(), r()), ())],
    "maximum": [((distinct(3, 4), distinct(3, 4) + 0.1), ()), ((distinct(2, 3), distinct(3) + 0.11), ())],
    "minimum": [((distinct(3, 4), distinct(3, 4) + 0.1), ()), ((distinct(2, 3), distinct(3) + 0.11), ())],
    "where": [((r(3, 4) > 0, r(3, 4), r(3, 4)), ()), ((r(3, 4) > 0, r(4), r(3, 1)), ())],
    "pow_scalar": [((pos(3, 4),), (3,)), ((pos(), ), (0.5,)), ((r(4),), (2,)), ((r(2),), (0,))],
    "rpow": [((r(3, 4),), (2.0,)), ((r(),), (3.0,))],
    "rsub": [((r(3, 4),), (1.5,)), ((r(),), (2,))],
    "neg": [((r(3, 4),), ()), ((r(),), ())],
    "exp": [((r(3, 4),), ()), ((r(),), ())],
    "log": [((pos(3, 4),), ()), ((pos(),), ())],
    "sin": [((r(3, 4),), ()), ((r(),), ())],
    "cos": [((r(3, 4),), ()), ((r(),), ())],
    "tanh": [((r(3, 4),), ()), ((r(),), ())],
    "sigmoid": [((r(3, 4, low=-6, high=6),), ()), ((r(),), ())],
    "relu": [((distinct(3, 4),), ()), ((distinct(),), ())],
    "abs": [((distinct(3, 4),), ()), ((distinct(),), ())],
    "sqrt": [((pos(3, 4),), ()), ((pos(),), ())],
    "reciprocal": [((pos(3, 4),), ()), ((-pos(),), ())],
    "clamp": [((distinct(3, 4),), (-0.7, 0.4)), ((distinct(5),), (None, 0.03)), ((distinct(5),), (0.03, None))],
    "to_copy": [((r(3, 4),), (np.dtype(np.float64),))],
    "sum": [((r(3, 4),), ()), ((r(),), ())],
    "sum_dim": [((r(3, 4),), ((0,), False)), ((r(3, 4, 2),), ((1, 2), True)), ((r(3, 4),), ((1,), False))],
    "mean": [((r(3, 4),), ()), ((r(),), ())],
    "mean_dim": [((r(3, 4),), ((0,), False)), ((r(3, 4, 2),), ((1, 2), True))],
    "norm": [((r(3, 4),), ()), ((r(5),), ())],
    "max": [((distinct(3, 4),), ())],
    "min": [((distinct(3, 4),), ())],
    "max_dim": [((distinct(3, 4),), (1, False)), ((distinct(3, 4),), (0, True))],
    "min_dim": [((distinct(3, 4),), (1, False)), ((distinct(3, 4),), (0, True))],
    "view": [((r(3, 4),), ((2, 6),)), ((r(),), ((1,),))],
    "unsafe_view": [((r(3, 4),), ((12,),))],
    "clone": [((r(3, 4),), ())],
    "t": [((r(3, 4),), ()), ((r(4),), ())],
    "transpose": [((r(2, 3, 4),), (0, 2))],
    "permute": [((r(2, 3, 4),), ((2, 0, 1),))],
    "squeeze": [((r(3, 1, 4),), ())],
    "squeeze_dim": [((r(3, 1, 4),), (1,))],
    "squeeze_dims": [((r(1, 3, 1),), ((0, 2),))],
    "matmul_squeeze": [((r(1, 3),), ((0,),))],
    "unsqueeze": [((r(3, 4),), (1,))],
    "expand": [((r(3, 1),), ((2, 3, 4),))],
    "select": [((r(3, 4),), ((slice(None), 2),)), ((r(3, 4),), ((1,),))],
    "slice": [((r(5, 4),), ((slice(1, 4, 2),),)), ((r(3, 6),), ((slice(None), slice(0, 3)),))],
    "index": [((r(4, 3),), (IDX,)), ((r(4, 3),), ((IDX, np.array([0, 1, 2])),))],
    "cat": [(([r(2, 3), r(4, 3)],), (0,)), (([r(2, 3), r(2, 1), r(2, 2)],), (1,))],
    "stack": [(([r(2, 3), r(2, 3)],), (0,)), (([r(3), r(3), r(3)],), (1,))],
    "mm": [((r(3, 4), r(4, 2)), ())],
    "mv": [((r(3, 4), r(4)), ())],
    "dot": [((r(4), r(4)), ())],
    "bmm": [((r(2, 3, 4), r(2, 4, 5)), ()), ((r(2, 3, 4), r(1, 4, 5)), ())],
    "addmm": [((r(2), r(3, 4), r(4, 2)), ()), ((r(3, 2), r(3, 4), r(4, 2)), ())],
    "softmax": [((r(3, 4),), (1,)), ((r(5),), (0,))],
    "log_softmax": [((r(3, 4),), (1,)), ((r(5),), (0,))],
    "mse_loss": [((r(3, 4), r(3, 4)), ("mean",)), ((r(3, 4), r(3, 4)), ("sum",)), ((r(5), r(5)), ("none",))],
    "nll_loss": [((r(4, 3), np.array([0, 2, 1, 2])), ("mean",)), ((r(4, 3), np.array([0, 2, 1, 2])), ("sum",)),
                 ((r(3), np.array(1)), ("mean",)),
                 ((r(5, 3), np.array([0, 2, 1, 2, 1])), ("mean", pos(3), 1)),
                 ((r(5, 3), np.array([0, 2, 1, 2, 1])), ("sum", pos(3), -100)),
                 ((r(4, 3), np.array([0, 2, 1, 2])), ("none", None, 2))],
    "binary_cross_entropy": [((rng.uniform(0.1, 0.9, (3, 4)), rng.uniform(0, 1, (3, 4))), ("mean",)),
                             ((rng.uniform(0.1, 0.9, (5,)), rng.uniform(0, 1, (5,))), ("sum",)),
                             ((rng.uniform(0.1, 0.9, (3, 4)), rng.uniform(0, 1, (3, 4))), ("mean", pos(4)))],
    "binary_cross_entropy_with_logits": [((r(3, 4), rng.uniform(0, 1, (3, 4))), ("mean",)),
                                         ((r(5), rng.uniform(0, 1, (5,))), ("none",)),
                                         ((r(3, 4), rng.uniform(0, 1, (3, 4))), ("mean", pos(4), pos(4))),
                                         ((r(3, 4), rng.uniform(0, 1, (3, 4))), ("sum", None, pos(3, 1)))],
    # Layers: (stride, padding, dilation, groups) for convolution; 1-tuples are the 1-D forms.
    "convolution": [((r(2, 3, 5, 6), r(4, 3, 3, 2), r(4)), ((1, 1), (0, 0), (1, 1), 1)),
                    ((r(1, 4, 6, 5), r(4, 2, 3, 3), r(4)), ((2, 1), (1, 2), (1, 2), 2)),
                    ((r(2, 3, 7), r(2, 3, 3), r(2)), ((2,), (1,), (2,), 1))],
    "constant_pad_nd": [((r(2, 3, 4),), ((1, 2, 0, 1), 0.5)), ((r(3, 4),), ((-1, 2), 0.0))],
    "max_pool2d": [((distinct(2, 2, 5, 6),), ((2, 2), (2, 2), (0, 0), (1, 1), False)),
                   ((distinct(1, 2, 5, 5),), ((3, 2), (2, 1), (1, 1), (1, 2), True)),
                   ((distinct(2, 4, 4),), ((2, 2), (1, 1), (1, 0), (1, 1), False))],
    "avg_pool2d": [((r(2, 2, 5, 6),), ((2, 2), (2, 2), (0, 0), False, True, None)),
                   ((r(1, 2, 5, 5),), ((3, 3), (2, 2), (1, 1), True, False, None)),
                   ((r(2, 4, 4),), ((2, 3), (1, 2), (1, 1), False, True, 4))],
    "adaptive_avg_pool2d": [((r(2, 2, 5, 7),), ((3, 4),)), ((r(2, 4, 4),), ((4, 2),))],
    # (x, weight, bias, running_mean, running_var), (training, eps); float32 running stats get no gradient
    "batch_norm": [((r(4, 3), r(3), r(3), None, None), (True, 1e-5)),
                   ((r(3, 2, 4, 2), r(2), r(2), None, None), (True, 1e-3)),
                   ((r(3, 2, 5), None, r(2), None, None), (True, 1e-5)),
                   ((r(3, 2, 5), r(2), r(2), r(2).astype(np.float32), pos(2).astype(np.float32)), (False, 1e-5))],
    "layer_norm": [((r(4, 5), r(5), r(5)), ((5,), 1e-5)), ((r(2, 3, 4), r(3, 4), None), ((3, 4), 1e-3)),
                   ((r(3, 4), None, None), ((4,), 1e-5))],
    "gelu": [((r(3, 4, low=-4, high=4),), ("none",)), ((r(3, 4, low=-4, high=4),), ("tanh",))],
    "leaky_relu": [((distinct(3, 4),), (0.01,)), ((distinct(5),), (0.3,))],
    "elu": [((distinct(3, 4),), (1.0, 1.0, 1.0)), ((distinct(5),), (1.6732632423543772, 1.0507009873554805, 1.0))],
    "celu": [((distinct(3, 4),), (0.5,))],
    "silu": [((r(3, 4, low=-5, high=5),), ())],
    "softplus": [((r(3, 4, low=-5, high=5),), (1.0, 20.0)), ((r(3, 4, low=-5, high=5),), (2.0, 3.0))],
    "mish": [((r(3, 4, low=-5, high=5),), ())],
    "hardtanh": [((distinct(3, 4),), (-1.0, 1.0)), ((distinct(3, 4) * 3,), (0.0, 6.0))],
    "logsigmoid": [((r(3, 4, low=-6, high=6),), ())],
    "hardswish": [((distinct(3, 4) * 2,), ())],
    "hardsigmoid": [((distinct(3, 4) * 2,), ())],
    "threshold": [((distinct(3, 4),), (0.1, 20.0))],
    "mul_scalar": [((r(3, 4),), (0.9,))],
    "div_scalar": [((r(3, 4),), (4.0,))],
    "masked_fill": [((r(3, 4), r(3, 4) > 0), (0.0,)), ((r(3, 4), r(4) > 0), (1.5,))],
    "smooth_l1_loss": [((distinct(3, 4), distinct(3, 4) * 0.3), ("mean", 1.0)),
                       ((distinct(5), distinct(5) * 0.2), ("sum", 0.5)), ((distinct(5), distinct(5) * 0.1), ("none", 2.0))],
    "huber_loss": [((distinct(3, 4), distinct(3, 4) * 0.3), ("mean", 1.0)), ((distinct(5), distinct(5) * 0.2), ("none", 0.5))],
    "unsafe_chunk": [((r(3, 8),), (1, 4, 1)), ((r(2, 9),), (2, 3, 1))],
    # (x, w_ih, w_hh, b_ih, b_hh, h0, c0), (reverse,)
    "lstm_layer": [((r(3, 2, 4), r(12, 4), r(12, 3), r(12), r(12), r(2, 3), r(2, 3)), (False,)),
                   ((r(4, 1, 2), r(8, 2), r(8, 2), r(8), r(8), r(1, 2), r(1, 2)), (True,))],
    "lstm_cell_state": [((r(3, 2, 4), r(12, 4), r(12, 3), r(12), r(12), r(2, 3), r(2, 3)), (False,)),
                        ((r(4, 1, 2), r(8, 2), r(8, 2), r(8), r(8), r(1, 2), r(1, 2)), (True,))],
    "embedding": [((r(5, 3), np.array([[1, 4, 1], [0, 2, 4]])), (None,)), ((r(5, 3), np.array([0, 3, 0, 2])), (1,))],
    # bags [0, 3), [3, 3) (empty), [3, 7): sums, means (the padding index 2 left out) and maxima (no ties)
    "embedding_bag": [((r(5, 3), np.array([1, 4, 1, 0, 2, 4, 2]), np.array([0, 3, 3])), ("sum", None, False)),
                      ((r(5, 3), np.array([1, 4, 1, 0, 2, 4, 2]), np.array([0, 3, 3, 7])), ("mean", 2, True)),
                      ((distinct(5, 3), np.array([1, 4, 1, 0, 2, 4, 3]), np.array([0, 3, 3])), ("max", None, False))],
}
# issue 10: F.pad's reflect / replicate / circular modes (conv padding_mode), negative pads crop
CASES.update({
    # reflect / replicate entries take (pad,): negative pads crop
    "reflection_pad1d": [((r(2, 3, 5),), ((2, 1),)), ((r(3, 5),), ((-1, 3),))],
    "reflection_pad2d": [((r(1, 2, 4, 5),), ((1, 2, 3, 0),)), ((r(2, 4, 3),), ((2, 2, 1, 1),))],
    "replication_pad1d": [((r(2, 3, 4),), ((3, 5),)), ((r(3, 4),), ((0, -2),))],
    "replication_pad2d": [((r(1, 2, 3, 4),), ((2, 1, 4, 0),))],
    "nll_loss2d": [((r(2, 3, 2, 4), np.array([[[0, 2, 1, -100], [2, 2, 0, 1]], [[1, 0, 0, 2], [-100, 1, 2, 0]]])),
                    ("mean", None, -100)),
                   ((r(2, 3, 1, 3), np.array([[[0, 2, 1]], [[2, 1, 1]]])), ("none", np.array([0.5, 2.0, 1.0]), 1)),
                   ((r(1, 2, 2, 2), np.array([[[0, 1], [1, 1]]])), ("sum", np.array([0.5, 2.0]), -100))],
    "unbind_step": [((r(4, 2, 3),), (0,)), ((r(3, 5),), (2,))],
    "circular_pad": [((r(2, 3, 5),), ((2, 5), "circular")), ((r(1, 2, 4, 5),), ((1, 2, 2, 1), "circular")),
                     ((r(2, 5),), ((-1, 2), "circular"))],
})

# Ops that appear inside create_graph backward passes: the backward of indexing (its own backward indexes again),
# the copy a leaf's `.grad` is under create_graph, erf (gelu's derivative).
CASES.update({
    "select_backward": [((r(4),), ((3, 4), (1,), False)), ((r(),), ((2, 3), (1, 2), False))],
    "slice_backward": [((r(3, 2),), ((3, 5), (slice(None), slice(1, 5, 2)), False))],
    "index_backward": [((r(3, 2),), ((4, 2), IDX, True)), ((r(3),), ((4, 3), (IDX, np.array([0, 1, 2])), True))],
    "grad_copy": [((r(2, 3),), ()), ((r(),), ())],
})

# t[key] = v under autograd (issue 21 section 3): an advanced key and a view's key.
CASES.update({
    "index_put": [((r(4, 3), r(2)), ((np.array([0, 3]), np.array([1, 2])),)), ((r(4, 3), r(3)), (np.array([True, False, True, False]),))],
    "copy_slices": [((r(4, 3), r(3)), ((1,),)), ((r(4, 3), r(4, 1)), ((slice(None), slice(1, 3)),))],
    "overwrite_zero": [((r(2, 3),), (np.zeros((2, 3)),))],
    "overwrite_fill": [((r(2, 3),), (np.full((2, 3), 1.5),))],
    "overwrite_normal": [((r(2, 3),), (np.arange(6.0).reshape(2, 3),))],
    "overwrite_uniform": [((r(4),), (np.linspace(0, 1, 4),))],
    "overwrite_bernoulli": [((r(4),), (np.array([0.0, 1.0, 1.0, 0.0]),))],
    "overwrite_bernoulli_tensor": [((r(4), r(4, low=0.1, high=0.9)), (np.array([1.0, 0.0, 1.0, 0.0]),)),
                                   ((r(2, 4), r(4, low=0.1, high=0.9)), (np.ones((2, 4)),))],
    "bernoulli_draw": [((r(4, low=0.1, high=0.9),), (np.array([1.0, 0.0, 1.0, 0.0]),))],
    # a view taken again from its base after an in-place op wrote through it: row 1 of a 4 x 3 (strided), a
    # column read as a copy (no strides)
    "as_strided_view": [((r(4, 3),), ((np.array([1, 1, 1]), np.array([0, 1, 2])), (3, (1,)))),
                        ((r(4, 3),), ((np.array([0, 1, 2, 3]), np.array([2, 2, 2, 2])), None))],
    "overwrite_random_full": [((r(4),), (np.array([3.0, 1.0, 4.0, 1.0]),))],
    "overwrite_random_to": [((r(4),), (np.array([2.0, 0.0, 4.0, 1.0]),))],
    "overwrite_random_from_to": [((r(4),), (np.array([1.0, 3.0, 2.0, 4.0]),))],
    "overwrite_fill_tensor": [((r(2, 3), r()), ())],
    "copy_into": [((r(4, 3), r(3)), (Ellipsis,)), ((r(2, 3), r(2, 3)), (Ellipsis,))],
})

# Tensor functions tutorials use (issue 9 section 5); index tensors are int64 inputs without gradients.
GIDX = np.array([[0, 2, 1, 0], [2, 2, 0, 1]])
CASES.update({
    "logsumexp": [((r(3, 4),), ((1,), False)), ((r(3, 4),), ((0, 1), True)), ((r(5),), (None, False))],
    "gather": [((r(3, 4), GIDX), (0,)), ((r(3, 4), np.array([[3, 0], [1, 1], [2, 2]])), (1,))],
    "scatter": [((r(3, 4), np.array([[0, 1, 2, 0]]), r(1, 4)), (0,)), ((r(3, 4), np.array([[3], [0], [1]]), r(3, 1)), (1,))],
    "scatter_value": [((r(3, 4), np.array([[0, 1, 2, 0]])), (0, 1.5))],
    "scatter_add": [((r(3, 4), GIDX, r(2, 4)), (0,)), ((r(3, 4), np.array([[3, 3], [0, 1], [1, 1]]), r(3, 2)), (1,))],
    "masked_fill_tensor": [((r(3, 4), r(3, 4) > 0, r()), ()), ((r(3, 4), r(4) > 0, r()), ())],
    "cumsum": [((r(3, 4),), (1,)), ((r(5),), (0,))],
    "cumprod": [((r(3, 4),), (1,)), ((np.array([[1.5, 0.0, 2.0, -1.2], [0.0, 0.7, 0.0, 1.3], [0.8, 1.1, -0.9, 1.4]]),), (1,)),
                ((np.array([0.5, -2.0, 0.0]),), (0,))],
    "prod": [((r(3, 4),), ()), ((np.array([[1.5, 0.0, 2.0], [0.7, 1.2, -1.1]]),), ()),
             ((np.array([[1.5, 0.0, 2.0], [0.7, 0.0, -1.1]]),), ())],
    "prod_dim": [((r(3, 4),), (1, False)), ((np.array([[1.5, 0.0, 2.0], [0.0, 0.0, -1.1], [0.3, 0.9, 1.2]]),), (1, True))],
    "sort": [((distinct(3, 4),), (1, False)), ((distinct(3, 4),), (0, True)), ((distinct(5),), (0, True))],
    "sort_stable": [((distinct(3, 4),), (1, True))],
    "topk": [((distinct(3, 4),), (2, 1, True)), ((distinct(3, 4),), (1, 0, False))],
    "repeat": [((r(2, 3),), ((2, 1),)), ((r(3),), ((2, 1, 2),)), ((r(),), ((3,),))],
    "split": [((r(5, 4),), (0, 2, 4)), ((r(3, 4),), (1, 0, 2))],
    "split_with_sizes": [((r(5, 4),), (0, 1, 5)), ((r(3, 4),), (1, 3, 4))],
    "tril": [((r(4, 4),), (0,)), ((r(2, 3, 4),), (-1,))],
    "triu": [((r(4, 4),), (1,)), ((r(3, 5),), (0,))],
    "diag_embed": [((r(3),), (0,)), ((r(2),), (-1,))],
    "diag": [((r(4, 4),), (0,)), ((r(3, 5),), (1,))],
    "diagonal": [((r(3, 3),), (0, 0, 1)), ((r(2, 3, 3),), (0, 1, 2))],
    "flip": [((r(3, 4),), ((0,),)), ((r(2, 3, 4),), ((0, 2),))],
    "roll": [((r(3, 4),), ((1,), (0,))), ((r(3, 4),), ((2,), None)), ((r(3, 4),), ((1, -1), (0, 1)))],
    "index_select": [((r(4, 3), np.array([2, 0, 2])), (0,)), ((r(3, 4), np.array([1, 3])), (1,))],
    "clamp_min": [((distinct(3, 4),), (0.05,))],
    "clamp_max": [((distinct(3, 4),), (0.05,))],
    "erf": [((r(3, 4),), ()), ((r(),), ())],
    "log1p": [((pos(3, 4),), ())],
    "expm1": [((r(3, 4),), ())],
    "atan2": [((r(3, 4), r(3, 4)), ()), ((r(3, 4), pos(4)), ())],
    "hypot": [((r(3, 4), r(3, 4)), ()), ((r(3, 4), pos(4)), ())],  # issue 21 §3
    "xlogy": [((r(3, 4), pos(3, 4)), ()), ((r(3, 4), pos(4)), ())],
    "floor": [((r(3, 4),), ())],
    "ceil": [((r(3, 4),), ())],
    "round": [((r(3, 4),), ())],
    "sign": [((r(3, 4),), ())],
    "nan_to_num": [((r(3, 4),), (0.0, None, None)), ((r(3, 4),), (1.0, 2.0, -2.0))],
    "round_decimals": [((r(3, 4),), (1,))],
    "var": [((r(3, 4),), ((1,), 1, False)), ((r(3, 4),), (None, 0, False)), ((r(3, 4),), ((0,), 1, True))],
    "std": [((r(3, 4),), ((1,), 1, False)), ((r(3, 4),), (None, 1, False)), ((r(3, 4),), ((0,), 0, True))],
    "vector_norm": [((r(3, 4),), (2, (1,), False)), ((distinct(3, 4),), (1, None, False)), ((distinct(3, 4),), (np.inf, (1,), True)),
                    ((r(3, 4),), (3, None, False)), ((distinct(3, 4),), (-np.inf, (0,), False)), ((r(3, 4),), (0.5, (0,), False))],
    "norm_dim": [((r(3, 4),), (2.0, (1,), False)), ((distinct(3, 4),), (1.0, (0,), True)), ((r(3, 4),), (3.0, (1,), False))],
    "reflection_pad1d": [((r(2, 3, 5),), ((2, 1),))],
    "reflection_pad2d": [((r(1, 2, 4, 5),), ((1, 2, 2, 1),))],
    "reflection_pad3d": [((r(1, 1, 3, 3, 3),), ((1, 1, 2, 0, 1, 2),))],
    "replication_pad1d": [((r(2, 3, 4),), ((3, 1),))],
    "replication_pad2d": [((r(1, 2, 3, 4),), ((2, 1, 0, 3),))],
    "replication_pad3d": [((r(1, 1, 2, 3, 2),), ((1, 0, 2, 1, 0, 1),))],
})

# issue 21: squeeze_/unsqueeze_ under autograd, index_add, masked_select, addmm with beta/alpha
CASES.update({
    "squeeze_inplace": [((r(3, 1, 4),), ())],
    "squeeze_dim_inplace": [((r(3, 1, 4),), (1,)), ((r(3, 4),), (0,))],
    "squeeze_dims_inplace": [((r(1, 3, 1),), ((0, 2),))],
    "unsqueeze_inplace": [((r(3, 4),), (2,))],
    "trace": [((r(3, 3),), ()), ((r(2, 4),), ())],
    "lerp_scalar": [((r(3, 4), r(3, 4)), (0.3,)), ((r(4), r(3, 4)), (0.75,))],
    "lerp_tensor": [((r(3, 4), r(3, 4), r(3, 4, low=0.0, high=1.0)), ()), ((r(4), r(3, 1), r(4, low=0.0, high=1.0)), ())],
    "clone_contiguous": [((r(3, 4),), ()), ((r(2, 3, 2),), ())],  # (the harness perturbs a row-major input in place)
    "index_add": [((r(4, 3), np.array([2, 0, 2]), r(3, 3)), (0, 1)), ((r(3, 4), np.array([1, 3]), r(3, 2)), (1, -0.5))],
    "masked_select": [((r(3, 4), r(3, 4) > 0.5), ()), ((r(4), np.array([[True, False, True, True], [False] * 4])), ())],
    "addmm_scaled": [((r(2), r(3, 4), r(4, 2)), (0.5, 2.0)), ((r(3, 2), r(3, 4), r(4, 2)), (0, -1.5)),
                     ((r(3, 1), r(3, 4), r(4, 2)), (1, 1))],
})

DIFFERENTIABLE = sorted(n for n, op in OPS.items() if op.grad_fn is not None)


# torch.linalg (engine/linalg_ops.py): singular values (distinct ones: their vectors are then unique up to sign),
# the singular vectors (only under create_graph), amax/amin
_WIDE, _TALL, _SQUARE = r(3, 5), r(5, 3), r(4, 4)
CASES.update({
    "svdvals": [((_WIDE,), ()), ((_TALL,), ()), ((r(2, 3, 3),), ())],
    "svd_u": [((_WIDE,), ()), ((_TALL,), ()), ((_SQUARE,), ())],
    "svd_vh": [((_WIDE,), ()), ((_TALL,), ()), ((r(2, 3, 4),), ())],
    "amax": [((distinct(3, 4),), ((1,), False)), ((distinct(3, 4),), ((0, 1), True))],  # ties: test_linalg_vs_torch
    "amin": [((distinct(3, 4),), ((0,), True)), ((distinct(2, 3),), ((0, 1), False))],
})


# issue 21 §3 (engine/ops_linalg_more.py): determinants, inverses (well-conditioned), cross products, distances
# (random values: no zero difference for p <= 1, no tie for p = inf), running extremes (no ties)
_EYE3 = 3 * np.eye(3)
CASES.update({
    "linalg_det": [((r(3, 3),), ()), ((r(2, 3, 3),), ()), ((r(1, 1),), ())],
    "linalg_inv": [((r(3, 3) + _EYE3,), ()), ((r(2, 3, 3) + _EYE3,), ())],
    "linalg_cross": [((r(4, 3), r(4, 3)), (-1,)), ((r(2, 3), r(1, 3)), (-1,)), ((r(3, 4), r(3, 4)), (-2,))],
    "cdist": [((r(4, 3), r(5, 3)), (2.0,)), ((r(4, 3), r(5, 3)), (1.0,)),
              ((r(4, 3), r(5, 3)), (np.inf,)), ((r(4, 3), r(5, 3)), (0.5,)),
              ((r(2, 4, 3), r(5, 3)), (3.0,)), ((r(3, 2), r(2, 2)), (0.0,))],
    "euclidean_dist": [((r(4, 3), r(5, 3)), ()), ((r(2, 4, 3), r(1, 5, 3)), ())],
    "cummax": [((distinct(3, 4),), (0,)), ((distinct(3, 4),), (1,))],
    "cummin": [((distinct(3, 4),), (0,)), ((distinct(5),), (0,))],
})


# issue 21 (engine/ops_stats.py): medians (no ties: the gradient goes to one element), nansum, distances (no zero
# difference), the fused products (denominators away from 0) and add / sub with alpha
CASES.update({
    "median": [((distinct(7),), ()), ((distinct(2, 4),), ())],
    "median_dim": [((distinct(3, 4),), (1, False)), ((distinct(3, 5),), (0, True))],
    "nansum": [((r(3, 4),), (None, False)), ((r(3, 4),), ((1,), True)), ((r(2, 3, 4),), ((0, 2), False))],
    "dist": [((r(3, 4), r(3, 4)), (2.0,)), ((r(3, 4), r(4)), (1.0,)), ((r(3, 4), r(3, 1)), (3.0,)),
             ((r(5), r(5)), (np.inf,))],  # (p = 0: torch's gradient is undefined, the engine's zeros)
    "addcmul": [((r(3, 4), r(3, 4), r(3, 4)), (0.5,)), ((r(4), r(3, 4), r(3, 1)), (-2.0,))],
    "addcdiv": [((r(3, 4), r(3, 4), pos(3, 4)), (0.5,)), ((r(1), r(3, 4), pos(4)), (3.0,))],
    "add_scaled": [((r(3, 4), r(3, 4)), (0.3,)), ((r(3, 4), r(4)), (-2.0,))],
    "upsample_nearest1d": [((r(2, 1, 5),), ((7,), (1.5,))), ((r(1, 2, 4),), ((8,), (None,))), ((r(1, 1, 6),), ((4,), (None,)))],
    "upsample_nearest2d": [((r(1, 1, 3, 4),), ((6, 8), (2.0, 2.0))), ((r(1, 2, 3, 4),), ((5, 7), (None, None))),
                           ((r(1, 1, 3, 4),), ((1, 6), (0.5, 1.5)))],
    "unfold_backward": [((r(3, 4, 2),), ((3, 5), 1, 2, 1)), ((r(2, 2, 2, 3),), ((2, 6, 2), 1, 3, 2))],
    "pack_padded_sequence": [((r(4, 3, 2),), ((3, 2, 2, 1), False)), ((r(2, 5, 1),), ((2, 2, 1), True))],
    "upsample_linear1d": [((r(2, 1, 5),), ((8,), False, (1.6,))), ((r(1, 2, 4),), ((3,), True, (None,)))],
    "upsample_bilinear2d": [((r(1, 1, 3, 4),), ((6, 5), False, (2.0, 1.25))), ((r(1, 2, 3, 3),), ((4, 2), True, (None, None)))],
    "upsample_bicubic2d": [((r(1, 1, 3, 4),), ((6, 5), False, (2.0, 1.25))), ((r(1, 2, 4, 3),), ((2, 5), True, (None, None)))],
    "upsample_linear1d_backward": [((r(2, 1, 8),), ((2, 1, 5), (8,), False, (1.6,)))],
    "upsample_bilinear2d_backward": [((r(1, 1, 6, 5),), ((1, 1, 3, 4), (6, 5), False, (2.0, 1.25)))],
    "upsample_bicubic2d_backward": [((r(1, 2, 2, 5),), ((1, 2, 4, 3), (2, 5), True, (None, None)))],
    "unfold": [((r(3, 5),), (1, 2, 1)), ((r(2, 6, 2),), (1, 3, 2)), ((r(4),), (0, 4, 1)), ((r(),), (0, 1, 1))],
    "sub_scaled": [((r(3, 4), r(3, 4)), (0.3,)), ((r(3, 1), r(4)), (5.0,))],
})


# issue 21 (engine/ops_linalg_solve.py): solvers and factorisations; symmetric positive-definite matrices with
# distinct eigenvalues (eigenvectors unique up to sign), well-conditioned square ones
def spd(n, batch=()):
    m = rng.normal(size=batch + (n + 2, n))
    return np.swapaxes(m, -1, -2) @ m + np.eye(n)


_SQ = r(3, 3) + 3 * np.eye(3)
CASES.update({
    "linalg_solve": [((_SQ, r(3, 2)), (False, True)), ((_SQ, r(3)), (True, True)), ((_SQ, r(2, 3)), (False, False)),
                     ((r(2, 3, 3) + 3 * np.eye(3), r(2, 3, 1)), (False, True))],
    "linalg_pinv": [((r(5, 3),), (1e-7,)), ((r(3, 5),), (1e-7,)), ((_SQ,), (1e-7,))],
    "linalg_lstsq": [((r(6, 3), r(6, 2)), (False,)), ((r(5, 2), r(5)), (True,))],
    "linalg_eigh_values": [((spd(3),), (False,)), ((spd(4),), (True,))],
    "linalg_eigh_vectors": [((spd(3),), (False,)), ((spd(3, (2,)),), (True,))],
    "linalg_qr_q": [((r(4, 3),), ("reduced",)), ((r(3, 3),), ("complete",)), ((r(2, 4),), ("reduced",))],
    "linalg_qr_r": [((r(4, 3),), ("reduced",)), ((r(2, 3, 3),), ("reduced",)), ((r(2, 4),), ("complete",))],
    "linalg_cholesky": [((spd(3),), (False,)), ((spd(4),), (True,))],
    "cholesky": [((spd(3),), (False,)), ((spd(2, (2,)),), (True,))],
    "linalg_slogdet": [((_SQ,), ()), ((-_SQ,), ()), ((r(2, 3, 3) + 3 * np.eye(3),), ())],
    "svd_u_full": [((r(4, 3),), ()), ((r(3, 5),), ())],
    "svd_vh_full": [((r(5, 3),), ()), ((r(3, 4),), ())],
})


def off_integers(divisor, *shape):
    """Dividends whose quotients by `divisor` sit between integers: remainder, fmod, frac, trunc are smooth there."""
    k = rng.integers(-3, 4, shape)
    return divisor * (k + rng.uniform(0.2, 0.8, shape))


def unit(*shape):
    return rng.uniform(-0.8, 0.8, shape)


_B34, _B4 = pos(3, 4), pos(4)
# the % / fmod / elementwise family (engine/ops_math.py)
CASES.update({
    "remainder": [((off_integers(_B34, 3, 4), _B34), ()), ((off_integers(_B4, 3, 4), _B4), ()),
                  ((off_integers(-_B34, 3, 4), -_B34), ())],
    "remainder_scalar": [((r(3, 4) + 0.013,), (0.7,)), ((r(5) + 0.011,), (-1.3,))],
    "fmod": [((off_integers(_B34, 3, 4), _B34), ()), ((off_integers(-_B4, 2, 4), -_B4), ())],
    "fmod_scalar": [((r(3, 4) + 0.013,), (0.7,)), ((r(5) + 0.011,), (-1.3,))],
    "exp2": [((r(3, 4),), ()), ((r(),), ())],
    "log2": [((pos(3, 4),), ()), ((pos(),), ())],
    "log10": [((pos(3, 4),), ()), ((pos(),), ())],
    "rsqrt": [((pos(3, 4),), ()), ((pos(),), ())],
    "tan": [((unit(3, 4),), ()), ((unit(),), ())],
    "asin": [((unit(3, 4),), ())],
    "acos": [((unit(3, 4),), ())],
    "atan": [((r(3, 4),), ())],
    "sinh": [((r(3, 4),), ())],
    "cosh": [((r(3, 4),), ())],
    "asinh": [((r(3, 4),), ())],
    "acosh": [((1.2 + pos(3, 4),), ())],
    "atanh": [((unit(3, 4),), ())],
    "trunc": [((off_integers(1.0, 3, 4),), ())],
    "frac": [((off_integers(1.0, 3, 4),), ()), ((off_integers(1.0),), ())],
    "deg2rad": [((r(3, 4),), ())],
    "rad2deg": [((r(3, 4),), ())],
    "div_floor": [((off_integers(_B34, 3, 4), _B34), ()), ((off_integers(_B4, 2, 4), _B4), ())],
    "div_trunc": [((off_integers(_B34, 3, 4), _B34), ()), ((off_integers(-_B4, 2, 4), -_B4), ())],
})
# torch.std_mean / var_mean: one row per output (engine/ops_reduce.py)
_SPREAD_CASES = [((r(3, 4),), ((1,), 1, False)), ((r(3, 4),), (None, 0, False)), ((r(3, 4),), ((0,), 1, True))]
CASES.update({f"{op}_{part}": _SPREAD_CASES for op in ("std_mean", "var_mean") for part in (op[:3], "mean")})
# PyTorch records these with grad_fn=<NotImplemented>: backward raises (tests/engine/test_surface_ops_vs_torch.py)
NO_DERIVATIVE = sorted(n for n, op in OPS.items() if op.grad_fn == "NotImplemented")
DIFFERENTIABLE = [n for n in DIFFERENTIABLE if n not in NO_DERIVATIVE]


def test_every_differentiable_op_has_cases():
    missing = [n for n in DIFFERENTIABLE if n not in CASES]
    assert not missing, f"add gradcheck cases for: {missing}"


def _tensors(inputs):
    def conv(x):
        if x is None:
            return None  # an optional input left out (a layer without bias)
        if isinstance(x, (np.ndarray, np.floating)) and x.dtype == np.float64:
            return Tensor._wrap(np.array(x), requires_grad=True)
        return Tensor._wrap(np.asarray(x))

    return [[conv(a) for a in x] if isinstance(x, list) else conv(x) for x in inputs]


def _run(op, tensors, params):
    if op.variadic:
        return apply(op, tensors[0], params)
    return apply(op, tuple(tensors), params)


def _flat_inputs(tensors):
    out = []
    for t in tensors:
        out.extend(t if isinstance(t, list) else [t])
    return [t for t in out if t is not None and t.requires_grad]


CASE_IDS = [(name, i) for name in DIFFERENTIABLE for i in range(len(CASES.get(name, [])))]


# ops of a symmetric matrix that read one triangle (PyTorch's too): checked along symmetric directions E_ij + E_ji,
# where the derivative is g_ij + g_ji (g_ii on the diagonal)
SYMMETRIC_INPUT = frozenset({"linalg_eigh_values", "linalg_eigh_vectors", "linalg_cholesky", "cholesky"})
FULL_SVD = frozenset({"svd_u_full", "svd_vh_full"})


def _check_symmetric(op, tensors, params, weights, eps, what):
    (t,) = tensors
    a = t._data
    n = a.shape[-1]
    grad = t.grad._data
    expected = grad + np.swapaxes(grad, -1, -2) - grad * np.eye(n)
    numeric = np.zeros(a.shape)
    for index in np.ndindex(*a.shape[:-2], n, n):
        *batch, i, j = index
        if j < i:
            continue
        orig = a.copy()
        for sign, store in ((1, "plus"), (-1, "minus")):
            a[index] += sign * eps
            if i != j:
                a[(*batch, j, i)] += sign * eps
            value = float((np.asarray(_run(op, tensors, params)._data) * weights).sum())
            a[...] = orig
            if store == "plus":
                plus = value
            else:
                minus = value
        numeric[index] = numeric[(*batch, j, i)] = (plus - minus) / (2 * eps)
    np.testing.assert_allclose(expected, numeric, rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("name,case", CASE_IDS, ids=[f"{n}-{i}" for n, i in CASE_IDS])
def test_gradcheck(name, case):
    op = OPS[name]
    inputs, params = CASES[name][case]
    tensors = _tensors(inputs)
    out = _run(op, tensors, params)
    assert out.grad_fn is not None and type(out.grad_fn).__name__ == op.grad_fn
    weights = np.random.default_rng(1).normal(size=np.shape(out._data))
    k = min(np.shape(inputs[0])[-2:]) if name in FULL_SVD else None
    if name == "svd_u_full":  # U's columns past min(m, n) are not unique: torch's gradient ignores them
        weights[..., k:] = 0
    elif name == "svd_vh_full":
        weights[..., k:, :] = 0
    (out * Tensor._wrap(weights)).sum().backward()
    eps = 1e-6
    if name in SYMMETRIC_INPUT:
        _check_symmetric(op, tensors, params, weights, eps, f"{name} case {case}")
        return
    for t in _flat_inputs(tensors):
        numeric = np.zeros(t._data.shape)
        flat = t._data.reshape(-1)
        for i in range(flat.size):
            orig = flat[i]
            flat[i] = orig + eps
            plus = float((np.asarray(_run(op, tensors, params)._data) * weights).sum())
            flat[i] = orig - eps
            minus = float((np.asarray(_run(op, tensors, params)._data) * weights).sum())
            flat[i] = orig
            numeric.reshape(-1)[i] = (plus - minus) / (2 * eps)
        assert t.grad is not None and t.grad.shape == t.shape
        np.testing.assert_allclose(t.grad._data, numeric, rtol=1e-5, atol=1e-6, err_msg=f"{name} case {case}")


def test_every_op_has_label_grad_fn_and_latex_per_input():
    for name, op in OPS.items():
        assert op.label, name
        if op.grad_fn is not None:
            assert op.grad_fn.endswith(("Backward0", "Backward1", "Backward2", "Backward3", "Backward4", "Backward5", "Backward0_copy", "CopySlices",
                                        "CopyBackwards", "NotImplemented")), name
            assert len(op.latex) == len(op.vjps)
            assert all(lx or vjp is None for lx, vjp in zip(op.latex, op.vjps)), name


def test_every_saving_op_says_what_each_vjp_reads():
    """Drives the version-counter check: which saved tensors an in-place change makes stale."""
    for name, op in OPS.items():
        if op.grad_fn is not None and op.saves:
            assert len(op.needs) == len(op.vjps), name
            assert all(set(n) <= set("abcr") for n in op.needs), name


# issue 21 §3 (engine/ops_more_names.py): values apart (no tie for fmax / fmin), no zero for copysign and sinc
CASES.update({
    "fmax": [((distinct(3, 4), distinct(3, 4) + 0.1), ()), ((distinct(2, 3), distinct(3) + 0.11), ())],
    "fmin": [((distinct(3, 4), distinct(3, 4) + 0.1), ()), ((distinct(2, 3), distinct(3) + 0.11), ())],
    "copysign": [((distinct(3, 4), r(3, 4)), ()), ((distinct(2, 3), r(3)), ())],
    "copysign_scalar": [((distinct(3, 4),), (-1.0,)), ((distinct(5),), (2.0,))],
    "sinc": [((distinct(3, 4),), ()), ((pos(5),), ())],
    "logaddexp": [((r(3, 4), r(3, 4)), ()), ((r(2, 3), r(3)), ())],
    "take": [((r(3, 4), np.array([[0, 11], [5, 5]])), ()), ((r(6), np.array([-1, 2])), ())],
    "baddbmm": [((r(2, 3, 5), r(2, 3, 4), r(2, 4, 5)), (1.0, 1.0)), ((r(3, 5), r(2, 3, 4), r(2, 4, 5)), (0.5, 2.0)),
                ((r(5), r(1, 3, 4), r(1, 4, 5)), (0.0, 1.5))],
    "rot90": [((r(3, 4),), (1, (0, 1))), ((r(2, 3, 4),), (3, (2, 0))), ((r(2, 3),), (2, (1, 0)))],
})
CASES["take_backward"] = [((r(2, 2), ), ((3, 4), np.array([[0, 11], [5, 5]]))), ((r(2),), ((6,), np.array([-1, 2])))]
CASES["logit"] = [((rng.uniform(0.05, 0.95, (3, 4)),), (None,)), ((rng.uniform(0.05, 0.95, (9,)),), (0.2,))]
# issue 21 §3 (engine/ops_extra_names.py): erfinv away from ±1, picks and extremes without ties
CASES.update({
    "erfc": [((r(3, 4),), ()), ((r(5),), ())],
    "lgamma": [((pos(3, 4),), ()), ((rng.uniform(-2.9, -2.1, (5,)),), ())],
    "digamma": [((pos(3, 4),), ()), ((rng.uniform(-0.9, -0.1, (5,)),), ())],
    "polygamma": [((pos(3, 4),), (1,)), ((pos(5),), (2,)), ((rng.uniform(-1.9, -1.1, (4,)),), (3,))],
    "erfinv": [((rng.uniform(-0.8, 0.8, (3, 4)),), ()), ((rng.uniform(-0.8, 0.8, (5,)),), ())],
    "kthvalue": [((distinct(3, 5),), (2, 1, False)), ((distinct(4, 3),), (4, 0, True))],
    # (distinct values: a repeated mode stops being one when finite differences move one copy)
    "mode": [((distinct(3, 4),), (1, False)), ((distinct(3, 2),), (0, True))],
    "aminmax_min": [((distinct(3, 4),), ((0, 1), False)), ((distinct(3, 4),), ((1,), True))],
    "aminmax_max": [((distinct(3, 4),), ((0, 1), True)), ((distinct(2, 5),), ((0,), False))],
})


# nn.PixelShuffle, AdaptiveMaxPool, Bilinear, RReLU and add(Tensor, Scalar) (engine/ops_more_modules.py): pooled values
# apart (no tie), windows smaller and larger than the input; _trilinear as bilinear calls it and as its backward does;
# rrelu's noise a float32 input (a constant: no gradient), consistent with the signs of x, or None in eval mode
_RRELU_X = distinct(3, 4)
_RRELU_NOISE = np.where(_RRELU_X > 0, 1.0, rng.uniform(0.125, 1 / 3, (3, 4))).astype(np.float32)
CASES.update({
    "pixel_shuffle": [((r(2, 8, 2, 3),), (2,)), ((r(9, 2, 1),), (3,)), ((r(2, 1, 4, 1, 2),), (2,))],
    "pixel_unshuffle": [((r(2, 2, 4, 6),), (2,)), ((r(1, 6, 3),), (3,)), ((r(2, 1, 1, 2, 2),), (2,))],
    "adaptive_max_pool2d": [((distinct(2, 2, 5, 7),), ((3, 4),)), ((distinct(2, 4, 3),), ((5, 6),)),
                            ((distinct(1, 3, 7),), ((1, 2),))],
    "trilinear": [((r(3, 2), r(4, 2, 3), r(3, 3)), ((1, 3), (0,), (1, 2), (2, 3))),
                  ((r(3, 4), r(4, 2, 3), r(3, 3)), ((2, 3), (0,), (1, 2), (1, 3))),
                  ((r(3, 2), r(3, 4), r(3, 3)), ((1, 3), (2, 3), (1, 2), (0,)))],
    "rrelu_with_noise": [((_RRELU_X, _RRELU_NOISE), (0.125, 1 / 3, True)), ((distinct(5), None), (0.1, 0.3, False)),
                         ((distinct(2, 3), None), (0.2, 0.2, False))],
    "add_scalar": [((r(3, 4),), (0.5,)), ((r(),), (-2,))],
})
