"""PyTorch's tensor printing (torch/_tensor_str.py, torch 2.x defaults) re-done in numpy.

Students compare our output with what PyTorch prints, so this mirrors torch's rules
character for character: int/fixed/scientific mode, precision 4, linewidth 80,
summarisation above 1000 elements with 3 edge items, and the suffix wrapping.
Complex, sparse, quantized and device suffixes are out of scope.
"""

from __future__ import annotations

import math

import numpy as np

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80
PREFIX = "tensor("


class _Formatter:
    """Picks one number style and column width for a whole tensor (torch's _Formatter)."""

    def __init__(self, data: np.ndarray):
        self.floating = data.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        values = data.reshape(-1)
        if not self.floating:
            self.max_width = max([1] + [len(str(v)) for v in values.tolist()])
            return
        # torch does its range checks in float64 so float16/float32 cannot overflow
        finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
        if finite.size == 0:
            return
        absval = np.abs(finite)
        lo, hi = absval.min(), absval.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        if self.sci_mode:
            widths = [len(f"{v:.{PRECISION}e}") for v in finite.tolist()]
        elif self.int_mode:
            # +1 for the trailing "." that marks a float tensor
            widths = [len(f"{v:.0f}") + 1 for v in finite.tolist()]
        else:
            widths = [len(f"{v:.{PRECISION}f}") for v in finite.tolist()]
        self.max_width = max(self.max_width, *widths)

    def format(self, value) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRECISION}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{PRECISION}f}"
        return text.rjust(self.max_width)


def _summarized(data: np.ndarray) -> np.ndarray:
    """Only the elements that will be shown, so '...' parts don't affect the column width."""
    index = [np.r_[0:EDGEITEMS, n - EDGEITEMS : n] if n > 2 * EDGEITEMS else np.arange(n) for n in data.shape]
    return data[np.ix_(*index)] if data.ndim else data


def _vector_str(data: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    elements_per_line = max(1, (LINEWIDTH - indent) // (fmt.max_width + 2))
    if summarize and data.shape[0] > 2 * EDGEITEMS:
        items = (
            [fmt.format(v) for v in data[:EDGEITEMS].tolist()]
            + [" ..."]
            + [fmt.format(v) for v in data[-EDGEITEMS:].tolist()]
        )
    else:
        items = [fmt.format(v) for v in data.tolist()]
    lines = [", ".join(items[i : i + elements_per_line]) for i in range(0, len(items), elements_per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(data: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if data.ndim == 0:
        return fmt.format(data.item())
    if data.ndim == 1:
        return _vector_str(data, indent, summarize, fmt)
    n = data.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        rows = [*range(EDGEITEMS), None, *range(n - EDGEITEMS, n)]
    else:
        rows = list(range(n))
    slices = ["..." if i is None else _nested_str(data[i], indent + 1, summarize, fmt) for i in rows]
    # one blank line between 2-d blocks, two between 3-d blocks, ...
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def format_array(data, *, indent: int = 0) -> str:
    """The bracketed numbers of a tensor, as torch's _tensor_str; `indent` is the prefix width."""
    data = np.asarray(data)
    if data.size == 0:
        return "[]"
    summarize = data.size > THRESHOLD
    fmt = _Formatter(_summarized(data) if summarize else data)
    return _nested_str(data, indent, summarize, fmt)


def _dtype_name(dtype) -> str:
    return np.dtype(str(dtype).removeprefix("torch.")).name


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ', suffix' or wrap it onto a new line, as torch's _add_suffixes."""
    parts = [text]
    # torch's arithmetic, kept as is: it over-counts by 2 when there is no newline
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    return "".join(parts) + ")"


def format_tensor(
    data: np.ndarray,
    *,
    requires_grad: bool = False,
    grad_fn: str | None = None,
    default_dtype: str = "float32",
) -> str:
    """The text of repr(tensor) / print(tensor) in PyTorch."""
    data = np.asarray(data)
    dtype = data.dtype.name
    default = _dtype_name(default_dtype)
    suffixes = []
    if data.size == 0:
        # nothing to infer the dtype or shape from, so torch spells them out
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if dtype != default:
            suffixes.append(f"dtype=torch.{dtype}")
    elif dtype not in (default, "int64", "bool"):
        suffixes.append(f"dtype=torch.{dtype}")
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    body = format_array(data, indent=len(PREFIX))
    return _add_suffixes(PREFIX + body, suffixes, len(PREFIX))


def format_size(shape) -> str:
    """str(tensor.shape) in PyTorch, e.g. torch.Size([5, 4])."""
    return "torch.Size([" + ", ".join(str(int(n)) for n in shape) + "])"
