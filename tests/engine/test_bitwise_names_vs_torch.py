"""torch.bitwise_and / or / xor / not / left_shift / right_shift, the << >> operators, the Tensor methods, their
in-place forms and the augmented assignments (&= |= ^= <<= >>=), and the logical family's in-place forms: values,
dtypes and errors against torch 2.13 (engine/tensor_bitwise_names.py)."""
from __future__ import annotations

import warnings

import pytest

import engine

torch = pytest.importorskip("torch")


def _scope(lib):
    return {"i8": lib.tensor([1, -3, 64, 127], dtype=lib.int8), "i64": lib.tensor([1, -3, 64, 2**40]),
            "b": lib.tensor([True, False, True, False]), "f": lib.tensor([1.5, 2.0, 3.0, 4.0]),
            "d": lib.tensor([1.5, 2.0, 3.0, 4.0], dtype=lib.float64), "sh": lib.tensor([0, 1, 7, 8]),
            "shn": lib.tensor([-1, 9, 63, 64]), "u8": lib.tensor([1, 3, 128, 255], dtype=lib.uint8),
            "z": lib.tensor(3), "lib": lib}


EXPRESSIONS = [
    # shifts: counts below 0 or past the bits give 0 (>> of a negative -1), the common dtype's bits count
    "i8 << sh", "i8 >> sh", "i8 << shn", "i8 >> shn", "i64 << shn", "i64 >> shn", "u8 >> shn", "u8 << 1", "i8 << 2",
    "2 << i8.abs()", "1 >> sh", "i8 << 300", "300 << i8", "i8 << z", "z << i8", "b << 1", "i64 >> 2**63",
    "i64 << 2**63", "i64 >> -2**63", "i8 << 10**30", "2**70 << i8",
    "lib.bitwise_left_shift(i8, 2)", "lib.bitwise_right_shift(i8, sh)", "lib.bitwise_left_shift(2, sh)",
    "i8.bitwise_left_shift(sh)", "i8.bitwise_right_shift(1)", "lib.bitwise_left_shift(i8, other=2)",
    "lib.bitwise_right_shift(i64, 2**40)",
    # and / or / xor / not
    "i8.bitwise_not()", "lib.bitwise_not(b)", "lib.bitwise_not(u8)", "~i64", "lib.bitwise_and(i8, 3)",
    "lib.bitwise_and(3, i8)", "lib.bitwise_or(b, b)", "lib.bitwise_xor(b, i8)", "lib.bitwise_xor(b, b)",
    "lib.bitwise_and(input=i8, other=i8)", "i8.bitwise_or(other=u8)", "lib.bitwise_or(i8, u8)", "i8 ^ u8",
    "u8 & 255", "u8 | -1", "i8 & b", "b ^ True", "b & 1", "lib.bitwise_xor(i8, 2**64)", "lib.bitwise_and(b, z)",
    "lib.bitwise_and(i8, i8, out=lib.empty(4, dtype=lib.int16))", "lib.logical_and(i8, f)",
    # floats refused, and shifts of bools, in torch's words
    "f << 1", "b << b", "i8 << 1.5", "d >> 1", "lib.bitwise_not(f)", "lib.bitwise_and(i8, f)", "lib.bitwise_and(f, 1)",
    "lib.bitwise_and(i8, 1.5)", "lib.bitwise_or(d, d)", "~d", "b >> z",
    # in place: the result in self's dtype, a higher category refused
    "i8.bitwise_and_(lib.tensor(3))", "b.bitwise_and_(i8)", "i8.bitwise_left_shift_(1)", "i8.bitwise_right_shift_(sh)",
    "i8.bitwise_not_()", "f.bitwise_not_()", "b.bitwise_not_()", "b.logical_and_(i8)", "i8.logical_and_(b)",
    "f.logical_not_()", "i8.logical_xor_(b)", "b.logical_or_(f)", "i8.bitwise_xor_(i64)", "u8.bitwise_or_(-1)",
    "lib.bitwise_and(i8, i8, out=lib.empty(4, dtype=lib.bool))",
]
STATEMENTS = ["i8 &= 3", "i8 |= b", "i8 ^= i64", "i8 <<= 1", "i8 >>= sh", "b &= i8", "b |= b", "f &= 1", "b <<= 1",
              "u8 >>= 1", "b ^= b"]


def _run(lib, text):
    scope = _scope(lib)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if text in STATEMENTS:
                exec(text, scope)  # noqa: S102 — the fixed statements above
                r = scope[text.split()[0]]
            else:
                r = eval(text, scope)  # noqa: S307 — the fixed expressions above
    except Exception as e:  # noqa: BLE001 — the error itself is compared
        return type(e).__name__, str(e).splitlines()[0]
    return str(r.dtype), r.tolist()


@pytest.mark.parametrize("text", EXPRESSIONS + STATEMENTS)
def test_values_dtypes_and_errors_are_torchs(text):
    assert _run(engine, text) == _run(torch, text)


@pytest.mark.parametrize("call", ["lib.bitwise_and(i8, 'a')", "lib.bitwise_not(1)", "lib.bitwise_left_shift([1], i8)",
                                  "lib.bitwise_xor(i8, None)", "lib.bitwise_or(1, 2)"])
def test_wrong_arguments_are_type_errors_as_in_torch(call):
    got, want = _run(engine, call), _run(torch, call)
    assert got[0] == want[0] == "TypeError"
    assert got[1] == want[1]


def test_the_names_are_torchs_and_have_no_gradient():
    x = engine.tensor([1, 2, 3])
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"):
        assert hasattr(torch, name) and hasattr(torch.Tensor, name) and hasattr(torch.Tensor, name + "_")
        assert getattr(engine, name)(x, 1).grad_fn is None
    assert engine.bitwise_not(x).grad_fn is None
