"""Issue 22, holes 7 and 8: every numpy entry point checks the size and the work of a call before numpy
allocates or loops (sandbox/numpy_costs.py), and printing checks the characters it will make before it
formats a value. Each hostile program ends with a limit error on its last line, in little memory."""
from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from sandbox_testing import leaks, ok, run

HOSTILE = [json.loads(line) for line in
           (Path(__file__).parents[1] / "data" / "hostile_numpy_bounds.jsonl").read_text().splitlines() if line]
LIMIT_NAMES = ("max_tensor_elements", "max_live_elements", "max_op_flops", "max_output_bytes")
PEAK_BYTES = 64 * 2**20


@pytest.mark.parametrize("case", HOSTILE, ids=[f"{i:02d}-{c['category']}" for i, c in enumerate(HOSTILE)])
def test_hostile_numpy_calls_are_refused_before_the_work(case):
    src = case["source"]
    tracemalloc.start()
    try:
        out = run(src)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    e = out.error
    assert e is not None and e["type"] == "LimitExceeded", e
    assert e["line"] == src.count("\n") + 1, e
    assert any(name in e["message"] for name in LIMIT_NAMES), e
    assert peak < PEAK_BYTES, f"{peak / 2**20:.0f} MB"
    assert not leaks(e["message"])


def test_the_refusals_name_what_was_too_big():
    e = run("import numpy as np\na = np.ones((1414, 1414), dtype=np.int64)\nc = a @ a").error
    assert e["message"] == ("this matrix product takes 2,827,145,944 multiply-adds; the limit is "
                            "max_op_flops = 200,000,000")
    e = run("import numpy as np\nc = np.isclose(np.zeros((8000, 1)), 0.0, atol=np.zeros((1, 8000)))").error
    assert e["message"] == ("tensor of shape [8000, 8000] has 64,000,000 elements; the limit is "
                            "max_tensor_elements = 4,000,000")
    e = run("import numpy as np\nc = np.diff(np.zeros(2000000), n=100000)").error
    assert e["message"] == ("numpy.diff would take about 200,000,000,000 operations here; the limit is "
                            "max_op_flops = 200,000,000")


# The same calls at sizes a tutorial uses: the answers numpy gives.
ALLOWED = [
    ("np.inner(np.arange(6.0).reshape(2, 3), np.ones((4, 3)))", lambda: np.inner(np.arange(6.0).reshape(2, 3),
                                                                                  np.ones((4, 3)))),
    ("np.ones_like(np.zeros(2), None, 'K', True, (2, 3))", lambda: np.ones((2, 3))),
    ("np.full_like(np.zeros(2), 7.0, None, 'K', True, (3,))", lambda: np.full(3, 7.0)),
    ("np.arange(4.0).clip(np.ones((2, 1)), np.full((1, 4), 2.0))",
     lambda: np.arange(4.0).clip(np.ones((2, 1)), np.full((1, 4), 2.0))),
    ("np.clip(np.arange(4.0), a_min=[[0.5], [1.5]], a_max=None)", lambda: np.clip(np.arange(4.0), a_min=[[0.5], [1.5]], a_max=None)),
    ("np.isclose(np.zeros((2, 1)), 0.0, atol=np.zeros((1, 3)))", lambda: np.ones((2, 3), dtype=bool)),
    ("np.allclose(np.zeros((3, 1)), np.zeros((1, 3)))", lambda: True),
    ("np.percentile(np.arange(1000000.0), np.arange(101))",
     lambda: np.percentile(np.arange(1000000.0), np.arange(101))),
    ("np.percentile(np.arange(12.0).reshape(3, 4), [10, 90], axis=0)",
     lambda: np.percentile(np.arange(12.0).reshape(3, 4), [10, 90], axis=0)),
    ("np.linspace(np.zeros(3), np.ones(3), 5, axis=1)", lambda: np.linspace(np.zeros(3), np.ones(3), 5, axis=1)),
    ("np.repeat(np.arange(1000000), np.ones(1000000, dtype=np.int64)).shape", lambda: (1000000,)),
    ("np.repeat(np.arange(6).reshape(2, 3), [1, 2, 3], axis=1)",
     lambda: np.repeat(np.arange(6).reshape(2, 3), [1, 2, 3], axis=1)),
    ("np.triu(np.arange(1.0, 4.0))", lambda: np.triu(np.arange(1.0, 4.0))),
    ("np.diff(np.arange(10) ** 2, n=2, prepend=0)", lambda: np.diff(np.arange(10) ** 2, n=2, prepend=0)),
    ("np.roll(np.arange(6).reshape(2, 3), (1, 1), (0, 1))", lambda: np.roll(np.arange(6).reshape(2, 3), (1, 1), (0, 1))),
    ("np.nonzero(np.eye(3))", lambda: np.nonzero(np.eye(3))),
    ("np.linalg.solve(np.stack([np.eye(2) * 2] * 3)[:, None], np.ones((1, 4, 2, 1))).shape", lambda: (3, 4, 2, 1)),
    ("(np.arange(9).reshape(3, 3) @ np.arange(9).reshape(3, 3))",
     lambda: np.arange(9).reshape(3, 3) @ np.arange(9).reshape(3, 3)),
    ("np.sum([[1.0, 2.0]] * 3)", lambda: 9.0),
]


@pytest.mark.parametrize("expr, expected", ALLOWED, ids=[a[0][:40] for a in ALLOWED])
def test_calls_within_the_limits_answer_as_numpy(expr, expected):
    out = run(f"import numpy as np\nr = {expr}")
    assert out.error is None, out.error
    got = out.globals["r"]
    want = expected()
    if isinstance(want, tuple) and want and isinstance(want[0], np.ndarray):
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    else:
        assert np.array_equal(np.asarray(got), np.asarray(want)), (got, want)


def test_random_draws_with_array_parameters_are_numpys():
    src = ("import numpy as np\nnp.random.seed(3)\na = np.random.normal(np.zeros((2, 1)), np.ones((1, 3)))\n"
           "b = np.random.uniform(np.zeros(3), 2.0, size=(2, 3))\nc = np.random.randint([0, 5], [3, 9])")
    out = run(src)
    assert out.error is None, out.error
    rs = np.random.RandomState(3)
    want = [rs.normal(np.zeros((2, 1)), np.ones((1, 3))), rs.uniform(np.zeros(3), 2.0, size=(2, 3)),
            rs.randint([0, 5], [3, 9])]
    for name, w in zip("abc", want):
        assert np.array_equal(out.globals[name], w)


def test_every_numpy_name_has_a_cost_rule():
    """The audit: each exposed function is elementwise (its result the broadcast of all its data) or has a rule."""
    from sandbox import numpy_costs as nc
    from sandbox import numpy_module as nm

    assert set(nm.NOT_GROWING) | set(nm.SIZED) <= set(nc.COST_RULES)
    import inspect

    for name in nm.METHOD_FUNCTIONS:  # a method takes the function's parameters after the array
        inspect.signature(getattr(np, name)).bind_partial(np.zeros((2, 2)))


# ---------------------------------------------------------------- printing counts the characters it makes
def test_printing_is_bounded_by_the_characters_not_the_values():
    src = ("import torch\ntorch.set_printoptions(precision=100, sci_mode=False, profile='full')\n"
           "x = torch.full((80000,), 1e300, dtype=torch.float64)\nprint(x)")
    tracemalloc.start()
    try:
        e = run(src).error
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert e["type"] == "LimitExceeded" and e["line"] == 4
    assert "80,000 values of up to 302 characters" in e["message"] and "max_output_bytes" in e["message"]
    assert peak < 8 * 2**20


def test_small_printouts_with_long_numbers_still_print():
    out = ok("import torch\ntorch.set_printoptions(precision=30)\nprint(torch.tensor([1e300, -1e-300, 3.0], "
             "dtype=torch.float64))")
    assert out.startswith("tensor([ 1.000000000000000052504760255204e+300,\n")
    assert "3.000000000000000000000000000000e+00], dtype=torch.float64)" in out


def test_numpy_printouts_are_bounded_too():
    e = run("import numpy as np\na = np.zeros((2,) * 20)\ns = str(a)").error
    assert e["type"] == "LimitExceeded" and e["line"] == 3 and "max_output_bytes" in e["message"]
    assert ok("import numpy as np\nprint(np.arange(1000.0)[-3:], np.zeros((6,) * 5).shape)") == \
        "[997. 998. 999.] (6, 6, 6, 6, 6)\n"


@pytest.mark.parametrize("values", [
    [1e-300, -2.5, 3e200], [-0.0001, 5.0], [1.0, -123456.0, 7.0], [0.0, float("inf"), -1e-5, float("nan")],
    [9.99996, 1.5], [-9.99996e-100, 1e99], [12, -7, 0], [True, False],
])
@pytest.mark.parametrize("options", [{}, {"precision": 2}, {"sci_mode": True}, {"sci_mode": False, "precision": 6}])
def test_the_column_width_from_the_extremes_is_torchs(values, options):
    torch = pytest.importorskip("torch")
    import engine

    dtype = "bool" if isinstance(values[0], bool) else "int64" if isinstance(values[0], int) else "float64"
    try:
        torch.set_printoptions(**options)
        engine.set_printoptions(**options)
        assert repr(engine.tensor(values, dtype=getattr(engine, dtype))) == \
            repr(torch.tensor(values, dtype=getattr(torch, dtype)))
    finally:
        torch.set_printoptions(profile="default")
        engine.set_printoptions(profile="default")
