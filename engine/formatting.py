"""PyTorch's tensor printing (torch/_tensor_str.py, torch 2.x defaults) re-done in numpy.

Students compare our output with what PyTorch prints, so this mirrors torch's rules
character for character: int/fixed/scientific mode, precision, linewidth, summarisation above `threshold`
elements with `edgeitems`, and the suffix wrapping; `set_printoptions` changes them as in torch.
Complex, sparse, quantized and device suffixes are out of scope.
"""

from __future__ import annotations

import math

import numpy as np

from .grad_mode import STATE
from .limits import LimitExceeded


class PrintOptions:
    """torch's PRINT_OPTS: one per process, reset at the start of every run (engine.reset_run_state)."""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self):
        self.reset()

    def reset(self):
        self.precision, self.threshold, self.edgeitems, self.linewidth, self.sci_mode = 4, 1000, 3, 80, None


OPTS = PrintOptions()
PREFIX = "tensor("
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """torch.set_printoptions: a profile first, then the options given; sci_mode is always set (None: automatic)."""
    for name, value in (("precision", precision), ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"set_printoptions(): {name} must be an int, not {type(value).__name__}")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
        raise TypeError(f"set_printoptions(): threshold must be a number, not {type(threshold).__name__}")
    if sci_mode is not None and not isinstance(sci_mode, bool):
        raise TypeError(f"set_printoptions(): sci_mode must be a bool or None, not {type(sci_mode).__name__}")
    if precision is not None and not 0 <= precision <= MAX_PRECISION:
        # NOTE: Python formats any precision, but 10**6 digits per number is a denial of service, not a printout
        raise ValueError(f"set_printoptions(): precision must be between 0 and {MAX_PRECISION} in flowgrad")
    if edgeitems is not None and edgeitems < 0:
        raise ValueError("set_printoptions(): edgeitems must be non-negative")
    if isinstance(profile, str) and profile in _PROFILES:  # torch ignores any other profile
        OPTS.precision, OPTS.threshold, OPTS.edgeitems, OPTS.linewidth = _PROFILES[profile]
    if precision is not None:
        OPTS.precision = precision
    if threshold is not None:
        OPTS.threshold = threshold
    if edgeitems is not None:
        OPTS.edgeitems = edgeitems
    if linewidth is not None:
        OPTS.linewidth = linewidth
    OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    return {name: getattr(OPTS, name) for name in PrintOptions.__slots__}


def reset_printoptions() -> None:
    OPTS.reset()


MAX_PRECISION = 100


class _Formatter:
    """Picks one number style and column width for a whole tensor (torch's _Formatter). The width is the
    longest text of any value; only the extreme values can be longest, so only they are formatted (a number's
    text grows with its magnitude, its sign and, in scientific mode, its exponent's digits)."""

    def __init__(self, data: np.ndarray):
        self.floating = data.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        self.precision = OPTS.precision
        values = data.reshape(-1)
        if not self.floating:
            if values.size:
                self.max_width = max(len(str(v)) for v in (values.min().item(), values.max().item()))
            return
        # torch does its range checks in float64 so float16/float32 cannot overflow
        finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
        if finite.size == 0:
            return
        absval = np.abs(finite)
        lo, hi = absval.min(), absval.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if OPTS.sci_mode is None:
            self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        else:
            self.sci_mode = OPTS.sci_mode
        extremes = [finite.min(), finite.max()]
        if self.sci_mode:  # the values nearest zero have the longest negative exponents
            positive, negative = finite[finite > 0], finite[finite < 0]
            extremes += [positive.min()] if positive.size else []
            extremes += [negative.max()] if negative.size else []
            widths = [len(f"{v:.{self.precision}e}") for v in map(float, extremes)]
        elif self.int_mode:
            # +1 for the trailing "." that marks a float tensor
            widths = [len(f"{v:.0f}") + 1 for v in map(float, extremes)]
        else:
            widths = [len(f"{v:.{self.precision}f}") for v in map(float, extremes)]
        self.max_width = max(self.max_width, *widths)

    def text_bound(self, shape, shown: int, indent: int) -> int:
        """At most how many characters `_nested_str` makes for `shown` values of a tensor of `shape`: each
        value padded to the column width (`inf`/`nan` may be longer), its separator, and per line the
        indentation, brackets, blank lines between blocks and '...' marks."""
        width = max(self.max_width, 4) + 2
        ndim = max(len(shape), 1)
        row = min(int(shape[-1]), 2 * OPTS.edgeitems + 1) if shape else 1
        rows = shown // max(row, 1) + 1
        per_line = max(1, math.floor((OPTS.linewidth - indent) / (self.max_width + 2)))
        lines = rows * (math.ceil((row + 1) / per_line) + ndim)
        return shown * width + lines * (indent + 2 * ndim + 6)

    def format(self, value) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{self.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{self.precision}f}"
        return text.rjust(self.max_width)


def _summarized(data: np.ndarray, edge: int) -> np.ndarray:
    """Only the elements that will be shown, so '...' parts don't affect the column width."""
    if data.ndim == 0:
        return data
    if edge == 0:
        # torch's quirk kept: a 1-d tensor keeps all its elements (x[-0:] is x), higher dims none
        return data if data.ndim == 1 else data[(slice(0, 0),) * data.ndim]
    index = [np.r_[0:edge, n - edge : n] if n > 2 * edge else np.arange(n) for n in data.shape]
    return data[np.ix_(*index)]


def _vector_str(data: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    edge = OPTS.edgeitems
    elements_per_line = max(1, math.floor((OPTS.linewidth - indent) / (fmt.max_width + 2)))
    if summarize and not edge:
        items = ["..."]
    elif summarize and data.shape[0] > 2 * edge:
        items = (
            [fmt.format(v) for v in data[:edge].tolist()]
            + [" ..."]
            + [fmt.format(v) for v in data[-edge:].tolist()]
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
    n, edge = data.shape[0], OPTS.edgeitems
    if summarize and n > 2 * edge:
        rows = [*range(edge), None, *range(n - edge, n)]
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
    summarize = data.size > OPTS.threshold
    shown = _summarized(data, OPTS.edgeitems) if summarize else data
    fmt = _Formatter(shown)
    limits = STATE.limits
    if limits is not None and limits.max_text_chars is not None:
        bound = fmt.text_bound(data.shape, shown.size, indent)
        if bound > limits.max_text_chars:  # before any value is formatted: precision=100 on 1e300 is 400 each
            raise LimitExceeded(
                f"printing this tensor makes up to {bound:,} characters ({shown.size:,} values of up to "
                f"{fmt.max_width:,} characters); the limit is max_output_bytes x 4 = {limits.max_text_chars:,} "
                "(print fewer values or digits: set_printoptions(threshold=..., precision=...))")
    return _nested_str(data, indent, summarize, fmt)


def _dtype_name(dtype) -> str:
    return np.dtype(str(dtype).removeprefix("torch.")).name


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ', suffix' or wrap it onto a new line, as torch's _add_suffixes."""
    parts = [text]
    # torch's arithmetic, kept as is: it over-counts by 2 when there is no newline
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > OPTS.linewidth:
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
    else:
        if not OPTS.edgeitems:
            suffixes.append(f"size={tuple(data.shape)}")  # torch's rule: no edge items shown, so the size is
        if dtype not in (default, "int64", "bool"):
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
