"""The language the sandbox supports: the standard library (time, collections, functools, itertools, math, random),
generator expressions, exceptions through engine code."""
from __future__ import annotations

import pytest
from sandbox_testing import same_as_cpython

# ---------------------------------------------------------------- the standard library: time, collections, functools,
# itertools, math, random (the same numbers as CPython's random for the same seed)
STDLIB_PROGRAM = """import math
import random
import time
import functools
import itertools
from collections import OrderedDict, defaultdict, deque, namedtuple, Counter
from functools import partial, reduce, lru_cache

od = OrderedDict()
od["b"] = 1
od["a"] = 2
od.move_to_end("b")
print(od, list(od.keys()), od.popitem(last=False))
dd = defaultdict(list)
for w in ["apple", "avocado", "banana"]:
    dd[w[0]].append(w)
print(dd, dict(dd), dd["z"], len(dd))
cnt = defaultdict(int)
for ch in "hello":
    cnt[ch] += 1
print(sorted(cnt.items()))
c = Counter("mississippi")
print(c.most_common(2), c["s"], c)
dq = deque([1, 2, 3], maxlen=4)
dq.append(4)
dq.append(5)
dq.appendleft(0)
dq.rotate(1)
print(dq, dq.popleft(), dq.maxlen, len(dq))
Point = namedtuple("Point", ["x", "y"])
P3 = namedtuple("P3", "x y z", defaults=[0])
p = Point(1, y=2)
q = P3(1, 2)
print(p, p.x + p.y, p[0], q, isinstance(p, tuple), isinstance(p, Point), type(p).__name__, Point.__name__, Point)
x, y = p
print(x, y, p == (1, 2), len(q))
def power(base, exp):
    return base ** exp
square = partial(power, exp=2)
print(square(5), reduce(lambda a, b: a * b, [1, 2, 3, 4]), reduce(lambda a, b: a + b, [], 10))
@lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print(fib(60))
@functools.cache
def sq(n):
    return n * n
print(sq(4), sq(4))
print(list(itertools.islice(itertools.count(5, 2), 4)), list(itertools.product("ab", repeat=2)))
print(list(itertools.permutations([1, 2, 3], 2)), list(itertools.combinations(range(4), 2)))
print(list(itertools.chain([1], (2, 3))), list(itertools.accumulate([1, 2, 3, 4])), list(itertools.accumulate([1, 2, 3], lambda a, b: a * b)))
print(list(itertools.zip_longest("ab", "xyz", fillvalue="-")), [(k, list(g)) for k, g in itertools.groupby("aabbbc")])
print(list(itertools.islice(itertools.cycle("ab"), 5)), list(itertools.repeat(7, 3)), list(itertools.pairwise([1, 2, 3])))
print(list(itertools.takewhile(lambda v: v < 3, [1, 2, 3, 1])), list(itertools.starmap(pow, [(2, 3)])))
print(math.factorial(20), math.comb(10, 3), math.perm(5, 2), math.prod([1, 2, 3, 4]), math.gcd(12, 18), math.lcm(4, 6))
print(math.isqrt(99), math.fsum([0.1] * 10), math.dist([0, 0], [3, 4]), math.modf(2.5), math.frexp(8.0), math.ldexp(1.0, 3))
print(math.cbrt(27.0), math.exp2(3), math.remainder(7, 3), math.trunc(2.7), math.pi, math.inf, math.tau)
random.seed(42)
print(random.random(), random.randint(1, 10), random.uniform(1, 2), random.choice("abc"))
xs = list(range(10))
random.shuffle(xs)
print(xs, random.sample(range(100), 5), random.gauss(0, 1), random.randrange(0, 10, 2))
random.seed("text seed")
print(random.random())
t0 = time.perf_counter()
time.sleep(0.01)
dt = time.perf_counter() - t0
print(dt >= 0.01, dt < 1, type(time.time()).__name__)
"""


def test_stdlib_as_cpython():
    same_as_cpython(STDLIB_PROGRAM)


def test_random_matches_cpython_for_many_seeds():
    for seed in (0, 1, 7, 12345, "abc", 3.5):
        same_as_cpython(f"""
import random
random.seed({seed!r})
xs = list(range(20))
random.shuffle(xs)
print(random.random(), random.randint(-5, 5), random.uniform(0, 10), random.choice(xs), random.gauss(1, 2))
print(xs, random.sample(xs, 4), random.randrange(100), random.choices('abc', weights=[1, 2, 3], k=5))
print(random.normalvariate(0, 1), random.expovariate(2.0), random.triangular(0, 1, 0.2), random.betavariate(2, 3))
""")


def test_time_sleep_counts_against_the_time_budget():
    from sandbox_testing import make_limits, run
    out = run("import time\ntime.sleep(30)\nprint('slept')", make_limits(time_limit_s=1.0))
    assert out.error["type"] == "LimitExceeded" and "time_limit_s" in out.error["message"] and out.stdout == ""
    assert out.wall < 10  # refused at once, not slept for 30 s (a third of that on any machine)
    out = run("import time\nfor i in range(1000):\n    time.sleep(0.01)", make_limits(time_limit_s=0.3))
    assert out.error["type"] == "LimitExceeded"


@pytest.mark.parametrize("source", [
    "import time\ntime.sleep(-1)",
    "import time\ntime.sleep('1')",
    "import time\ntime.sleep(float('nan'))",
    "from collections import namedtuple\nP = namedtuple('P', ['x', '_y'])",
    "from collections import namedtuple\nP = namedtuple('P', 'x x')",
    "from collections import namedtuple\nP = namedtuple('P', 'x class')",
    "from collections import namedtuple\nP = namedtuple('P', 'x y')\nP(1)",
    "from collections import namedtuple\nP = namedtuple('P', 'x y')\nP(1, 2, 3)",
    "from collections import namedtuple\nP = namedtuple('P', 'x y')\nP(1, 2).z",
    "import functools\nfunctools.reduce(lambda a, b: a + b, [])",
    "import math\nmath.factorial(-1)",
    "import itertools\nlist(itertools.permutations([1, 2], -1))",
    "from collections import deque\nd = deque()\nd.pop()",
    "import functools\n@functools.lru_cache\ndef f(x):\n    return x\nf([1])",
])
def test_stdlib_errors_as_cpython(source):
    same_as_cpython(source)


GENEXP_PROGRAM = """import itertools
print(next(i for i in itertools.count() if i * i > 50))
g = (x * 2 for x in range(3))
print(type(g).__name__, list(g), list(g))
print(sum(x for x in range(10) if x % 2), max((len(w), w) for w in "a bb ccc".split()))
print(list((i, j) for i in range(3) for j in range(i)))
print(any(x > 5 for x in itertools.count()), all(x < 3 for x in itertools.count()))
def gen():
    yield 1
    yield 2
print(list(x + 1 for x in gen()))
print(sorted(y for y in {3, 1, 2}), tuple(c.upper() for c in "ab"), dict((k, len(k)) for k in ["aa", "b"]))
total = 0
for v in (t * t for t in range(4)):
    total += v
print(total)
e = (1 / x for x in [1, 0])
print(next(e))
print(next(e))
"""


def test_generator_expressions_are_lazy_as_cpython():
    same_as_cpython(GENEXP_PROGRAM)


ENGINE_EXCEPTIONS_PROGRAM = """import torch
from torch.utils.data import Dataset, DataLoader

class Bad(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 100:
            raise ValueError("too big")
        return x * 2

net = torch.nn.Sequential(Bad(), Bad())
try:
    net(torch.ones(3) * 50)
except ValueError as e:
    print("caught from forward:", e)
print(net(torch.ones(3)))

class DS(Dataset):
    def __len__(self):
        return 4
    def __getitem__(self, i):
        if i == 3:
            raise IndexError("no item 3")
        return torch.tensor([float(i)])

try:
    for batch in DataLoader(DS(), batch_size=2):
        print(batch)
except IndexError as e:
    print("caught from dataset:", e)

def f(xs):
    out = []
    for x in xs:
        try:
            if x == 2:
                continue
            if x == 4:
                break
            out.append(10 / x)
        except ZeroDivisionError:
            out.append("inf")
            continue
        else:
            out.append("ok")
        finally:
            out.append("f")
    return out
print(f([1, 0, 2, 3, 4, 5]))

def g():
    try:
        raise ValueError("x")
    except ValueError:
        return "from except"
    finally:
        print("finally in g")
print(g())

def h():
    try:
        return 1
    finally:
        return 2
print(h())

def k():
    for i in range(3):
        try:
            raise KeyError(i)
        finally:
            if i < 2:
                continue
            break
    return "k done"
print(k())

class ValidationError(Exception):
    pass
class FieldError(ValidationError):
    def __init__(self, field):
        super().__init__(f"bad field {field}")
        self.field = field
try:
    raise FieldError("age")
except ValidationError as e:
    print(type(e).__name__, e.field, e, isinstance(e, Exception), isinstance(e, FieldError))
errors = []
for exc_type in (ValueError, TypeError, KeyError):
    try:
        raise exc_type("m")
    except (ValueError, KeyError) as e:
        errors.append(repr(e))
    except Exception as e:
        errors.append("other " + type(e).__name__)
print(errors)
try:
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        raise RuntimeError("inside no_grad")
except RuntimeError:
    print(torch.is_grad_enabled())
"""


def test_exceptions_through_engine_code_as_torch():
    # raised in forward() inside nn.Sequential, in a Dataset under a DataLoader, inside no_grad
    pytest.importorskip("torch")
    same_as_cpython(ENGINE_EXCEPTIONS_PROGRAM)


def test_caught_errors_leave_a_consistent_trace():
    from sandbox_testing import run

    from engine.recorder import Recorder

    rec = Recorder(value_limit=256, max_events=100_000)
    src = """
import torch
class Bad(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 1)
    def forward(self, x):
        y = self.lin(x)
        if x.shape[0] > 1:
            raise ValueError("batch")
        return y
m = Bad()
try:
    m(torch.ones(2, 2))
except ValueError:
    pass
loss = m(torch.ones(1, 2)).sum()
loss.backward()
print(m.lin.weight.grad)
"""
    out = run(src, recorder=rec)
    assert out.error is None, out.error
    assert out.stdout == "tensor([[1., 1.]])\n"
    kinds = [e.get("type") or e.get("kind") for e in rec.events if isinstance(e, dict)]
    assert kinds


def test_instance_docstrings_as_cpython():
    pytest.importorskip("torch")
    same_as_cpython("""import torch
class Net(torch.nn.Module):
    '''A net.'''
    def forward(self, x):
        return x
class P:
    '''Plain.'''
print(Net().__doc__, P().__doc__, type(Net()).__name__, Net().__class__.__qualname__)
""")


def test_types_of_stdlib_values_as_cpython():
    same_as_cpython("""import itertools
from collections import OrderedDict, deque, Counter, defaultdict
print(type(OrderedDict()), type(deque()), type(Counter()), type(defaultdict()), type(itertools.count()), type(itertools.chain()))
print(type(deque()).__name__, isinstance(deque(), type(deque())), isinstance(OrderedDict(), dict))
""")


def test_exception_text_in_every_format_path_as_cpython():
    same_as_cpython("""try:
    raise ValueError("bad", 3)
except ValueError as e:
    print(f"{e}", f"{e!r}", "{}".format(e), "%s" % (e,), "%r" % (e,), str([e]), f"{e:>20}" if False else "")
try:
    {}["k"]
except KeyError as e:
    print(f"missing {e}", "%s" % e, repr(e))
class Ctx:
    def __enter__(self):
        return self
    def __exit__(self, *args):
        print(len(args), args[0].__name__ if args[0] else None)
with Ctx():
    pass
""")


def test_grad_mode_decorated_generator_as_torch():
    pytest.importorskip("torch")
    same_as_cpython("""import torch
@torch.no_grad()
def steps(x):
    for i in range(2):
        yield (x * 2).requires_grad, torch.is_grad_enabled()
x = torch.ones(1, requires_grad=True)
for v in steps(x):
    print(v, torch.is_grad_enabled())
""")


def test_random_instances_as_cpython():
    same_as_cpython("""import random
rng = random.Random(7)
other = random.Random("s")
print(rng.random(), rng.randint(1, 100), other.random(), isinstance(rng, random.Random), type(rng).__name__)
xs = list(range(8))
rng.shuffle(xs)
print(xs, rng.sample(xs, 3), rng.gauss(0, 1), rng.choice(xs))
rng.seed(7)
print(rng.random())
print(type(random.Random(1)))
""")
