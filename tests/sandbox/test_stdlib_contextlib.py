"""`contextlib.nullcontext` in programs (sandbox/stdlib_tools.py): nanoGPT's `ctx = nullcontext() if device_type ==
'cpu' else torch.amp.autocast(...)` runs as under CPython; what it holds stays the program's own."""
from __future__ import annotations

import pytest
from redteam_testing import sealed
from sandbox_testing import err, same_as_cpython


def test_nullcontext_is_cpythons():
    same_as_cpython("from contextlib import nullcontext\nimport contextlib\nwith nullcontext(5) as v:\n    print(v)\n"
                    "with contextlib.nullcontext():\n    print('inside')\nc = nullcontext([1, 2])\nwith c as xs:\n"
                    "    xs.append(3)\nprint(xs, c.enter_result, isinstance(c, nullcontext))\n"
                    "try:\n    with nullcontext():\n        raise ValueError('kept')\nexcept ValueError as e:\n    print(e)\n")


@pytest.mark.parametrize("stmt,kind", [("contextlib.contextmanager", "AttributeError"),
                                       ("contextlib.nullcontext(1, 2)", "TypeError"),
                                       ("contextlib.nullcontext().__enter__", "AttributeError"),
                                       ("contextlib.nullcontext()._x", "AttributeError")])
def test_what_contextlib_lacks_or_refuses_is_pythons_error(stmt, kind):
    e = err(f"import contextlib\nx = {stmt}")
    assert e["type"] == kind, e
    sealed(e["message"])
