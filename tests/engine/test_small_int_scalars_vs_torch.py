"""Python ints past an int8 / int16 / uint8 tensor's range (issue 21 §3): PyTorch casts them to the tensor's dtype,
so they wrap — in reflected ops (`300 - t`, `300 % t`), scalar remainders and comparisons (`t_int8 < 1000` compares
with -24: all False) — and refuses ints past 64 bits with OverflowError. Checked against torch 2.13."""
import pytest

import engine as fg

torch = pytest.importorskip("torch")

EXPRESSIONS = [
    "5 - t", "5 % t", "2 ** t", "300 - t", "t - 300", "1000 + t", "t * 300", "300 * t", "t % 300", "300 % t",
    "t // 3", "300 // t", "-1000 // t", "t.fmod(300)", "t.remainder(-300)", "torch.remainder(300, t)",
    "torch.sub(5, t)", "torch.sub(300, t, alpha=2)", "torch.floor_divide(300, t)",
    "t < 1000", "t > -1000", "t == 300", "t != 300", "t <= 255", "1000 > t", "t >= 2**63", "t < 2**64 - 1",
    "t.eq(1000)", "t.lt(1000)", "torch.lt(t, 1000)", "torch.ge(t, -129)", "t < 1e10", "t + 2**63",
    "t < 2**64", "t + 2**70", "2**70 - t", "t < -2**63 - 1", "t % 2**64", "t.eq(2**64)",
    # & | ^ are bitwise on integers (they were logical, giving bool), wrap their int, refuse floats
    "t & 300", "300 | t", "t ^ 3", "5 ^ t", "t & -1", "t | torch.tensor([300])", "t & 1.5", "t ^ (t > 2)",
    "(t > 2) & 3", "(t > 2) & (t < 50)", "True ^ (t > 2)", "(t > 2) | False", "t.float() & t", "t & 2**64",
]


def _evaluate(lib, dtype, expression):
    t = lib.tensor([1, 2, 100, 7, -3 if dtype != "uint8" else 253], dtype=getattr(lib, dtype))
    try:
        r = eval(expression, {"t": t, "torch": lib})  # noqa: S307 — the fixed expressions above
    except Exception as e:  # noqa: BLE001 — the error is what is compared
        return type(e).__name__, str(e)
    return r.tolist(), str(r.dtype)


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "int32", "int64"])
@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_out_of_range_ints_wrap_or_are_refused_as_in_torch(dtype, expression):
    assert _evaluate(fg, dtype, expression) == _evaluate(torch, dtype, expression)


@pytest.mark.parametrize("expression", ["t - 2**70", "t < 2**64", "2**64 + t", "t + (2**63 - 1)", "t * -2**63", "t != -2**63 - 1"])
def test_float_and_bool_tensors_read_the_int_as_64_bits(expression):
    for dtype in ("float32", "float64", "bool"):
        assert _evaluate(fg, dtype, expression) == _evaluate(torch, dtype, expression)
    for lib in (torch, fg):
        assert (lib.tensor([1.5]) < 1000).tolist() == [True] and (lib.tensor([True]) < 1000).tolist() == [True]


@pytest.mark.parametrize("base, exponent", [(2, [-3, 0, 2]), (1, [-3, -2]), (-1, [-3, -2, 5]), (0, [-1, 2]), (3, [-1])])
def test_integer_powers_with_negative_exponents_are_torchs(base, exponent):
    for dtype in ("int8", "int64"):
        got = [(base ** lib.tensor(exponent, dtype=getattr(lib, dtype))).tolist() for lib in (torch, fg)]
        assert got[0] == got[1]
        got = [(lib.full((len(exponent),), base, dtype=getattr(lib, dtype)) ** lib.tensor(exponent, dtype=getattr(lib, dtype))).tolist()
               for lib in (torch, fg)]
        assert got[0] == got[1]
