"""Devices as a CPU-only PyTorch build has them: torch.device, torch.cuda, torch.backends.mps, torch.accelerator.

flowgrad computes on the CPU only, exactly like the CPU wheel of torch 2.13: `torch.cuda.is_available()` is
False, a "cpu" device is accepted everywhere, and asking for CUDA raises what that wheel raises, so tutorial
code (`device = "cuda" if torch.cuda.is_available() else "cpu"`) runs unchanged.
"""
from __future__ import annotations

import re
import types

# torch's list, in its order, for the "Expected one of ..." message
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
CUDA_MISSING = "Torch not compiled with CUDA enabled"
NO_ACCELERATOR = "Cannot access accelerator device when none is available."
_DEVICE_STRING = re.compile(r"([a-z]+)(?::(\d+))?")


class device:  # noqa: N801 — torch's name
    """torch.device: a type ('cpu', 'cuda', ...) and an optional index; immutable and hashable."""

    __slots__ = ("_type", "_index")

    def __init__(self, type, index=None):  # noqa: A002 — torch's argument name
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): argument 'type' (position 1) must be str, not torch.device")
            type, index = type._type, type._index
        elif isinstance(type, bool) or not isinstance(type, (str, int)):
            got = _type_name(type)
            raise TypeError(f"device() received an invalid combination of arguments - got ({got}), but expected one "
                            f"of:\n * (torch.device device)\n      didn't match because some of the arguments have "
                            f"invalid types: (!{got}!)\n * (str type, int index = -1)\n")
        elif isinstance(type, int):
            raise RuntimeError(NO_ACCELERATOR)  # a bare index means "the current accelerator"
        else:
            type, index = _parse(type, index)
        self._type = type
        self._index = index

    @property
    def type(self) -> str:
        return self._type

    @property
    def index(self):
        return self._index

    def __repr__(self):
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __str__(self):
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __eq__(self, other):
        # NOTE: torch compares devices only with devices: torch.device("cpu") == "cpu" is False
        if not isinstance(other, device):
            return False
        return self._type == other._type and self._index == other._index

    def __hash__(self):
        return hash((self._type, self._index))

    def __reduce__(self):
        return (device, (self._type, self._index))


def _type_name(value) -> str:
    return type(value).__name__


def _parse(text: str, index):
    if not text:
        raise RuntimeError("Device string must not be empty")
    if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
        raise TypeError(f"device(): argument 'index' (position 2) must be int, not {_type_name(index)}")
    match = _DEVICE_STRING.fullmatch(text)
    if match is None:
        head = re.match(r"[a-z]*", text).group(0)
        if head in DEVICE_TYPES:
            raise RuntimeError(f"Invalid device string: '{text}'")
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: {text}")
    kind, number = match.group(1), match.group(2)
    if kind not in DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: {text}")
    if number is not None:
        if index is not None:
            raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {text}")
        if len(number) > 1 and number[0] == "0":
            raise RuntimeError(f"Invalid device string: '{text}'")
        index = int(number)
    if index is not None and index < 0:
        raise RuntimeError("Device index must not be negative")
    return kind, index


CPU = device("cpu")
_default = CPU  # torch.set_default_device; reset per run by reset_run_state


def resolve(dev, fn: str = "to") -> device:
    """The device a tensor made with `device=dev` lives on: the CPU, or the error CPU-only torch raises."""
    if dev is None:
        dev = _default
    elif not isinstance(dev, device):
        if isinstance(dev, bool) or not isinstance(dev, (str, int)):
            raise TypeError(f"{fn}(): argument 'device' must be torch.device, not {_type_name(dev)}")
        dev = device(dev)
    if dev._type == "cpu":
        return CPU
    if dev._type == "cuda":
        raise AssertionError(CUDA_MISSING)
    raise RuntimeError(f"PyTorch is not linked with support for {dev._type} devices")


def is_device_like(value) -> bool:
    """What `Tensor.to` reads as a device in first position (torch's parser: a device, a string or an int)."""
    return isinstance(value, (device, str)) or (isinstance(value, int) and not isinstance(value, bool))


def set_default_device(dev) -> None:
    """torch.set_default_device: factories without device= use it (None means the CPU again)."""
    global _default
    # torch accepts any device here and fails at the next factory; the same order of errors
    _default = CPU if dev is None else dev if isinstance(dev, device) else device(dev)


def get_default_device() -> device:
    return _default


def reset_default_device() -> None:
    global _default
    _default = CPU


# ---------------------------------------------------------------- torch.cuda, torch.backends, torch.accelerator
def is_available() -> bool:
    return False


def is_built() -> bool:
    return False


def is_initialized() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed) -> None:
    """torch.cuda.manual_seed(_all) without CUDA: checked as an int, then nothing to seed (torch queues it)."""
    int(seed)


manual_seed_all = manual_seed


def current_device():
    raise AssertionError(CUDA_MISSING)


def get_device_name(device=None):
    raise AssertionError(CUDA_MISSING)


def synchronize(device=None):
    raise AssertionError(CUDA_MISSING)


def empty_cache() -> None:
    """Nothing is cached without CUDA."""


def is_bf16_supported(including_emulation=True) -> bool:
    """torch.cuda.is_bf16_supported(): no CUDA, no bfloat16 on it."""
    return False


def current_accelerator(check_available=False):
    return None


def _namespace(name: str, **members) -> types.ModuleType:
    module = types.ModuleType(name)
    for key, value in members.items():
        setattr(module, key, value)
    return module


cuda = _namespace("engine.cuda", is_available=is_available, device_count=device_count, is_initialized=is_initialized,
                  manual_seed=manual_seed, manual_seed_all=manual_seed_all, current_device=current_device,
                  get_device_name=get_device_name, synchronize=synchronize, empty_cache=empty_cache,
                  is_bf16_supported=is_bf16_supported)
backends = _namespace("engine.backends", mps=_namespace("engine.backends.mps", is_available=is_available,
                                                        is_built=is_built),
                      cudnn=_namespace("engine.backends.cudnn", is_available=is_available))
accelerator = _namespace("engine.accelerator", is_available=is_available, device_count=device_count,
                         current_accelerator=current_accelerator)


# ---------------------------------------------------------------- Tensor.to / Module.to arguments
_TO_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None)\n"
)
_TO_KEYWORDS = frozenset({"device", "dtype", "non_blocking", "copy", "memory_format"})


def _arg_type(value, dtype_cls, tensor_cls) -> str:
    if isinstance(value, dtype_cls):
        return "torch.dtype"
    if isinstance(value, device):
        return "torch.device"
    if isinstance(value, tensor_cls):
        return "Tensor"
    return _type_name(value)


def parse_to(args, kwargs, dtype_cls, tensor_cls):
    """(device, dtype, copy) from the arguments of Tensor.to / Module.to, with torch's three signatures:
    (device=None, dtype=None, non_blocking, copy), (dtype, non_blocking, copy), (tensor, non_blocking, copy)."""
    if len(args) > 4:
        raise TypeError(f"to() takes from 0 to 4 positional arguments but {len(args)} were given")

    def invalid():
        got = [_arg_type(a, dtype_cls, tensor_cls) for a in args]
        named = [f"{k}={_arg_type(v, dtype_cls, tensor_cls)}" for k, v in kwargs.items()]
        text = ", ".join(got) + "".join(", " + n for n in named) if got else "".join(n + ", " for n in named)
        return TypeError(f"to() received an invalid combination of arguments - got ({text}), but expected one of:\n"
                         + _TO_SIGNATURES)

    if set(kwargs) - _TO_KEYWORDS:
        raise invalid()
    first = args[0] if args else None
    if isinstance(first, (dtype_cls, tensor_cls)):
        if len(args) > 3 or "device" in kwargs or "dtype" in kwargs:
            raise invalid()
        names = ("non_blocking", "copy")
        dev, dtype = (None, first) if isinstance(first, dtype_cls) else (CPU, first.dtype)
    else:
        names = ("device", "dtype", "non_blocking", "copy")
        dev = dtype = None
    values = dict(zip(names, args[1:] if isinstance(first, (dtype_cls, tensor_cls)) else args))
    if set(values) & set(kwargs):
        raise invalid()
    values.update(kwargs)
    dev = values.get("device", dev)
    dtype = values.get("dtype", dtype)
    if dev is not None and not is_device_like(dev):
        raise invalid()
    if dtype is not None and not isinstance(dtype, dtype_cls):
        raise invalid()
    for flag in ("non_blocking", "copy"):
        if not isinstance(values.get(flag, False), bool):
            raise invalid()
    if dev is not None:
        resolve(dev)  # CPU or torch's error for a device this build does not have
    return dtype, bool(values.get("copy", False))
