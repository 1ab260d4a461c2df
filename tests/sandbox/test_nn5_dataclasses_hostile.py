"""`import dataclasses` / `from dataclasses import dataclass, field` for the plain uses: a program using them
prints what CPython prints (generated __init__/__repr__/__eq__, defaults and default_factory, __post_init__,
inheritance, asdict/astuple, CPython's error messages); what flowgrad refuses raises with the program's line;
the generated methods and field objects never reach the host."""
import pytest
from sandbox_testing import err, leaks, same_as_cpython

DATACLASSES = """from dataclasses import dataclass, field
import dataclasses

@dataclass
class Config:
    lr: float
    epochs: int = 10
    layers: list = field(default_factory=list)
    name: str = "run"
    seen: int = field(default=0, repr=False, compare=False)

c = Config(0.1)
print(c, c.lr, c.epochs, c.layers, Config.name, Config.epochs)
c2 = Config(0.1, layers=[])
print(c == c2, c != c2, c == Config(0.2), c == 3)
c.layers.append(4)
print(c, c2, c == c2)
print(dataclasses.asdict(c), dataclasses.astuple(c2), dataclasses.is_dataclass(c), dataclasses.is_dataclass(3))

@dataclass(repr=True, eq=False)
class Point:
    x: int
    y: int = 0

    def __post_init__(self):
        self.norm = (self.x ** 2 + self.y ** 2) ** 0.5

    def shifted(self, d):
        return Point(self.x + d, self.y + d)

p = Point(3, 4)
print(p, p.norm, p.shifted(1), p == Point(3, 4), str(p), repr(p), [p])

@dataclass
class Point3(Point):
    z: int = 5

print(Point3(1, 2), Point3(1, z=9))

@dataclass
class Nested:
    p: Point3
    items: dict = field(default_factory=dict)

n = Nested(Point3(0))
print(n, dataclasses.asdict(n))
for bad in ["Config()", "Config(1, 2, [], 'a', 0, 9)", "Config(1, foo=2)", "Config(1, lr=2)", "Config(1, 2, 3, 4, 5, 6, 7)"]:
    try:
        if bad == "Config()":
            Config()
        elif bad == "Config(1, foo=2)":
            Config(1, foo=2)
        elif bad == "Config(1, lr=2)":
            Config(1, lr=2)
        else:
            Config(1, 2, [], 'a', 0, 9)
    except TypeError as e:
        print("TypeError", e)
try:
    @dataclass
    class Bad:
        a: list = []
except ValueError as e:
    print("ValueError", e)
try:
    @dataclass
    class Bad2:
        a: int = 1
        b: int
except TypeError as e:
    print("TypeError", e)
"""


def test_a_program_with_dataclasses_prints_what_python_prints():
    same_as_cpython(DATACLASSES)


def test_the_class_keeps_its_own_methods_and_annotations_alone_change_nothing():
    same_as_cpython("""from dataclasses import dataclass
class Plain:
    x: int = 3
    y: int

@dataclass
class Own:
    a: int
    b: str = "b"

    def __repr__(self):
        return "mine " + str(self.a)

    def __eq__(self, other):
        return True

print(Plain().x, Plain.x, Own(1), Own(1) == 5, Own(2, "c").b)
""")


HEAD = "import torch\nfrom dataclasses import dataclass, field\nimport dataclasses\n"


@pytest.mark.parametrize("source, kind, words", [
    ("@dataclass(frozen=True)\nclass A:\n    x: int = 0\n", "NotImplementedError", "frozen=True"),
    ("@dataclass(order=True)\nclass A:\n    x: int = 0\n", "NotImplementedError", "order=True"),
    ("@dataclass(bogus=1)\nclass A:\n    x: int = 0\n", "TypeError", "unexpected keyword argument 'bogus'"),
    ("@dataclass\nclass A(torch.nn.Module):\n    x: int = 0\n", "NotImplementedError", "plain classes"),
    ("@dataclass\nclass A(Exception):\n    x: int = 0\n", "NotImplementedError", "plain classes"),
    ("@dataclass\nclass A:\n    x: dict = {}\n", "ValueError", "mutable default <class 'dict'> for field x"),
    ("@dataclass\nclass A:\n    x: int = field(default=1, default_factory=int)\n", "ValueError",
     "cannot specify both"),
    ("y = dataclass(3)\n", "TypeError", "should be called on a class"),
    ("y = dataclasses.asdict(3)\n", "TypeError", "should be called on dataclass instances"),
    ("y = dataclasses.astuple(dataclass)\n", "TypeError", "should be called on dataclass instances"),
    ("y = dataclasses.fields\n", "AttributeError", "fields"),
    ("y = dataclasses.replace\n", "AttributeError", "replace"),
])
def test_what_flowgrad_refuses_raises_with_the_programs_line(source, kind, words):
    e = err(HEAD + source)
    assert e["line"] == (6 if "field(" in source else 4), e  # (field(...) raises on its own line, as in CPython)
    assert e["type"] == kind and words in e["message"], e
    assert not leaks(e["message"])


BOX = HEAD + "@dataclass\nclass Box:\n    items: list = field(default_factory=list)\n    n: int = 0\nb = Box()\n"


@pytest.mark.parametrize("line", [
    "field().default", "field().name", "field().__class__.__init__", "b.__init__", "Box.__init__", "Box.__repr__",
    "getattr(b, '__init__')", "getattr(b, '__repr__').__self__", "type(b).__eq__", "Box.__dataclass_fields__",
    "Box.dataclass_fields", "Box.annotations", "Box.ns", "dataclasses.dataclass.fn", "dataclasses.__dict__",
])
def test_the_generated_methods_and_fields_stay_closed(line):
    e = err(BOX + f"y = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "TypeError"), e
    assert e["line"] == 9 and not leaks(e["message"]), e


def test_an_endless_default_factory_is_bounded():
    e = err(HEAD + "def forever():\n    while True:\n        pass\n@dataclass\nclass A:\n"
            "    x: list = field(default_factory=forever)\nA()\n")
    assert e["type"] == "LimitExceeded" and not leaks(e["message"]), e


def test_a_cycle_through_asdict_is_stopped():
    e = err(HEAD + "@dataclass\nclass Node:\n    child: object = None\nn = Node()\nn.child = n\n"
            "y = dataclasses.asdict(n)\n")
    assert e["type"] in ("RecursionError", "LimitExceeded") and e["line"] == 9 and not leaks(e["message"]), e


def test_a_huge_asdict_is_bounded():
    e = err(HEAD + "@dataclass\nclass Big:\n    rows: list\nb = Big([[0] * 1000] * 100000)\n"
            "y = dataclasses.asdict(b)\n")
    assert e["type"] == "LimitExceeded" and e["line"] == 8 and not leaks(e["message"]), e
