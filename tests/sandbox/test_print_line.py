"""`print(f"...")` makes its line in one closure (compiled_text.py): it must print, cut, refuse and fail exactly as
`print` of the same text made any other way, and as CPython where CPython decides."""
from __future__ import annotations

import pytest

from tests.sandbox.sandbox_testing import err, make_limits, run, same_as_cpython

# each program twice: printing an f-string (the fused line) and the same text made by str() and + (the general path)
PAIRS = [
    ('for i in range(5):\n    print(f"step {i:3d}: {i * 0.5}")',
     'for i in range(5):\n    print("step " + format(i, "3d") + ": " + str(i * 0.5))'),
    ('x = "é"\nfor i in range(3):\n    print(f"{x} {i}")',
     'x = "é"\nfor i in range(3):\n    print(x + " " + str(i))'),
    ('loss = 0.25\nprint(f"loss {loss:.4f}")', 'loss = 0.25\nprint("loss " + format(loss, ".4f"))'),
]


@pytest.mark.parametrize("fused, general", PAIRS)
def test_an_f_string_line_prints_what_print_of_its_text_prints(fused, general):
    assert same_as_cpython(fused) == same_as_cpython(general)


@pytest.mark.parametrize("max_output_bytes", [100, 160, 400])
def test_f_string_lines_are_held_and_cut_as_any_print(max_output_bytes):
    limits = make_limits(max_output_bytes=max_output_bytes)
    fused = run('for i in range(40):\n    print(f"row {i:2d} é{i}")\nprint("done")', limits=limits)
    general = run('for i in range(40):\n    print("row " + format(i, "2d") + " é" + str(i))\nprint("done")',
                  limits=limits)
    assert fused.error is None and general.error is None
    assert fused.stdout == general.stdout and fused.output_cut == general.output_cut
    assert "lines cut" in fused.stdout and fused.stdout.endswith("done\n")


def test_f_string_lines_stream_as_they_are_printed():
    chunks = []
    out = run('for i in range(3):\n    print(f"a{i}b{i}")', on_print=chunks.append)
    assert chunks == ["a0b0\n", "a1b1\n", "a2b2\n"] and out.stdout == "".join(chunks)


def test_a_program_s_own_print_gets_the_f_string_without_a_newline():
    src = ('seen = []\ndef print(x):\n    seen.append(x)\nfor i in range(2):\n    print(f"v{i}={i * 2}")\n'
           'del print\nprint(seen)')
    assert same_as_cpython(src) == "['v0=0', 'v1=2']\n"


def test_a_bad_format_in_the_line_fails_at_its_value():
    same_as_cpython('x = "text"\nfor i in range(2):\n    print(f"{i} {x:5d}")')
    same_as_cpython('x = 1.5\nprint(f"{x} {x:d}")')


def test_one_f_string_line_longer_than_the_output_limit_is_refused_with_what_fits():
    out = run('x = "ab" * 20\nprint(f"{x}{x}")', limits=make_limits(max_output_bytes=10))
    assert out.stdout == "ababababab" and out.error["type"] == "LimitExceeded" and out.error["line"] == 2


def test_the_newline_is_not_counted_as_the_f_string_s_text():
    limits = make_limits(max_live_elements=10)
    assert run('a = "abcd"\nprint(f"{a}{a}xx")', limits=limits).stdout == "abcdabcdxx\n"  # 10 characters: fits
    e = err('a = "abcd"\nprint(f"{a}{a}xxy")', limits=limits)
    assert e["type"] == "LimitExceeded" and e["line"] == 2 and "max_live_elements" in e["message"]
