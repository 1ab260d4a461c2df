"""torch.__version__: the PyTorch release the engine follows, as a str that compares as a version."""
from __future__ import annotations

import re


def _release(v) -> tuple:
    """(2, 13, 0) from '2.13.0', '2.13.0+cpu', '2.13' or (2, 13); trailing zeros dropped so 2.13 == 2.13.0."""
    if isinstance(v, tuple):
        parts = [int(p) for p in v]
    else:
        match = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(v))
        if match is None:
            raise ValueError(f"Invalid version: '{v}'")
        parts = [int(p) for p in match.group(1).split(".")]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


class TorchVersion(str):
    """A str like torch's TorchVersion: `torch.__version__ >= "2.0"` compares release numbers, not text."""

    def _compare(self, other, test):
        if not isinstance(other, (str, tuple)):
            return NotImplemented
        return test(_release(self), _release(other))

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __eq__(self, other):
        return self._compare(other, lambda a, b: a == b)

    def __ne__(self, other):
        result = self._compare(other, lambda a, b: a == b)
        return result if result is NotImplemented else not result

    __hash__ = str.__hash__


__version__ = TorchVersion("2.13.0+cpu")  # what the CPU wheel of that release says
