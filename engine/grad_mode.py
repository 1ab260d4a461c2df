"""Grad mode and the write log: the process-wide switches every op reads, and PyTorch's version counters.

The bottom of autograd: the nodes, the backward loop and Tensor read STATE; nothing here imports the engine.
"""
from __future__ import annotations

import bisect
import itertools
import warnings
import weakref

import numpy as np


class _State:
    """Process-wide switches, read on every op: grad mode, the active recorder, the active limits, and the run's
    step counter that loops inside the engine over a program's work call (jacobian rows, gradcheck perturbations)."""

    __slots__ = ("grad_enabled", "recorder", "limits", "last_write", "tick", "anomaly", "inference")

    def __init__(self):
        self.grad_enabled = True
        self.anomaly = False  # torch.autograd.set_detect_anomaly: backward checks each node's gradients for nan
        self.inference = False  # inside `with torch.inference_mode():` (torch.is_inference_mode_enabled)
        self.recorder = None
        self.limits = None
        self.last_write = -1  # sequence number of the latest in-place write to an array (see note_write)
        self.tick = None  # the sandbox's step-and-clock check while a program runs; None in-process


STATE = _State()
_seq = itertools.count()
# PyTorch's version counters, kept per numpy array: id -> (weakref to the array, its write log). A log is
# [writes dropped from it, sequence numbers of the later in-place writes...] (sorted). Forward pays nothing;
# backward looks only when a write happened after a node was made.
_WRITES: dict = {}
# NOTE: a training loop writes each parameter once a step, forever: past this many, a log keeps its newer half
# and counts the rest (memory and lookups stay bounded; only a node older than the kept half would get an
# approximate "expected version" in its error, never a missed or a false one).
WRITE_LOG_KEEP = 1024


def note_write(arr):
    """An array (and the array it is a view of) is about to change in place."""
    if type(arr) is not np.ndarray:
        return  # a numpy scalar is never shared: nothing saved it
    seq = STATE.last_write = next(_seq)
    _log_write(arr, seq)
    if arr.base is not None:
        _log_write(arr.base, seq)


def note_writes(arrays):
    """Several arrays changed in place by one step (an optimizer update)."""
    if arrays:
        seq = STATE.last_write = next(_seq)
        for arr in arrays:
            _log_write(arr, seq)
            base = arr.base
            if base is not None:
                _log_write(base, seq)


def _forget(key):
    """A callback that drops an array's write log when the array dies (so its id can be reused)."""
    return lambda _: _WRITES.pop(key, None)


def _log_write(a, seq):
    key = id(a)
    entry = _WRITES.get(key)
    if entry is None or entry[0]() is not a:
        entry = _WRITES[key] = (weakref.ref(a, _forget(key)), [0])
    log = entry[1]
    log.append(seq)
    if len(log) > WRITE_LOG_KEEP:
        _trim(log)


def _trim(log):
    """Keep the newer half of a write log, counting the older half as dropped."""
    half = (len(log) - 1) // 2
    log[0] += half
    del log[1:1 + half]


def carry_writes(old, new):
    """`t.data = x` keeps t's version counter in PyTorch: the new array inherits the old one's writes."""
    entry = _WRITES.get(id(old))
    if entry is not None and entry[0]() is old and type(new) is np.ndarray:
        _WRITES[id(new)] = (weakref.ref(new, _forget(id(new))), list(entry[1]))


# Arrays an in-place op on a tensor that requires grad replaced: id -> (weakref to the old array, weakref to the
# tensor). PyTorch's version error names the tensor's grad_fn as it is now, not as it was when the array was saved.
_REPLACED: dict = {}


def note_replaced(old, tensor):
    """A tensor's in-place op under autograd swapped its array `old` for the op's result."""
    if type(old) is np.ndarray:
        key = id(old)
        _REPLACED[key] = (weakref.ref(old, lambda _: _REPLACED.pop(key, None)), weakref.ref(tensor))


def replaced_by(arr):
    """The tensor whose in-place op replaced `arr`, if it is alive."""
    entry = _REPLACED.get(id(arr))
    return entry[1]() if entry is not None and entry[0]() is arr else None


def _versions(arr, since):
    """(version now, version when a node made at `since` saved it): in-place writes to the array, or to
    the array it is a view of (a weight written by the optimizer makes its saved `W.t()` stale)."""
    log = None
    for a in (arr, arr.base):
        entry = _WRITES.get(id(a)) if a is not None else None
        if entry is not None and entry[0]() is a:
            log = entry[1]  # note_write records a view's writes on its base too: the base's list is complete
    if log is None:
        return 0, 0
    return log[0] + len(log) - 1, log[0] + bisect.bisect_left(log, since, 1) - 1



FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


class _GradMode:
    """Base of no_grad / enable_grad / set_grad_enabled: a context manager and a decorator."""

    _target = True

    def __enter__(self):
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = self._target
        rec = STATE.recorder
        if rec is not None:
            rec.on_grad_mode(self._target)
        return None  # `with torch.no_grad() as a:` binds None in torch

    def __exit__(self, *exc):
        STATE.grad_enabled = self._prev
        rec = STATE.recorder
        if rec is not None:
            rec.on_grad_mode(self._prev)
        return False

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper

    def __repr__(self):  # torch's module path, not the engine's
        return f"<torch.autograd.grad_mode.{type(self).__name__} object at {id(self):#x}>"


class no_grad(_GradMode):  # noqa: N801 — torch's name
    _target = False


class enable_grad(_GradMode):  # noqa: N801
    _target = True


class inference_mode(_GradMode):  # noqa: N801
    def __init__(self, mode: bool = True):
        self._mode = bool(mode)
        self._target = not mode

    def __enter__(self):
        self._prev_inference = STATE.inference
        STATE.inference = self._mode
        return super().__enter__()

    def __exit__(self, *exc):
        STATE.inference = self._prev_inference
        return super().__exit__(*exc)

    def __call__(self, fn):
        mode = self._mode

        def wrapper(*args, **kwargs):
            with inference_mode(mode):  # (the base's `type(self)()` would forget mode=False)
                return fn(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled() -> bool:
    """Whether an inference_mode(True) block is running (one with mode=False inside it turns it off)."""
    return STATE.inference


class set_grad_enabled(_GradMode):  # noqa: N801
    def __init__(self, mode: bool):
        self._target = bool(mode)
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = self._target  # takes effect as a plain call too, as in torch

    def __enter__(self):
        return None  # as torch: the mode was already set by the constructor; `as` binds None

    def __call__(self, fn):
        STATE.grad_enabled = self._prev  # as a decorator it changes nothing until the function runs, as in torch
        mode = self._target

        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper

    def __repr__(self):
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self._target})"


class set_detect_anomaly:  # noqa: N801 — torch's name
    """Anomaly mode on or off: a call switches it, a `with` block switches it back after (as torch's)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = STATE.anomaly
        STATE.anomaly = bool(mode) and bool(check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        STATE.anomaly = self._prev
        return False


class detect_anomaly(set_detect_anomaly):  # noqa: N801
    """`with torch.autograd.detect_anomaly():`: anomaly mode inside the block only."""

    def __init__(self, check_nan: bool = True):
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)
        self._check_nan = check_nan
        self._prev = STATE.anomaly

    def __enter__(self):
        STATE.anomaly = bool(self._check_nan)


def is_anomaly_enabled() -> bool:
    return STATE.anomaly


def is_grad_enabled() -> bool:
    return STATE.grad_enabled
