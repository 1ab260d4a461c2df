"""The torch surface of issue 21 §3, in-process, against PyTorch: `%` and `//` (and their reflected, in-place and
functional forms), the elementwise family, numpy-style `axis=`/`keepdims=`, all/any, histc/histogram, meshgrid,
torch.Tensor and the legacy typed classes, Tensor.type(), keyword forms, torch.__version__, linspace bit for bit,
torch.autograd.function and a DataLoader over a Dataset of tensors.

Values, dtypes, grad_fn names, printouts and gradients are compared; the op-table rows are gradchecked in
tests/engine/test_gradcheck.py (finite differences) and compared with torch in tests/engine/test_ops_vs_torch.py.
"""
import warnings

import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

rng = np.random.default_rng(21)
A = rng.normal(size=(3, 4)) * 3
POS = rng.uniform(0.5, 3.0, size=(3, 4))
UNIT = rng.uniform(-0.9, 0.9, size=(3, 4))
DIV = np.where(rng.uniform(size=4) > 0.5, 1.0, -1.0) * rng.uniform(0.5, 2.0, size=4)
INTS = np.array([[7, -7, 0, 5], [-3, 9, 2, -8]])
IDIV = np.array([3, -2, 5, -4])
INPUTS = {"a": A, "pos": POS, "unit": UNIT, "div": DIV, "ints": INTS, "idiv": IDIV, "a32": A.astype(np.float32),
          "pos32": POS.astype(np.float32), "big": 1.0 + POS}


def _inputs(mod):
    out = {}
    for k, v in INPUTS.items():
        t = mod.tensor(v)
        out[k] = t.requires_grad_() if t.is_floating_point() else t
    return out


def _torch_function(name):
    return lambda m, t: getattr(m, name)(t[_DOMAIN.get(name, "a")])


def _tensor_method(name):
    return lambda m, t: getattr(t[_DOMAIN.get(name, "a32")], name)()


CASES = {
    # % and // in every form PyTorch has
    "mod_scalar": lambda m, t: t["a"] % 2.5,
    "mod_negative_scalar": lambda m, t: t["a"] % -1.5,
    "mod_tensor": lambda m, t: t["a"] % t["div"],
    "rmod": lambda m, t: 5.0 % t["pos"],
    "floordiv_scalar": lambda m, t: t["a"] // 2,
    "floordiv_tensor": lambda m, t: t["a"] // t["div"],
    "rfloordiv": lambda m, t: 7 // t["pos"],
    "int_mod": lambda m, t: t["ints"] % t["idiv"],
    "int_mod_scalar": lambda m, t: t["ints"] % -3,
    "int_floordiv": lambda m, t: t["ints"] // t["idiv"],
    "int_rfloordiv": lambda m, t: 17 // t["idiv"],
    "int_mod_float": lambda m, t: t["ints"] % 2.5,
    "remainder": lambda m, t: m.remainder(t["a"], t["div"]),
    "remainder_scalar_tensor": lambda m, t: m.remainder(5, t["idiv"]),
    "remainder_method": lambda m, t: t["a32"].remainder(0.75),
    "fmod": lambda m, t: m.fmod(t["a"], t["div"]),
    "fmod_scalar": lambda m, t: t["a32"].fmod(-1.25),
    "int_fmod": lambda m, t: m.fmod(t["ints"], t["idiv"]),
    "floor_divide": lambda m, t: m.floor_divide(t["a"], t["div"]),
    "div_floor": lambda m, t: m.div(t["a"], t["div"], rounding_mode="floor"),
    "div_trunc_scalar": lambda m, t: t["a"].div(2, rounding_mode="trunc"),
    "int_div_trunc": lambda m, t: m.div(t["ints"], t["idiv"], rounding_mode="trunc"),
    "remainder_inplace": lambda m, t: (t["a"] * 1).remainder_(t["div"].detach()),
    "floor_divide_inplace": lambda m, t: t["ints"].clone().floor_divide_(t["idiv"]),
    "fmod_inplace": lambda m, t: (t["a"] * 1).fmod_(1.5),
    "imod": lambda m, t: _augmented(t["a"] * 1, "%=", 0.5),
    "ifloordiv": lambda m, t: _augmented(t["ints"].clone(), "//=", 2),
    # the elementwise family
    **{f"unary_{n}": _torch_function(n)
       for n in ("exp2 log2 log10 log1p rsqrt tan asin acos atan sinh cosh asinh acosh atanh trunc frac deg2rad "
                 "rad2deg reciprocal square neg arcsin arccos arctan arcsinh arccosh arctanh fix").split()},
    **{f"method_{n}": _tensor_method(n)
       for n in "exp2 log2 log10 rsqrt sinh cosh asinh trunc frac deg2rad rad2deg".split()},
    "log10_of_ints": lambda m, t: m.log10(t["ints"].abs() + 1),
    "exp2_of_ints": lambda m, t: t["idiv"].exp2(),
    # numpy's names for dim and keepdim
    "sum_axis_keepdims": lambda m, t: t["a"].sum(axis=1, keepdims=True),
    "torch_sum_axis": lambda m, t: m.sum(t["a"], axis=0),
    "mean_axis": lambda m, t: t["a"].mean(axis=(0, 1), keepdims=True),
    "max_axis": lambda m, t: t["a"].max(axis=1, keepdims=True),
    "min_axis": lambda m, t: t["a"].min(axis=0),
    "torch_max_axis": lambda m, t: m.max(t["a"], axis=1, keepdims=True),
    "torch_min_axis": lambda m, t: m.min(input=t["a"], axis=0),
    "torch_std_axis": lambda m, t: m.std(t["a"], axis=1),
    "argmax_axis": lambda m, t: t["a"].argmax(axis=1, keepdims=True),
    "argmin_axis": lambda m, t: m.argmin(t["a"], axis=0),
    "std_axis": lambda m, t: t["a"].std(axis=0, keepdims=True),
    "var_axis": lambda m, t: t["a"].var(axis=1),
    "prod_axis": lambda m, t: t["pos"].prod(axis=1, keepdims=True),
    "logsumexp_axis": lambda m, t: t["a"].logsumexp(axis=1),
    "cumsum_axis": lambda m, t: t["a"].cumsum(axis=1),
    "softmax_axis": lambda m, t: t["a"].softmax(axis=1),
    # all / any
    "all": lambda m, t: t["a"].all(),
    "all_dim": lambda m, t: m.all(t["ints"], dim=1),
    "all_axis_keepdims": lambda m, t: (t["a"] > -1).all(axis=0, keepdims=True),
    "any": lambda m, t: m.any(t["a"] > 4),
    "any_dim": lambda m, t: (t["ints"] > 5).any(1),
    "all_uint8": lambda m, t: t["ints"].to(m.uint8).all(),
    "any_tuple_dims": lambda m, t: t["a"].any(dim=(0, 1)),
    # keyword forms
    "matmul_keywords": lambda m, t: m.matmul(input=t["a"], other=t["a"].t()),
    "mm_keywords": lambda m, t: m.mm(input=t["a"], mat2=t["a"].t()),
    "add_keywords": lambda m, t: m.add(input=t["a"], other=t["pos"], alpha=2),
    "mul_keywords": lambda m, t: m.mul(input=t["a"], other=3),
    "pow_keywords": lambda m, t: m.pow(input=t["pos"], exponent=2),
    "exp_keyword": lambda m, t: m.exp(input=t["a"]),
    # the legacy constructors
    "Tensor_sizes": lambda m, t: m.Tensor(2, 3).zero_(),
    "Tensor_shape": lambda m, t: m.Tensor(t["a"].shape).zero_(),
    "Tensor_list": lambda m, t: m.Tensor([[1, 2], [3, 4]]),
    "Tensor_tuple_is_data": lambda m, t: m.Tensor((2, 3)),
    "Tensor_empty": lambda m, t: m.Tensor(),
    "FloatTensor_list": lambda m, t: m.FloatTensor([1, 2.5]),
    "LongTensor_list": lambda m, t: m.LongTensor([1.7, -2.2]),
    "DoubleTensor_sizes": lambda m, t: m.DoubleTensor(3).zero_(),
    "IntTensor_size": lambda m, t: m.IntTensor(m.Size([2, 2])).zero_(),
    "BoolTensor_list": lambda m, t: m.BoolTensor([1, 0, 1]),
    "ByteTensor_list": lambda m, t: m.ByteTensor([1, 200]),
    "LongTensor_from_tensor": lambda m, t: m.LongTensor(t["ints"]),
    # Tensor.type
    "type_cast_class": lambda m, t: t["a32"].type(m.LongTensor),
    "type_cast_name": lambda m, t: t["a32"].type("torch.DoubleTensor"),
    "type_cast_dtype": lambda m, t: t["a32"].type(m.float64),
    "type_cast_int_name": lambda m, t: t["a"].type("torch.IntTensor"),
}
_DOMAIN = {"log2": "pos", "log10": "pos", "log1p": "pos", "rsqrt": "pos", "asin": "unit", "acos": "unit",
           "atanh": "unit", "arcsin": "unit", "arccos": "unit", "arctanh": "unit", "acosh": "big", "arccosh": "big",
           "tan": "unit"}


def _augmented(x, op, other):
    if op == "%=":
        x %= other
    else:
        x //= other
    return x


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in _flat(item)]
    return [x]


def _node(x):
    fn = x.grad_fn
    return None if fn is None else type(fn).__name__


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_pytorch(name):
    te, tt = _inputs(engine), _inputs(torch)
    out_e, out_t = CASES[name](engine, te), CASES[name](torch, tt)
    flat_e, flat_t = _flat(out_e), _flat(out_t)
    assert len(flat_e) == len(flat_t)
    for e, t in zip(flat_e, flat_t):
        assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-7, equal_nan=True)
        assert _node(e) == _node(t)
        assert e.requires_grad == t.requires_grad
    assert repr(out_e) == repr(out_t)
    if _node(flat_t[0]) in (None, "NotImplemented") or not flat_t[0].requires_grad:
        return
    w = np.random.default_rng(3).normal(size=tuple(flat_t[0].shape))
    (flat_e[0] * engine.tensor(w)).sum().backward()
    (flat_t[0] * torch.tensor(w)).sum().backward()
    for k in INPUTS:
        ge, gt = te[k].grad, tt[k].grad
        assert (ge is None) == (gt is None), k
        if gt is not None:
            np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-6, atol=1e-7, err_msg=k)


@pytest.mark.parametrize("name", ["rmod", "floordiv_scalar", "floordiv_tensor", "rfloordiv", "floor_divide"])
def test_no_derivative_ops_raise_pytorchs_error_in_backward(name):
    messages = []
    for mod in (engine, torch):
        out = CASES[name](mod, _inputs(mod))
        assert type(out.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError) as got:
            out.sum().backward()
        messages.append(str(got.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("expr", [
    "torch.tensor([5, 3]) % 0", "torch.tensor([5, 3]) // torch.tensor([1, 0])", "torch.fmod(torch.tensor([5]), 0)",
    "torch.Tensor(-1)", "torch.Tensor(3.5)", "torch.ones(2).type('torch.Foo')", "torch.histc(torch.tensor([1, 2]))",
    "torch.histc(torch.tensor([1., float('inf')]))", "torch.histc(torch.rand(3), bins=0)",
    "torch.histc(torch.rand(3), 4, min=3, max=1)", "torch.histogram(torch.rand(3), 3, range=(3., 1.))",
    "torch.meshgrid(torch.ones(2), indexing='ab')", "torch.histogram(torch.rand(3).double(), torch.rand(3))", "torch.div(torch.ones(2), 2, rounding_mode='up')",
])
def test_errors_match_pytorch(expr):
    got = []
    for mod in (engine, torch):
        with pytest.raises(Exception) as e:
            eval(expr, {"torch": mod})  # noqa: S307 — the test's own text
        got.append((type(e.value).__name__, str(e.value).split("\n")[0]))
    assert got[0] == got[1]


def test_type_names_and_isinstance_match_pytorch():
    for dt in ("float32", "float64", "float16", "int64", "int32", "uint8", "bool"):
        e, t = engine.zeros(2, dtype=getattr(engine, dt)), torch.zeros(2, dtype=getattr(torch, dt))
        assert e.type() == t.type()
        for cls in ("FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor"):
            assert isinstance(e, getattr(engine, cls)) == isinstance(t, getattr(torch, cls)), (dt, cls)
    assert repr(engine.FloatTensor) == repr(torch.FloatTensor) == "<class 'torch.FloatTensor'>"
    assert isinstance(engine.nn.Parameter(engine.zeros(2)), engine.FloatTensor)


def test_tensor_of_a_shape_is_an_uninitialised_float_tensor_of_that_shape():
    x = engine.randn(4, 5)
    e, t = engine.Tensor(x.shape), torch.Tensor(torch.Size([4, 5]))
    assert (e.dtype, tuple(e.shape)) == (engine.float32, tuple(t.shape))
    assert not e.any()  # PyTorch leaves the memory uninitialised; the engine's zeros keep runs deterministic


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_linspace_is_pytorchs_bit_for_bit(dtype):
    r = np.random.default_rng(5)
    for trial in range(300):
        start, end = r.uniform(-100, 100, 2) * 10.0 ** r.integers(-3, 3)
        if trial % 3 == 0:
            start, end = float(r.integers(-10, 10)), float(r.integers(-10, 10))
        steps = int(r.integers(0, 3000))
        e = engine.linspace(float(start), float(end), steps, dtype=getattr(engine, dtype)).numpy()
        t = torch.linspace(float(start), float(end), steps, dtype=getattr(torch, dtype)).numpy()
        assert e.dtype == t.dtype and np.array_equal(e, t), (start, end, steps)


def test_linspace_tutorial_ranges_are_pytorchs():
    for args in [(0, 1, 5), (-1, 1, 100), (0, 2 * np.pi, 1000), (-5, 5, 11), (0.1, 0.9, 9), (3, 10, 1), (1, 0, 7)]:
        assert np.array_equal(engine.linspace(*args).numpy(), torch.linspace(*args).numpy()), args


def test_histc_and_histogram_match_pytorch():
    r = np.random.default_rng(11)
    for trial in range(200):
        data = r.standard_normal(int(r.integers(0, 200))) * 10.0 ** r.uniform(-2, 2)
        data = (np.round(data) if trial % 5 == 0 else data).astype(np.float32 if trial % 2 else np.float64)
        bins = int(r.integers(1, 40))
        lo, hi = (0, 0) if trial % 3 else tuple(sorted(r.uniform(-3, 3, 2)))
        e, t = engine.from_numpy(data.copy()), torch.from_numpy(data.copy())
        assert np.array_equal(engine.histc(e, bins, lo, hi).numpy(), torch.histc(t, bins, lo, hi).numpy())
        he, ht = engine.histogram(e, bins), torch.histogram(t, bins)
        assert np.array_equal(he.hist.numpy(), ht.hist.numpy()) and np.array_equal(he.bin_edges.numpy(),
                                                                                 ht.bin_edges.numpy())
    w = np.arange(6.0)
    data = np.array([0.1, 0.5, 0.5, 0.9, 2.0, -1.0])
    for kwargs in ({"range": (0.0, 1.0)}, {"weight": w, "density": True}, {"range": (0.0, 2.0), "density": True}):
        he = engine.histogram(engine.tensor(data), 4, **{k: engine.tensor(v) if k == "weight" else v
                                                        for k, v in kwargs.items()})
        ht = torch.histogram(torch.tensor(data), 4, **{k: torch.tensor(v) if k == "weight" else v
                                                       for k, v in kwargs.items()})
        np.testing.assert_allclose(he.hist.numpy(), ht.hist.numpy(), rtol=1e-12)
        assert repr(he) == repr(ht)
    edges = [0.0, 0.25, 1.0, 3.0]
    he = engine.histogram(engine.tensor(data), engine.tensor(edges, dtype=engine.float64))
    ht = torch.histogram(torch.tensor(data), torch.tensor(edges, dtype=torch.float64))
    assert repr(he) == repr(ht)
    assert repr(engine.histc(engine.tensor([1.0, 1.0]), 4)) == repr(torch.histc(torch.tensor([1.0, 1.0]), 4))


@pytest.mark.parametrize("indexing", [None, "ij", "xy"])
def test_meshgrid_matches_pytorch_with_its_warning(indexing):
    kwargs = {} if indexing is None else {"indexing": indexing}
    grids = []
    for mod in (engine, torch):
        a = mod.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = mod.tensor([4.0, 5.0], requires_grad=True)
        c = mod.tensor(7.0, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = mod.meshgrid(a, b, c, **kwargs)
        assert [str(w.message).split(" (Triggered")[0] for w in caught] == (
            ["torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."]
            if indexing is None else [])
        sum(((i + 1) * g).sum() for i, g in enumerate(out)).backward()
        grids.append((repr(out), a.grad.tolist(), b.grad.tolist(), c.grad.item(),
                      [type(g.grad_fn).__name__ for g in out]))
    assert grids[0] == grids[1]
    e, t = engine.meshgrid([engine.arange(3), engine.arange(2)], indexing="xy"), torch.meshgrid(
        [torch.arange(3), torch.arange(2)], indexing="xy")
    assert repr(e) == repr(t)


def test_out_and_version_and_autograd_module_paths():
    c_e, c_t = engine.empty(2, 2), torch.empty(2, 2)
    a_e, a_t = engine.ones(2, 2), torch.ones(2, 2)
    assert engine.add(a_e, a_e, out=c_e) is c_e and torch.add(a_t, a_t, out=c_t) is c_t
    assert repr(c_e) == repr(c_t)
    assert repr(engine.remainder(engine.tensor([5.0, -3.0]), 2, out=c_e[0])) == repr(
        torch.remainder(torch.tensor([5.0, -3.0]), 2, out=c_t[0]))
    assert engine.__version__ == "2.13.0" and torch.__version__.startswith("2.13")
    if str(torch.__version__).endswith("+cpu"):  # the CPU wheel the engine follows prints the same text
        assert str(engine.__version__) == str(torch.__version__)
    assert isinstance(engine.__version__, str) and engine.__version__ >= "2.0" and engine.__version__ > "2.9"
    assert engine.__version__ < (3, 0) and engine.__version__ == "2.13"
    from engine.autograd import Variable
    from engine.autograd.function import Function, FunctionCtx, once_differentiable
    assert (Function, FunctionCtx, once_differentiable) == (engine.autograd.Function, engine.autograd.FunctionCtx,
                                                            engine.function.once_differentiable)
    assert Variable(engine.ones(2), requires_grad=True).requires_grad


def test_dataloader_over_a_dataset_of_tensors_matches_pytorch():
    def batches(mod):
        data = mod.utils.data if mod is engine else __import__("torch.utils.data").utils.data

        class Pairs(data.Dataset):
            def __init__(self):
                self.x = mod.arange(12.0).reshape(6, 2)
                self.y = mod.arange(6) % 2

            def __len__(self):
                return len(self.x)

            def __getitem__(self, i):
                return self.x[i], self.y[i]

        class Dicts(Pairs):
            def __getitem__(self, i):
                return {"x": self.x[i], "label": self.y[i]}

        mod.manual_seed(0)
        return [repr(b) for ds in (Pairs(), Dicts()) for b in data.DataLoader(ds, batch_size=4, shuffle=True)]

    assert batches(engine) == batches(torch)
