"""collections.namedtuple's documented '_' API (`_fields`, `_make`, `_asdict`, `_replace`) on the program's
namedtuple classes and instances, as CPython's; every other '_' name stays refused, torch's and numpy's named
tuples keep theirs closed, and nothing reaches the host."""
import pytest
from sandbox_testing import err, leaks, same_as_cpython

NAMEDTUPLES = """from collections import namedtuple
import collections
Point = namedtuple("Point", ["x", "y"])
Cfg = collections.namedtuple("Cfg", "lr epochs batch", defaults=[32])
p = Point(1, 2)
print(p._asdict(), Point._fields, p._fields, type(p._asdict()).__name__)
q = p._replace(y=5)
print(q, p, q._replace(), Point._make([3, 4]), Point._make(range(2)), p._make((7, 8)))
c = Cfg(0.1, 10)
print(c._asdict(), Cfg._replace(c, lr=0.5), Cfg._asdict(c), c._fields)
for k, v in c._asdict().items():
    print(k, v)
print(isinstance(Point._make([1, 2]), Point), Point._make([1, 2]) == p, Point._make(iter([5, 6])))
try:
    p._replace(z=3)
except ValueError as e:
    print("ValueError", e)
try:
    Point._make([1, 2, 3])
except TypeError as e:
    print("TypeError", e)
print(dict(p._asdict(), extra=1), [f for f in Point._fields], len(Cfg._fields))
d = c._asdict()
d["lr"] = 9
print(c, d, Cfg(**d), Point(*p._asdict().values()))
"""


def test_a_program_with_the_namedtuple_api_prints_what_python_prints():
    same_as_cpython(NAMEDTUPLES)


HEAD = "from collections import namedtuple\nPoint = namedtuple('Point', 'x y')\np = Point(1, 2)\n"


@pytest.mark.parametrize("line, kind, words", [
    ("p._replace(z=3)", "ValueError", "Got unexpected field names: ['z']"),
    ("Point._make([1])", "TypeError", "Expected 2 arguments, got 1"),
    ("Point._make(5)", "TypeError", "not iterable"),
    ("Point._make(range(10 ** 12))", "LimitExceeded", ""),
    ("Point._asdict()", "TypeError", "missing 1 required positional argument"),
    ("Point._replace((1, 2), x=3)", "AttributeError", "'tuple' object has no attribute '_fields'"),
    ("p._asdict(1)", "TypeError", "takes 1 positional argument but 2 were given"),
    ("p._field_defaults", "AttributeError", "not allowed"),
    ("Point._field_defaults", "AttributeError", "not allowed"),
    ("p._source", "AttributeError", "not allowed"),
    ("p._fg_cls", "AttributeError", "not allowed"),
    ("p._fields.__class__.__bases__", "AttributeError", ""),
    ("p._asdict.__self__", "AttributeError", ""),
    ("Point._make.__globals__", "AttributeError", ""),
    ("p._replace.__closure__", "AttributeError", ""),
    ("p._make.fn", "AttributeError", ""),
])
def test_wrong_uses_raise_with_the_programs_line(line, kind, words):
    e = err(HEAD + f"y = {line}\nprint(y)\n")
    assert e["line"] == 4, e
    assert e["type"] in (kind, "SandboxViolation") and words in e["message"], e
    assert not leaks(e["message"])


def test_an_endless_iterable_to_make_is_bounded():
    e = err(HEAD + "def forever():\n    while True:\n        yield 1\ny = Point._make(forever())\n")
    assert e["type"] == "LimitExceeded" and not leaks(e["message"]), e


@pytest.mark.parametrize("line", [
    "p._fields = ('a',)", "p._asdict = print", "Point._fields = ()", "Point._make = print",
])
def test_the_api_cannot_be_replaced(line):
    e = err(HEAD + line + "\n")
    assert e["line"] == 4 and e["type"] in ("AttributeError", "TypeError", "SandboxViolation"), e


@pytest.mark.parametrize("value", [
    "torch.max(torch.ones(2, 2), 0)", "torch.sort(torch.ones(3))", "np.linalg.svd(np.ones((2, 2)))",
])
@pytest.mark.parametrize("name", ["_asdict", "_fields", "_replace", "_make"])
def test_engine_and_numpy_named_tuples_keep_theirs_closed(value, name):
    e = err(f"import torch\nimport numpy as np\nr = {value}\ny = r.{name}\n")
    assert e["type"] == "AttributeError" and e["line"] == 4 and not leaks(e["message"]), e
