"""`os` (read-only, no server state), `string`, `unicodedata`, `statistics`: as CPython for the parts programs
use (the char-RNN tutorial's unicodeToAscii, d2l's path joins), bounded and sealed under hostile input."""
from __future__ import annotations

import pytest
from sandbox_testing import leaks, ok, run, same_as_cpython

TEXT_PROGRAM = """import string
import unicodedata
import statistics
import os
all_letters = string.ascii_letters + " .,;'"
def unicodeToAscii(s):
    return ''.join(c for c in unicodedata.normalize('NFD', s) if unicodedata.category(c) != 'Mn' and c in all_letters)
print(unicodeToAscii('Ślusàrski'), len(all_letters), string.digits, string.punctuation, string.ascii_uppercase)
print(os.path.join("data", "names", "x.txt"), os.path.join("a", "/b"), os.path.basename("data/names/Eng.txt"))
print(os.path.splitext("names/English.txt"), os.path.dirname("a/b/c.txt"), os.path.split("a/b"), os.sep)
xs = [1.5, 2.5, 2.5, 4.0, 10.0]
print(statistics.mean(xs), statistics.median(xs), statistics.stdev(xs), statistics.pstdev(xs), statistics.mode(xs))
print(statistics.variance(xs), statistics.quantiles(xs, n=4), statistics.fmean(xs), statistics.median_low([1, 3, 5, 7]))
print(statistics.mean(range(10)), statistics.multimode("aabbc"), string.capwords("hello  world"))
print(unicodedata.name("a"), unicodedata.category("A"), unicodedata.normalize("NFKD", "ﬁ"))
try:
    statistics.mean([])
except ValueError as e:
    print("ValueError", e)
"""


def test_text_modules_as_cpython():
    same_as_cpython(TEXT_PROGRAM)


def test_os_knows_nothing_of_the_server():
    out = ok("import os\nprint(os.getcwd(), os.environ.get('HOME'), os.environ.get('PATH', 'dflt'), os.getenv('USER'), "
             "len(os.environ), os.path.exists('/etc/passwd'), os.path.isfile('/proc/self/environ'))\n"
             "os.makedirs('/tmp/x', exist_ok=True)\nos.environ['A'] = '1'\nprint(os.environ.get('A'), dict(os.environ))")
    assert out == "/program None dflt None 0 False False\n1 {'A': '1'}\n"
    assert not leaks(out.replace("/program", ""))
    # each run starts with an empty environment: what one run sets, the next does not see
    assert ok("import os\nprint(os.environ.get('A'))") == "None\n"


@pytest.mark.parametrize("source", [
    "import os\nos.system('ls')",
    "import os\nos.remove('x')",
    "import os\nos.path.abspath('x')",
    "import os\nos.path.expanduser('~')",
    "import os\nos.environ.copy.__self__",
    "import os\nos.path.join('a' * 10 ** 6, 'b')",
    "import os\nos.path.join(1, 'b')",
    "import os\nos.getpid()",
    "import os\nos.path.__dict__",
    "import unicodedata\nunicodedata.normalize('NFKD', '\\ufdfa' * 10 ** 7)",
    "import unicodedata\nunicodedata.normalize('XX', 'a')",
    "import unicodedata\nunicodedata.category('ab')",
    "import statistics\nstatistics.mean(range(10 ** 9))",
    "import statistics\nstatistics.mean(range(200_000))",
    "import statistics\nimport itertools\nstatistics.mean(itertools.count())",
    "import statistics\nstatistics.quantiles([1, 2, 3], n=10 ** 12)",
    "import statistics\nimport torch\nstatistics.mean([torch.ones(1)])",
    "import statistics\nstatistics.mean(['a'])",
    "import string\nstring.Formatter",
    "import string\nstring.capwords(1)",
])
def test_text_modules_under_hostile_input(source):
    out = run(source)
    assert out.error is not None and out.error["type"] in ("AttributeError", "TypeError", "ValueError", "OSError",
                                                           "LimitExceeded", "KeyError"), out.error
    assert not leaks(out.error["message"]) and len(out.error["message"]) < 600
