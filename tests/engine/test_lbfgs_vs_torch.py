"""torch.optim.LBFGS (engine/optim/lbfgs.py) against the installed PyTorch: the same problem from the same float32
values gives the same losses, parameters, evaluation counts and state after every step(closure), bit for bit with
MKL (the dot products are MKL's sdot, as ATen's); errors are PyTorch's words."""
import math

import numpy as np
import pytest

import engine
from engine import mkl

torch = pytest.importorskip("torch")

# NOTE: without MKL numpy's BLAS sums a dot product in another order: last-bit differences that L-BFGS carries on
EXACT = mkl.AVAILABLE
RTOL = 0 if EXACT else 1e-3
# NOTE: float64 is not bit for bit: the engine's float64 add(alpha=) rounds twice where ATen's fmadd rounds once
# (engine/optim/optimizer.py) and its float64 products and sums keep numpy's order; 6 steps of the MLP drift by
# 2e-11 relative at most (measured), so 1e-9 leaves room and still catches any change of formula or order of steps
RTOL64 = 1e-9


@pytest.fixture(autouse=True)
def one_thread():
    # NOTE: on more threads PyTorch splits sums and MKL dots of ~30,000 elements and more (other last bits)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _rosenbrock(lib):
    x = lib.tensor([-1.5, 2.0], requires_grad=True)
    return [x], lambda: (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def _mlp(lib, hidden=8, inputs=4, rows=16, dtype="float32"):
    rng = np.random.default_rng(0)
    dt = getattr(lib, dtype)
    w1 = lib.tensor(rng.standard_normal((hidden, inputs)) * 0.5, dtype=dt, requires_grad=True)
    b1 = lib.tensor(np.zeros(hidden), dtype=dt, requires_grad=True)
    w2 = lib.tensor(rng.standard_normal((1, hidden)) * 0.5, dtype=dt, requires_grad=True)
    x = lib.tensor(rng.standard_normal((rows, inputs)), dtype=dt)
    y = lib.tensor(rng.standard_normal((rows, 1)), dtype=dt)
    return [w1, b1, w2], lambda: ((lib.tanh(x @ w1.t() + b1) @ w2.t() - y) ** 2).mean()


def _quadratic(lib, n=6):
    rng = np.random.default_rng(3)
    m = rng.standard_normal((n, n))
    a = lib.tensor(m @ m.T + n * np.eye(n), dtype=lib.float64)
    b = lib.tensor(rng.standard_normal(n), dtype=lib.float64)
    x = lib.zeros(n, dtype=lib.float64, requires_grad=True)
    return [x], lambda: 0.5 * x @ (a @ x) - b @ x, (a, b)


PROBLEMS = {"rosenbrock": _rosenbrock, "mlp": _mlp, "wide_mlp": lambda lib: _mlp(lib, hidden=96, inputs=64, rows=32),
            "mlp64": lambda lib: _mlp(lib, dtype="float64")}


def _run(lib, problem, kwargs, steps=6):
    params, f = PROBLEMS[problem](lib)
    opt = lib.optim.LBFGS(params, **kwargs)

    def closure():
        opt.zero_grad()
        loss = f()
        loss.backward()
        return loss

    trace = []
    for _ in range(steps):
        loss = opt.step(closure)
        state = opt.state[params[0]]
        trace.append((loss.item(), [p.detach().numpy().copy() for p in params], state["func_evals"], state["n_iter"]))
    return trace, opt


def _same(a, b):
    """float32: bit for bit with MKL (the sign of a zero too), else within RTOL; float64 within RTOL64."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == np.float64:
        return np.allclose(a, b, rtol=RTOL64, atol=1e-15)
    if EXACT:
        return a.tobytes() == b.tobytes()
    return np.allclose(a, b, rtol=RTOL, atol=1e-6)


def _same_loss(a, b, dtype="float32"):
    if dtype == "float64":
        return math.isclose(a, b, rel_tol=RTOL64)
    return a == b if EXACT else math.isclose(a, b, rel_tol=RTOL, abs_tol=1e-9)


CASES = [
    ("rosenbrock", {}),
    ("rosenbrock", {"line_search_fn": "strong_wolfe"}),
    ("rosenbrock", {"history_size": 2}),  # the history drops its oldest pair every iteration past the second
    ("rosenbrock", {"max_iter": 1}),
    ("rosenbrock", {"lr": 0.5, "history_size": 2, "line_search_fn": "strong_wolfe"}),
    ("rosenbrock", {"max_iter": 7, "max_eval": 9, "line_search_fn": "strong_wolfe"}),  # the evaluation budget ends steps
    ("mlp", {}),
    ("mlp", {"line_search_fn": "strong_wolfe"}),
    ("mlp", {"history_size": 2, "max_iter": 7}),
    ("mlp", {"tolerance_grad": 1e-3, "tolerance_change": 1e-4}),  # tolerance exits part-way through steps
    ("mlp", {"tolerance_grad": 10.0}),  # optimal at once: each step returns after one evaluation
    ("mlp", {"tolerance_change": 1e-2, "line_search_fn": "strong_wolfe"}),
    ("mlp", {"lr": 0.1}),
    ("wide_mlp", {"history_size": 5, "line_search_fn": "strong_wolfe"}),  # 6,337 elements: cascade sum and sdot
    ("mlp64", {"line_search_fn": "strong_wolfe"}),
]


@pytest.mark.parametrize("problem,kwargs", CASES, ids=[f"{p}-{i}" for i, (p, _) in enumerate(CASES)])
def test_every_step_matches_torch(problem, kwargs):
    ours, our_opt = _run(engine, problem, kwargs)
    theirs, their_opt = _run(torch, problem, kwargs)
    for step, ((l1, p1, e1, n1), (l2, p2, e2, n2)) in enumerate(zip(ours, theirs)):
        assert (e1, n1) == (e2, n2), (step, e1, n1, e2, n2)
        assert _same_loss(l1, l2, str(p2[0].dtype)), (step, l1, l2)
        assert all(_same(a, b) for a, b in zip(p1, p2)), step
    _same_state(our_opt.state_dict(), their_opt.state_dict())


def _same_state(ours, theirs, groups=True):
    """The state_dict's structure (keys in order, which values are tensors, lists and numbers) and its values."""
    assert not groups or ours["param_groups"] == theirs["param_groups"]
    assert list(ours["state"]) == list(theirs["state"])
    for mine, their in zip(ours["state"].values(), theirs["state"].values()):
        assert list(mine) == list(their)
        for key in their:
            a, b = mine[key], their[key]
            if isinstance(b, list):
                assert isinstance(a, list) and len(a) == len(b), key
                assert [x is None for x in a] == [x is None for x in b], key
                pairs = [(x.numpy(), y.numpy()) for x, y in zip(a, b) if y is not None]
                if pairs and pairs[0][1].dtype == np.float64:
                    # NOTE: al and ro come from y = g_k - g_(k-1), nearby gradients: their relative error is the
                    # parameters' (RTOL64) times |g| / |y|, 2e-10 here (measured)
                    assert all(np.allclose(x, y, rtol=1e-7, atol=1e-12) for x, y in pairs), key
                else:
                    assert all(_same(x, y) for x, y in pairs), key
            elif isinstance(b, torch.Tensor):
                assert isinstance(a, engine.Tensor) and a.shape == tuple(b.shape) and a.dtype == getattr(engine, str(b.dtype)[6:]), key
                assert _same(a.numpy(), b.numpy()), key
            else:
                assert type(a) is type(b), (key, a, b)
                assert a == b if type(a) is int else _same_loss(a, b, str(their["d"].dtype).replace("torch.", "")), (key, a, b)


def test_a_small_history_keeps_history_size_pairs_and_a_list_of_that_length():
    ours, opt = _run(engine, "rosenbrock", {"history_size": 2})
    theirs, their_opt = _run(torch, "rosenbrock", {"history_size": 2})
    state, their_state = opt.state_dict()["state"][0], their_opt.state_dict()["state"][0]
    assert len(state["old_dirs"]) == len(state["old_stps"]) == len(state["ro"]) == 2 == len(their_state["old_dirs"])
    assert len(state["al"]) == 2 and state["n_iter"] == their_state["n_iter"] > 20


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_a_tensor_learning_rate_is_pytorchs_zero_d_tensor(line_search_fn):
    ours, our_opt = _run(engine, "rosenbrock", {"lr": engine.tensor(0.8), "line_search_fn": line_search_fn})
    theirs, their_opt = _run(torch, "rosenbrock", {"lr": torch.tensor(0.8), "line_search_fn": line_search_fn})
    assert all(_same(a, b) for (_, p1, _, _), (_, p2, _, _) in zip(ours, theirs) for a, b in zip(p1, p2))
    assert all(_same_loss(a[0], b[0]) for a, b in zip(ours, theirs))
    _same_state(our_opt.state_dict(), their_opt.state_dict(), groups=False)  # (state['t'] is a 0-d tensor in both)
    assert isinstance(our_opt.state_dict()["state"][0]["t"], engine.Tensor)


def test_loaded_state_continues_as_pytorch_does():
    results = []
    for lib in (engine, torch):
        params, f = _mlp(lib)
        opt = lib.optim.LBFGS(params, history_size=4, line_search_fn="strong_wolfe")

        def closure(opt=opt, f=f):
            opt.zero_grad()
            loss = f()
            loss.backward()
            return loss

        for _ in range(2):
            opt.step(closure)
        opt2 = lib.optim.LBFGS(params, history_size=4, line_search_fn="strong_wolfe")
        opt2.load_state_dict(opt.state_dict())
        losses = [opt2.step(lambda o=opt2, f=f: _evaluate(o, f)).item() for _ in range(3)]
        results.append((losses, [p.detach().numpy().copy() for p in params], opt2.state[params[0]]["func_evals"]))
    (l1, p1, e1), (l2, p2, e2) = results
    assert e1 == e2 and (l1 == l2 or not EXACT) and all(_same(a, b) for a, b in zip(p1, p2))


def _evaluate(opt, f):
    opt.zero_grad()
    loss = f()
    loss.backward()
    return loss


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_it_converges_on_a_quadratic(line_search_fn):
    params, f, (a, b) = _quadratic(engine)
    opt = engine.optim.LBFGS(params, line_search_fn=line_search_fn, max_iter=50, tolerance_grad=1e-10, tolerance_change=0)
    for _ in range(3):
        opt.step(lambda: _evaluate(opt, f))
    solution = np.linalg.solve(a.numpy(), b.numpy())
    np.testing.assert_allclose(params[0].detach().numpy(), solution, rtol=1e-8, atol=1e-10)
    assert np.abs(params[0].grad.numpy()).max() < 1e-8


def test_the_step_returns_the_closures_first_result_and_leaves_grad_mode_as_it_was():
    for lib in (engine, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.LBFGS([w], max_iter=3)
        seen = []

        def closure(opt=opt, w=w, seen=seen, lib=lib):
            seen.append(lib.is_grad_enabled())
            opt.zero_grad()
            loss = (w ** 2).sum()
            loss.backward()
            return loss

        with lib.no_grad():
            first = opt.step(closure)
        assert first.item() == 5.0 and seen == [True] * 3 and lib.is_grad_enabled()


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - compared below
        return type(e).__name__, str(e)
    return None


def _both(make):
    ours, theirs = _error(lambda: make(engine)), _error(lambda: make(torch))
    assert ours == theirs and theirs is not None, (ours, theirs)
    return theirs


def _stepped(lib, closure_of, **kwargs):
    w = lib.tensor([1.0, -2.0], requires_grad=True)
    opt = lib.optim.LBFGS([w], **kwargs)

    def closure():
        opt.zero_grad()
        loss = (w ** 2).sum() + (w ** 4).sum()
        loss.backward()
        return loss

    return opt.step(closure_of(closure, w))


ERRORS = {
    "parameter groups": lambda lib: lib.optim.LBFGS([{"params": [lib.ones(1, requires_grad=True)]},
                                                     {"params": [lib.ones(1, requires_grad=True)]}]),
    "no closure": lambda lib: lib.optim.LBFGS([lib.ones(1, requires_grad=True)]).step(),
    "None closure": lambda lib: lib.optim.LBFGS([lib.ones(1, requires_grad=True)]).step(None),
    "bad line search": lambda lib: _stepped(lib, lambda c, w: c, line_search_fn="bogus"),
    "closure gives None": lambda lib: _stepped(lib, lambda c, w: lambda: None),
    "closure gives a list": lambda lib: _stepped(lib, lambda c, w: lambda: [1.0]),
    "closure gives a vector": lambda lib: _stepped(lib, lambda c, w: lambda: w * 2),
    "closure gives bad text": lambda lib: _stepped(lib, lambda c, w: lambda: "fast"),
    "nan lr": lambda lib: lib.optim.LBFGS([lib.ones(1, requires_grad=True)], lr=float("nan")),
    "negative lr": lambda lib: lib.optim.LBFGS([lib.ones(1, requires_grad=True)], lr=-1),
    "two-element lr": lambda lib: lib.optim.LBFGS([lib.ones(1, requires_grad=True)], lr=lib.ones(2)),
    "text max_iter": lambda lib: lib.optim.LBFGS([lib.ones(1, requires_grad=True)], max_iter="20"),
    "None max_iter": lambda lib: lib.optim.LBFGS([lib.ones(1, requires_grad=True)], max_iter=None),
    "a tensor for params": lambda lib: lib.optim.LBFGS(lib.ones(1, requires_grad=True)),
    "no params": lambda lib: lib.optim.LBFGS([]),
    "float history": lambda lib: _stepped(lib, lambda c, w: c, history_size=2.5),
    "no evaluation budget": lambda lib: _stepped(lib, lambda c, w: c, max_eval=0, line_search_fn="strong_wolfe"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_are_pytorchs(case):
    _both(ERRORS[case])


def test_a_group_added_later_is_pytorchs_assertion():
    def make(lib):
        w = lib.ones(1, requires_grad=True)
        opt = lib.optim.LBFGS([w])
        opt.add_param_group({"params": [lib.ones(1, requires_grad=True)]})
        opt.step(lambda: (w * w).sum())
    assert _both(make) == ("AssertionError", "Expected exactly one param_group, but got 2")


def test_the_closure_may_return_a_number_or_text_as_in_pytorch():
    for lib in (engine, torch):
        assert _stepped(lib, lambda c, w: lambda: (c(), "2.5")[1]) == "2.5"
        assert _stepped(lib, lambda c, w: lambda: (c(), 3)[1]) == 3


def test_state_a_program_wrote_is_checked_where_it_is_read():
    w = engine.tensor([1.0, -2.0], requires_grad=True)
    opt = engine.optim.LBFGS([w])
    opt.step(lambda: _evaluate(opt, lambda: (w ** 2).sum() + (w ** 4).sum()))
    for key, value in [("d", engine.ones(5)), ("t", "x"), ("old_dirs", (1, 2)), ("H_diag", [1.0]),
                       ("prev_flat_grad", np.ones(2)), ("func_evals", None)]:
        saved = opt.state[w][key]
        opt.state[w][key] = value
        with pytest.raises(TypeError, match=key):
            opt.step(lambda: _evaluate(opt, lambda: (w ** 2).sum() + (w ** 4).sum()))
        opt.state[w][key] = saved


def test_the_history_list_and_the_recursion_are_bounded_by_the_run_limits():
    from engine.limits import LimitExceeded, limited

    w = engine.tensor([1.0, -2.0], requires_grad=True)
    with limited(max_tensor_elements=10_000, max_live_elements=100_000, max_graph_nodes=1000, max_op_flops=10 ** 6):
        opt = engine.optim.LBFGS([w], history_size=10 ** 9)
        with pytest.raises(LimitExceeded, match="history_size = 1,000,000,000"):
            opt.step(lambda: _evaluate(opt, lambda: (w ** 2).sum() + (w ** 4).sum()))
        opt = engine.optim.LBFGS([w])
        opt.step(lambda: _evaluate(opt, lambda: (w ** 2).sum() + (w ** 4).sum()))
        state = opt.state[w]
        state["old_dirs"] = state["old_stps"] = [engine.ones(2)] * 1000
        state["ro"] = [1.0] * 1000
        with pytest.raises(LimitExceeded, match="two-loop recursion over 1,000 history pairs"):
            opt.step(lambda: _evaluate(opt, lambda: (w ** 2).sum() + (w ** 4).sum()))
