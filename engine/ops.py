"""The op table: every differentiable primitive, one entry each, looked up here as `OPS`.

The row type and `defop` are in engine/op_table.py; the rows are added by one module per kind of op, each
VJP beside its forward: ops_math (elementwise), ops_reduce (reductions, cumulative ops, sorting), ops_shape
(views and indexing), linalg_ops (products, singular values), ops_loss, ops_conv (convolution, pooling,
padding), ops_nn (normalisation, embedding, activations), ops_embedding_bag and ops_rnn. Importing this module imports them all,
so `OPS` is complete wherever it is read. Composite ops (linear, cross_entropy, ...) are built from these in
`engine/functional.py`, so the graph shows the same nodes PyTorch builds.
"""
from __future__ import annotations

from . import (  # noqa: F401, E501
    linalg_ops,
    ops_binary_names,
    ops_conv,
    ops_embedding_bag,
    ops_extra_names,
    ops_gamma,
    ops_linalg_more,
    ops_linalg_qr,
    ops_linalg_solve,
    ops_loss,
    ops_math,
    ops_more_modules,
    ops_more_names,
    ops_nn,
    ops_packed,
    ops_reduce,
    ops_rnn,
    ops_scaled_products,
    ops_shape,
    ops_stats,
    ops_tutorial_math,
    ops_upsample,
)
from .graphed import map_table_ufuncs
from .op_table import ARGS, DIM, OPS, REDUCE, REDUCTION, Op, Params, SameAs, defop, unbroadcast  # noqa: F401

map_table_ufuncs(OPS)  # the table is complete: numpy ufuncs on Graphed values run as its ops
