"""t[key] = v and t[key] op= v under autograd (issue 21 section 3): IndexPutBackward0 / CopySlices as PyTorch
records them, their gradients (against torch and finite differences), version counters and errors."""
import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")

X = np.random.default_rng(3).normal(size=(5, 4)).astype(np.float32)
V = np.random.default_rng(4).normal(size=(4,)).astype(np.float32)


def _programs(lib):
    """Each program: (x leaf, v leaf) -> the tensor after its index assignment."""
    def dlogits(x, v):
        d = lib.nn.functional.softmax(x, 1)
        d[range(5), lib.tensor([0, 3, 1, 1, 2])] -= 1
        d /= 5
        return d

    def put_tensor(x, v):
        y = x * 2
        y[lib.tensor([0, 2]), lib.tensor([1, 3])] = v[:2]
        return y

    def put_mask(x, v):
        y = x * 1.5
        y[y > 0] += v.sum()
        return y

    def put_row(x, v):
        y = x.exp()
        y[1] = v
        return y

    def put_columns(x, v):
        y = x * 3
        y[:, 1:3] = v[:2]
        return y

    def sub_row(x, v):
        y = x * 3
        y[2] -= v
        return y

    def into_constant(x, v):
        out = lib.zeros(5, dtype=x.dtype)
        out[1] = x.sum()
        out[lib.tensor([3])] = v[0]
        return out * v[1]

    def list_key(x, v):
        y = x.tanh()
        y[[0, 4]] *= 2
        return y

    def whole(x, v):
        y = x * 2
        y[...] = v
        return y

    def copy_method(x, v):
        y = x + 1
        y.copy_(v * 3)
        return y

    return {f.__name__: f for f in (dlogits, put_tensor, put_mask, put_row, put_columns, sub_row, into_constant,
                                    list_key, whole, copy_method)}


NAMES = list(_programs(torch))


def _run(lib, name):
    x = lib.tensor(X, requires_grad=True)
    v = lib.tensor(V, requires_grad=True)
    out = _programs(lib)[name](x, v)
    weights = lib.tensor(np.arange(out.numel(), dtype=np.float32).reshape(tuple(out.shape)) / 7)
    try:
        (out * weights).sum().backward()
    except RuntimeError as e:  # makemore's dlogits overwrites what softmax saved: backward refuses in both
        return out, x, v, str(e)
    return out, x, v, None


@pytest.mark.parametrize("name", NAMES)
def test_values_gradients_and_names_match_torch(name):
    ours, ox, ov, our_error = _run(engine, name)
    theirs, tx, tv, their_error = _run(torch, name)
    assert our_error == their_error
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    assert ours._version == theirs._version
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-6)
    for a, b in ((ox, tx), (ov, tv)):
        if b.grad is None:
            assert a.grad is None
        else:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["put_tensor", "put_mask", "put_columns", "sub_row", "into_constant"])
def test_gradients_match_finite_differences(name):
    program = _programs(engine)[name]

    def fn(x, v):
        return program(x, v)

    x = engine.tensor(X.astype(np.float64), requires_grad=True)
    v = engine.tensor(V.astype(np.float64), requires_grad=True)
    assert engine.autograd.gradcheck(fn, (x, v))


@pytest.mark.parametrize("key", ["0", "[0]", "torch.tensor([0, 1])", "x > 0", ":, 1", "..."])
def test_a_leaf_that_requires_grad_refuses_as_torch_does(key):
    def message(lib):
        x = lib.ones(3, 3, requires_grad=True)
        keys = {"0": 0, "[0]": [0], "torch.tensor([0, 1])": lib.tensor([0, 1]), "x > 0": x > 0,
                ":, 1": (slice(None), 1), "...": Ellipsis}
        with pytest.raises(RuntimeError) as info:
            x[keys[key]] = 2.0
        return str(info.value)

    assert message(engine) == message(torch)


def test_no_grad_writes_a_leaf_in_place_as_torch_does():
    for lib in (engine, torch):
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            x[1] = 5.0
        assert x.is_leaf and x.grad_fn is None and x.tolist() == [1.0, 5.0, 1.0]


@pytest.mark.parametrize("key", ["row", "index"])
def test_saved_tensor_overwritten_gives_torchs_version_error(key):
    def message(lib):
        x = lib.ones(4, 3, requires_grad=True)
        y = x * 2
        z = y ** 2  # saves y
        if key == "row":
            y[0] = 1.0
        else:
            y[[0, 2]] = 1.0
        with pytest.raises(RuntimeError) as info:
            z.sum().backward()
        return str(info.value)

    assert message(engine) == message(torch)


def test_version_error_names_the_in_place_ops_grad_fn():
    def message(lib):
        x = lib.ones(4, 3, requires_grad=True)
        y = x * 2
        z = y ** 2
        y += 1
        with pytest.raises(RuntimeError) as info:
            z.sum().backward()
        return str(info.value)

    assert message(engine) == message(torch)


def test_saved_result_overwritten_names_its_own_node():
    def message(lib):
        x = lib.ones(4, 3, requires_grad=True)
        y = x.exp()  # exp saves its result
        y[[1]] = 0.0
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        return str(info.value)

    assert message(engine) == message(torch)


def test_second_backward_needs_retain_graph():
    for lib in (engine, torch):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y[[0]] = 5.0
        s = y.sum()
        s.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            s.backward()


def test_next_functions_match_torch():
    def names(lib):
        x = lib.ones(3, 3, requires_grad=True)
        v = lib.ones(3, requires_grad=True)
        y = x * 2
        y[[0]] = v
        w = x * 2
        w[0] = v
        return [[type(fn).__name__ for fn, _ in t.grad_fn.next_functions] for t in (y, w)]

    assert names(engine) == names(torch)


def test_shape_mismatch_and_out_of_range_raise():
    x = engine.ones(3, 3, requires_grad=True)
    y = x * 2
    with pytest.raises((RuntimeError, ValueError, IndexError)):
        y[[0]] = engine.ones(2)
    with pytest.raises(IndexError):
        y[[7]] = 1.0
    assert y.grad_fn.name() == "MulBackward0"  # a failed assignment leaves the history alone


@pytest.mark.parametrize("method", ["zero_", "fill_", "fill_tensor", "normal_", "uniform_"])
def test_overwrites_of_a_tensor_with_history_cut_its_gradient(method):
    # zero_/fill_/normal_/uniform_ on a non-leaf: the old values no longer matter (PyTorch's ZeroBackward0, ...)
    out = {}
    for lib in (engine, torch):
        lib.manual_seed(0)
        x = lib.ones(3, requires_grad=True)
        v = lib.tensor(2.0, requires_grad=True)
        y = x * 2
        if method == "fill_tensor":
            y.fill_(v)
        else:
            getattr(y, method)(*([3.0] if method == "fill_" else []))
        (y * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        out[lib] = (type(y.grad_fn).__name__, y._version, x.grad.tolist(), None if v.grad is None else v.grad.item())
    assert out[engine] == out[torch]
