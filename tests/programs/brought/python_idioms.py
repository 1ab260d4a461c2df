# A program people bring (issue 21): written as students write them, checked against PyTorch's stdout
import math, random, itertools, functools, collections
from collections import defaultdict, Counter, OrderedDict, namedtuple, deque
from dataclasses import dataclass, field
random.seed(1)
Point = namedtuple("Point", ["x", "y"])
p = Point(1, 2); print(p, p.x + p.y, p._asdict(), p._replace(y=5), Point._fields)

@dataclass
class Cfg:
    lr: float = 0.1
    epochs: int = 3
    tags: list = field(default_factory=list)
c = Cfg(lr=0.01); c.tags.append("run"); print(c, c.lr * 2, c == Cfg(0.01, 3, ["run"]))
d = defaultdict(list); d["a"].append(1); print(dict(d))
print(Counter("hello world").most_common(3))
print(list(itertools.product([1, 2], "ab")), list(itertools.chain([1], [2, 3])), list(itertools.accumulate([1, 2, 3])))
print(functools.reduce(lambda a, b: a * b, range(1, 6)), functools.partial(pow, 2)(10))
def gen(n):
    for i in range(n):
        yield i * i
print(list(gen(5)), sum(x for x in range(10) if x % 2), {k: v for k, v in zip("abc", range(3))})
class A:
    count = 0
    def __init__(self, v): self.v = v; A.count += 1
    @property
    def double(self): return self.v * 2
    @staticmethod
    def s(): return "static"
    @classmethod
    def make(cls): return cls(5)
    def __repr__(self): return f"A({self.v})"
    def __eq__(self, o): return isinstance(o, A) and o.v == self.v
    def __lt__(self, o): return self.v < o.v
class B(A):
    def __init__(self, v): super().__init__(v + 1)
print(A(3).double, A.s(), A.make(), B(1), sorted([A(3), A(1), B(0)]), A.count, A(2) == A(2))
try:
    1 / 0
except ZeroDivisionError as e:
    print("caught", e)
finally:
    print("finally")
print("%5.2f|%d|%s" % (3.14159, 42, "x"), "{:>6}|{:<4}|{:^5}".format("a", "b", "c"), f"{1234567.891:,.2f}", f"{0.000123:.2e}", f"{42:08b}")
print(*[1, 2, 3], sep=", ", end="!\n")
x = [3, 1, 2]; x.sort(reverse=True); print(x, sorted("bca"), max([1, 5, 2], key=lambda v: -v), min(3, 1), abs(-2.5), round(2.675, 2), divmod(17, 5))
q = deque([1, 2, 3], maxlen=3); q.append(4); print(q, list(reversed(q)))
print(math.sqrt(2), math.exp(1), math.log(10), math.pi, math.inf, math.isclose(0.1 + 0.2, 0.3), math.floor(-2.5), math.ceil(2.1))
print(random.random(), random.randint(1, 6), random.choice("abc"), random.sample(range(10), 3))
s = "Hello, World"; print(s.lower(), s.split(", "), s[::-1], s.replace("l", "L"), s.startswith("He"), "-".join(["a", "b"]), s.find("W"), s.count("l"))
nums = [1, 2, 3, 4]; print(nums[::2], nums[-1], nums[1:-1], [n ** 2 for n in nums if n > 1], list(map(str, nums)), list(filter(None, [0, 1, 2])))
def outer():
    n = 0
    def inner():
        nonlocal n
        n += 1
        return n
    return inner
f = outer(); f(); print(f())
def kw(*args, **kwargs): return args, kwargs
print(kw(1, 2, a=3))
assert len(nums) == 4, "length"
print(isinstance(3, int), type(3.0).__name__, hasattr(p, "x"), getattr(p, "y"), callable(len))
print(list(enumerate("ab", start=1)), any([0, 1]), all([1, 1]), bin(5), hex(255), chr(97), ord("a"), int("12"), float("1.5"), str(1.0))
print(OrderedDict(a=1, b=2), frozenset([1, 2]), {1, 2} | {3}, sorted(set("aab")), tuple([1, 2]), list(range(10, 0, -3)))
