"""torch.amp (autocast, GradScaler) and torch.cuda.amp as a CPU-only PyTorch runs them.

A program written for a GPU keeps its mixed-precision lines: `torch.autocast("cuda")` and a CUDA GradScaler warn and
disable themselves when CUDA is absent (PyTorch's words), so the program runs in float32 as it does under PyTorch on
a laptop. A CPU GradScaler (PyTorch 2.3+) really scales: the loss by 2**16, the gradients back by its reciprocal
(exact, powers of two) with a step skipped on inf / nan and the scale's growth and backoff. CPU autocast (bfloat16
products) is refused: the engine computes in float32 and would print other numbers.
"""
from __future__ import annotations

import functools
import types
import warnings

import numpy as np

from . import creation, dtypes
from .grad_mode import no_grad
from .tensor_core import Tensor

# PyTorch's device types, in the order its message lists them; autocast takes the accelerators among them
_DEVICE_NAMES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
                 "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_DEVICE_TYPES = frozenset(_DEVICE_NAMES)


class autocast:  # noqa: N801 - torch.autocast
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None): a context manager and decorator."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_NAMES)} device type at start of device string: "
                               f"{device_type}")
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None or device_type == "cpu" else dtypes.float16  # (no bfloat16 here)
        self._enabled = bool(enabled)
        if self._enabled and device_type != "cpu":  # no accelerator in a CPU-only build
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", UserWarning,
                          stacklevel=2)
            self._enabled = False

    def __enter__(self):
        if self._enabled:
            raise NotImplementedError(
                "torch.autocast on the CPU (bfloat16 products) is not available in flowgrad: the engine computes in "
                "float32, so the numbers would not be PyTorch's; pass enabled=False to run the program in float32")
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return run


class _CudaAutocast(autocast):
    """torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True), deprecated for
    torch.amp.autocast('cuda', ...)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtypes.float16 if dtype is None else dtype, enabled=enabled,
                         cache_enabled=cache_enabled)


def _scale_tensor(value):
    """A scaler's scale: a float32 tensor of no dimensions (PyTorch's torch.full((), value, dtype=torch.float32))."""
    return creation.full((), value, dtype=dtypes.float32)


class GradScaler:
    """torch.amp.GradScaler(device='cuda', init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)."""

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device != "cpu":
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.", UserWarning,
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale, self._growth_factor, self._backoff_factor = init_scale, growth_factor, backoff_factor
            self._growth_interval = growth_interval
            self._scale = None  # made on the first scale(), as PyTorch's (a float32 tensor of one element)
            self._growth_tracker = 0
            self._per_optimizer: dict[int, dict] = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs):
        """The loss (or a list / tuple of them) times the scale; as it is when disabled."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = _scale_tensor(self._init_scale)
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": "ready", "found_inf": False})

    def unscale_(self, optimizer) -> None:
        """Divide the optimizer's gradients by the scale, in place, noting any inf or nan."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == "unscaled":
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == "stepped":
            raise RuntimeError("unscale_() is being called after step().")
        if self._scale is None:
            raise AssertionError("Attempted unscale_ but _scale is None.  This may indicate your script did not use "
                                 "scaler.scale(loss or outputs) earlier in the iteration.")
        inv_scale = np.float32(1.0 / np.float64(self._scale._data))  # PyTorch: scale.double().reciprocal().float()
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = p.grad._data
                    found = found or not bool(np.isfinite(g).all())
                    p.grad._data = (g * inv_scale).astype(g.dtype, copy=False)
        state["found_inf"] = found
        state["stage"] = "unscaled"

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step() unless an unscaled gradient held an inf or nan (then skipped: None)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] == "stepped":
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == "ready":
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = "stepped"
        return result

    def update(self, new_scale=None) -> None:
        """The scale for the next iteration: backed off after an inf / nan, grown after growth_interval clean steps."""
        if not self._enabled or self._scale is None:
            return
        if new_scale is not None:
            value = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
            self._scale = _scale_tensor(value)
        else:
            if not self._per_optimizer:
                raise AssertionError("No inf checks were recorded prior to update.")
            scale = np.float32(self._scale._data)
            if any(s["found_inf"] for s in self._per_optimizer.values()):
                scale, self._growth_tracker = scale * np.float32(self._backoff_factor), 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    scale, self._growth_tracker = scale * np.float32(self._growth_factor), 0
            self._scale = _scale_tensor(float(scale))
        self._per_optimizer = {}

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return float(self._init_scale) if self._scale is None else float(self._scale._data)

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = _scale_tensor(float(state_dict["scale"]))
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = state_dict["_growth_tracker"]


class _CudaGradScaler(GradScaler):
    """torch.cuda.amp.GradScaler(...), deprecated for torch.amp.GradScaler('cuda', ...)."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


# torch.cuda.amp: the deprecated spellings (engine/surface.py hangs it under torch.cuda)
cuda_amp = types.ModuleType("engine.cuda.amp")
cuda_amp.autocast, cuda_amp.GradScaler = _CudaAutocast, _CudaGradScaler
