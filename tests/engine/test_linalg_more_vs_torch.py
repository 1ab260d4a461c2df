"""det / inv / cross / kron / cdist / cummax / cummin / fill_diagonal_ (engine/linalg_more.py) against torch 2.13:
values, dtypes, grad_fn names, gradients and the errors' words (issue 21 §3). The finite-difference checks of
each op-table row are in test_gradcheck.py."""
import warnings

import numpy as np
import pytest

import engine as fg
from engine.ops_linalg_more import LinAlgError

torch = pytest.importorskip("torch")
rng = np.random.default_rng(21)


def R(*shape):  # noqa: N802 — a random array, short in the tables below
    return rng.normal(size=shape)


def _call(fn, tensors):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.cross without dim (its deprecation: checked on its own below)
        try:
            return fn(*tensors), None
        except Exception as e:  # noqa: BLE001 — the error is what is compared
            return None, e


def compare(fn_torch, fn_engine, arrays, grad=True):
    """Run both on the same arrays: the same error, or the same values, dtype, shape, grad_fn and gradients."""
    wants = [grad and a.dtype.kind == "f" and a.dtype != np.float16 for a in arrays]
    ts = [torch.tensor(a, requires_grad=w) for a, w in zip(arrays, wants)]
    fs = [fg.tensor(a, requires_grad=w) for a, w in zip(arrays, wants)]
    rt, et = _call(fn_torch, ts)
    rf, ef = _call(fn_engine, fs)
    if et is not None or ef is not None:
        assert et is not None and ef is not None, (et, ef)
        assert isinstance(ef, type(et).__mro__[1] if type(et).__name__ == "_LinAlgError" else type(et)), (et, ef)
        assert str(ef) == str(et)
        return
    if isinstance(rt, tuple):
        assert type(rf).__name__ == type(rt).__name__
        assert np.array_equal(rf.indices.numpy(), rt.indices.numpy())
        rt, rf = rt.values, rf.values
    assert tuple(rf.shape) == tuple(rt.shape) and str(rf.dtype) == str(rt.dtype)
    np.testing.assert_allclose(rf.detach().numpy(), rt.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert (rf.grad_fn and rf.grad_fn.name()) == (rt.grad_fn and rt.grad_fn.name())
    if rt.requires_grad:
        w = R(*rt.shape)
        (rt * torch.tensor(w, dtype=rt.dtype)).sum().backward()
        (rf * fg.tensor(w, dtype=rf.dtype)).sum().backward()
        for a, b in zip(ts, fs):
            if a.grad is None:
                assert b.grad is None
            else:
                np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-4, atol=1e-6)


SQUARE = [(3, 3), (2, 4, 4), (1, 1), (0, 0), (2, 0, 0), (3, 4), (3,)]


@pytest.mark.parametrize("shape", SQUARE)
@pytest.mark.parametrize("name", ["det", "linalg.det", "inverse", "linalg.inv", "method det", "method inverse"])
def test_det_and_inverse(name, shape):
    if name.startswith("method"):
        method = name.split()[1]
        compare(lambda x: getattr(x, method)(), lambda x: getattr(x, method)(), [R(*shape)])
        return
    mod, _, fn = name.rpartition(".")
    t_fn = getattr(torch.linalg if mod else torch, fn)
    f_fn = getattr(fg.linalg if mod else fg, fn)
    compare(t_fn, f_fn, [R(*shape)])


@pytest.mark.parametrize("fn", ["det", "inverse"])
@pytest.mark.parametrize("matrix", [
    np.array([[1.0, 2], [2, 4]]), np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]]),
    np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]], np.float32), np.stack([np.eye(3), np.zeros((3, 3))]),
    np.arange(9).reshape(3, 3), R(3, 3).astype(np.float16), R(3, 3).astype(np.float32),
], ids=["singular2", "singular3", "singular3_f32", "batch", "long", "half", "float"])
def test_det_and_inverse_of_singular_and_other_dtypes(fn, matrix):
    """A singular matrix's inverse raises which diagonal element of which batch element is zero, as LAPACK finds
    it in PyTorch (the float64 [[1..9]] is not singular to it: rounding leaves a tiny pivot); det's gradient there
    is zero."""
    compare(getattr(torch, fn), getattr(fg, fn), [matrix])


def test_singular_inverse_is_torchs_linalg_error_and_a_runtime_error():
    with pytest.raises(LinAlgError) as info:
        fg.linalg.inv(fg.zeros(2, 2))
    assert isinstance(info.value, RuntimeError) and type(info.value).__name__ == "_LinAlgError"


def test_second_order_gradient_of_det_matches_torch():
    a = R(3, 3)
    t, f = torch.tensor(a, requires_grad=True), fg.tensor(a, requires_grad=True)
    (gt,) = torch.autograd.grad(torch.det(t), t, create_graph=True)
    (gf,) = fg.autograd.grad(fg.det(f), f, create_graph=True)
    (ht,) = torch.autograd.grad((gt * gt).sum(), t)
    (hf,) = fg.autograd.grad((gf * gf).sum(), f)
    np.testing.assert_allclose(hf.numpy(), ht.numpy(), rtol=1e-6)


CROSS_SHAPES = [((4, 3), (4, 3), {}), ((2, 3), (1, 3), {}), ((3, 4), (3, 4), {"dim": 0}), ((2, 3), (3,), {}),
                ((4, 2), (4, 2), {}), ((3, 4), (3, 4), {"dim": 2}), ((3, 3), (3, 3), {"dim": -2}),
                ((2, 3), (3, 3), {}), ((3, 4), (3, 4), {"dim": 1})]


@pytest.mark.parametrize("sa, sb, kw", CROSS_SHAPES)
@pytest.mark.parametrize("fn", ["torch.cross", "torch.linalg.cross", "Tensor.cross"])
def test_cross(fn, sa, sb, kw):
    if fn == "Tensor.cross":
        compare(lambda a, b: a.cross(b, **kw), lambda a, b: a.cross(b, **kw), [R(*sa), R(*sb)])
        return
    mod = fn.split(".")[1] if fn.count(".") == 2 else None
    compare(lambda a, b: (getattr(torch, mod) if mod else torch).cross(a, b, **kw),
            lambda a, b: (getattr(fg, mod) if mod else fg).cross(a, b, **kw), [R(*sa), R(*sb)])


@pytest.mark.parametrize("a, b", [(np.array([1, 2, 3]), np.array([1, 0, 3])), (R(3), np.array([1, 0, 3])),
                                  (np.array(1.0), np.array(2.0))])
def test_cross_dtypes_and_scalars(a, b):
    compare(torch.linalg.cross, fg.linalg.cross, [a, b])


def test_cross_without_dim_warns_as_torch_does():
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is deprecated"):
        fg.cross(fg.ones(3, 3), fg.ones(3, 3))


@pytest.mark.parametrize("sa, sb", [((2, 3), (4, 5)), ((3,), (2, 2)), ((3,), (2,)), ((), (2,)), ((2, 2, 2), (3,)),
                                    ((0, 2), (3, 3)), ((), ())])
def test_kron(sa, sb):
    compare(torch.kron, fg.kron, [R(*sa), R(*sb)])
    compare(lambda a, b: a.kron(b), lambda a, b: a.kron(b), [R(*sa), R(*sb)])


def test_kron_of_integers_and_its_graph():
    compare(torch.kron, fg.kron, [np.array([1, 2]), np.array([[1, 2], [3, 4]])])
    x = fg.ones(2, requires_grad=True)
    node = fg.kron(x, fg.ones(2, 2)).grad_fn
    assert [node.name(), node.next_functions[0][0].name()] == ["UnsafeViewBackward0", "MulBackward0"]


@pytest.mark.parametrize("p", [2.0, 1.0, float("inf"), 0.0, 0.5, 3.0, 1.5])
def test_cdist_norms(p):
    compare(lambda a, b: torch.cdist(a, b, p=p), lambda a, b: fg.cdist(a, b, p=p), [R(4, 3), R(5, 3)])


@pytest.mark.parametrize("sa, sb, mode", [
    ((2, 1, 4, 3), (5, 6, 3), None), ((30, 3), (40, 3), None), ((2, 30, 3), (40, 3), None),
    ((3, 3), (4, 3), "use_mm_for_euclid_dist"), ((30, 3), (40, 3), "donot_use_mm_for_euclid_dist"),
    ((0, 3), (2, 3), None), ((2, 0), (2, 0), None), ((3,), (3,), None), ((3, 2), (3, 3), None),
    ((2, 2, 3), (3, 2, 3), None), ((3, 3), (3, 3), "x"), ((3, 3), (3, 3), 3),
])
def test_cdist_shapes_modes_and_errors(sa, sb, mode):
    """Over 25 rows, p = 2 is PyTorch's matrix-product form (ViewBackward0 over EuclideanDistBackward0)."""
    kw = {} if mode is None else {"compute_mode": mode}
    compare(lambda a, b: torch.cdist(a, b, **kw), lambda a, b: fg.cdist(a, b, **kw), [R(*sa), R(*sb)])


@pytest.mark.parametrize("a, b, p", [
    (np.ones((2, 3)), np.ones((2, 3)), 2.0), (np.ones((2, 3), int), np.ones((2, 3), int), 2.0),
    (R(3, 2).astype(np.float32), R(3, 2), 2.0), (R(3, 2), R(3, 2), -1.0), (R(4, 3).astype(np.float32), R(5, 3).astype(np.float32), 2.0),
])
def test_cdist_zero_distances_dtypes_and_bad_p(a, b, p):
    compare(lambda x, y: torch.cdist(x, y, p), lambda x, y: fg.cdist(x, y, p), [a, b])


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
@pytest.mark.parametrize("a, dim", [
    (R(4, 5), 0), (R(4, 5), 1), (R(4, 5), -1), (np.array([1.0, 3, 3, 2, 5, 5]), 0),
    (np.array([2.0, 1, 1, 3, np.nan, 0, np.nan]), 0), (np.array(3.0), 0), (np.array([1, 3, 2, 3]), 0),
    (np.array([True, False, True]), 0), (R(3), 1), (np.zeros((2, 0)), 1), (np.array([0.0, -0.0, 0.0]), 0),
])
def test_cummax_cummin(fn, a, dim):
    """Ties and NaN: the later equal value takes the index, NaN wins and stays; ties share the gradient by index."""
    compare(lambda x: getattr(torch, fn)(x, dim), lambda x: getattr(fg, fn)(x, dim), [a])
    compare(lambda x: getattr(x, fn)(dim), lambda x: getattr(x, fn)(dim), [a])


def test_cummax_prints_as_torchs_named_tuple():
    t, f = torch.cummax(torch.tensor([1.0, 3, 2]), 0), fg.cummax(fg.tensor([1.0, 3, 2]), 0)
    assert repr(f) == repr(t)
    assert f.values is f[0] and f.indices is f[1]
    with pytest.raises(TypeError):
        fg.cummax(fg.ones(3))


@pytest.mark.parametrize("shape, value, wrap, dtype, grad", [
    ((3, 3), 1.0, False, "float32", False), ((7, 3), 2, True, "float32", False), ((7, 3), 2, False, "float32", False),
    ((3, 7), 2, True, "float32", False), ((3, 3, 3), 5, False, "float32", False), ((3,), 1, False, "float32", False),
    ((3, 3, 4), 1, False, "float32", False), ((3, 3), 1.5, False, "int64", False), ((3, 3), True, False, "bool", False),
    ((5, 3), 2.0, True, "float64", True), ((3, 3), "a", False, "float32", False), ((0, 0), 1, False, "float32", False),
])
def test_fill_diagonal_(shape, value, wrap, dtype, grad):
    def run(mod):
        x = mod.zeros(*shape, dtype=getattr(mod, dtype), requires_grad=grad)
        y = x.clone() if grad else x
        try:
            r = y.fill_diagonal_(value, wrap=wrap)
        except Exception as e:  # noqa: BLE001
            return f"{type(e).__name__}: {e}"
        assert r is y
        out = (r.detach().numpy().tolist(), str(r.dtype), r.grad_fn and r.grad_fn.name())
        if grad:
            (r * mod.arange(float(r.numel())).reshape(r.shape)).sum().backward()
            out += (x.grad.numpy().tolist(),)
        return out

    assert run(fg) == run(torch)


def test_fill_diagonal_of_a_leaf_that_requires_grad_is_refused_and_allowed_under_no_grad():
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        fg.zeros(3, 3, requires_grad=True).fill_diagonal_(1)
    with fg.no_grad():
        x = fg.zeros(3, 3, requires_grad=True)
        x.fill_diagonal_(1)
    assert x.detach().numpy().tolist() == np.eye(3).tolist() and x.requires_grad


def test_fill_diagonal_writes_through_views_and_bumps_the_version():
    base = fg.zeros(4, 4)
    view = base[1:, 1:]
    before = base._version
    view.fill_diagonal_(7)
    assert base.numpy()[1:, 1:].tolist() == (7 * np.eye(3)).tolist() and base._version == before + 1


@pytest.mark.parametrize("fn, args", [("inverse", lambda m: (m.eye(2) * 2,)), ("cross", lambda m: (m.eye(3), m.ones(3, 3), 1)),
                                      ("kron", lambda m: (m.ones(2), m.arange(3.0)))])
def test_out_writes_the_result_as_torchs_out(fn, args):
    results = []
    for m in (torch, fg):
        out = m.zeros(*(2, 2) if fn == "inverse" else (3, 3) if fn == "cross" else (6,))
        returned = getattr(m, fn)(*args(m), out=out)
        assert returned is out
        results.append(out.numpy().tolist())
    assert results[0] == results[1]


@pytest.mark.parametrize("value, dtype", [
    (1e40, "float32"), (float("inf"), "float32"), (float("nan"), "float32"), (70000, "float16"), (2**31, "int32"),
    (-129, "int8"), (-255, "uint8"), (-256, "uint8"), (1.5, "int8"), (True, "int8"), (200.0, "uint8"), (-1.0, "uint8"),
    (1e300, "float64"), (300, "int8"), (float("nan"), "int64"), (2, "bool"), (-1.7, "int8"), (2**2000, "float32"),
])
def test_fill_diagonal_checks_the_value_against_the_dtype_as_torch(value, dtype):
    """c10::checked_convert: past the range is refused in PyTorch's words, an unsigned type wraps small negatives."""
    def run(m):
        try:
            return str(m.zeros(2, 2, dtype=getattr(m, dtype)).fill_diagonal_(value))
        except Exception as e:  # noqa: BLE001
            return f"{type(e).__name__}: {e}"

    assert run(fg) == run(torch)
