"""`re` for programs (sandbox/stdlib_re.py): the NLP tutorials' text normalising prints what CPython prints; patterns
that backtrack without bound (nested or alternated repeats, backreferences, many unbounded repeats) are refused before
they run, texts and patterns are bounded, and match / pattern objects reach nothing outside."""
import pytest
from sandbox_testing import err, leaks, same_as_cpython

PROGRAM = """import re
import unicodedata

def unicodeToAscii(s):
    return ''.join(c for c in unicodedata.normalize('NFD', s) if unicodedata.category(c) != 'Mn')

def normalizeString(s):
    s = unicodeToAscii(s.lower().strip())
    s = re.sub(r"([.!?])", r" \\1", s)
    s = re.sub(r"[^a-zA-Z!?]+", r" ", s)
    return s.strip()

print(normalizeString("Va-t'en !  Ça va?"), re.findall(r"\\w+", "hello world, it's me"))
m = re.match(r"(\\w+) (\\w+)", "Isaac Newton, physicist")
print(m.group(0), m.group(1, 2), m[2], m.span(), m.groups(), bool(re.search("x", "abc")))
p = re.compile(r"\\d+")
print(p.sub("#", "a1b22c333"), p.findall("10 apples and 20 pears"), p.split("a1b2c"), [x.group() for x in p.finditer("7 8 9")])
print(re.sub(r"(\\d)", lambda mm: str(int(mm.group(1)) * 2), "a1b2"), re.split(r"\\s+", "a  b   c"), re.escape("a.b"))
print(re.sub("A", "x", "aAa", flags=re.I), re.match("B", "b", re.I) is not None, p.pattern, m)
try:
    re.compile("(")
except re.error as e:
    print("bad pattern")
"""


def test_text_normalising_as_the_tutorials_write_it():
    same_as_cpython(PROGRAM)


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a|aa)*b", r"(x*)*", r"(\w+)\1", r"a*a*a*a*a*b", r"(?:a{2,}b?)+c",
                                     r"((ab)*c)*d"])
def test_patterns_that_backtrack_without_bound_are_refused(pattern):
    e = err(f"import re\ny = re.match(r'{pattern}', 'a' * 30 + 'b')\n")
    assert e["type"] == "ValueError" and e["line"] == 2 and "refused" in e["message"], e


@pytest.mark.parametrize("line, kind", [
    ("re.compile('a' * 2000)", "LimitExceeded"),
    ("re.findall('a', 'a' * 2_000_000)", "LimitExceeded"),
    ("re.compile(5)", "TypeError"),
    ("re.sub('a', lambda m: 5, 'aaa')", "TypeError"),
    ("re.compile('(')", "ValueError"),
    ("re.match('a', 'a').match", "AttributeError"),
    ("re.compile('a').compiled", "AttributeError"),
    ("re.compile('a').interp", "AttributeError"),
    ("re.compile.__globals__", "AttributeError"),
    ("re.match('a', 'a').group.__self__", "AttributeError"),
    ("re.compile('a').__class__.__init__", "AttributeError"),
])
def test_re_is_bounded_and_sealed(line, kind):
    e = err(f"import re\ny = {line}\n")
    assert e["type"] in (kind, "SandboxViolation") and e["line"] == 2, e
    assert not leaks(e["message"])
