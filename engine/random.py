"""PyTorch's CPU random numbers, bit for bit: its Mersenne Twister and its transformations.

`torch.manual_seed(s)` seeds an MT19937 exactly as PyTorch's CPUGeneratorImpl does (init_genrand with
the seed's low 32 bits), and every draw follows ATen's CPU kernels (aten/src/ATen/core/
DistributionsHelper.h, TransformationHelper.h, native/cpu/DistributionTemplates.h), vectorised in numpy:

- 32-bit draws are the engine's outputs; 64-bit draws join two of them, the first as the high half.
- uniform floats (float16 too) take 24 bits (`(x & (2**24 - 1)) * 2**-24`), doubles 53 bits of a
  64-bit draw, then `u * (to - from) + from` with a fused multiply-add, as the compiled kernel does,
  and a value that rounds up to `to` becomes `from`.
- normal: from 16 contiguous elements, all uniforms first, then blocks of 16 (Box-Muller on the first
  8 as `1 - u` and the next 8 as angles) and, when the size is not a multiple of 16, 16 fresh uniforms
  for the last 16 elements. float32 goes through the AVX2 kernel (PyTorch never dispatches normal to
  its AVX512 build), whose Cephes log and sincos are reproduced here operation by operation.
  float64 takes libm's log (through `math.log`), as PyTorch's scalar kernel does. Below 16 elements
  (or for non-contiguous tensors) every element comes from the scalar normal_distribution<double>,
  which caches its second value in the generator. float16 fills a float32 buffer padded to a
  multiple of 16 and keeps its head and its last 16 values.
- randint: `draw % range + low`, with 64-bit draws from a range of 2**28 on; randperm: PyTorch's
  swap loop with `draw % (n - i)`.
- bernoulli with a float p: a 53-bit double uniform `< p` (the kernel PyTorch uses on AMD and ARM
  CPUs; with MKL on Intel CPUs PyTorch draws bernoulli_(p) from MKL's own stream instead); with a
  tensor of probabilities, a float (or, for float64 p, double) uniform per element. dropout_noise
  is the mask PyTorch's CPU dropout multiplies by.
- Tensors are filled in memory order (PyTorch's TensorIterator order), so transposed views match.
- Large tensors are drawn and transformed a cache-sized chunk at a time (same draws, same order).
"""
from __future__ import annotations

import math
import os
import warnings
from fractions import Fraction

import numpy as np

from . import registry
from .dtypes import scalar_type_name
from .grad_mode import STATE

DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed: unseeded programs are deterministic too

_N = 624
_MASK64 = (1 << 64) - 1
_STATE_BYTES = 5056  # sizeof(CPUGeneratorImplState)
_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_DIGITS = {_F16: 11, _F32: 24, _F64: 53}
_KEYS: dict[int, np.ndarray] = {}


def _seed_key(seed32: int) -> np.ndarray:
    """std::mt19937's init_genrand state for a 32-bit seed (numpy's legacy seeding is the same)."""
    key = _KEYS.get(seed32)
    if key is None:
        key = np.random.RandomState(seed32).get_state(legacy=False)["state"]["key"]
        if len(_KEYS) > 16:
            _KEYS.clear()
        _KEYS[seed32] = key
    return key


class Generator:
    """torch.Generator for the CPU: manual_seed, seed, initial_seed, get_state, set_state."""

    __slots__ = ("_bg", "_seed", "_fresh", "_normal", "_float_normal")

    def __init__(self, device="cpu"):
        if str(device) != "cpu":
            raise RuntimeError(f"Device type {str(device).upper()} is not supported by this engine's generators")
        self._bg = np.random.MT19937(0)
        self.manual_seed(DEFAULT_SEED)

    @property
    def device(self):
        return "cpu"

    def manual_seed(self, seed) -> Generator:
        if isinstance(seed, float) or not hasattr(seed, "__index__"):  # the C method takes a long (no int())
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = _check_seed(seed)
        self._seed = seed
        self._bg.state = {"bit_generator": "MT19937", "state": {"key": _seed_key(seed & 0xFFFFFFFF), "pos": _N}}
        self._fresh = True  # PyTorch's state after seeding: left=1, next=0
        self._normal = None  # the cached second value of the scalar Box-Muller
        self._float_normal = None  # never set on the CPU; kept for get_state/set_state
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """A fresh nondeterministic seed, as PyTorch picks it (53 random bits), applied and returned."""
        s = int.from_bytes(os.urandom(8), "little") & ((1 << 53) - 1)
        self.manual_seed(s)
        return s

    def get_state(self):
        """The generator's state as PyTorch's 5056-byte uint8 tensor (CPUGeneratorImplState)."""
        state = registry.Tensor._wrap(self._state_bytes())
        if STATE.limits is not None:  # as every factory's tensor, it counts against the run's live elements
            STATE.limits.track(state)
        return state

    def set_state(self, new_state) -> Generator:
        arr = new_state._data if isinstance(new_state, registry.Tensor) else None
        if arr is None or arr.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if arr.size != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input "
                               f"RNG state size to be {arr.size}")
        raw = np.ascontiguousarray(arr).reshape(-1).tobytes()
        seed = int.from_bytes(raw[0:8], "little")
        left, seeded = np.frombuffer(raw, np.int32, 2, 8)
        nxt = int.from_bytes(raw[16:24], "little") & 0xFFFFFFFF
        if not (seeded and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        key = np.frombuffer(raw, np.uint64, _N, 24).astype(np.uint32)
        normal_y = np.frombuffer(raw, np.float64, 1, 5024)[0]
        normal_valid = np.frombuffer(raw, np.int32, 1, 5040)[0]
        float_normal = np.frombuffer(raw, np.float32, 1, 5048)[0]
        self._bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": _N + 1 - int(left)}}
        self._seed = seed
        self._fresh = int(left) == 1 and nxt == 0
        self._normal = float(normal_y) if normal_valid else None
        self._float_normal = float(float_normal) if raw[5052] else None
        return self

    def _state_bytes(self) -> np.ndarray:
        st = self._bg.state["state"]
        pos = int(st["pos"])
        out = bytearray(_STATE_BYTES)
        out[0:8] = self._seed.to_bytes(8, "little")
        out[8:12] = (_N + 1 - pos).to_bytes(4, "little")
        out[12:16] = (1).to_bytes(4, "little")
        out[16:24] = (0 if self._fresh else pos).to_bytes(8, "little")
        out[24:24 + 8 * _N] = np.asarray(st["key"], np.uint64).tobytes()
        if self._normal is not None:
            out[5024:5032] = np.float64(self._normal).tobytes()
            out[5040:5044] = (1).to_bytes(4, "little")
        if self._float_normal is not None:
            out[5048:5052] = np.float32(self._float_normal).tobytes()
            out[5052] = 1
        return np.frombuffer(bytes(out), np.uint8).copy()

    def __repr__(self):
        return f"<torch._C.Generator object at {id(self):#x}>"

    # ----- raw draws, as CPUGeneratorImpl::random() and random64() -----
    def _u32(self, n: int) -> np.ndarray:
        """n 32-bit draws (as uint64)."""
        self._fresh = False
        return self._bg.random_raw(n)

    def _u64(self, n: int) -> np.ndarray:
        """n 64-bit draws: two 32-bit draws each, the first the high half."""
        self._fresh = False
        raw = self._bg.random_raw(2 * n)
        return (raw[0::2] << np.uint64(32)) | raw[1::2]


def _check_seed(seed) -> int:
    seed = int(seed)
    if seed < -(1 << 63) or seed > _MASK64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _MASK64


default_generator = Generator()


def _gen(generator) -> Generator:
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a torch.Generator, not {type(generator).__name__}")
    return generator


# ---------------------------------------------------------------- torch.* / torch.random functions
def manual_seed(seed) -> Generator:
    return default_generator.manual_seed(int(seed))  # torch.manual_seed's own int(seed): '7' and 1.5 pass


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


# ---------------------------------------------------------------- exact fused multiply-add
def _fma32(a, b, c, chain=None) -> np.ndarray:
    """float32 fma(a, b, c), correctly rounded (see _round_sum32); the float64 product is exact.
    Given a `chain` list, halfway cases are left to _chain_needs_exact (a redo when it says so)."""
    p = np.multiply(a, b, dtype=_F64)
    if chain is None:
        return _round_sum32(p, c)
    s = p + c
    chain.append((s, p, c))
    return s.astype(_F32)


def _round_sum32(p: np.ndarray, c) -> np.ndarray:
    """float32(p + c) rounded once, for float64 p and c: the float64 sum is rounded once more, which
    matters only where it lands inexactly on a float32 halfway point; those are fixed exactly."""
    s = p + c
    out = s.astype(_F32)
    tie = (s.view(np.int64) & 0x1FFFFFFF) == 0x10000000
    if tie.any():
        st = s[tie]
        err = _sum_error(np.broadcast_to(p, s.shape)[tie], np.broadcast_to(np.asarray(c, _F64), s.shape)[tie], st)
        st = np.where(err > 0, np.nextafter(st, np.inf), np.where(err < 0, np.nextafter(st, -np.inf), st))
        out[tie] = st.astype(_F32)
    return out


def _sum_error(p, c, s):
    """p + c - s exactly, for s = fl(p + c) (Knuth's TwoSum)."""
    bb = s - p
    return (p - (s - bb)) + (c - bb)


def _chain_needs_exact(chain) -> bool:
    """Whether any sum of a chain of fast _fma32 calls sits inexactly on a float32 halfway point."""
    sums = np.concatenate([s.reshape(-1) for s, _, _ in chain])
    idx = np.flatnonzero((sums.view(np.int64) & 0x1FFFFFFF) == 0x10000000)
    if idx.size == 0:
        return False
    prods = np.concatenate([np.broadcast_to(p, s.shape).reshape(-1) for s, p, _ in chain])
    addends = np.concatenate([np.broadcast_to(np.asarray(c, _F64), s.shape).reshape(-1) for s, _, c in chain])
    return bool(_sum_error(prods[idx], addends[idx], sums[idx]).any())


def _split(a):
    t = a * 134217729.0
    hi = t - (t - a)
    return hi, a - hi


def _fma64(a, b, c) -> np.ndarray:
    """float64 fma(a, b, c): Dekker's exact product and Knuth's exact sum, then one rounding."""
    a = np.asarray(a, _F64)
    b = np.asarray(b, _F64)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + e)


def _fma_scalar(a: float, b: float, c: float) -> float:
    if b == 1.0 and c == 0.0:
        return a
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    return float(Fraction(a) * Fraction(b) + Fraction(c))


# ---------------------------------------------------------------- uniform
def _unit(gen: Generator, n: int, dt: np.dtype) -> np.ndarray:
    """uniform_real_distribution<T>(0, 1): [0, 1) from the low `digits` bits of a draw."""
    if dt == _F64:
        return (gen._u64(n) & np.uint64((1 << 53) - 1)).astype(_F64) * (2.0 ** -53)
    # float32, and float16 too: PyTorch 2.13 draws half uniforms as floats, then rounds them
    return (gen._u32(n) & np.uint64((1 << 24) - 1)).astype(_F32) * np.float32(2.0 ** -24)


_CHUNK = 1 << 14  # elements per pass: numpy temporaries stay in cache (a multiple of 16)


def uniform(n: int, low: float, high: float, dt, generator=None) -> np.ndarray:
    """n values of uniform_(low, high) for a float dtype, flat, in draw order."""
    dt = np.dtype(dt)
    gen = _gen(generator)
    if dt.kind != "f":
        raise NotImplementedError(f'"check_uniform_bounds" not implemented for \'{scalar_type_name(dt)}\'')
    _check_uniform_bounds(low, high, dt)
    if n <= _CHUNK:
        return _uniform_chunk(gen, n, low, high, dt)
    out = np.empty(n, dt)
    for i in range(0, n, _CHUNK):
        m = min(_CHUNK, n - i)
        out[i:i + m] = _uniform_chunk(gen, m, low, high, dt)
    return out


def _uniform_chunk(gen: Generator, n: int, low, high, dt: np.dtype) -> np.ndarray:
    if n == 0:
        return np.empty(0, dt)
    if dt == _F64:
        x = _unit(gen, n, dt)
        lo, hi = float(low), float(high)
        if (lo, hi) == (0.0, 1.0):
            return x
        out = _fma64(x, hi - lo, lo)
    else:
        lo, hi = np.float32(low), np.float32(high)
        if (lo, hi) == (0, 1) and dt == _F32:
            return _unit(gen, n, dt)
        # u * (hi - lo) + lo with u = k / 2**24: the product k * (hi - lo) / 2**24 is exact in float64
        k = gen._u32(n)
        k &= np.uint64((1 << 24) - 1)
        p = k.astype(_F64)
        p *= float(hi - lo) * 2.0 ** -24  # hi - lo in float32, as the kernel computes it
        out = _round_sum32(p, float(lo)).astype(dt, copy=False)
        lo, hi = np.asarray(low).astype(dt), np.asarray(high).astype(dt)
    over = out >= hi
    if over.any():
        out[over] = lo  # a value rounding up to `high` becomes `low`: [low, high) holds
    return out


def _check_uniform_bounds(low, high, dt):
    info = np.finfo(dt)
    for v, name in ((low, "from"), (high, "to")):
        if not (float(info.min) <= float(v) <= float(info.max)):
            raise RuntimeError(f"{name} is out of bounds for {_bounds_name(dt)}")
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_num(low)} > to={_num(high)}")
    if high - low > float(info.max):
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{scalar_type_name(dt)}>::max(), but found "
                           f"to={_num(high)} and from={_num(low)} which result in to-from to exceed the limit")


# ---------------------------------------------------------------- normal
_LOG_P = [np.float32(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                                  1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                                  3.3333331174E-1)]
_F = np.float32


def _log256(x: np.ndarray, sums) -> np.ndarray:
    """avx_mathfun's log256_ps (Cephes logf) on positive normal float32, with the compiler's FMAs."""
    bits = x.view(np.uint32)
    e = ((bits >> 23).astype(np.int32) - 126).astype(_F32)
    x = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(_F32)
    small = x < _F(0.707106781186547524)
    e -= small
    x = (x - _F(1)) + np.where(small, x, _F(0))
    z = x * x
    y = _fma32(_LOG_P[0], x, _LOG_P[1], sums)
    for p in _LOG_P[2:]:
        y = _fma32(y, x, p, sums)
    y = y * x
    y = _fma32(y, z, e * _F(-2.12194440e-4), sums)
    y = y - z * _F(0.5)
    return (x + y) + e * _F(0.693359375)


def _sincos256(x: np.ndarray, sums):
    """avx_mathfun's sincos256_ps (Cephes sinf/cosf) for x >= 0, with the compiler's FMAs."""
    j = (x * _F(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(_F32)
    x = _fma32(y, _F(-0.78515625), x, sums)
    x = _fma32(y, _F(-2.4187564849853515625e-4), x, sums)
    x = _fma32(y, _F(-3.77489497744594108e-8), x, sums)
    z = x * x
    c = _fma32(_F(2.443315711809948E-005), z, _F(-1.388731625493765E-003), sums)
    c = _fma32(c, z, _F(4.166664568298827E-002), sums)
    c = c * z
    c = _fma32(c, z, -(z * _F(0.5)), sums) + _F(1)
    s = _fma32(_F(-1.9515295891E-4), z, _F(8.3321608736E-3), sums)
    s = _fma32(s, z, _F(-1.6666654611E-1), sums)
    s = s * z
    s = _fma32(s, x, x, sums)
    poly = (j & 2) == 0
    sin = np.where(poly, s, c)
    cos = np.where(poly, c, s)
    sin = np.where((j & 4) != 0, -sin, sin)
    cos = np.where(((j - 2) & 4) == 0, -cos, cos)
    return sin, cos


def _box_muller_f32(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """normal_fill_16_AVX2 over rows of 16 float32 uniforms."""
    rows = u.reshape(-1, 16)
    if u.size > 2048:  # big: every fma checks its own halfway cases (keeps the working set small)
        return _box_muller_f32_rows(rows, mean, std, None).reshape(-1)
    chain = []  # small: fewer numpy calls, one check at the end, a redo in the rare bad case
    out = _box_muller_f32_rows(rows, mean, std, chain)
    if _chain_needs_exact(chain):
        out = _box_muller_f32_rows(rows, mean, std, None)
    return out.reshape(-1)


def _box_muller_f32_rows(u, mean, std, sums):
    radius = np.sqrt(_F(-2) * _log256(_F(1) - u[:, :8], sums))
    sin, cos = _sincos256(_F(2.0 * math.pi) * u[:, 8:], sums)
    out = np.empty_like(u)
    np.multiply(radius, cos, out=out[:, :8])
    np.multiply(radius, sin, out=out[:, 8:])
    std32, mean32 = _F(std), _F(mean)
    if std32 != 1 or mean32 != 0:
        out = _fma32(out, std32, mean32)
    return out


def _box_muller_f64(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """normal_fill_16<double> over rows of 16 double uniforms (libm's log, sin and cos)."""
    u = u.reshape(-1, 16)
    u1 = (1.0 - u[:, :8]).reshape(-1)
    # libm's log, as PyTorch calls it: numpy's own log differs from it in the last bit now and then
    lg = np.fromiter(map(math.log, u1.tolist()), _F64, u1.size).reshape(-1, 8)
    radius = np.sqrt(-2.0 * lg)
    theta = 2.0 * math.pi * u[:, 8:]
    out = np.empty_like(u)
    out[:, :8] = radius * np.cos(theta)
    out[:, 8:] = radius * np.sin(theta)
    if std != 1.0 or mean != 0.0:
        out = _fma64(out, float(std), float(mean))
    return out.reshape(-1)


def normal(n: int, mean: float, std: float, dt, generator=None, contiguous=True) -> np.ndarray:
    """n values of normal_(mean, std), flat, in fill order."""
    dt = np.dtype(dt)
    gen = _gen(generator)
    if dt.kind != "f":
        raise NotImplementedError(f'"normal_kernel_cpu" not implemented for \'{scalar_type_name(dt)}\'')
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    if n == 0:
        return np.empty(0, dt)
    if n < 16 or not contiguous:
        return _normal_scalar(gen, n, float(mean), float(std)).astype(dt)
    if dt == _F16:  # PyTorch fills a float buffer padded to 16s and keeps its head and its last 16
        padded = -(-n // 16) * 16
        buf = _normal_blocks(gen, padded, mean, std, _box_muller_f32, _F32)
        return np.concatenate([buf[:n - 16], buf[padded - 16:]]).astype(_F16)
    fill, work = (_box_muller_f64, _F64) if dt == _F64 else (_box_muller_f32, _F32)
    full = n - n % 16
    out = np.empty(n, work)
    out[:full] = _normal_blocks(gen, full, mean, std, fill, work)
    if full != n:
        # all n uniforms are drawn first; then the last 16 values are recomputed from 16 fresh ones
        _unit(gen, n - full, work)
        out[n - 16:] = fill(_unit(gen, 16, work), mean, std)
    return out


def _normal_blocks(gen: Generator, n: int, mean, std, fill, work) -> np.ndarray:
    """Blocks of 16 normals from n (a multiple of 16) uniforms, a cache-sized chunk at a time."""
    if n <= _CHUNK:
        return fill(_unit(gen, n, work), mean, std)
    out = np.empty(n, work)
    for i in range(0, n, _CHUNK):
        m = min(_CHUNK, n - i)
        out[i:i + m] = fill(_unit(gen, m, work), mean, std)
    return out


def _normal_scalar(gen: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """at::normal_distribution<double>, element by element, with the generator's cached second value."""
    out = []
    if gen._normal is not None:
        out.append(gen._normal)
        gen._normal = None
    pairs = (n - len(out) + 1) // 2
    if pairs:
        u = ((gen._u64(2 * pairs) & np.uint64((1 << 53) - 1)).astype(_F64) * (2.0 ** -53)).tolist()
        for k in range(pairs):
            u1, u2 = u[2 * k], u[2 * k + 1]
            r = math.sqrt(-2.0 * math.log1p(-u2))
            theta = 2.0 * math.pi * u1
            out.append(r * math.cos(theta))
            out.append(r * math.sin(theta))
        if len(out) > n:
            gen._normal = out.pop()
    return np.array([_fma_scalar(v, std, mean) for v in out], _F64)


# ---------------------------------------------------------------- integers
def _check_from_to(low: int, high: int, dt: np.dtype):
    if dt.kind == "f":
        digits = _DIGITS.get(dt, 24)
        bound = 1 << digits
        for v, name in ((low, "from"), (high, "to - 1")):
            if not -bound <= v <= bound:
                warnings.warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                              f"{scalar_type_name(dt).lower()} can support discrete uniform distribution only within "
                              "this range.", stacklevel=4)
    elif dt.kind in "iub":
        info = np.iinfo(dt) if dt.kind != "b" else None
        lo_ok = (0 <= low <= 1) if info is None else info.min <= low <= info.max
        hi_ok = (0 <= high <= 1) if info is None else info.min <= high <= info.max
        if not lo_ok:
            raise RuntimeError(f"from is out of bounds for {_bounds_name(dt)}")
        if not hi_ok:
            raise RuntimeError(f"to - 1 is out of bounds for {_bounds_name(dt)}")


def _update_from(low: int, digits: int, dt) -> int:
    plus1 = int(np.asarray(low + 1, np.float64).astype(dt).astype(np.float64))
    if plus1 < low:
        n = abs(low + 1).bit_length() - 1
        low = plus1 + (1 << (n - digits + 1))
    return low


def _update_to(high: int, digits: int, dt) -> int:
    minus1 = int(np.asarray(high - 1, np.float64).astype(dt).astype(np.float64))
    if minus1 >= high:
        n = abs(high - 1).bit_length() - 1
        high = minus1 - (1 << (n - digits + 1))
    return high


def random_from_to(n: int, low: int, high: int | None, dt, generator=None) -> np.ndarray:
    """n values of random_(low, high) (torch.randint): `draw % (high - low) + low` in the dtype."""
    dt = np.dtype(dt)
    gen = _gen(generator)
    low = int(low)
    if high is None:  # [low, the dtype's largest integer]
        if dt.kind == "f":
            high_inc = min(1 << _DIGITS.get(dt, 24), (1 << 63) - 1)
            low = _update_from(low, _DIGITS.get(dt, 24), dt)
            if not low < high_inc:
                raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                                   f"casted to dtype, but got from={low} > to_inc={high_inc}")
        else:
            high_inc = 1 if dt.kind == "b" else int(np.iinfo(dt).max)
        _check_from_to(low, high_inc, dt)
        rng = high_inc - low + 1
    else:
        high = int(high)
        if not low < high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        if dt.kind == "f":
            digits = _DIGITS.get(dt, 24)
            low, high = _update_from(low, digits, dt), _update_to(high, digits, dt)
            if not low < high:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                                   f"but got from={low} >= to={high}")
        _check_from_to(low, high - 1, dt)
        rng = high - low
    if n == 0:
        return np.empty(0, dt)
    draws = gen._u64(n) if rng >= 1 << 28 else gen._u32(n)
    vals = (draws % np.uint64(rng & _MASK64) + np.uint64(low & _MASK64)).view(np.int64)
    return _from_int64(vals, dt)


def random_full(n: int, dt, generator=None) -> np.ndarray:
    """n values of random_() with no bounds: [0, 2**digits] for floats, [0, max] for integers."""
    dt = np.dtype(dt)
    gen = _gen(generator)
    if n == 0:
        return np.empty(0, dt)
    if dt == _F64 or dt == np.int64:
        draws = gen._u64(n)
    else:
        draws = gen._u32(n)
    if dt.kind == "b":
        return (draws & np.uint64(1)).astype(dt)
    if dt.kind == "f":
        return (draws % np.uint64((1 << _DIGITS.get(dt, 24)) + 1)).astype(dt)
    return (draws % np.uint64(int(np.iinfo(dt).max) + 1)).astype(dt)


def _from_int64(vals: np.ndarray, dt: np.dtype) -> np.ndarray:
    if dt.kind == "b":
        return vals != 0
    return vals.astype(dt)


def randperm(n: int, dt=np.int64, generator=None) -> np.ndarray:
    """PyTorch's CPU randperm: swap i with i + draw % (n - i), for i from 0 to n - 2."""
    gen = _gen(generator)
    n = int(n)
    if n < 0xFFFFFFFF // 20:
        perm = list(range(n))
        if n > 1:
            span = np.arange(n, 1, -1, dtype=np.uint64)  # n - i
            targets = (gen._u32(n - 1) % span + np.arange(n - 1, dtype=np.uint64)).tolist()
            for i, z in enumerate(targets):
                perm[i], perm[z] = perm[z], perm[i]
    else:  # the inside-out shuffle PyTorch uses for huge n, with 64-bit draws
        perm = [0] * n
        draws = gen._u64(n).tolist()
        for i, d in enumerate(draws):
            z = d % (i + 1)
            perm[i] = perm[z]
            perm[z] = i
    return np.array(perm, np.int64).astype(dt, copy=False)


# ---------------------------------------------------------------- bernoulli and dropout
def bernoulli_scalar(n: int, p: float, dt, generator=None) -> np.ndarray:
    """n values of bernoulli_(p) for a float p: a double uniform < p."""
    gen = _gen(generator)
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
    if n == 0:
        return np.empty(0, dt)
    u = (gen._u64(n) & np.uint64((1 << 53) - 1)).astype(_F64) * (2.0 ** -53)
    return (u < p).astype(dt)


def bernoulli_tensor(p: np.ndarray, dt, generator=None) -> np.ndarray:
    """bernoulli_(p_tensor), p already broadcast to the output's shape, flat in fill order:
    a double uniform per element for float64 p, a float one otherwise."""
    gen = _gen(generator)
    p = np.asarray(p)
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")
    if p.size == 0:
        return np.empty(0, dt)
    u = _unit(gen, p.size, _F64 if p.dtype == _F64 else _F32)
    return (u < p.reshape(-1).astype(u.dtype)).astype(dt)


def dropout_noise(shape, p: float, dt=np.float32, generator=None) -> np.ndarray:
    """The tensor PyTorch's CPU dropout multiplies its input by, in training with 0 < p < 1:
    `empty_like(input).bernoulli_(1 - p).div_(1 - p)` (0 or 1/(1-p) in the input's dtype).
    For p == 0 or eval mode dropout returns its input and for p == 1 zeros: neither draws anything.
    Dropout2d/feature dropout passes the noise shape (N, C, 1, ...) and broadcasts."""
    dt = np.dtype(dt)
    shape = tuple(int(s) for s in shape)
    n = math.prod(shape)
    keep = 1.0 - float(p)
    if keep == 0.0:
        return np.zeros(shape, dt)
    noise = bernoulli_scalar(n, keep, dt, generator).reshape(shape)
    return noise / np.asarray(keep, dt)


# ---------------------------------------------------------------- filling a tensor's array in place
def _layout(arr: np.ndarray):
    """None for a C-contiguous array, else its axes from the largest stride: PyTorch's kernels fill
    (and TensorIterator walks) a tensor in memory order."""
    if arr.flags.c_contiguous:
        return None
    return sorted(range(arr.ndim), key=lambda d: (-abs(arr.strides[d]), d))


def _shaped(flat: np.ndarray, arr: np.ndarray, axes) -> np.ndarray:
    if axes is None:
        return flat.reshape(arr.shape)
    return flat.reshape([arr.shape[d] for d in axes]).transpose(np.argsort(axes))


def _flat(values: np.ndarray, axes) -> np.ndarray:
    return values.reshape(-1) if axes is None else values.transpose(axes).reshape(-1)


def fill_uniform(arr: np.ndarray, low=0.0, high=1.0, generator=None) -> np.ndarray:
    """New values for Tensor.uniform_(low, high), shaped like arr."""
    axes = _layout(arr)
    return _shaped(uniform(arr.size, low, high, arr.dtype, generator), arr, axes)


def fill_normal(arr: np.ndarray, mean=0.0, std=1.0, generator=None) -> np.ndarray:
    """New values for Tensor.normal_(mean, std), shaped like arr."""
    axes = _layout(arr)
    return _shaped(normal(arr.size, mean, std, arr.dtype, generator, contiguous=axes is None), arr, axes)


def fill_bernoulli(arr: np.ndarray, p=0.5, generator=None) -> np.ndarray:
    """New values for Tensor.bernoulli_(p), p a number or an array broadcasting to arr's shape."""
    axes = _layout(arr)
    if isinstance(p, np.ndarray):
        if p.dtype.kind != "f":
            raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{scalar_type_name(p.dtype)}\'')
        flat = bernoulli_tensor(_flat(np.broadcast_to(p, arr.shape), axes), arr.dtype, generator)
    else:
        flat = bernoulli_scalar(arr.size, p, arr.dtype, generator)
    return _shaped(flat, arr, axes)


def fill_random(arr: np.ndarray, args=(), kwargs=None, generator=None) -> np.ndarray:
    """New values for Tensor.random_(), random_(to) or random_(from, to)."""
    kwargs = dict(kwargs or {})
    has_to = "to" in kwargs
    low = kwargs.pop("from", None)
    high = kwargs.pop("to", None)
    if kwargs or len(args) > 2:
        raise TypeError("random_() received an invalid combination of arguments")
    if len(args) == 2:
        low, high = args
    elif len(args) == 1 and (low is not None or has_to):
        low = args[0]
    elif len(args) == 1:
        low, high = 0, args[0]
    for bound in (low, high):  # PyTorch reads each bound as a C int64
        if isinstance(bound, int) and not -2**63 <= bound < 2**63:
            raise ValueError("Overflow when unpacking long long")
    axes = _layout(arr)
    if low is None and high is None and not has_to:
        flat = random_full(arr.size, arr.dtype, generator)
    else:
        flat = random_from_to(arr.size, 0 if low is None else low, high, arr.dtype, generator)
    return _shaped(flat, arr, axes)


def _bounds_name(dt: np.dtype) -> str:
    """PyTorch's dtype name in its out-of-bounds messages (toString of the ScalarType in lower case)."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "int64_t", "int32": "int",
            "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t", "bool": "bool"}.get(np.dtype(dt).name, str(dt))


def _num(v) -> str:
    return repr(v) if not isinstance(v, float) or not v.is_integer() else str(int(v))


# ---------------------------------------------------------------- exponential and multinomial
def exponential(n: int, lambd: float, dt, generator=None) -> np.ndarray:
    """exponential_(lambd) on the CPU (MKL's path is off in PyTorch's own builds): -1/lambd * log1p(-u) from
    one double uniform per element, rounded to the dtype."""
    u = _unit(_gen(generator), n, _F64)
    return (-1.0 / lambd * np.log1p(-u)).astype(dt, copy=False)


def multinomial(probs: np.ndarray, num_samples: int, replacement: bool, generator=None) -> np.ndarray:
    """torch.multinomial's indices (int64, rows x num_samples) for 1-D or 2-D float probabilities.
    Without replacement (or one sample): argmax / topk of p / Exp(1) (the Gumbel trick, ATen's fast path);
    with replacement: per row its normalised running sum in the dtype, and one double uniform per sample
    placed by binary search, as ATen's CPU kernel."""
    rows = probs.reshape(1, -1) if probs.ndim == 1 else probs
    dt = probs.dtype
    if not replacement or num_samples == 1:
        with np.errstate(invalid="ignore"):
            valid = bool(probs.max() < np.inf) and bool(probs.min() >= 0)
        if not valid:
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (rows.sum(axis=1) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        q = exponential(rows.size, 1.0, dt, generator).reshape(rows.shape)
        with np.errstate(divide="ignore"):
            q = rows / q
        if num_samples == 1:
            out = np.argmax(q, axis=-1)[:, None]
        else:  # topk: largest first (a stable sort of the negation keeps the lower index first on ties)
            out = np.argsort(-q, axis=-1, kind="stable")[:, :num_samples]
        return out.astype(np.int64).reshape(probs.shape[:-1] + (num_samples,))
    gen = _gen(generator)
    bad = ~((rows >= 0) & np.isfinite(rows))
    sums = np.cumsum(rows, axis=1, dtype=dt)  # each row's running sum in the dtype, element by element
    broken = bad.any(axis=1) | ~(sums[:, -1] > 0)
    if broken.any():  # ATen checks row by row, drawing the earlier rows' samples first
        k = int(np.argmax(broken))
        _unit(gen, k * num_samples, _F64)
        if bad[k].any():
            first = rows[k, np.argmax(bad[k])]
            what = "< 0" if not first >= 0 else "= infinity or NaN"
            raise RuntimeError(f"invalid multinomial distribution (encountering probability entry {what})")
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    sums /= sums[:, -1:]
    sums[:, -1] = 1
    cum = sums.astype(_F64)  # exact: the comparisons below are float vs double, as in ATen
    u = _unit(gen, rows.shape[0] * num_samples, _F64).reshape(rows.shape[0], num_samples)
    # ATen's binary search for the first slot whose running sum is >= u, for every sample at once
    row = np.arange(rows.shape[0])[:, None]
    left = np.zeros(u.shape, np.int64)
    right = np.full(u.shape, rows.shape[1], np.int64)
    while True:
        active = right > left
        if not active.any():
            break
        mid = left + (right - left) // 2
        below = cum[row, np.minimum(mid, rows.shape[1] - 1)] < u
        left = np.where(active & below, mid + 1, left)
        right = np.where(active & ~below, mid, right)
    return left.reshape(probs.shape[:-1] + (num_samples,))
