"""torch.int8 / torch.int16 (issue 21 §3) against torch 2.13: creation and its overflow check, casts, arithmetic
that wraps, promotion with the other dtypes, reductions, printing, legacy type names and indexing's refusal."""
import numpy as np
import pytest

import engine as fg

torch = pytest.importorskip("torch")


def same(make):
    """make(module) run on torch and on the engine: the same repr, or the same error type and words."""
    out = []
    for m in (torch, fg):
        try:
            out.append(repr(make(m)))
        except Exception as e:  # noqa: BLE001 — the error is what is compared
            out.append(f"{type(e).__name__}: {e}")
    assert out[1] == out[0]


def _t(m, values, name):
    return m.tensor(values, dtype=getattr(m, name))


SMALL = ["int8", "int16"]
CASES = {
    "dtype": lambda m, d: (getattr(m, d), getattr(m, d).itemsize, getattr(m, d).is_floating_point, m.short),
    "wraps": lambda m, d: _t(m, [100, 120], d) * _t(m, [100, 20], d) + _t(m, [100, 120], d),
    "plus_big_int": lambda m, d: _t(m, [100, 120], d) + 1000,
    "times_big_int": lambda m, d: _t(m, [100, 120], d) * 100000,
    "plus_small_int": lambda m, d: _t(m, [100, 120], d) + 5,
    "times_float": lambda m, d: _t(m, [3], d) * 1.5,
    "true_divide": lambda m, d: _t(m, [3], d) / 2,
    "floor_divide": lambda m, d: _t(m, [7, -7], d) // 2,
    "from_300": lambda m, d: _t(m, [300], d),
    "from_40000": lambda m, d: _t(m, [[1], [40000]], d),
    "from_nan": lambda m, d: _t(m, [float("nan")], d),
    "from_half_past_max": lambda m, d: _t(m, [127.5], d),
    "from_scalar": lambda m, d: _t(m, 300, d),
    "cast_wraps": lambda m, d: m.tensor([300.7, -1.5, 7.9]).to(getattr(m, d)),
    "sum": lambda m, d: _t(m, [100, 100], d).sum(),
    "sum_dim": lambda m, d: _t(m, [[100, 100]], d).sum(1),
    "prod": lambda m, d: _t(m, [100, 100], d).prod(),
    "cumsum": lambda m, d: _t(m, [100, 100], d).cumsum(0),
    "mean": lambda m, d: _t(m, [100, 100], d).mean(),
    "print": lambda m, d: str(_t(m, [[1, -2], [3, 4]], d)),
    "scalar": lambda m, d: _t(m, 5, d),
    "type": lambda m, d: _t(m, [1], d).type(),
    "legacy_cast": lambda m, d: m.tensor([1.5]).type("torch.CharTensor" if d == "int8" else "torch.ShortTensor"),
    "with_uint8": lambda m, d: (_t(m, [1], d) + m.tensor([1], dtype=m.uint8)).dtype,
    "with_int32": lambda m, d: (_t(m, [1], d) + m.tensor([1], dtype=m.int32)).dtype,
    "with_int64": lambda m, d: (_t(m, [1], d) + m.tensor([1])).dtype,
    "with_float": lambda m, d: (_t(m, [1], d) + m.tensor([1.0])).dtype,
    "with_bool": lambda m, d: (_t(m, [1], d) + m.tensor([True])).dtype,
    "int8_with_int16": lambda m, d: (_t(m, [1], "int8") + _t(m, [1], d)).dtype,
    "zeros": lambda m, d: m.zeros(2, dtype=getattr(m, d)),
    "arange": lambda m, d: m.arange(4, dtype=getattr(m, d)),
    "full": lambda m, d: m.full((2,), 7, dtype=getattr(m, d)),
    "randint": lambda m, d: (m.manual_seed(0), m.randint(0, 5, (4,), dtype=getattr(m, d)))[1],
    "requires_grad": lambda m, d: _t(m, [1], d).requires_grad_(),
    "neg": lambda m, d: -_t(m, [1, -128 if d == "int8" else -32768], d),
    "abs_max_argmax": lambda m, d: (_t(m, [1, -3], d).abs(), _t(m, [1, -3], d).max(), _t(m, [1, -3], d).argmax()),
    "float_item_tolist": lambda m, d: (_t(m, [1, -3], d).float(), _t(m, [7], d).item(), _t(m, [7], d).tolist()),
    "index_refused": lambda m, d: m.arange(5.0)[_t(m, [1, 3], d)],
    "compare": lambda m, d: _t(m, [1, 3], d) == 3,
    "matmul": lambda m, d: _t(m, [[1, 3]], d) @ _t(m, [[1], [3]], d),
    "pow": lambda m, d: _t(m, [2, 3], d) ** 2,
    "numpy": lambda m, d: _t(m, [2, 3], d).numpy().dtype,
    "from_numpy": lambda m, d: m.from_numpy(np.array([1, 2], dtype=d)),
    "short_char": lambda m, d: (m.tensor([1.7, -300.2]).short(), m.tensor([1.7, -300.2]).char(), _t(m, [3], d).long()),
    "clamp_where_sort": lambda m, d: (_t(m, [1, 50], d).clamp(0, 10), _t(m, [3, 1, 2], d).sort()),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name", SMALL)
def test_small_integer_dtypes(name, case):
    same(lambda m: CASES[case](m, name))


@pytest.mark.parametrize("values, name", [([-255], "uint8"), ([-256], "uint8"), ([255.5], "uint8"),
                                          ([2**40], "int32"), ([1e30], "int64"), ([float("inf")], "int32")])
def test_python_numbers_past_an_integer_type_are_refused_as_torch_does(values, name):
    """c10::overflows: an unsigned type takes negatives down to -max (they wrap), floats must lie in the range."""
    same(lambda m: _t(m, values, name))


def test_float_index_tensor_is_refused_in_torchs_words():
    same(lambda m: m.arange(5.0)[m.tensor([1.0])])
