"""PyTorch's type promotion with its three tiers (dim > 0 tensors, 0-dim tensors, Python numbers): every binary op,
comparison, torch.where, in-place op and gradient dtype over a grid of dtype pairs, and torch.result_type /
promote_types / can_cast, against torch 2.13 (engine/promotion.py)."""
from __future__ import annotations

import itertools
import warnings

import pytest

import engine

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
VALUES = {"bool": [True, False], "uint8": [3, 200], "int8": [3, -5], "int16": [3, -5], "int32": [7, -5],
          "int64": [7, -5], "float16": [1.5, -2.25], "float32": [1.5, -2.25], "float64": [1.5, -2.25]}
TIERS = [(True, False), (False, True), (True, True), (False, False)]  # (a is 0-dim, b is 0-dim)
NUMBERS = [True, 3, -2, 2.5]


def _make(lib, dtype, zero_dim):
    values = VALUES[dtype]
    return lib.tensor(values[0] if zero_dim else values, dtype=getattr(lib, dtype))


def _shown(r):
    values = r.tolist() if r.dim() else [r.item()]
    return str(r.dtype).replace("torch.", ""), repr([round(x, 3) if isinstance(x, float) else x for x in values])


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except Exception as e:  # noqa: BLE001 — the error itself is compared
        return type(e).__name__, str(e)


def _mismatches(expression, cases, make_scope):
    """The cases where the engine's dtype, values or error differ from torch's."""
    bad = []
    for case in cases:
        got = [_outcome(lambda lib=lib, case=case: _shown(eval(expression, make_scope(lib, *case))))  # noqa: S307 — fixed text
               for lib in (engine, torch)]
        if got[0] != got[1]:
            bad.append((case, got))
    return bad


BINARY = ["a + b", "a - b", "a * b", "a / b", "a // b", "a % b", "a ** b", "a < b", "a == b", "a >= b",
          "lib.where(c, a, b)", "lib.maximum(a, b)", "lib.atan2(a, b)", "a.fmod(b)", "a.div(b, rounding_mode='trunc')",
          "lib.eq(a, b)", "lib.sub(a, b)", "lib.mul(a, b)"]


@pytest.mark.parametrize("expression", BINARY)
def test_tensor_pairs_of_every_dtype_and_tier_promote_as_in_torch(expression):
    def scope(lib, da, db, za, zb):
        return {"a": _make(lib, da, za), "b": _make(lib, db, zb), "c": lib.tensor([True, False]), "lib": lib}
    cases = [(da, db, za, zb) for da, db in itertools.product(DTYPES, DTYPES) for za, zb in TIERS]
    assert _mismatches(expression, cases, scope) == []


def test_the_briefs_three_cases():
    t = engine
    assert (t.tensor(5) - t.tensor([1, 2], dtype=t.int8)).dtype is t.int8
    assert (t.tensor(5.0, dtype=t.float64) + t.tensor([1.0, 2.0])).dtype is t.float32
    assert (t.tensor(5.0) + t.tensor([1, 2], dtype=t.int8)).dtype is t.float32
    assert (t.tensor(5.0, dtype=t.float64) + t.tensor([1, 2], dtype=t.int8)).dtype is t.float64  # a higher category
    assert (t.tensor([1, 2], dtype=t.int32) + t.tensor([1.0], dtype=t.float16)).dtype is t.float16  # numpy: float32


SCALAR = ["a + s", "s + a", "a - s", "a * s", "a / s", "s / a", "a // s", "a < s", "s == a", "lib.where(c, a, s)",
          "a.div(s, rounding_mode='floor')", "lib.add(a, s)", "lib.mul(s, a)", "lib.add(s, a)", "a.remainder(s)"]


@pytest.mark.parametrize("expression", SCALAR)
def test_python_numbers_are_the_lowest_tier(expression):
    def scope(lib, da, za, s):
        return {"a": _make(lib, da, za), "s": s, "c": lib.tensor([True, False]), "lib": lib}
    cases = [(da, za, s) for da in DTYPES for za in (True, False) for s in NUMBERS
             if not (da == "bool" and s is True and ("//" in expression or "floor" in expression or "remainder" in expression))]
    assert _mismatches(expression, cases, scope) == []


INPLACE = ["a += b", "a -= b", "a *= b", "a /= b", "a //= b", "a %= b", "a.add_(b)", "a.mul_(b)"]


@pytest.mark.parametrize("statement", INPLACE)
def test_in_place_ops_keep_their_dtype_and_refuse_what_it_cannot_hold(statement):
    def run(lib, da, db, zb):
        a, b = _make(lib, da, False), _make(lib, db, zb)
        exec(statement, {"a": a, "b": b})  # noqa: S102 — the fixed statements above
        return _shown(a)
    bad = []
    for da, db, zb in itertools.product(DTYPES, DTYPES, (True, False)):
        got = [_outcome(lambda lib=lib, case=(da, db, zb): run(lib, *case)) for lib in (engine, torch)]
        if got[0] != got[1]:
            bad.append(((da, db, zb), got))
    assert bad == []


def test_an_in_place_op_under_autograd_keeps_selfs_dtype():
    for lib in (engine, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        x = w * 1
        x += lib.tensor([1.0, 2.0], dtype=lib.float64)
        x.sum().backward()
        assert (x.dtype, w.grad.dtype, x.grad_fn.name()) == (lib.float32, lib.float32, "AddBackward0"), lib


FLOATS = ["float16", "float32", "float64"]
GRADIENTS = ["a + b", "a - b", "a * b", "a / b", "a ** b", "lib.where(a > 0, a, b)", "lib.maximum(a, b)",
             "lib.atan2(a, b)", "a * 2.5 + b"]


@pytest.mark.parametrize("expression", GRADIENTS)
def test_each_gradient_has_its_inputs_dtype(expression):
    def run(lib, da, db, za, zb):
        a = _make(lib, da, za).requires_grad_()
        b = _make(lib, db, zb).requires_grad_()
        bz = b * 1  # a non-leaf: its retained gradient is cast to its dtype too
        bz.retain_grad()
        r = eval(expression, {"a": a, "b": bz, "lib": lib})  # noqa: S307 — the fixed expressions above
        r.sum().backward()
        return _shown(r), _shown(a.grad), _shown(b.grad), _shown(bz.grad)
    bad = []
    for (da, db), (za, zb) in itertools.product(itertools.product(FLOATS, FLOATS), TIERS):
        got = [_outcome(lambda lib=lib, case=(da, db, za, zb): run(lib, *case)) for lib in (engine, torch)]
        if got[0] != got[1]:
            bad.append(((da, db, za, zb), got))
    assert bad == []


def test_result_type_promote_types_and_can_cast_answer_as_torch():
    def pairs(lib):
        d = [getattr(lib, name) for name in DTYPES]
        out = [str(lib.promote_types(x, y)) for x, y in itertools.product(d, d)]
        out += [lib.can_cast(x, y) for x, y in itertools.product(d, d)]
        for (da, za), (db, zb) in itertools.product(itertools.product(DTYPES, (True, False)), repeat=2):
            out.append(str(lib.result_type(_make(lib, da, za), _make(lib, db, zb))))
        for da, za, s in itertools.product(DTYPES, (True, False), NUMBERS):
            out.append(str(lib.result_type(_make(lib, da, za), s)) + str(lib.result_type(s, _make(lib, da, za))))
        out += [str(lib.result_type(x, y)) for x, y in itertools.product(NUMBERS, NUMBERS)]
        out.append(str(lib.result_type(tensor=lib.tensor(1), other=2.0)))
        out.append(lib.can_cast(from_=lib.int8, to=lib.bool))
        return out
    assert pairs(engine) == pairs(torch)


@pytest.mark.parametrize("call", [
    "lib.promote_types(1, lib.int8)", "lib.promote_types(lib.int8, 'a')", "lib.can_cast(1, lib.int8)",
    "lib.result_type(lib.tensor(1))", "lib.result_type('a', 1)", "lib.result_type(lib.tensor(1), [1])",
])
def test_wrong_arguments_raise_torchs_errors(call):
    got = [_outcome(lambda lib=lib: eval(call, {"lib": lib})) for lib in (engine, torch)]  # noqa: S307
    assert got[0][0] == got[1][0] == "TypeError"
    assert got[0][1].splitlines()[0] == got[1][1].splitlines()[0]


@pytest.mark.parametrize("expression", ["t == 2**64 - 1", "t < 2**64 - 1", "t + (2**64 - 1)", "t * 2**63", "t == -2**63",
                                        "f < 2**63", "f < 2**64 - 1", "f + 2**64", "t < 2**64"])
def test_a_bool_tensor_meets_an_int_past_int64_as_torch_does(expression):
    def run(lib):
        r = eval(expression, {"t": lib.tensor([True]), "f": lib.tensor([1.5])})  # noqa: S307
        return _shown(r)
    assert _outcome(lambda: run(engine)) == _outcome(lambda: run(torch))


def test_a_promoted_operand_written_in_place_before_backward_is_torchs_version_error():
    messages = []
    for lib in (engine, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        c = lib.tensor(3.0, dtype=lib.float64)  # saved for x's gradient, cast to float32 by the promotion
        y = x * c
        c.add_(1)
        with pytest.raises(RuntimeError) as caught:
            y.sum().backward()
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert "[torch.DoubleTensor []] is at version 1; expected version 0" in messages[0]
