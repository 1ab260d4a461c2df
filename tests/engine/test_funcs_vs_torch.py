"""The tensor functions tutorials use (issue 9 section 5), through the public API, against PyTorch: values, dtypes,
grad_fn names, gradients, printouts and error messages.

Each case is a function of (torch-like module, its nn.functional, the inputs) run once on the engine and once on
torch with the same float64 / float32 / int64 inputs.
"""
import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

rng = np.random.default_rng(7)
A = rng.normal(size=(3, 4))
B = rng.normal(size=(4, 5))
V = rng.normal(size=4)
W = rng.normal(size=3)
S = rng.normal(size=(4, 4))
X3 = rng.normal(size=(2, 3, 4))
Z = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 1.0], [2.0, -0.5, 1.0, 0.25]])  # zeros for prod / cumprod
TIES = np.array([[1.0, 3.0, 3.0, 2.0], [0.5, 0.5, 0.5, 0.1], [2.0, -1.0, 2.0, 2.0]])  # stable sort order matters
IDX = np.array([[0, 2, 1, 0], [2, 2, 0, 1]])
COL = np.array([[3, 0], [1, 1], [2, 2]])
MASK = A > 0
INTS = np.array([[3, -1, 4], [1, -5, 9]])
INPUTS = {"a": A, "b": B, "v": V, "w": W, "s": S, "x3": X3, "z": Z, "ties": TIES, "idx": IDX, "col": COL,
          "mask": MASK, "ints": INTS, "a32": A.astype(np.float32), "img": rng.normal(size=(1, 2, 3, 4))}

CASES = {
    "logsumexp": lambda m, F, t: m.logsumexp(t["a"], 1),
    "logsumexp_keep": lambda m, F, t: t["a"].logsumexp((0, 1), keepdim=True),
    "logsumexp_int": lambda m, F, t: m.logsumexp(t["ints"], 1),
    "gather": lambda m, F, t: m.gather(t["a"], 0, t["idx"]),
    "gather_col": lambda m, F, t: t["a"].gather(1, t["col"]),
    "scatter": lambda m, F, t: t["a"].scatter(0, t["idx"], t["a"][:2] * 2),
    "scatter_value": lambda m, F, t: m.scatter(t["a"], 1, t["col"], 7.5),
    "scatter_add": lambda m, F, t: m.scatter_add(t["a"], 0, t["idx"], t["a"][:2] * 3),
    "scatter_inplace": lambda m, F, t: (t["a"] * 1).scatter_(1, t["col"], t["a"][:, :2]),
    "scatter_add_inplace": lambda m, F, t: (t["a"] + 0).scatter_add_(0, t["idx"], t["a"][:2]),
    "scatter_int": lambda m, F, t: m.zeros(3, 5, dtype=m.long).scatter_add_(1, t["col"], m.ones(3, 2, dtype=m.long)),
    "masked_fill": lambda m, F, t: t["a"].masked_fill(t["mask"], -1.0),
    "masked_fill_tensor_value": lambda m, F, t: m.masked_fill(t["a"], t["mask"], m.tensor(2.5)),
    "masked_fill_inplace": lambda m, F, t: (t["a"] * 2).masked_fill_(t["mask"], 0.0),
    "masked_fill_broadcast": lambda m, F, t: t["a"].masked_fill(t["a"][0] > 0, float("-inf")).softmax(1),
    "cumsum": lambda m, F, t: m.cumsum(t["a"], 1),
    "cumsum_int": lambda m, F, t: t["ints"].cumsum(0),
    "cumprod": lambda m, F, t: t["a"].cumprod(0),
    "cumprod_zeros": lambda m, F, t: m.cumprod(t["z"], 1),
    "einsum_mm": lambda m, F, t: m.einsum("ij,jk->ik", t["a"], t["b"]),
    "einsum_bmm": lambda m, F, t: m.einsum("bij,bjk->bik", t["x3"], t["x3"].transpose(1, 2)),
    "einsum_dot": lambda m, F, t: m.einsum("i,i->", t["v"], t["v"]),
    "einsum_outer": lambda m, F, t: m.einsum("i,j->ij", t["v"], t["w"]),
    "einsum_trace": lambda m, F, t: m.einsum("ii", t["s"]),
    "einsum_transpose": lambda m, F, t: m.einsum("ij->ji", t["a"]),
    "einsum_rowsum": lambda m, F, t: m.einsum("ij->i", t["a"]),
    "einsum_mv": lambda m, F, t: m.einsum("ij,j->i", t["a"], t["v"]),
    "einsum_attention": lambda m, F, t: m.einsum("bqd,bkd->bqk", t["x3"], t["x3"]),
    "einsum_implicit": lambda m, F, t: m.einsum("ij,jk", t["a"], t["b"]),
    "einsum_list": lambda m, F, t: m.einsum("ij,ij->i", [t["a"], t["a"]]),
    "einsum_chain": lambda m, F, t: m.einsum("ij,jk,kl->il", t["a"], t["b"], t["b"].t()),
    "topk": lambda m, F, t: m.topk(t["a"], 2),
    "topk_smallest": lambda m, F, t: t["a"].topk(2, dim=0, largest=False),
    "sort": lambda m, F, t: m.sort(t["a"], 1),
    "sort_desc_stable": lambda m, F, t: t["ties"].sort(dim=1, descending=True, stable=True),
    "sort_stable": lambda m, F, t: m.sort(t["ties"], stable=True),
    "argsort": lambda m, F, t: m.argsort(t["ties"], dim=1, descending=True, stable=True),
    "argsort_asc": lambda m, F, t: t["ties"].argsort(dim=0, stable=True),
    "repeat": lambda m, F, t: t["a"].repeat(2, 1),
    "repeat_grow": lambda m, F, t: t["v"].repeat(2, 1, 3),
    "chunk": lambda m, F, t: m.chunk(t["a"], 2, 1),
    "chunk_uneven": lambda m, F, t: t["b"].chunk(3, dim=1),
    "split": lambda m, F, t: m.split(t["b"], 2, 1),
    "split_sizes": lambda m, F, t: t["b"].split([1, 3, 1], dim=1),
    "tril": lambda m, F, t: m.tril(t["s"]),
    "triu_diag": lambda m, F, t: t["a"].triu(diagonal=1),
    "tril_neg": lambda m, F, t: t["x3"].tril(-1),
    "tril_inplace": lambda m, F, t: (t["s"] * 1).tril_(),
    "triu_inplace_mask": lambda m, F, t: m.ones(4, 4).triu_(1).bool(),
    "diag_vec": lambda m, F, t: m.diag(t["v"]),
    "diag_vec_offset": lambda m, F, t: m.diag(t["w"], -1),
    "diag_mat": lambda m, F, t: t["s"].diag(),
    "diag_mat_offset": lambda m, F, t: m.diag(t["a"], 1),
    "diagonal": lambda m, F, t: t["x3"].diagonal(0, 1, 2),
    "outer": lambda m, F, t: m.outer(t["v"], t["w"]),
    "outer_method": lambda m, F, t: t["w"].outer(t["v"]),
    "flip": lambda m, F, t: m.flip(t["a"], [0, 1]),
    "flip_method": lambda m, F, t: t["x3"].flip(2),
    "roll": lambda m, F, t: m.roll(t["a"], 1, 0),
    "roll_flat": lambda m, F, t: t["a"].roll(5),
    "roll_two": lambda m, F, t: t["a"].roll((1, -2), (0, 1)),
    "index_select": lambda m, F, t: m.index_select(t["a"], 1, m.tensor([3, 0, 3])),
    "index_select_int32": lambda m, F, t: t["a"].index_select(0, m.tensor([2, 0], dtype=m.int32)),
    "nonzero": lambda m, F, t: m.nonzero(t["z"]),
    "nonzero_tuple": lambda m, F, t: t["z"].nonzero(as_tuple=True),
    "nonzero_1d": lambda m, F, t: m.nonzero(t["v"] > 0, as_tuple=True),
    "isclose": lambda m, F, t: m.isclose(t["a"], t["a"] + 1e-7),
    "isclose_nan": lambda m, F, t: m.isclose(m.tensor([1.0, float("nan")]), m.tensor([1.0, float("nan")]), equal_nan=True),
    "allclose": lambda m, F, t: m.allclose(t["a"], t["a"] + 1e-3, atol=1e-2),
    "allclose_no": lambda m, F, t: t["a"].allclose(t["a"] + 1e-3),
    "equal": lambda m, F, t: m.equal(t["a"], t["a"] * 1),
    "equal_no": lambda m, F, t: t["a"].equal(t["a"][:2]),
    "clamp_min": lambda m, F, t: m.clamp_min(t["a"], 0.1),
    "clamp_max": lambda m, F, t: t["a"].clamp_max(-0.2),
    "clamp_min_int": lambda m, F, t: t["ints"].clamp_min(0),
    "erf": lambda m, F, t: m.erf(t["a"]),
    "erf_int": lambda m, F, t: t["ints"].erf(),
    "log1p": lambda m, F, t: m.log1p(t["a"].abs()),
    "expm1": lambda m, F, t: t["a"].expm1(),
    "atan2": lambda m, F, t: m.atan2(t["a"], t["v"]),
    "atan2_method": lambda m, F, t: t["a"].atan2(t["a"] * 2),
    "floor": lambda m, F, t: m.floor(t["a"] * 3),
    "ceil": lambda m, F, t: (t["a"] * 3).ceil(),
    "round": lambda m, F, t: m.round(t["a"] * 3),
    "round_half_even": lambda m, F, t: m.round(m.tensor([0.5, 1.5, 2.5, -0.5, -1.5])),
    "round_decimals": lambda m, F, t: m.round(t["a"], decimals=2),
    "round_decimals_method": lambda m, F, t: t["a32"].round(decimals=1),
    "floor_int": lambda m, F, t: t["ints"].floor(),
    "prod": lambda m, F, t: m.prod(t["a"]),
    "prod_dim": lambda m, F, t: t["a"].prod(1),
    "prod_one_zero": lambda m, F, t: m.prod(t["z"][0]),
    "prod_two_zeros": lambda m, F, t: t["z"][1].prod(),
    "prod_dim_zeros": lambda m, F, t: m.prod(t["z"], 1, keepdim=True),
    "prod_dim0_zeros": lambda m, F, t: t["z"].prod(0),
    "prod_int": lambda m, F, t: t["ints"].prod(1),
    "std": lambda m, F, t: m.std(t["a"]),
    "std_dim": lambda m, F, t: t["a"].std(1),
    "std_biased": lambda m, F, t: t["a"].std(0, unbiased=False, keepdim=True),
    "std_correction": lambda m, F, t: m.std(t["a"], dim=1, correction=0),
    "var": lambda m, F, t: t["a"].var(),
    "var_dim": lambda m, F, t: m.var(t["a"], 0),
    "var_tuple_dims": lambda m, F, t: t["x3"].var((0, 2), keepdim=True),
    "var_correction": lambda m, F, t: t["a"].var(1, correction=2),
    "norm": lambda m, F, t: t["a"].norm(),
    "norm_p1": lambda m, F, t: m.norm(t["a"], 1),
    "norm_inf": lambda m, F, t: t["a"].norm(float("inf")),
    "norm_dim": lambda m, F, t: m.norm(t["a"], dim=1),
    "norm_fro": lambda m, F, t: t["a"].norm("fro"),
    "norm_p3_keep": lambda m, F, t: t["a"].norm(3, dim=0, keepdim=True),
    "norm_p2_dims": lambda m, F, t: m.norm(t["x3"], 2, dim=(1, 2)),
    "max_dim": lambda m, F, t: t["a"].max(1),
    "min_dim": lambda m, F, t: m.min(t["a"], 0, keepdim=True),
    "gelu": lambda m, F, t: F.gelu(t["a"]),
    "gelu_tanh": lambda m, F, t: F.gelu(t["a"], approximate="tanh"),
    "leaky_relu": lambda m, F, t: F.leaky_relu(t["a"], 0.2),
    "elu": lambda m, F, t: F.elu(t["a"]),
    "selu": lambda m, F, t: F.selu(t["a"]),
    "silu": lambda m, F, t: F.silu(t["a"]),
    "softplus": lambda m, F, t: F.softplus(t["a"] * 10, beta=2, threshold=5),
    "hardtanh": lambda m, F, t: F.hardtanh(t["a"], -0.5, 0.5),
    "logsigmoid": lambda m, F, t: F.logsigmoid(t["a"]),
    "normalize": lambda m, F, t: F.normalize(t["a"]),
    "normalize_p1": lambda m, F, t: F.normalize(t["a"], p=1, dim=0),
    "pad_constant": lambda m, F, t: F.pad(t["img"], (1, 2), value=0.5),
    "pad_reflect": lambda m, F, t: F.pad(t["x3"], (2, 1), mode="reflect"),
    "pad_reflect_4d_size_2": lambda m, F, t: F.pad(t["img"], (1, 1, 2, 1, 0, 0), mode="reflect")[0],
    "pad_reflect_2d": lambda m, F, t: F.pad(t["img"], (1, 1, 2, 1), mode="reflect"),
    "pad_replicate": lambda m, F, t: F.pad(t["x3"], (3, 0), mode="replicate"),
    "pad_replicate_2d": lambda m, F, t: F.pad(t["img"], (1, 2, 2, 0), mode="replicate"),
    "pad_replicate_crop": lambda m, F, t: F.pad(t["x3"], (-1, 2), mode="replicate"),
    "one_hot": lambda m, F, t: F.one_hot(m.tensor([0, 2, 1]), 4),
    "one_hot_infer": lambda m, F, t: F.one_hot(m.tensor([[1, 3], [0, 0]])),
}

# Printouts that must be character for character torch's (values with few digits, so rounding cannot differ).
PRINTED = ["sort_desc_stable", "sort_stable", "topk", "max_dim", "min_dim", "nonzero_tuple", "chunk", "split_sizes",
           "argsort", "round_half_even", "one_hot", "scatter_int", "cumsum_int", "prod_int", "isclose_nan",
           "clamp_min_int", "floor_int"]


def _inputs(mod):
    out = {}
    for k, v in INPUTS.items():
        t = mod.tensor(v.copy())
        if v.dtype.kind == "f" and k != "img" or k == "img":
            t.requires_grad_(v.dtype.kind == "f")
        out[k] = t
    return out


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in _flat(item)]
    return [x]


def _node(t):
    return type(t.grad_fn).__name__ if getattr(t, "grad_fn", None) is not None else None


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_pytorch(name):
    te, tt = _inputs(engine), _inputs(torch)
    out_e = CASES[name](engine, engine.nn.functional, te)
    out_t = CASES[name](torch, torch.nn.functional, tt)
    flat_e, flat_t = _flat(out_e), _flat(out_t)
    assert len(flat_e) == len(flat_t), name
    if isinstance(out_t, tuple) and hasattr(out_t, "_fields"):
        assert type(out_e).__name__ == type(out_t).__name__ and tuple(out_e._fields) == tuple(out_t._fields)
    for e, t in zip(flat_e, flat_t):
        if isinstance(t, bool):
            assert e is t, name
            continue
        assert str(e.dtype) == str(t.dtype), name
        assert tuple(e.shape) == tuple(t.shape), name
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-7, err_msg=name)
        assert _node(e) == _node(t), name
    if name in PRINTED:
        assert repr(out_e) == repr(out_t)
    weights = np.random.default_rng(3)
    loss_e, loss_t = 0, 0
    for e, t in zip(flat_e, flat_t):
        if not isinstance(t, bool) and t.requires_grad:
            w = weights.normal(size=tuple(t.shape))
            loss_e = loss_e + (e * engine.tensor(w)).sum()
            loss_t = loss_t + (t * torch.tensor(w)).sum()
    if isinstance(loss_t, int):
        return
    loss_e.backward()
    loss_t.backward()
    for k in INPUTS:
        if tt[k].grad is not None:
            assert te[k].grad is not None, (name, k)
            np.testing.assert_allclose(te[k].grad.numpy(), tt[k].grad.numpy(), rtol=1e-6, atol=1e-7, err_msg=f"{name} {k}")
        else:
            assert te[k].grad is None, (name, k)


ERRORS = {
    "gather_float_index": lambda m, t: t["a"].gather(0, t["a"]),
    "gather_out_of_range": lambda m, t: t["a"].gather(1, m.tensor([[4]])),
    "gather_negative": lambda m, t: t["a"].gather(1, m.tensor([[-1]])),
    "gather_ndim": lambda m, t: t["a"].gather(1, m.tensor([1])),
    "gather_dim": lambda m, t: t["a"].gather(2, t["idx"]),
    "scatter_out_of_range": lambda m, t: t["a"].scatter(0, m.tensor([[3]]), 1.0),
    "scatter_dtype": lambda m, t: t["a"].scatter(0, t["idx"], m.ones(2, 4, dtype=m.float32)),
    "scatter_shape": lambda m, t: t["a"].scatter(0, m.tensor([[0, 1, 2, 0, 1]]), t["a"]),
    "index_select_float": lambda m, t: t["a"].index_select(0, m.tensor([0.0])),
    "index_select_range": lambda m, t: t["a"].index_select(0, m.tensor([3])),
    "masked_fill_float_mask": lambda m, t: t["a"].masked_fill(t["a"], 0.0),
    "masked_fill_vector_value": lambda m, t: t["a"].masked_fill(t["mask"], m.ones(2)),
    "topk_k": lambda m, t: t["a"].topk(5),
    "topk_negative": lambda m, t: t["a"].topk(-1),
    "sort_dim": lambda m, t: t["a"].sort(2),
    "repeat_few": lambda m, t: t["a"].repeat(2),
    "repeat_negative": lambda m, t: t["a"].repeat(-1, 2),
    "split_sizes_sum": lambda m, t: t["a"].split([1, 1], 0),
    "chunk_zero": lambda m, t: t["a"].chunk(0),
    "tril_1d": lambda m, t: t["v"].tril(),
    "diag_3d": lambda m, t: m.diag(t["x3"]),
    "outer_2d": lambda m, t: m.outer(t["a"], t["v"]),
    "outer_list": lambda m, t: t["v"].outer([1.0]),
    "outer_vec2_2d": lambda m, t: m.outer(t["v"], t["a"]),
    "tril_leaf_inplace": lambda m, t: t["s"].tril_(),
    "masked_fill_shape": lambda m, t: t["a"].masked_fill(m.ones(3) > 0, 1.0),
    "roll_align": lambda m, t: t["a"].roll((1, 2), 0),
    "roll_no_dims": lambda m, t: t["a"].roll((1, 2)),
    "flip_twice": lambda m, t: t["a"].flip(0, 0),
    "einsum_ndim": lambda m, t: m.einsum("ijk,jk->ik", t["a"], t["b"]),
    "einsum_operands": lambda m, t: m.einsum("ij,jk->ik", t["a"]),
    "einsum_output_twice": lambda m, t: m.einsum("ij->ii", t["a"]),
    "einsum_output_unknown": lambda m, t: m.einsum("ij->k", t["a"]),
    "einsum_subscript": lambda m, t: m.einsum("i1->i", t["a"]),
    "einsum_size": lambda m, t: m.einsum("ij,jk->ik", t["a"], t["a"]),
    "std_int": lambda m, t: t["ints"].std(),
    "norm_int": lambda m, t: t["ints"].norm(),
    "norm_bad": lambda m, t: t["a"].norm("abc"),
    "isclose_dtype": lambda m, t: m.isclose(t["a"], t["a32"]),
    "pad_reflect_big": lambda m, t: m.nn.functional.pad(t["img"], (4, 0), mode="reflect"),
    "pad_reflect_1d": lambda m, t: m.nn.functional.pad(t["v"], (1, 1), mode="reflect"),
    "pad_mode": lambda m, t: m.nn.functional.pad(t["img"], (1, 1), mode="mirror"),
    "pad_odd": lambda m, t: m.nn.functional.pad(t["img"], (1,), mode="replicate"),
    "one_hot_float": lambda m, t: m.nn.functional.one_hot(t["v"]),
    "one_hot_classes": lambda m, t: m.nn.functional.one_hot(m.tensor([3]), 2),
    "cumsum_dim": lambda m, t: t["a"].cumsum(3),
    "masked_fill_str": lambda m, t: t["a"].masked_fill(t["mask"], "x"),
    "gather_list_index": lambda m, t: t["a"].gather(0, [[0]]),
    "index_select_list_index": lambda m, t: t["a"].index_select(0, [0]),
    "scatter_add_number_src": lambda m, t: t["a"].scatter_add(0, t["idx"], 1.0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(name):
    with pytest.raises(Exception) as got_t:
        ERRORS[name](torch, _inputs(torch))
    with pytest.raises(Exception) as got_e:
        ERRORS[name](engine, _inputs(engine))
    assert type(got_e.value).__name__ == type(got_t.value).__name__, (name, got_t.value, got_e.value)
    assert str(got_e.value).split("\n")[0] == str(got_t.value).split("\n")[0], name


def test_sort_returns_a_named_tuple_of_values_and_indices():
    values, indices = engine.sort(engine.tensor([3.0, 1.0, 2.0]), descending=True)
    assert values.tolist() == [3.0, 2.0, 1.0] and indices.tolist() == [0, 2, 1]
    r = engine.tensor([[1.0, 5.0], [4.0, 2.0]]).max(1)
    assert r.values.tolist() == [5.0, 4.0] and r[1].tolist() == [1, 0]
    assert repr(r).startswith("torch.return_types.max(\nvalues=")


def _graph(fn):
    """The nodes under fn, depth first; torch's _reshape_alias of a strided view is our view."""
    if fn is None:
        return "-"
    name = type(fn).__name__.replace("ReshapeAliasBackward0", "ViewBackward0")
    return name + "(" + ", ".join(_graph(f) for f, _ in fn.next_functions) + ")"


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]), ("i,i->", [(3,), (3,)]),
    ("ij->ji", [(2, 3)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ij->j", [(2, 3)]),
    ("i,j->ij", [(3,), (4,)]), ("ij,ij->i", [(2, 3), (2, 3)]), ("ij,j->i", [(2, 3), (3,)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]), ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("i,i,i->i", [(3,), (3,), (3,)]), ("ij,ik->jk", [(1, 3), (4, 2)]),
    ("iij->j", [(2, 2, 3)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("Ab,bc->cA", [(2, 3), (3, 4)]),
])
def test_einsum_builds_pytorchs_graph(equation, shapes):
    arrays = [rng.normal(size=s) for s in shapes]
    te = [engine.tensor(a, requires_grad=True) for a in arrays]
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_e, out_t = engine.einsum(equation, *te), torch.einsum(equation, *tt)
    np.testing.assert_allclose(out_e.detach().numpy(), out_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert _graph(out_e.grad_fn) == _graph(out_t.grad_fn)
    w = rng.normal(size=tuple(out_t.shape))
    (out_e * engine.tensor(w)).sum().backward()
    (out_t * torch.tensor(w)).sum().backward()
    for a, b in zip(te, tt):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)
