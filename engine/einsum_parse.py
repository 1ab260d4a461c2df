"""torch.einsum's equation parsing: subscripts, `...` (ellipsis) and the implicit output, with PyTorch's errors.

`parse(equation, shapes)` returns one subscript string per operand and the output's, with every ellipsis
replaced by letters the equation does not use (right-aligned, so ellipsis dims broadcast as PyTorch's do),
so the contraction (engine/functional.py) only ever sees letters.
"""
from __future__ import annotations

import collections
import string

_LETTERS = string.ascii_uppercase + string.ascii_lowercase  # torch's implicit order: upper case first


def _ellipsis_at(equation, pos, end):
    return equation[pos:pos + 3] == "..." and pos + 3 <= end


def _term(equation, start, end, what):
    """The subscripts of one operand (or of the output) in equation[start:end]: (letters before the ellipsis,
    letters after it or None when there is none)."""
    before, after = [], None
    pos = start
    while pos < end:
        ch = equation[pos]
        if ch == ".":
            if after is not None:
                raise RuntimeError(f"einsum(): found '.' for {what} for which an ellipsis was already found"
                                   if what != "output" else
                                   "einsum(): found '.' for output but an ellipsis (...) was already found")
            if not _ellipsis_at(equation, pos, end):
                raise RuntimeError(f"einsum(): found '.' for {what} that is not part of any ellipsis"
                                   + (" (...)" if what == "output" else ""))
            after = []
            pos += 3
            continue
        if ch != " ":
            if not (ch.isascii() and ch.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {pos} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
            (before if after is None else after).append(ch)
        pos += 1
    return before, after


def parse(equation: str, shapes) -> tuple[list[str], str]:
    """Per-operand subscripts and the output subscripts, ellipses expanded; PyTorch's checks and messages."""
    for pos, ch in enumerate(equation):
        if not (ch.isascii() and ch.isalpha()) and ch not in ",->. ":
            raise RuntimeError(f"einsum(): invalid subscript given at index {pos} in the equation string, subscripts "
                               "must be in [a-zA-Z]")
    arrow = equation.find("->")
    lhs_end = len(equation) if arrow < 0 else arrow
    bounds, start = [], 0
    for pos in range(lhs_end + 1):
        if pos == lhs_end or equation[pos] == ",":
            bounds.append((start, pos))
            start = pos + 1
    if len(bounds) != len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(shapes) > len(bounds) else
                           "einsum(): fewer operands were provided than specified in the equation")
    parts = []
    ell_shape: list = []  # the broadcast ellipsis shape, right-aligned
    for i, ((s, e), shape) in enumerate(zip(bounds, shapes)):
        before, after = _term(equation, s, e, f"operand {i}")
        n = len(before) + len(after or ())
        ndim = len(shape)
        if after is None and n != ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does not match the number "
                               f"of dimensions ({ndim}) for operand {i} and no ellipsis was given")
        if after is not None and n > ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) is more than the number "
                               f"of dimensions ({ndim}) for operand {i}")
        n_ell = ndim - n if after is not None else 0
        ell = shape[len(before):len(before) + n_ell]
        ell_shape = [1] * (n_ell - len(ell_shape)) + ell_shape
        for k in range(n_ell):  # right-aligned against what the other operands' ellipses cover
            j = len(ell_shape) - n_ell + k
            size, seen = ell[k], ell_shape[j]
            if size != seen and size != 1 and seen != 1:
                raise RuntimeError(f"einsum(): dimension {len(before) + k} covered by ellipsis in operand {i}has size "
                                   f"{size} which does not broadcast with previously seen ellipsis with size {seen} "
                                   "for the respective dimension")
            ell_shape[j] = max(size, seen)
        parts.append((before, after, n_ell))
    used = set(equation)
    fresh = [ch for ch in _LETTERS if ch not in used][:len(ell_shape)]
    if len(fresh) < len(ell_shape):
        raise RuntimeError("einsum(): the equation and its ellipsis dimensions need more than 52 subscripts")
    terms = ["".join(b) + ("" if a is None else "".join(fresh[len(fresh) - n:]) + "".join(a)) for b, a, n in parts]
    if arrow < 0:  # implicit output: the ellipsis dims, then the subscripts seen exactly once, in torch's order
        counts = collections.Counter("".join("".join(b) + "".join(a or ()) for b, a, _ in parts))
        return terms, "".join(fresh) + "".join(sorted((ch for ch in counts if counts[ch] == 1), key=_LETTERS.index))
    before, after = _term(equation, arrow + 2, len(equation), "output")
    out = "".join(before) + ("" if after is None else "".join(fresh) + "".join(after))
    return terms, out
