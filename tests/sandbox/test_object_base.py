"""`class Memory(object):` (the PyTorch DQN tutorial's ReplayMemory, and Python 2 habits everywhere) is Python 3's
default base written out: the class is made as without it, prints as CPython's, and `object` itself stays out of
reach (no `object()` sentinel, no `object.__subclasses__()`)."""
import pytest
from sandbox_testing import err, ok


def test_an_explicit_object_base_is_the_default_one():
    out = ok(
        "class Memory(object):\n    def __init__(self, n):\n        self.items = [0] * n\n    def __len__(self):\n"
        "        return len(self.items)\nclass Sub(Memory):\n    pass\nm = Sub(3)\n"
        "print(len(m), type(m).__name__, isinstance(m, Memory), m)")
    assert out.startswith("3 Sub True <__main__.Sub object at 0x")


@pytest.mark.parametrize("stmt", ["x = object()", "x = object.__subclasses__()", "x = [object]", "class A(object()):\n    pass",
                                  "class A(object.mro):\n    pass"])
def test_object_itself_stays_out_of_reach(stmt):
    e = err(stmt)
    assert e["type"] in ("NameError", "SyntaxError", "AttributeError"), e
    assert e["line"] == 1


def test_a_program_that_names_its_own_object_uses_it():
    e = err("object = 3\nclass A(object):\n    pass")
    assert e["type"] == "TypeError" and e["line"] == 2, e


@pytest.mark.parametrize("src, message", [
    ("class A(object, object):\n    pass", "duplicate base class object"),
    ("class B:\n    pass\nclass A(B, B):\n    pass", "duplicate base class B"),
    ("class B:\n    pass\nclass A(object, B):\n    pass",
     "Cannot create a consistent method resolution order (MRO) for bases object, B"),
    ("class X:\n    pass\nclass Y(X):\n    pass\nclass A(X, Y):\n    pass",
     "Cannot create a consistent method resolution order (MRO) for bases X, Y"),
])
def test_bases_python_refuses_are_refused_in_its_words(src, message):
    e = err(src)
    assert e["type"] == "TypeError" and e["message"] == message, e
    assert e["line"] == src.count("\n")  # the class statement: the line before its body's `pass`


def test_a_diamond_resolves_methods_in_pythons_c3_order():
    src = ("class A:\n    def who(self):\n        return ['A']\n"
           "class B(A):\n    def who(self):\n        return ['B'] + super().who()\n"
           "class C(A):\n    def who(self):\n        return ['C'] + super().who()\n"
           "class D(B, C):\n    def who(self):\n        return ['D'] + super().who()\n"
           "class E(object, ):\n    pass\n"
           "class F(C, object):\n    pass\n"
           "print(D().who(), F().who())")
    out = ok(src)
    assert out == "['D', 'B', 'C', 'A'] ['C', 'A']\n", out  # depth-first would give D, B, A
