"""engine/optim/blas_axpy.py: big in-place float32 updates through numpy's OpenBLAS saxpy give torch's add_(alpha=)
bits (lengths with a tail, traps, infinities, alpha 0, arrays saxpy can't take), and its first-use check
refuses a saxpy that rounds twice anywhere."""
import ctypes

import numpy as np
import pytest

from engine.optim import blas_axpy, fma

torch = pytest.importorskip("torch")


def _torch_add(z, y, alpha):
    zt = torch.from_numpy(z.copy())
    zt.add_(torch.from_numpy(np.ascontiguousarray(y)), alpha=float(alpha))
    return zt.numpy()


def _bits(a):
    return np.asarray(a, np.float32).view(np.uint32)


@pytest.mark.parametrize("n", [16384, 16384 + 1, 9984 * 3 + 63, 100352])
def test_in_place_update_matches_torch(n):
    rng = np.random.default_rng(n)
    z, y, alpha = blas_axpy._traps(n, rng)
    a = alpha[0]  # one alpha per call: traps of that alpha stay traps, the rest are ordinary values
    for trial in (z, (rng.standard_normal(n) * 10.0 ** rng.integers(-20, 20, n)).astype(np.float32)):
        got = trial.copy()
        assert fma.fma32(a, y, got, out=got) is got
        if blas_axpy._load() is not None:  # numpy's own OpenBLAS: its fused kernel passed the first-use check
            assert blas_axpy._state["saxpy"] is not None
        np.testing.assert_array_equal(_bits(got), _bits(_torch_add(trial, y, a)))


def test_infinities_nan_and_alpha_zero_match_torch():
    n = 20000
    rng = np.random.default_rng(1)
    z = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    y[[0, 5, 9000]] = [np.inf, -np.inf, np.nan]
    z[[1, 5, 19999]] = [np.inf, np.inf, -np.inf]
    for a in (np.float32(-0.01), np.float32(0.0), np.float32(3e38)):
        got = z.copy()
        fma.fma32(a, y, got, out=got)
        np.testing.assert_array_equal(_bits(got), _bits(_torch_add(z, y, a)))


def test_arrays_saxpy_cannot_take_go_by_numpy():
    n = 40000
    rng = np.random.default_rng(2)
    z = rng.standard_normal((200, n // 200)).astype(np.float32)
    y = np.asfortranarray(rng.standard_normal((200, n // 200)).astype(np.float32))  # not C-contiguous
    got = z.copy()
    assert not blas_axpy.add_in_place(np.float32(-0.5), y, got, fma._fma32_numpy)
    fma.fma32(-0.5, y, got, out=got)
    np.testing.assert_array_equal(_bits(got), _bits(_torch_add(z, y, -0.5)))
    overlap = rng.standard_normal(n + 1).astype(np.float32)
    assert not blas_axpy.add_in_place(np.float32(-0.5), overlap[1:], overlap[:-1], fma._fma32_numpy)


def _as_arrays(n, yp, zp):
    return (np.ctypeslib.as_array((ctypes.c_float * n).from_address(yp)),
            np.ctypeslib.as_array((ctypes.c_float * n).from_address(zp)))


def test_first_use_check_refuses_a_saxpy_that_rounds_twice():
    def float32_twice(n, a, yp, incx, zp, incy):
        y, z = _as_arrays(n, yp, zp)
        z += np.float32(a) * y

    def float64_then_float32(n, a, yp, incx, zp, incy):
        y, z = _as_arrays(n, yp, zp)
        z[...] = (np.float64(np.float32(a)) * y.astype(np.float64) + z).astype(np.float32)

    def one_element_unfused(n, a, yp, incx, zp, incy):
        z_exact = fma._fma32_numpy(np.float32(a), *_as_arrays(n, yp, zp))
        float32_twice(1, a, yp + 4 * (n - 1), 1, zp + 4 * (n - 1), 1)
        _as_arrays(n, yp, zp)[1][: n - 1] = z_exact[: n - 1]

    def unfused_past_a_block(n, a, yp, incx, zp, incy):  # a kernel that only one long call would reach
        if n > blas_axpy._BLOCK:
            return float32_twice(n, a, yp, incx, zp, incy)
        y, z = _as_arrays(n, yp, zp)
        z[...] = fma._fma32_numpy(np.float32(a), y, z)

    for saxpy in (float32_twice, float64_then_float32, one_element_unfused, unfused_past_a_block):
        assert not blas_axpy._rounds_once(saxpy, fma._fma32_numpy)


@pytest.mark.parametrize("threads, calls", [(1, 1), (2, 11)])
def test_one_call_only_where_openblas_runs_one_thread(monkeypatch, threads, calls):
    # OpenBLAS splits a call over 10,000 elements between its threads, each part with a tail rounded twice
    seen = []
    monkeypatch.setitem(blas_axpy._state, "threads", lambda: threads)
    blas_axpy._block_calls(lambda n, *rest: seen.append(n), -0.5, 0, 0, 100352)
    assert len(seen) == calls and sum(seen) == 100352 and max(seen) == (100352 if threads == 1 else blas_axpy._BLOCK)
