"""The global random generator behind rand/randn/randint and nn.init (numpy's PCG64, not torch's
Mersenne Twister: the same seed gives different numbers than PyTorch, but runs are reproducible)."""
import numpy as np

DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed: unseeded programs are deterministic too

_gen = np.random.Generator(np.random.PCG64(DEFAULT_SEED))
_seed = DEFAULT_SEED


def manual_seed(seed: int):
    global _gen, _seed
    _seed = int(seed)
    _gen = np.random.Generator(np.random.PCG64(_seed))
    return _gen


def seed() -> int:
    return _seed


initial_seed = seed


def generator() -> np.random.Generator:
    return _gen
