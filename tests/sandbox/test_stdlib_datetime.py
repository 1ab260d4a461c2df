"""`datetime` inside programs (sandbox/stdlib_datetime.py): a run's name from `datetime.now().strftime(...)`, an
epoch's time as a timedelta, dates printed and formatted as Python prints them; what it is handed is bounded, and
its values and classes reach nothing outside."""
import subprocess
import sys

import pytest
from sandbox_testing import err, leaks, ok, run

PROGRAM = """import datetime
from datetime import datetime as dt, timedelta, date
start = dt.now()
name = start.strftime("%Y%m%d-%H%M%S")
print(len(name), isinstance(start, dt), isinstance(start, datetime.datetime), type(start).__name__)
d = dt(2024, 3, 15, 10, 30, 5)
print(d, repr(d), d.year, d.month, d.hour, d.isoformat(), d.strftime("%H:%M:%S"), d.weekday(), d.timestamp() > 0)
e = d + timedelta(hours=5, minutes=3)
print(e, e - d, (e - d).total_seconds(), str(timedelta(seconds=3725)), timedelta(days=2) > timedelta(hours=47))
print(date(2024, 1, 31) + timedelta(days=1), date.fromisoformat("2024-02-29").day, dt.strptime("2024-05-06", "%Y-%m-%d"))
elapsed = dt.now() - start
print(elapsed < timedelta(minutes=1), f"{d:%Y/%m/%d}", f"{timedelta(seconds=75)}", f"{date(2020, 5, 1):%b %d}")
print(datetime.date.today() == date.today(), dt.fromtimestamp(0) < d, sorted([e, d])[0] == d, timedelta(1).days)
print({d: 1}[dt(2024, 3, 15, 10, 30, 5)], d.date(), d.replace(year=2020), repr(timedelta(minutes=1)), dt.min)
try:
    dt(2024, 13, 1)
except ValueError as err:
    print("ValueError:", err)
"""


def test_a_program_prints_what_cpython_prints(tmp_path):
    expected = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert expected.returncode == 0, expected.stderr
    out = run(PROGRAM)
    assert out.error is None, out.error
    assert out.stdout == expected.stdout


@pytest.mark.parametrize("line, kind", [
    ("datetime.datetime.now().strftime('%Y' * 10 ** 6)", "ValueError"),
    ("f'{datetime.datetime.now():{\"%Y\" * 10 ** 6}}'", "ValueError"),
    ("datetime.datetime.strptime('x' * 10 ** 6, '%Y')", "ValueError"),
    ("datetime.datetime.now(datetime.timedelta(1))", "ValueError"),
    ("datetime.timedelta(days=10 ** 12)", "OverflowError"),
    ("datetime.datetime(10 ** 30, 1, 1)", "OverflowError"),
    ("datetime.datetime.now().strftime(print)", "TypeError"),
    ("f'{datetime.timedelta(1):>10}'", "TypeError"),
])
def test_what_it_is_handed_is_bounded(line, kind):
    e = err(f"import datetime\ny = {line}\n")
    assert e["type"] == kind, e
    assert e["line"] == 2 and not leaks(e["message"])


@pytest.mark.parametrize("line", [
    "datetime.datetime.now().tzinfo.__class__", "datetime.datetime.now().timetuple", "datetime.datetime.now.fn",
    "datetime.datetime.fn", "datetime.datetime.pytype", "datetime.datetime.attrs", "datetime.datetime.now().__reduce__",
    "datetime.date.today().strftime.__self__", "datetime.timedelta(1).__class__.__subclasses__",
    "type(datetime.datetime.now()).now", "datetime.datetime.__init__",
])
def test_what_it_returns_reaches_nothing_outside(line):
    e = err(f"import datetime\ny = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "TypeError", "NameError"), e
    assert not leaks(e["message"])


def test_a_run_s_name_from_the_clock_is_text_of_the_expected_shape():
    out = ok("from datetime import datetime\nprint(datetime.now().strftime('run-%Y%m%d-%H%M%S'))\n")
    assert out.startswith("run-20") and len(out) == len("run-20261129-013000\n")


def test_the_classes_print_and_name_themselves_as_pythons(tmp_path):
    source = ("import datetime\nfrom tqdm import tqdm\nprint(datetime.datetime, datetime.date, datetime.timedelta, "
              "datetime.date.__name__, type(datetime.timedelta).__name__)\n"
              "print(isinstance(datetime.date.today(), datetime.date), isinstance(tqdm([1]), tqdm), tqdm.__name__)\n")
    out = ok(source)
    assert out == ("<class 'datetime.datetime'> <class 'datetime.date'> <class 'datetime.timedelta'> date type\n"
                   "True True tqdm\n")  # (CPython with tqdm installed prints the same)
    e = err("import datetime\ny = datetime.datetime.attrs\n")
    assert e["type"] == "AttributeError" and not leaks(e["message"])
