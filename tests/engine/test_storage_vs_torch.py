"""engine/storage.py: Tensor.storage() / untyped_storage() / data_ptr() / storage_offset() as PyTorch 2.13 has them:
a view shares its base's storage and numbers, a copy has its own; a storage lists and prints its elements in memory
order."""
import warnings

import pytest

import engine

CASES = [
    ("x", lambda t: t),
    ("x[:, 1:]", lambda t: t[:, 1:]),
    ("x.t()", lambda t: t.t()),
    ("x.view(-1)[3:]", lambda t: t.view(-1)[3:]),
    ("x[1]", lambda t: t[1]),
    ("x.t().contiguous()", lambda t: t.t().contiguous()),
    ("x * 2", lambda t: t * 2),
    ("x.sum()", lambda t: t.sum()),
    ("x.reshape(3, 2)", lambda t: t.reshape(3, 2)),
    ("x.unsqueeze(0)[0, 1]", lambda t: t.unsqueeze(0)[0, 1]),
]


@pytest.fixture
def pytorch():
    t = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated
        yield t


def _facts(mod, make):
    x = mod.arange(6.0).reshape(2, 3)
    y = make(x)
    s = y.storage()
    return {"str": str(s), "list": s.tolist(), "len": len(s), "size": s.size(), "dtype": str(s.dtype),
            "nbytes": s.nbytes(), "element_size": s.element_size(), "type": s.type(), "first": s[0], "iter": list(s),
            "offset": y.storage_offset(), "stride": tuple(y.stride()),
            "shares": s.data_ptr() == x.storage().data_ptr(), "same_ptr": y.data_ptr() == x.data_ptr(),
            "ptr_delta": y.data_ptr() - x.storage().data_ptr() if s.data_ptr() == x.storage().data_ptr() else None,
            "untyped": (len(y.untyped_storage()), y.untyped_storage().tolist()[:8], str(y.untyped_storage())[-50:])}


@pytest.mark.parametrize("what,make", CASES, ids=[c[0] for c in CASES])
def test_a_storage_is_pytorchs(pytorch, what, make):
    assert _facts(engine, make) == _facts(pytorch, make)


@pytest.mark.parametrize("values,dtype", [([True, False], "bool"), ([1, 2, 300], "int64"), ([1e-5, 123456.0], "float32"),
                                          ([], "float32"), ([3.5], "float64"), ([7, 255], "uint8")])
def test_every_dtype_prints_as_pytorch_prints_it(pytorch, values, dtype):
    ours = engine.tensor(values, dtype=getattr(engine, dtype)).storage()
    theirs = pytorch.tensor(values, dtype=getattr(pytorch, dtype)).storage()
    assert (str(ours), repr(ours), ours.type(), ours.tolist()) == (str(theirs), repr(theirs), theirs.type(), theirs.tolist())


def test_a_zero_dim_result_keeps_one_storage_and_an_empty_tensor_points_nowhere():
    s = engine.tensor([1.0, 2.0]).sum()
    assert s.data_ptr() == s.data_ptr() and s.storage().tolist() == [3.0] and s.storage_offset() == 0
    assert engine.empty(0).data_ptr() == 0 and engine.empty(0).storage().size() == 0
    w = engine.ones(3, requires_grad=True)
    assert w.storage().tolist() == [1.0, 1.0, 1.0]  # reading a storage needs no detach, as in PyTorch
    assert w.detach().data_ptr() == w.data_ptr() and w.data.data_ptr() == w.data_ptr()
