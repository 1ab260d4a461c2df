"""What a program can reach of the engine: module proxies for torch/nn/F/optim/math and the type table.

The caller hands the engine package in (`backend_for(engine)`); the sandbox never imports it by
name. A Backend is built once per engine package and shared by runs: proxies are read-only to
programs (attribute assignment on them and on engine classes is refused), so nothing one run does is
seen by another.
"""

from __future__ import annotations

import functools
import importlib
import math
import re
import types

from . import names
from .numpy_module import CLASS_NAMES as NUMPY_CLASS_NAMES
from .objects import Builtin, BuiltinType, ModuleProxy, exception_constructor, user_dataset_class, user_module_class
from .plots import CLASS_NAMES as PLOT_CLASS_NAMES
from .stdlib_tools import JSONDecodeError


class Backend:
    """The engine's classes, hooks and proxies the interpreter uses; every part is required except
    `Scheduler` (an engine without `optim.lr_scheduler` simply has no schedulers) and `utils.data`
    (without it, `Dataset`/`DataLoader`/`UserDataset` are None and `torch.utils` is not importable)."""

    def __init__(self, mod):
        self.mod = mod
        self.prefix = mod.__name__ + "."
        self.Tensor = mod.Tensor
        nn = mod.nn
        self.Module = nn.Module
        self.Parameter = nn.Parameter
        optim = mod.optim
        self.Optimizer = optim.Optimizer
        sched = getattr(optim, "lr_scheduler", None)
        self.Scheduler = getattr(sched, "LRScheduler", None) or getattr(sched, "_LRScheduler", None)
        distributions = _submodule(mod, "distributions")
        self.Distribution = distributions.Distribution
        self.PackedSequence = getattr(getattr(getattr(mod.nn, "utils", None), "rnn", None), "PackedSequence", None)
        data = getattr(getattr(mod, "utils", None), "data", None)
        self.Dataset = getattr(data, "Dataset", None)
        self.DataLoader = getattr(data, "DataLoader", None)
        self.UserDataset = user_dataset_class(self.Dataset) if self.Dataset is not None else None
        self.dtype = mod.dtype
        # torch.FloatTensor, LongTensor...: isinstance asks their metaclass (engine/legacy_tensors.py)
        self.LegacyTensorType = _submodule(mod, "legacy_tensors").LegacyTensorType
        self.Size = mod.Size
        autograd = _submodule(mod, "autograd")
        self.node_types = (autograd.Node, autograd.AccumulateGrad)
        # torch.autograd.Function: programs subclass it (calls.py), `Fn.apply` runs apply_function with their methods
        function = _submodule(mod, "function")
        self.Function = function.Function
        self.FunctionCtx = function.FunctionCtx
        self.apply_function = function.apply_function
        self.node_types += (function.BackwardCFunction,)
        self.RemovableHandle = autograd.RemovableHandle
        self.TypedStorage = getattr(mod, "TypedStorage", None)  # t.storage(): its methods, attributes.py's "storage" rule
        self.storage_place = getattr(_submodule(mod, "storage"), "storage_place", None)  # data_ptr's stand-ins
        self.OptimizedModule = _submodule(mod, "compiled").OptimizedModule  # torch.compile's wrapper (attributes.py)
        self.GradScaler = _submodule(mod, "amp").GradScaler  # its methods: attributes.py's "grad_scaler" rule
        self.state = autograd.STATE
        self.UserModule = user_module_class(self.Module)
        limits = _submodule(mod, "limits")
        self.limited = limits.limited
        # an upper bound on what advanced indexing makes (the numpy gate checks it before indexing an array)
        self.index_result_shape = limits._index_result_shape
        self.LimitExceeded = limits.LimitExceeded
        self.reset_run_state = mod.reset_run_state
        self.fp_warnings_silenced = _submodule(mod, "fp_warnings").silenced  # a run's numpy errstate (interpreter.py)
        self.serialization = _submodule(mod, "serialization")  # what torch.save keeps (sandbox/files.py stores it)
        # grad-mode context managers, also decorators (`@torch.no_grad()`, `@torch.no_grad`)
        # engine exceptions a program catches as themselves (re-made from type and message, never the original)
        linalg_error = _submodule(mod, "linalg").LinAlgError  # torch._C._LinAlgError, a RuntimeError
        self.program_exception_classes = frozenset({_submodule(mod, "gradcheck").GradcheckError, linalg_error,
                                                    JSONDecodeError})  # (json.loads's: stdlib_tools.py)
        self.set_grad_enabled = autograd.set_grad_enabled
        self.grad_mode_types = frozenset(getattr(autograd, n) for n in
                                         ("no_grad", "enable_grad", "inference_mode", "set_grad_enabled"))

        F = _submodule(nn, "functional")
        init = _submodule(nn, "init")
        f_proxy = ModuleProxy("torch.nn.functional", _functions(F, self.prefix, "torch.nn.functional"))
        init_proxy = ModuleProxy("torch.nn.init", _functions(init, self.prefix, "torch.nn.init"))
        nn_attrs = {}
        for name in dir(nn):
            if name.startswith("_"):
                continue
            v = getattr(nn, name)
            if isinstance(v, type) and (issubclass(v, self.Module) or v is self.Parameter):
                nn_attrs[name] = v
        nn_attrs["functional"] = f_proxy
        nn_attrs["init"] = init_proxy
        nn_utils = getattr(nn, "utils", None)
        utils_nn_proxy = None
        if isinstance(nn_utils, types.ModuleType):
            utils_nn_proxy = ModuleProxy("torch.nn.utils", {n: getattr(nn_utils, n) for n in names.NN_UTILS_NAMES
                                                            if hasattr(nn_utils, n)})
            nn_attrs["utils"] = utils_nn_proxy
            rnn_utils = getattr(nn_utils, "rnn", None)  # torch.nn.utils.rnn: padding and packed sequences
            if rnn_utils is not None:
                utils_nn_proxy.attrs["rnn"] = ModuleProxy("torch.nn.utils.rnn", dict(vars(rnn_utils)))
        parameter_module = getattr(nn, "parameter", None)  # torch.nn.parameter: Parameter and the lazy ones
        parameter_proxy = ModuleProxy("torch.nn.parameter", {n: getattr(parameter_module, n) for n in
                                                              names.NN_PARAMETER_NAMES if hasattr(parameter_module, n)})
        nn_attrs["parameter"] = parameter_proxy
        nn_proxy = ModuleProxy("torch.nn", nn_attrs)

        optim_attrs = {name: v for name in dir(optim) if not name.startswith("_")
                       and isinstance(v := getattr(optim, name), type) and issubclass(v, self.Optimizer)}
        sched_proxy = None
        if sched is not None and self.Scheduler is not None:
            sched_attrs = {n: getattr(sched, n) for n in dir(sched) if not n.startswith("_")
                           and isinstance(getattr(sched, n), type) and issubclass(getattr(sched, n), self.Scheduler)}
            sched_proxy = ModuleProxy("torch.optim.lr_scheduler", sched_attrs)
            optim_attrs["lr_scheduler"] = sched_proxy
        optim_proxy = ModuleProxy("torch.optim", optim_attrs)

        autograd_proxy = ModuleProxy("torch.autograd", {n: getattr(autograd, n) for n in names.AUTOGRAD_NAMES
                                                        if callable(getattr(autograd, n, None))})
        torch_attrs = {}
        for name in names.TORCH_NAMES:
            if name in names.TORCH_DENY or name in ("nn", "optim", "autograd", "utils"):
                continue
            v = getattr(mod, name, None)
            if v is None or isinstance(v, types.ModuleType):
                continue
            torch_attrs[name] = v
        torch_attrs.update((n, getattr(mod, n)) for n in names.TORCH_NUMPY_NAMES if hasattr(mod, n))
        if "__version__" in torch_attrs:  # a plain str: the program's str methods and printing take exact strs only
            torch_attrs["__version__"] = str(torch_attrs["__version__"])
        torch_attrs["nn"] = nn_proxy
        torch_attrs["optim"] = optim_proxy
        torch_attrs["autograd"] = autograd_proxy
        dist_proxy = ModuleProxy("torch.distributions", {n: getattr(distributions, n) for n in distributions.__all__})
        torch_attrs["distributions"] = dist_proxy
        # torch.autograd.function: Function and the once_differentiable decorator (its wrapper is a Builtin)
        function_proxy = ModuleProxy("torch.autograd.function", {
            "Function": function.Function,
            "FunctionCtx": function.FunctionCtx,  # (a program names it in annotations and isinstance checks)
            "once_differentiable": Builtin("once_differentiable", lambda f: Builtin(
                getattr(f, "name", "backward"), function.once_differentiable(f)))})
        autograd_proxy.attrs["function"] = function_proxy
        # issue 21: torch.autograd.functional and torch.func (the engine loads them on first use)
        functional_module = _submodule(autograd, "functional")
        autograd_functional_proxy = ModuleProxy("torch.autograd.functional", {
            n: getattr(functional_module, n) for n in names.AUTOGRAD_FUNCTIONAL_NAMES})
        autograd_proxy.attrs["functional"] = autograd_functional_proxy
        func_module = _submodule(mod, "func")
        func_proxy = ModuleProxy("torch.func", {n: getattr(func_module, n) for n in names.FUNC_NAMES})
        torch_attrs["func"] = func_proxy
        linalg = _submodule(mod, "linalg")
        linalg_proxy = ModuleProxy("torch.linalg", {n: getattr(linalg, n) for n in names.LINALG_NAMES})
        # `except torch.linalg.LinAlgError`: a class to catch and raise, printed as PyTorch's, no attributes
        linalg_proxy.attrs["LinAlgError"] = BuiltinType("torch._C._LinAlgError", linalg.LinAlgError,
                                                         exception_constructor(linalg.LinAlgError))
        self.exception_types = {linalg.LinAlgError: linalg_proxy.attrs["LinAlgError"],  # what `type(e)` gives
                                JSONDecodeError: BuiltinType("json.decoder.JSONDecodeError", JSONDecodeError,
                                                             exception_constructor(JSONDecodeError))}
        torch_attrs["linalg"] = linalg_proxy
        special = _submodule(mod, "special")
        special_proxy = ModuleProxy("torch.special", {n: getattr(special, n) for n in names.SPECIAL_NAMES})
        torch_attrs["special"] = special_proxy
        data_proxy = utils_proxy = None
        if data is not None:
            data_proxy = ModuleProxy("torch.utils.data", {n: getattr(data, n) for n in names.DATA_NAMES
                                                          if hasattr(data, n)})
            utils_proxy = ModuleProxy("torch.utils", {"data": data_proxy})
            torch_attrs["utils"] = utils_proxy
        self.modules = {}
        self._device_modules(mod, torch_attrs)
        torch_proxy = ModuleProxy("torch", torch_attrs)
        math_proxy = ModuleProxy("math", {n: getattr(math, n) for n in names.MATH_NAMES if hasattr(math, n)})

        self.modules |= {"torch": torch_proxy, "torch.nn": nn_proxy, "torch.optim": optim_proxy, "math": math_proxy,
                        "torch.nn.functional": f_proxy, "torch.nn.init": init_proxy, "torch.autograd": autograd_proxy}
        self.modules["torch.nn.parameter"] = parameter_proxy
        self.modules["torch.autograd.function"] = function_proxy
        self.modules["torch.autograd.functional"] = autograd_functional_proxy
        self.modules["torch.func"] = func_proxy
        self.modules["torch.distributions"] = dist_proxy
        # `from torch.distributions.normal import Normal`: the submodules programs import from
        for sub, names_in in (("normal", ("Normal",)), ("categorical", ("Categorical",)), ("bernoulli", ("Bernoulli",)),
                              ("uniform", ("Uniform",)), ("kl", ("kl_divergence",))):
            proxy = dist_proxy.attrs[sub] = ModuleProxy(f"torch.distributions.{sub}", {
                n: dist_proxy.attrs[n] for n in names_in})
            self.modules[f"torch.distributions.{sub}"] = proxy
        self.modules["torch.linalg"] = linalg_proxy
        self.modules["torch.special"] = special_proxy
        if sched_proxy is not None:
            self.modules["torch.optim.lr_scheduler"] = sched_proxy
        if utils_nn_proxy is not None:
            self.modules["torch.nn.utils"] = utils_nn_proxy
            if "rnn" in utils_nn_proxy.attrs:
                self.modules["torch.nn.utils.rnn"] = utils_nn_proxy.attrs["rnn"]
        if data_proxy is not None:
            self.modules["torch.utils"] = utils_proxy
            self.modules["torch.utils.data"] = data_proxy
            for sub, in_sub in names.DATA_SUBMODULES.items():
                proxy = data_proxy.attrs[sub] = ModuleProxy(f"torch.utils.data.{sub}", {
                    n: data_proxy.attrs[n] for n in in_sub.split() if n in data_proxy.attrs})
                self.modules[f"torch.utils.data.{sub}"] = proxy
        # engine classes a program can reach, with the names torch prints for them
        self.class_names = {}
        for mname, proxy in self.modules.items():
            for name, v in proxy.attrs.items():
                if isinstance(v, type) and v not in self.class_names:
                    # where torch defines it when the engine says so (torch.utils.data.dataloader.DataLoader)
                    where = v.__module__ if v.__module__.startswith("torch.") else mname
                    self.class_names[v] = f"{where}.{name}"
        for name, where in names.NN_CLASS_MODULES.items():
            if isinstance(nn_attrs.get(name), type):
                self.class_names[nn_attrs[name]] = f"{where}.{name}"
        for (path, name), shown in names.AMP_CLASS_NAMES.items():
            cls = self.modules.get(f"torch.{path}", ModuleProxy("", {})).attrs.get(name)
            if isinstance(cls, type):
                self.class_names[cls] = shown
        for name in names.NN_PARAMETER_NAMES:
            if isinstance(parameter_proxy.attrs.get(name), type):
                self.class_names[parameter_proxy.attrs[name]] = f"torch.nn.parameter.{name}"
        self.class_names[self.FunctionCtx] = "torch.autograd.function.FunctionCtx"
        self.class_names[self.RemovableHandle] = "torch.utils.hooks.RemovableHandle"
        self.class_names[self.Function] = "torch.autograd.function.Function"
        for name in ("Normal", "Categorical", "Bernoulli", "Uniform", "Distribution"):  # where torch defines them
            self.class_names[getattr(distributions, name)] = f"torch.distributions.{name.lower()}.{name}"
        self.class_names.update(NUMPY_CLASS_NAMES)  # numpy.ndarray, numpy.float64, ...
        self.class_names.update(PLOT_CLASS_NAMES)  # matplotlib.figure.Figure, ...
        for name, shown in names.TORCH_CLASS_NAMES.items():
            cls = getattr(mod, name, None)
            if isinstance(cls, type):
                self.class_names[cls] = shown
        # engine module paths (`engine.autograd.no_grad`) as torch names, in text the engine or Python built
        self._torch_names = {f"{c.__module__}.{c.__qualname__}": shown for c, shown in self.class_names.items()}
        self._engine_path = re.compile(r"(?<=<class ')" + re.escape(self.prefix) + r"[\w.]+|(?<=<)" +
                                       re.escape(self.prefix) + r"[\w.]+(?= object)")
        # reachable for isinstance(), never called: torch.dtype(name, spec) would hand program text to np.dtype
        self.not_constructible = frozenset(getattr(mod, n) for n in names.NOT_CONSTRUCTIBLE
                                           if isinstance(getattr(mod, n, None), type))
        # torch.Generator: constructible (the interpreter charges each one's MT19937 state), methods in attributes.py
        gen = getattr(mod, "Generator", None)
        self.Generator = gen if isinstance(gen, type) else None

        bare = {"torch": torch_proxy, "nn": nn_proxy, "optim": optim_proxy, "math": math_proxy, "F": f_proxy}
        for table, attrs in ((names.BARE_TORCH, torch_attrs), (names.BARE_NN, nn_attrs), (names.BARE_OPTIM, optim_attrs)):
            bare.update((name, attrs[name]) for name in table if name in attrs)
        self.bare = bare

    def _device_modules(self, mod, torch_attrs):
        """torch.cuda, torch.backends.mps, ...: proxies of the engine's namespaces (names.DEVICE_MODULES), also
        importable (`import torch.backends.mps`); torch.device instances get the "device" attribute rule."""
        device = getattr(mod, "device", None)
        self.device = device if isinstance(device, type) else None
        parents: dict[str, dict] = {}
        for path, allowed in sorted(names.DEVICE_MODULES.items()):
            ns = mod
            for part in path.split("."):
                ns = getattr(ns, part, None)
            if ns is None:
                continue
            proxy = ModuleProxy(f"torch.{path}", {n: getattr(ns, n) for n in allowed if callable(getattr(ns, n, None))})
            self.modules[f"torch.{path}"] = proxy
            head, _, tail = path.rpartition(".")
            parents.setdefault(head, {})[tail] = proxy
        for head, children in parents.items():
            if head in torch_attrs:  # torch.cuda has names of its own and the submodule torch.cuda.amp
                torch_attrs[head].attrs.update(children)
            elif head:
                proxy = ModuleProxy(f"torch.{head}", children)
                self.modules[f"torch.{head}"] = proxy
                torch_attrs[head] = proxy
            else:
                torch_attrs.update(children)

    def display_name(self, cls) -> str:
        """A class as PyTorch names it: torch's qualified name for an engine class (never the engine's
        module path), the bare name for Python's own (`map`, `generator`) and anything else."""
        shown = self.class_names.get(cls)
        if shown is not None:
            return shown
        if cls is self.UserModule:
            return "torch.nn.modules.module.Module"
        if cls.__module__.startswith("torch."):  # engine classes that carry torch's module (utils.data, schedulers)
            return f"{cls.__module__}.{cls.__qualname__}"
        return cls.__qualname__ if "<" not in cls.__qualname__ else cls.__name__

    def torch_names_in(self, text: str) -> str:
        """`<class 'engine.nn.modules.Linear'>`, `<engine.autograd.no_grad object at …>` with torch's names."""
        if self.prefix not in text:
            return text
        return self._engine_path.sub(lambda m: self._torch_names.get(m.group(0)) or m.group(0).rsplit(".", 1)[-1],
                                     text)


def _submodule(mod, name):
    """A submodule of the engine package handed in (`engine.limits` is not imported by `import engine`)."""
    v = getattr(mod, name, None)
    if isinstance(v, types.ModuleType):
        return v
    return importlib.import_module(f"{mod.__name__}.{name}")


def _functions(mod, prefix, shown_as):
    """Public functions (and classes) defined in the engine itself, never imported helpers or modules."""
    out = {}
    deny = names.TORCH_DENY | names.SUBMODULE_DENY.get(shown_as, frozenset())
    for name in dir(mod):
        if name.startswith("_") or name in deny:
            continue
        v = getattr(mod, name)
        if isinstance(v, types.ModuleType):
            continue
        owner = getattr(v, "__module__", None) or ""
        if callable(v) and not isinstance(v, type) and (owner + ".").startswith(prefix):
            out[name] = v
    return out


@functools.cache
def backend_for(engine_module) -> Backend:
    """The Backend of an engine package, built on first use (a few ms) and shared by every later run."""
    return Backend(engine_module)
