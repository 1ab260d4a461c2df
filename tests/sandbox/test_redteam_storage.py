"""Red-team tests for Tensor.storage() / untyped_storage() / data_ptr() / storage_offset() (engine/storage.py): the
storage's internals stay out of reach, its listings and printouts count against the budgets, and data_ptr() gives the
run's stand-in numbers, never the server's memory."""
from __future__ import annotations

import re

import pytest
from redteam_testing import sealed
from sandbox_testing import CLASSIC_LIMITS, err, ok, run

HEAD = "import torch\n"


def test_views_share_a_storage_and_its_numbers_copies_do_not():
    out = ok(HEAD + "x = torch.arange(6.).reshape(2, 3)\ny = x[:, 1:]\nz = x.clone()\n"
             "print(x.storage().data_ptr() == y.storage().data_ptr(), x.data_ptr() == z.data_ptr())\n"
             "print(y.data_ptr() - x.data_ptr(), y.storage_offset(), x.untyped_storage().data_ptr() == x.data_ptr())\n"
             "print(type(x.storage()), type(x.untyped_storage()), len(y.storage()), y.storage()[5], list(y.storage())[:2])")
    assert out == ("True False\n4 1 True\n<class 'torch.storage.TypedStorage'> <class 'torch.storage.UntypedStorage'> "
                   "6 5.0 [0.0, 1.0]\n")
    sealed(out)


def test_data_ptr_is_a_stand_in_never_the_servers_address():
    import numpy as np

    out = ok(HEAD + "a = torch.ones(3)\nb = torch.ones(1000)\nprint(a.data_ptr(), b.data_ptr(), b.storage().data_ptr())")
    numbers = [int(v) for v in out.split()]
    assert all(0x7F1000000000 <= n < 0x7F2000000000 for n in numbers), out
    assert numbers[1] - numbers[0] >= 4096 and numbers[1] == numbers[2]  # regions as long as their storages, apart
    real = np.ones(3).__array_interface__["data"][0]
    assert abs(numbers[0] - real) > 1 << 32 or not (0x7F1000000000 <= real < 0x7F2000000000)


@pytest.mark.parametrize("stmt", ["s._flat", "s._array", "s._owner", "s.__dict__", "s.tolist.__self__._flat",
                                  "type(s).__init__", "s.__class__.__mro__", "s.shape", "torch.storage",
                                  "s.data_ptr.__closure__"])
def test_the_storages_internals_stay_closed(stmt):
    e = err(HEAD + f"s = torch.ones(3).storage()\nv = {stmt}")
    assert e["type"] in ("AttributeError", "SyntaxError"), (stmt, e)
    assert e["line"] == 3
    sealed(e["message"])


@pytest.mark.parametrize("stmt", ["s.resize_(10)", "s.fill_(1)", "s.copy_(s)", "s.share_memory_()", "s.pin_memory()",
                                  "s[0] = 5", "s.cuda()"])
def test_writing_through_a_storage_is_refused_in_plain_words(stmt):
    e = err(HEAD + f"s = torch.ones(3).storage()\n{stmt}")
    assert e["type"] in ("AttributeError", "TypeError"), (stmt, e)
    assert e["line"] == 3 and len(e["message"]) < 300


def test_a_huge_storage_is_printed_within_the_output_limit_or_refused():
    e = err(HEAD + "s = torch.zeros(3_000_000).storage()\nprint(s)")
    assert e["type"] == "LimitExceeded" and e["line"] == 3, e
    e = err(HEAD + "s = torch.zeros(3_000_000).storage()\nt = repr(s) + str(s)")
    assert e["type"] == "LimitExceeded", e
    assert ok(HEAD + "print(torch.tensor([1.5, -2.0]).storage())") == (
        " 1.5\n -2.0\n[torch.storage.TypedStorage(dtype=torch.float32, device=cpu) of size 2]\n")


def test_listing_a_storage_counts_against_the_budgets():
    # max_live_elements 1,000,000: a run creates at most 10,000,000 list items; 90,000 at a time, 120 times, is past it
    for listing in ("x.storage().tolist()", "x.storage()[0:90_000]", "x.untyped_storage()[:90_000]"):
        e = err(HEAD + f"x = torch.zeros(90_000)\nfor i in range(120):\n    n = len({listing})", limits=CLASSIC_LIMITS)
        assert e["type"] == "LimitExceeded" and "list/string items in total" in e["message"], (listing, e)
    # iterating goes one element at a time (the loop's steps count), never one list of them all
    e = err(HEAD + "x = torch.zeros(3_000_000)\nn = 0\nfor v in x.storage():\n    n += 1")
    assert e["type"] == "LimitExceeded", e
    assert ok(HEAD + "print(sum(torch.arange(5.).storage()), max(torch.tensor([1, 7, 3]).storage()))") == "10.0 7\n"


@pytest.mark.parametrize("key", ["'a'", "1.5", "None", "torch.tensor(1)", "(0, 1)", "10**20"])
def test_odd_keys_get_pythons_errors(key):
    e = err(HEAD + f"s = torch.ones(3).storage()\nv = s[{key}]")
    assert e["type"] in ("TypeError", "IndexError"), (key, e)
    assert e["line"] == 3


def test_a_run_keeps_no_storage_numbers_from_another_run():
    src = HEAD + "x = torch.ones(4)\nprint(x.data_ptr(), x[2:].data_ptr() - x.data_ptr())"
    first, second = run(src).stdout, run(src).stdout
    assert first == second and re.fullmatch(r"\d+ 8\n", first)


@pytest.mark.parametrize("call", ["torch.TypedStorage(np.ones(3))", "torch.TypedStorage([1, 2])", "torch.UntypedStorage(3)",
                                  "torch.UntypedStorage(np.ones(3), print)", "type(torch.ones(2).storage())(np.ones(2))"])
def test_storages_come_from_tensors_and_are_never_built_by_hand(call):
    # the engine's storage classes take an array they trust: a program names them for isinstance() only
    e = err(HEAD + f"import numpy as np\ns = {call}")
    assert e["type"] == "TypeError" and e["line"] == 3 and "cannot create 'torch.storage." in e["message"], e
    assert ok(HEAD + "print(isinstance(torch.ones(2).storage(), torch.TypedStorage))") == "True\n"
