"""Issue 8 hole 7: every size a program decides is checked against the run's limits *before* numpy allocates.

Each case would allocate gigabytes (or a 10**10-element temporary) if it reached numpy: the test only
passes when the engine refuses it first. A watchdog (RLIMIT_AS is not set here) would be the only
other stop, so a regression shows up as a MemoryError or a very slow test, never a silent pass:
`_refused` also asserts nothing big was allocated (tracemalloc's peak).
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import engine as torch
from engine.limits import LimitExceeded, limited
from engine.nn import functional as F
from engine.op_table import reduced_shape

LIMITS = {"max_tensor_elements": 100_000, "max_live_elements": 1_000_000, "max_graph_nodes": 10_000}
PEAK = 64 << 20  # far above anything these refusals may touch, far below what any of them would allocate


def _refused(fn, match="max_tensor_elements"):
    tracemalloc.start()
    try:
        with limited(**LIMITS), pytest.raises(LimitExceeded, match=match):
            fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < PEAK, f"{peak:,} bytes allocated before the refusal"


# ---------------------------------------------------------------- empty tensors: what they span is bounded
@pytest.mark.parametrize("make", [
    lambda: torch.zeros(0, 60_000_000),
    lambda: torch.zeros(60_000_000, 0),
    lambda: torch.zeros(0, 100_000, 100_000),  # .sum(0) would be 10**10 elements
    lambda: torch.zeros(100_000, 100_000, 0),  # .tolist() would be 10**10 empty lists
    lambda: torch.ones(0, 2 ** 40),
    lambda: torch.randn(0, 60_000_000),
    lambda: torch.randint(0, 3, (0, 60_000_000)),
    lambda: torch.full((0, 60_000_000), 1.0),
    lambda: torch.eye(0, 300_000_000),
    lambda: torch.zeros(0).view(100_000, 100_000, 0),  # a view allocates nothing, but what it spans is bounded
    lambda: torch.zeros(0, 1).expand(0, 200_000),
])
def test_an_empty_tensor_spans_at_most_max_tensor_elements(make):
    _refused(make, match=r"is empty but spans more than 100,000 .*max_tensor_elements = 100,000")


def test_an_empty_tensor_within_the_limit_is_fine():
    with limited(**LIMITS):
        x = torch.zeros(0, 100_000)
        assert x.shape == (0, 100_000) and x.sum(1).shape == (0,) and x.sum(0).shape == (100_000,)
        assert torch.zeros(100_000, 0).shape == (100_000, 0)
        assert torch.zeros(0, 10, 10).sum(0).tolist() == [[0.0] * 10] * 10
        assert torch.zeros(0, 300, 300).view(300, 0, 300).shape == (300, 0, 300)


# ---------------------------------------------------------------- reductions over zero-size dims
@pytest.mark.parametrize("reduce", [
    lambda x: x.sum(0),
    lambda x: x.sum((0,), keepdim=True),
    lambda x: x.sum(dim=[0]),
    lambda x: torch.sum(x, 0),
    lambda x: x.mean(0),
    lambda x: x.max(0),
    lambda x: x.min(dim=0, keepdim=True),
    lambda x: x.argmax(0),
    lambda x: x.argmin(-3),
])
def test_reducing_a_zero_size_dim_is_predicted(reduce):
    """The output of reducing an empty tensor's zero-size dim is bigger than its input: it is checked
    ("would hold") before numpy makes it, not found ("holds") after."""
    with limited(max_tensor_elements=10 ** 6, max_live_elements=1000, max_graph_nodes=10):
        x = torch.zeros(0, 1000, 1000)
        with pytest.raises(LimitExceeded, match="would hold 1,000,000 tensor elements"):
            reduce(x)


def test_reduced_shape():
    assert reduced_shape((0, 5, 7), (0,), False) == (5, 7)
    assert reduced_shape((0, 5, 7), 0, True) == (1, 5, 7)
    assert reduced_shape((0, 5, 7), (-1, 1), False) == (0,)
    assert reduced_shape((0, 5, 7), None, False) == ()
    assert reduced_shape((0, 5, 7), None, True) == (1, 1, 1)
    assert reduced_shape((), 0, False) == ()


def test_matrix_vector_product_of_empty_inputs_is_checked():
    """(n, 0) @ (0,) has n elements from two empty inputs: predicted ("would hold"), not found after numpy made it."""
    with limited(max_tensor_elements=100, max_live_elements=10, max_graph_nodes=10):
        a, v = torch.zeros(20, 0), torch.zeros(0)
        with pytest.raises(LimitExceeded, match="would hold 20 tensor elements"):
            a @ v


# ---------------------------------------------------------------- one_hot
def test_one_hot_of_an_empty_tensor():
    _refused(lambda: F.one_hot(torch.zeros(0, dtype=torch.long), 100_000_000), match="is empty but spans")
    _refused(lambda: F.one_hot(torch.tensor([1]), 100_000_000), match="has 100,000,000 elements")
    with limited(**LIMITS):
        with pytest.raises(RuntimeError, match="Can not infer total number of classes from empty tensor"):
            F.one_hot(torch.zeros(0, dtype=torch.long))
        assert F.one_hot(torch.zeros(0, dtype=torch.long), 5).shape == (0, 5)
        assert F.one_hot(torch.tensor([[0, 2], [1, 1]])).tolist() == [[[1, 0, 0], [0, 0, 1]], [[0, 1, 0], [0, 1, 0]]]
        assert F.one_hot(torch.tensor(2), 4).tolist() == [0, 0, 1, 0]
        with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
            F.one_hot(torch.tensor([3]), 2)


# ---------------------------------------------------------------- factories with program-decided sizes
def test_factory_endpoints_must_be_numbers():
    """numpy broadcasts list or tensor endpoints: linspace([0] * 10**5, 1, 10**5) would be 10**10 elements."""
    big = [0.0] * 100_000
    with limited(**LIMITS):
        for call in (lambda: torch.linspace(big, 1, 100_000), lambda: torch.linspace(0, big, 100_000),
                     lambda: torch.arange(big, 10), lambda: torch.arange(0, big), lambda: torch.arange(0, 10, big),
                     lambda: torch.full((100_000,), big), lambda: torch.linspace(0, 1, 1e9),
                     lambda: torch.eye(3.0)):
            with pytest.raises(TypeError, match=r"must be (Number|int), not (list|float)"):
                call()
        with pytest.raises(RuntimeError, match="0-dimensional start and end tensors"):
            torch.linspace(torch.zeros(100_000), 1, 100_000)
        with pytest.raises(TypeError, match="must be Number, not Tensor"):
            torch.arange(torch.zeros(3), 10)
        with pytest.raises(TypeError, match="must be Number, not Tensor"):
            torch.full((3,), torch.tensor([2.0]))
    _refused(lambda: torch.linspace(0, 1, torch.tensor(300_000_000)), match="300,000,000 elements")
    _refused(lambda: torch.arange(torch.tensor(3e8)), match="300,000,000 elements")
    _refused(lambda: torch.arange(0, 1, 1e-10), match="10,000,000,000 elements")
    _refused(lambda: torch.eye(torch.tensor(30_000)), match="900,000,000 elements")
    _refused(lambda: torch.full((torch.tensor(300_000_000),), 1.0), match="300,000,000 elements")


def test_factories_still_take_zero_dim_tensors_like_torch():
    with limited(**LIMITS):
        assert torch.linspace(torch.tensor(0.0), torch.tensor(1.0), torch.tensor(3)).tolist() == [0.0, 0.5, 1.0]
        assert torch.arange(torch.tensor(3)).tolist() == [0, 1, 2] and torch.arange(torch.tensor(3)).dtype is torch.int64
        assert torch.full((2,), torch.tensor(2)).tolist() == [2, 2] and torch.full((2,), torch.tensor(2)).dtype is torch.int64
        assert torch.full((2,), True).dtype is torch.bool
        assert torch.eye(torch.tensor(2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]
        assert torch.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
        assert torch.linspace(0, 1, 0).shape == (0,)
        for call, msg in ((lambda: torch.arange(10, 0), "upper bound and lower bound inconsistent with step sign"),
                          (lambda: torch.arange(0, float("inf")), "unsupported range: 0 -> inf"),
                          (lambda: torch.linspace(0, 1, -1), "number of steps must be non-negative"),
                          (lambda: torch.eye(-1), "n must be greater or equal to 0, got -1")):
            with pytest.raises(RuntimeError, match=msg):
                call()


def test_nested_data_is_measured_through_ranges_and_tensors():
    """torch.tensor of a list of tensors or ranges: numpy copies every element; the shape counts them first."""
    _refused(lambda: torch.tensor([torch.zeros(100_000)] * 200), match=r"shape \[200, 100000\]")
    _refused(lambda: torch.tensor([range(3000)] * 3000), match=r"shape \[3000, 3000\]")
    _refused(lambda: torch.tensor(range(10_000_000)), match=r"shape \[10000000\]")
    with limited(**LIMITS):
        assert torch.tensor([torch.tensor(1.0), torch.tensor(2.0)]).tolist() == [1.0, 2.0]
        assert torch.tensor([range(2), range(2)]).tolist() == [[0, 1], [0, 1]]


def test_an_allowed_run_still_allocates_normally():
    with limited(**LIMITS) as lim:
        x = torch.zeros(300, 300)
        assert x.sum(0).shape == (300,) and x.max(1).values.shape == (300,)
        assert lim.live_elements >= 90_000
    assert np.array_equal(F.one_hot(torch.tensor([0, 1]), 2)._data, np.eye(2, dtype=np.int64))


# ---------------------------------------------------------------- tensor functions tutorials use (issue 9 section 5)
@pytest.mark.parametrize("make", [
    lambda: torch.ones(3).repeat(10**6, 10**6),
    lambda: torch.ones(2, 2).repeat(1, 2**40),
    lambda: torch.ones(1).repeat(*([2] * 70)),
    lambda: torch.ones(400).diag(),
    lambda: torch.ones(1).diag(10**6),
    lambda: torch.ones(10, 20_000).index_select(0, torch.zeros(10, dtype=torch.long)),
    lambda: torch.ones(1, 2, 3).repeat(10**5, 1, 1).sum(),
    lambda: torch.einsum("i,j->ij", torch.ones(1000), torch.ones(1000)),
    lambda: torch.einsum("i,j,k->ijk", torch.ones(100), torch.ones(100), torch.ones(100)),
    lambda: torch.einsum("ij,kl->ijkl", torch.ones(20, 20), torch.ones(20, 20)),
    lambda: torch.outer(torch.ones(1000), torch.ones(1000)),
    lambda: F.one_hot(torch.tensor([0]), 10**9),
    lambda: F.pad(torch.ones(1, 2, 3), (0, 10**9), mode="replicate"),
    lambda: F.pad(torch.ones(1, 1, 2, 2), (10**5, 10**5, 0, 0), mode="replicate"),
    lambda: F.pad(torch.ones(1, 2), (0, 10**9)),
    lambda: torch.zeros(0, 100_000, 100_000).logsumexp(0),
    lambda: torch.zeros(0, 100_000, 100_000).prod(0),
    lambda: torch.zeros(0, 100_000, 100_000).std(0),
    lambda: torch.zeros(0, 100_000, 100_000).var(0),
    lambda: torch.zeros(0, 100_000, 100_000).norm(dim=0),
])
def test_tensor_functions_refuse_outputs_above_the_limit_before_numpy_allocates(make):
    _refused(make, match="max_tensor_elements|at most 64 dimensions")


def test_nonzero_is_bounded_by_its_count_before_it_allocates():
    # 50,000 nonzero entries of a 2-D tensor: the answer has 100,000 elements (within), 3-D: 150,000 (above)
    with limited(**LIMITS):
        assert torch.ones(250, 200).nonzero().shape == (50_000, 2)
    _refused(lambda: torch.ones(50, 40, 25).nonzero())


def test_tensor_functions_within_the_limit_run():
    with limited(**LIMITS):
        assert torch.ones(3).repeat(100, 100).shape == (100, 300)
        assert torch.ones(300).diag().shape == (300, 300)
        assert torch.einsum("i,j->ij", torch.ones(300), torch.ones(300)).shape == (300, 300)
        assert F.pad(torch.ones(1, 2, 3), (0, 1000), mode="replicate").shape == (1, 2, 1003)


# ---------------------------------------------------------------- per pass (issue 21 §2), live elements given back
def test_graph_nodes_count_per_pass_not_per_run():
    """A pass runs from the end of one backward() through the next: a 300-step loop of 6 nodes a step stays
    within max_graph_nodes = 10, while one pass of 11 nodes is refused with the limit's name."""
    with limited(max_tensor_elements=1000, max_live_elements=100_000, max_graph_nodes=10) as lim:
        w = torch.zeros(3, requires_grad=True)
        x = torch.ones(3)
        for _ in range(300):
            loss = ((x * w - 1.0) ** 2).sum()  # mul, sub, pow, sum: 4 nodes
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
            w.grad.zero_()
        assert lim.graph_nodes == 0 and abs(float(w[0]) - 1.0) < 1e-4
        y = w * 1.0
        with pytest.raises(LimitExceeded, match=r"this pass built more than 10 graph nodes .*max_graph_nodes = 10"):
            for _ in range(20):
                y = y * 1.0


def test_a_failed_backward_ends_its_pass_too():
    with limited(max_tensor_elements=1000, max_live_elements=100_000, max_graph_nodes=10) as lim:
        w = torch.ones(2, requires_grad=True)
        loss = (w * 2).sum()
        loss.backward()
        (w * 3).sum()
        assert lim.graph_nodes == 2
        with pytest.raises(RuntimeError):
            loss.backward()  # the graph was freed
        assert lim.graph_nodes == 0


def test_live_elements_are_given_back_when_tensors_die():
    with limited(**LIMITS) as lim:
        base = lim.live_elements
        x = torch.zeros(100, 100)
        y = x + 1
        assert lim.live_elements == base + 20_000
        del x, y
        assert lim.live_elements == base
        for _ in range(1000):  # 10,000,000 elements made in all, 10,000 at once: within max_live_elements
            torch.zeros(100, 100).sum()
        assert lim.live_elements == base
        w = torch.zeros(3, 4, requires_grad=True)
        for _ in range(3):  # `.data = ...` of the same size counts nothing more (tests below: growth does)
            w.data = w.data + 1.0
        assert float(w.sum()) == 36.0
        del w
        assert lim.live_elements == base
        empty = torch.zeros(0, 10)
        assert lim.live_elements == base and empty.shape == (0, 10)
        keep = torch.zeros(1000)
        with pytest.raises(LimitExceeded, match="max_live_elements = 1,000,000"):
            held = [torch.zeros(100_000) for _ in range(20)]  # noqa: F841
        del keep


def test_data_updates_in_a_training_loop_count_the_parameter_once():
    # makemore's update, `p.data += -lr * p.grad`, once per step: p was counted again at every assignment
    # (300 steps of a 76,000-element model went past 16,000,000)
    with limited(**LIMITS) as lim:
        p = torch.zeros(100_000, requires_grad=True)
        base = lim.live_elements
        for _ in range(50):  # 5,000,000 elements if each step counted p again: past max_live_elements
            p.grad = torch.ones(100_000)
            p.data += -0.1 * p.grad
        p.grad = None
        assert lim.live_elements == base
        assert float(p[0]) == pytest.approx(-5.0)


def test_data_replacement_counts_growth_and_data_aliases_whole():
    with limited(**LIMITS) as lim:
        base = lim.live_elements
        w = torch.zeros(10)
        w.data = torch.zeros(1000)
        assert lim.live_elements == base + 1000  # the new 1,000 elements (the temporary's entry died with it)
        w.data = torch.zeros(10)
        assert lim.live_elements == base + 1000  # a shrink is not given back while w lives: high, never low
        alias = w.data  # uncounted itself (it shares w's memory)
        alias.data = torch.zeros(500)
        assert lim.live_elements == base + 1500  # an alias given new data holds memory of its own: counted whole
        del w, alias
        assert lim.live_elements == base
        keep = [torch.zeros(100_000) for _ in range(9)]
        x, w = torch.zeros(99_000), torch.zeros(10)
        with pytest.raises(LimitExceeded, match="max_live_elements = 1,000,000"):
            w.data = x  # growth past the limit is refused as a new tensor is
        del keep, x, w


def test_elements_counted_outside_tensors_are_exact_and_need_no_sweep(monkeypatch):
    """The sandbox counts every numpy array a program makes (count_external, and its negative when it dies): that
    path must not walk the tracked tensors, and the count stays exact for the check that reads it."""
    with limited(**LIMITS) as lim:
        held = [torch.zeros(10) for _ in range(100)]
        base = lim.live_elements
        sweeps = []
        real_sweep = lim._sweep
        monkeypatch.setattr(lim, "_sweep", lambda: (sweeps.append(1), real_sweep()))
        for _ in range(1000):
            lim.count_external(50)
            assert not lim.over_live()
            lim.count_external(-50)
        assert sweeps == []
        lim.count_external(LIMITS["max_live_elements"] - base)
        assert lim.over_live(1) and sweeps  # past the limit: swept, then refused on the exact count
        lim.count_external(base - LIMITS["max_live_elements"])
        assert lim.live_elements == base and len(held) == 100
