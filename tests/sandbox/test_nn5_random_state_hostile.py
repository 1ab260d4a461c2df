"""np.random.RandomState(seed): a generator of the program's own with np.random's draws, giving numpy's numbers
(checked against CPython with numpy); its sizes are checked before it draws, each one is charged to the run,
and its internals (the real RandomState, its MT19937 state) stay out of reach."""
import pytest
from sandbox_testing import err, leaks, same_as_cpython

RANDOM_STATE = """import numpy as np
rs = np.random.RandomState(42)
print(rs.randn(3), rs.rand(2, 2), rs.randint(0, 10, size=5), rs.randint(5))
print(rs.normal(1.0, 2.0, size=(2,)), rs.uniform(-1, 1, 3), rs.choice(10, 4, replace=False), rs.choice([1, 2, 3]))
print(rs.permutation(6), rs.random_sample(2), rs.random(), rs.standard_normal(2))
a = np.arange(8)
rs.shuffle(a)
print(a)
b = [1, 2, 3, 4]
rs.shuffle(b)
print(b)
rs.seed(3)
print(rs.rand(), np.random.RandomState(3).rand())
print(type(rs), type(rs).__name__, isinstance(rs, np.random.RandomState))
r2 = np.random.RandomState(seed=7)
np.random.seed(7)
print(r2.randn(2) == np.random.randn(2))
x = rs.randn(3, 2).astype(np.float32)
print(x.dtype, x.shape, rs.choice(5, size=3, p=[0.1, 0.2, 0.3, 0.2, 0.2]))
"""


def test_a_program_with_random_state_prints_what_numpy_prints():
    same_as_cpython(RANDOM_STATE)


def test_separate_states_are_independent_of_np_random():
    same_as_cpython("import numpy as np\na = np.random.RandomState(0)\nb = np.random.RandomState(0)\n"
                    "np.random.seed(1)\nx = a.randn(2)\nnp.random.randn(5)\nprint(x, b.randn(2), a.randn(1))\n"
                    "print(a.randint(0, 100, (2, 3)), a.uniform(size=2), a.normal(size=(1, 2)))\n")


HEAD = "import numpy as np\nrs = np.random.RandomState(0)\n"


@pytest.mark.parametrize("line, kind, words", [
    ("rs.randn(10 ** 6, 10 ** 6)", "LimitExceeded", ""),
    ("rs.randint(0, 5, size=(10 ** 9,))", "LimitExceeded", ""),
    ("rs.normal(0, 1, size=10 ** 10)", "LimitExceeded", ""),
    ("rs.choice(10 ** 12, 3, replace=False)", "LimitExceeded", ""),
    ("rs.permutation(10 ** 12)", "LimitExceeded", ""),
    ("rs.shuffle('abc')", "TypeError", "takes an array or a list"),
    ("rs.shuffle([print, 1])", "TypeError", ""),
    ("rs.randint(5, 1)", "ValueError", "low >= high"),
    ("rs.seed('x')", "TypeError", "takes an int"),
    ("np.random.RandomState('x')", "TypeError", "takes an int seed"),
    ("np.random.RandomState([1, 2])", "TypeError", "takes an int seed"),
    ("np.random.RandomState(-1)", "ValueError", ""),
    ("rs.get_state()", "AttributeError", "'RandomState' object has no attribute 'get_state'"),
    ("rs.bit_generator", "AttributeError", ""),
    ("rs._bit_generator", "AttributeError", ""),
    ("rs.randn.fn", "AttributeError", ""),
    ("rs.randn.__self__", "AttributeError", ""),
    ("rs.__dict__", "AttributeError", ""),
    ("rs.attrs", "AttributeError", ""),
    ("type(rs).__init__", "AttributeError", ""),
    ("rs(3)", "TypeError", "not callable"),
])
def test_wrong_uses_raise_with_the_programs_line(line, kind, words):
    e = err(HEAD + f"y = {line}\nprint(y)\n")
    assert e["line"] == 3, e
    assert e["type"] in (kind, "SandboxViolation") and words in e["message"], e
    assert not leaks(e["message"])


def test_making_many_states_is_bounded():
    e = err(HEAD + "states = []\nfor i in range(10 ** 5):\n    states.append(np.random.RandomState(i))\n")
    assert e["type"] == "LimitExceeded" and e["line"] in (4, 5) and not leaks(e["message"]), e
