"""What a program can reach of the engine: module proxies for torch/nn/F/optim/math and the type table.

Built once per engine module and shared by runs: proxies are read-only to programs (attribute
assignment on them and on engine classes is refused), so nothing one run does is seen by another.
"""

from __future__ import annotations

import importlib
import math
import types

from . import policy
from .objects import ModuleProxy, user_module_class


class Backend:
    def __init__(self, mod):
        self.mod = mod
        self.prefix = mod.__name__ + "."
        self.Tensor = mod.Tensor
        nn = mod.nn
        self.Module = nn.Module
        self.Parameter = getattr(nn, "Parameter", None)
        optim = getattr(mod, "optim", None)
        self.Optimizer = _find_optimizer_base(optim)
        sched = getattr(optim, "lr_scheduler", None) if optim is not None else None
        self.Scheduler = getattr(sched, "LRScheduler", None) or getattr(sched, "_LRScheduler", None)
        self.dtype = getattr(mod, "dtype", None)
        self.Size = getattr(mod, "Size", None)
        autograd = _submodule(mod, "autograd")
        self.node_types = tuple(t for t in (getattr(autograd, "Node", None), getattr(autograd, "AccumulateGrad", None))
                                if isinstance(t, type))
        self.UserModule = user_module_class(self.Module)
        limits = _submodule(mod, "limits")
        self.limited = getattr(limits, "limited", None)
        self.LimitExceeded = getattr(limits, "LimitExceeded", None)
        self.reset_run_state = getattr(mod, "reset_run_state", None)
        self.state = getattr(autograd, "STATE", None)

        F = _submodule(nn, "functional")
        init = _submodule(nn, "init")
        f_proxy = ModuleProxy("torch.nn.functional", _functions(F, self.prefix)) if F is not None else None
        init_proxy = ModuleProxy("torch.nn.init", _functions(init, self.prefix)) if init is not None else None
        nn_attrs = {}
        for name in dir(nn):
            if name.startswith("_"):
                continue
            v = getattr(nn, name)
            if isinstance(v, type) and (issubclass(v, self.Module) or v is self.Parameter):
                nn_attrs[name] = v
        if f_proxy is not None:
            nn_attrs["functional"] = f_proxy
        if init_proxy is not None:
            nn_attrs["init"] = init_proxy
        nn_proxy = ModuleProxy("torch.nn", nn_attrs)

        optim_attrs = {}
        sched_proxy = None
        if optim is not None:
            for name in dir(optim):
                v = getattr(optim, name)
                if (not name.startswith("_") and isinstance(v, type) and self.Optimizer is not None
                        and issubclass(v, self.Optimizer)):
                    optim_attrs[name] = v
            if sched is not None and self.Scheduler is not None:
                sched_attrs = {n: getattr(sched, n) for n in dir(sched) if not n.startswith("_")
                               and isinstance(getattr(sched, n), type) and issubclass(getattr(sched, n), self.Scheduler)}
                sched_proxy = ModuleProxy("torch.optim.lr_scheduler", sched_attrs)
                optim_attrs["lr_scheduler"] = sched_proxy
        optim_proxy = ModuleProxy("torch.optim", optim_attrs)

        autograd_proxy = None
        if autograd is not None:
            autograd_proxy = ModuleProxy("torch.autograd", {n: getattr(autograd, n) for n in policy.AUTOGRAD_NAMES
                                                            if callable(getattr(autograd, n, None))})
        torch_attrs = {}
        for name in policy.TORCH_NAMES:
            if name in policy.TORCH_DENY or name in ("nn", "optim", "autograd"):
                continue
            v = getattr(mod, name, None)
            if v is None or isinstance(v, types.ModuleType):
                continue
            torch_attrs[name] = v
        torch_attrs["nn"] = nn_proxy
        torch_attrs["optim"] = optim_proxy
        if autograd_proxy is not None:
            torch_attrs["autograd"] = autograd_proxy
        torch_proxy = ModuleProxy("torch", torch_attrs)
        math_proxy = ModuleProxy("math", {n: getattr(math, n) for n in policy.MATH_NAMES if hasattr(math, n)})

        self.modules = {"torch": torch_proxy, "torch.nn": nn_proxy, "torch.optim": optim_proxy, "math": math_proxy}
        if f_proxy is not None:
            self.modules["torch.nn.functional"] = f_proxy
        if init_proxy is not None:
            self.modules["torch.nn.init"] = init_proxy
        if autograd_proxy is not None:
            self.modules["torch.autograd"] = autograd_proxy
        if sched_proxy is not None:
            self.modules["torch.optim.lr_scheduler"] = sched_proxy
        self.proxies = frozenset(id(p) for p in self.modules.values())
        # engine classes a program can reach, with the names torch prints for them
        self.class_names = {}
        for mname, proxy in self.modules.items():
            for name, v in proxy.attrs.items():
                if isinstance(v, type) and v not in self.class_names:
                    self.class_names[v] = f"{mname}.{name}"
        if self.Parameter is not None:
            self.class_names[self.Parameter] = "torch.nn.parameter.Parameter"
        # reachable for isinstance(), never called: torch.dtype(name, spec) would hand program text to np.dtype
        self.not_constructible = frozenset(getattr(mod, n) for n in policy.NOT_CONSTRUCTIBLE
                                           if isinstance(getattr(mod, n, None), type))

        bare = {"torch": torch_proxy, "nn": nn_proxy, "optim": optim_proxy, "math": math_proxy}
        if f_proxy is not None:
            bare["F"] = f_proxy
        for name in policy.BARE_TORCH:
            if name in torch_attrs:
                bare[name] = torch_attrs[name]
        for name in policy.BARE_NN:
            if name in nn_attrs:
                bare[name] = nn_attrs[name]
        for name in policy.BARE_OPTIM:
            if name in optim_attrs:
                bare[name] = optim_attrs[name]
        self.bare = bare


def _submodule(mod, name):
    if mod is None:
        return None
    v = getattr(mod, name, None)
    if isinstance(v, types.ModuleType):
        return v
    try:
        return importlib.import_module(f"{mod.__name__}.{name}")
    except ImportError:
        return None


def _find_optimizer_base(optim):
    if optim is None:
        return None
    base = getattr(optim, "Optimizer", None)
    if isinstance(base, type):
        return base
    return None


def _functions(mod, prefix):
    """Public functions (and classes) defined in the engine itself, never imported helpers or modules."""
    out = {}
    for name in dir(mod):
        if name.startswith("_") or name in policy.TORCH_DENY:
            continue
        v = getattr(mod, name)
        if isinstance(v, types.ModuleType):
            continue
        owner = getattr(v, "__module__", None) or ""
        if callable(v) and not isinstance(v, type) and (owner + ".").startswith(prefix):
            out[name] = v
    return out


_CACHE: dict = {}
_FAILED = object()


def load_backend(module_name: str = "engine"):
    """The Backend for the engine (None while the engine cannot be imported)."""
    b = _CACHE.get(module_name)
    if b is not None:
        return None if b is _FAILED else b
    try:
        mod = importlib.import_module(module_name)
        backend = Backend(mod)
    except Exception:  # the engine is missing or incomplete
        return None
    _CACHE[module_name] = backend
    return backend
