"""The modules programs import at the top for tooling, not computing: `typing`, `__future__`, `warnings`, `sys`,
`json`, `tqdm` (and `tqdm.auto`, `tqdm.notebook`, `trange`), `argparse`.

Each does what a program's stdout shows of it and nothing of the server: typing's names are annotations (the
interpreter does not evaluate annotations; a subscript such as `List[int]` builds a printable hint), warnings are
Python's stderr (not the program's output), `sys` has this run's argv and streams (sys.stdout.write prints,
sys.stderr is stderr) and no path into the server, json reads and writes text within the run's budgets, and a tqdm
bar iterates what it wraps (its bar goes to stderr, so stdout is the program's own; `tqdm.write` prints).
"""
from __future__ import annotations

import json
import sys

from .errors import ProgramError, limit_error
from .objects import Builtin, BuiltinClass, BuiltinType, ModuleProxy

TYPING_NAMES = ("Any", "Callable", "ClassVar", "Dict", "Final", "FrozenSet", "Generator", "Iterable", "Iterator",
                "List", "Literal", "Mapping", "MutableMapping", "NoReturn", "Optional", "Sequence", "Set", "Tuple",
                "Type", "Union", "Annotated", "DefaultDict", "Deque", "Counter", "OrderedDict", "Hashable", "Sized",
                "Collection", "Container", "Awaitable", "Coroutine", "AsyncIterator", "Self", "TypeAlias", "Never",
                "SupportsInt", "SupportsFloat", "Protocol", "Generic")
FUTURE_FEATURES = ("annotations", "division", "print_function", "absolute_import", "generator_stop", "unicode_literals",
                   "nested_scopes", "generators", "with_statement")
JSON_MAX_DEPTH = 100  # containers inside containers json.dumps walks (Python's own stops at its recursion limit)


class JSONDecodeError(ValueError):
    """json.loads's error as a program sees it: a ValueError named JSONDecodeError, re-made from its message alone (the
    sandbox re-makes caught engine exceptions from their arguments; json's own takes three)."""


JSONDecodeError.__module__ = "json.decoder"


class TypeHint:
    """A typing name (`typing.List`) or its subscript (`typing.List[int]`): printable, subscriptable, nothing else."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __getitem__(self, args):
        items = args if type(args) is tuple else (args,)
        return TypeHint(f"{self.text}[{', '.join(_hint_text(a) for a in items)}]")

    def __repr__(self):
        return self.text

    __str__ = __repr__


def _hint_text(x) -> str:
    if type(x) is TypeHint:
        return x.text
    if type(x) is list:
        return "[" + ", ".join(_hint_text(a) for a in x) + "]"
    if x is Ellipsis:
        return "..."
    if x is None:
        return "NoneType"
    if type(x) is str:
        return repr(x)  # a forward reference: ForwardRef('Node') in CPython; its name is what a program reads
    name = getattr(x, "name", None) or getattr(x, "__name__", None)
    return name if type(name) is str else type(x).__name__


class StdStream:
    """`sys.stdout` / `sys.stderr`: write() prints (stdout) or is dropped like Python's stderr is from the answer."""

    __slots__ = ("interp", "to_stdout", "name")

    def __init__(self, interp, to_stdout: bool):
        self.interp = interp
        self.to_stdout = to_stdout
        self.name = "<stdout>" if to_stdout else "<stderr>"

    def write(self, s):
        if type(s) is not str:
            raise TypeError(f"write() argument must be str, not {self.interp.type_name(s)}")
        if self.to_stdout:
            self.interp.emit(s)
        return len(s)

    def flush(self):
        return None

    def __repr__(self):
        return f"<_io.TextIOWrapper name='{self.name}' mode='w' encoding='utf-8'>"


class ProgressBar:
    """What `tqdm(iterable)` returns: it iterates `iterable` (counting `n`); its bar and postfix would go to stderr."""

    __slots__ = ("interp", "iterable", "total", "n", "desc", "disable", "postfix", "closed")

    def __init__(self, interp, iterable, total, desc, disable):
        self.interp = interp
        self.iterable = iterable
        self.total = total
        self.n = 0
        self.desc = desc or ""
        self.disable = bool(disable)
        self.postfix = None
        self.closed = False

    def __iter__(self):
        if self.iterable is None:
            raise TypeError("'NoneType' object is not iterable")
        for x in self.interp.iterate(self.iterable):
            self.n += 1
            yield x

    def __len__(self):
        if self.total is not None:
            return int(self.total)
        return self.interp.builtins["len"].fn(self.iterable)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.closed = True
        return False

    def update(self, n=1):
        if not isinstance(n, (int, float)):
            raise TypeError(f"unsupported operand type(s) for +=: 'int' and '{self.interp.type_name(n)}'")
        self.n += n
        return True

    def set_description(self, desc=None, refresh=True):
        self.desc = "" if desc is None else self.interp.to_str(desc)[:1000]

    set_description_str = set_description

    def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
        self.interp.check_data(ordered_dict, kwargs)
        self.postfix = None  # (shown on the bar, in stderr: nothing a program reads back)

    def set_postfix_str(self, s="", refresh=True):
        self.postfix = None

    def close(self):
        self.closed = True

    def refresh(self, nolock=False, lock_args=None):
        return None

    def clear(self, nolock=False):
        return None

    def reset(self, total=None):
        self.n = 0
        if total is not None:
            self.total = total

    def __repr__(self):
        total = "?" if self.total is None else self.total
        return f"{self.desc + ': ' if self.desc else ''}{self.n}/{total}"


_BAR_METHODS = ("update", "set_description", "set_description_str", "set_postfix", "set_postfix_str", "close",
                "refresh", "clear", "reset")


def _method(name):
    return lambda interp, obj: getattr(obj, name)


# attribute rules (sandbox/attributes.py): names a program reads, and the methods handed out as builtins
ATTRIBUTE_RULES = {
    ProgressBar: (("n", "total", "desc", "disable", *_BAR_METHODS), {name: _method(name) for name in _BAR_METHODS}),
    # (ArgumentParser is defined below: its rule is added there)
    StdStream: (("write", "flush", "name"), {"write": _method("write"), "flush": _method("flush")}),
    SystemExit: (("args", "code"), {}),  # sys.exit(status): `except SystemExit as e: e.code`
}
REPR_TYPES = (TypeHint, ProgressBar, StdStream)  # printed with their own repr (sandbox/formatting.py)
CONTEXT_TYPES = (ProgressBar,)  # `with tqdm(total=n) as bar:` (entering and leaving it runs no program code)


def typing_module(interp) -> ModuleProxy:
    attrs = {name: TypeHint(f"typing.{name}") for name in TYPING_NAMES}

    def type_var(name, *constraints, bound=None, covariant=False, contravariant=False):
        if type(name) is not str:
            raise TypeError("TypeVar name must be a string")
        return TypeHint("~" + name[:200])

    attrs.update({"TYPE_CHECKING": False, "TypeVar": Builtin("TypeVar", type_var, interp),
                  "cast": Builtin("cast", lambda typ, val: val, interp),
                  "overload": Builtin("overload", lambda f: f, interp),
                  "final": Builtin("final", lambda f: f, interp),
                  "no_type_check": Builtin("no_type_check", lambda f: f, interp)})
    return ModuleProxy("typing", attrs)


def future_module(interp) -> ModuleProxy:
    return ModuleProxy("__future__", {name: TypeHint(f"_Feature({name})") for name in FUTURE_FEATURES})


def warnings_module(interp) -> ModuleProxy:
    """Warnings are printed to stderr, which is not the program's output: filtering or issuing one changes no answer."""
    def warn(message, category=None, stacklevel=1, source=None, **kwargs):
        interp.check_data(message)

    def ignore(*args, **kwargs):
        interp.check_data(args, kwargs)

    return ModuleProxy("warnings", {"warn": Builtin("warn", warn, interp),
                                    "filterwarnings": Builtin("filterwarnings", ignore, interp),
                                    "simplefilter": Builtin("simplefilter", ignore, interp),
                                    "resetwarnings": Builtin("resetwarnings", ignore, interp)})


def exit_message(interp, status) -> str:
    """A SystemExit's status in words: a number is the process's exit status, anything else is what Python prints."""
    if status is None or type(status) in (int, bool):
        return f"the program exited (sys.exit / SystemExit) with status {int(status or 0)}"
    return interp.scrub_message(interp.to_str(status)[:1000])


def exit_function(interp, name: str) -> Builtin:
    """`sys.exit(status)`, `exit()`, `quit()`: raise the program's SystemExit, which `except Exception` does not catch
    and `finally` blocks see; uncaught, it ends the run as an error on its line (its message the status, as
    Python's str of it), so the page says why the program stopped: whatever the status, as a raised SystemExit."""
    def program_exit(status=None, /):
        message = "" if status is None else interp.to_str(status)[:1000]
        pe = ProgramError("SystemExit", interp.scrub_message(message))
        pe.value = SystemExit(status)
        raise pe

    return Builtin(name, program_exit, interp)


def sys_module(interp) -> ModuleProxy:
    """This run's `sys`: argv as `python program.py` gives it, its streams, a recursion limit it reports, exit."""
    stdout, stderr = StdStream(interp, True), StdStream(interp, False)

    def set_recursion_limit(n):
        if type(n) is not int:
            raise TypeError(f"'{interp.type_name(n)}' object cannot be interpreted as an integer")
        if n < 1:
            raise ValueError("recursion limit must be greater or equal than 1")

    return ModuleProxy("sys", {
        "argv": ["program.py"], "version": sys.version, "platform": "linux", "maxsize": sys.maxsize,
        "byteorder": sys.byteorder, "path": ["/program"], "stdout": stdout, "stderr": stderr,
        "exit": exit_function(interp, "exit"),
        "getrecursionlimit": Builtin("getrecursionlimit", lambda: 1000, interp),
        "setrecursionlimit": Builtin("setrecursionlimit", set_recursion_limit, interp)})


def json_module(interp) -> ModuleProxy:
    """json.dumps / json.loads of numbers, strings, lists, dicts, True/False/None (tensors and arrays are refused
    with Python's TypeError, as json refuses them); the text is counted as any string the run makes."""
    def plain(x, depth):
        t = type(x)
        if t in (str, int, float, bool) or x is None:
            return
        if depth > JSON_MAX_DEPTH:
            raise RecursionError("maximum recursion depth exceeded while encoding a JSON object")
        if t is list or t is tuple:
            interp.alloc(len(x), "json")
            for v in x:
                plain(v, depth + 1)
            return
        if t is dict:
            interp.alloc(2 * len(x), "json")
            for k, v in x.items():
                if type(k) not in (str, int, float, bool) and k is not None:
                    raise TypeError(f"keys must be str, int, float, bool or None, not {interp.type_name(k)}")
                plain(v, depth + 1)
            return
        raise TypeError(f"Object of type {interp.type_name(x)} is not JSON serializable")

    def dumps(obj, *, skipkeys=False, ensure_ascii=True, allow_nan=True, indent=None, separators=None,
              sort_keys=False, **kwargs):
        if kwargs:
            raise TypeError(f"json.dumps() got an unexpected keyword argument '{next(iter(kwargs))}' "
                            "(default= and cls= run program code: not available in flowgrad)")
        if indent is not None and not (type(indent) is int and 0 <= indent <= 16 or type(indent) is str
                                       and len(indent) <= 16):
            raise TypeError("json.dumps(indent=...) takes an int from 0 to 16 or a short string in flowgrad")
        plain(obj, 0)
        text = json.dumps(obj, skipkeys=skipkeys, ensure_ascii=ensure_ascii, allow_nan=allow_nan, indent=indent,
                          separators=separators, sort_keys=sort_keys)
        interp.alloc(len(text), "string")
        return text

    def loads(s, **kwargs):
        if kwargs:
            raise TypeError(f"json.loads() got an unexpected keyword argument '{next(iter(kwargs))}' "
                            "(hooks run program code: not available in flowgrad)")
        if type(s) is not str:
            raise TypeError(f"the JSON object must be str, bytes or bytearray, not {interp.type_name(s)}")
        interp.alloc(len(s), "json")
        try:
            return json.loads(s)
        except json.JSONDecodeError as e:
            raise JSONDecodeError(str(e)) from None

    # `except json.JSONDecodeError` (a ValueError) catches it as itself, and `type(e)` is it (sandbox/backend.py)
    decode_error = interp.B.exception_types[JSONDecodeError]
    return ModuleProxy("json", {"dumps": Builtin("dumps", dumps, interp), "loads": Builtin("loads", loads, interp),
                                "JSONDecodeError": decode_error})


def tqdm_module(interp, name="tqdm") -> ModuleProxy:
    def tqdm(iterable=None, desc=None, total=None, leave=True, file=None, ncols=None, mininterval=0.1,
             maxinterval=10.0, miniters=None, ascii=None, disable=False, unit="it", unit_scale=False,  # noqa: A002
             dynamic_ncols=False, smoothing=0.3, bar_format=None, initial=0, position=None, postfix=None,
             unit_divisor=1000, colour=None, delay=0, **kwargs):
        if total is None and iterable is not None and hasattr(iterable, "__len__") \
                and type(iterable) not in (ProgressBar,):
            try:
                total = interp.builtins["len"].fn(iterable)
            except TypeError:
                total = None
        return ProgressBar(interp, iterable, total, None if desc is None else interp.to_str(desc)[:1000], disable)

    def trange(*args, **kwargs):
        return tqdm(interp.builtins["range"].fn(*args), **kwargs)

    def write(s, file=None, end="\n", nolock=False):
        if type(end) is not str:
            raise TypeError(f"end must be None or a string, not {interp.type_name(end)}")
        text = interp.to_str(s) + end
        if file is None or (type(file) is StdStream and file.to_stdout):  # (tqdm.write goes to sys.stdout)
            interp.emit(text)
        elif type(file) is not StdStream:
            raise TypeError("tqdm.write(file=...) takes sys.stdout or sys.stderr in flowgrad")

    # tqdm is a class: isinstance(bar, tqdm), and its class function tqdm.write
    bar = BuiltinClass("tqdm.std.tqdm", ProgressBar, tqdm, interp, {"write": Builtin("write", write, interp)})
    attrs = {"tqdm": bar, "trange": Builtin("trange", trange, interp)}
    return ModuleProxy(name, attrs)


# ---------------------------------------------------------------- argparse
ARG_ACTIONS = ("store", "store_true", "store_false", "store_const", "append", "count")
MAX_ARGUMENTS = 1000  # add_argument calls a parser keeps


class ArgumentParser:
    """`argparse.ArgumentParser`: the arguments a script declares, parsed from `parse_args(list)` or from this run's
    command line, which is empty (`python program.py`): every option takes its default. Help and usage text go to
    stderr in Python; an argument error is an error on the program's line here (Python would exit with status 2)."""

    __slots__ = ("interp", "specs", "defaults", "description")

    def __init__(self, interp, description=None):
        self.interp = interp
        self.specs: list[dict] = []
        self.defaults: dict = {}
        self.description = description

    def add_argument(self, *names, action="store", type=None, default=None, help=None, metavar=None,  # noqa: A002
                     choices=None, required=None, nargs=None, dest=None, const=None):
        interp = self.interp
        if len(self.specs) >= MAX_ARGUMENTS:
            raise limit_error(f"more than {MAX_ARGUMENTS:,} arguments", None, MAX_ARGUMENTS)
        if not names or not all(isinstance(n, str) for n in names):
            raise TypeError("add_argument() takes the argument's names as strings")
        if action not in ARG_ACTIONS:
            raise ValueError(f"unknown action {action!r} (flowgrad's argparse takes {', '.join(ARG_ACTIONS)})")
        optional = names[0].startswith("-")
        if dest is None:
            long = next((n for n in names if n.startswith("--")), names[0])
            dest = long.lstrip("-").replace("-", "_")
        if action == "store_true":
            default = False if default is None else default
        elif action == "store_false":
            default = True if default is None else default
        interp.check_data(default, choices)
        spec = {"names": names, "dest": dest, "action": action, "type": type, "default": default, "choices": choices,
                "required": bool(required) if optional else nargs not in ("?", "*"), "nargs": nargs, "const": const,
                "optional": optional}
        self.specs.append(spec)
        return None

    def __repr__(self):  # Python's, for `python program.py` (never the default repr: it would show a server address)
        return (f"ArgumentParser(prog='program.py', usage=None, description={self.interp.repr_value(self.description)}, "
                "formatter_class=<class 'argparse.HelpFormatter'>, conflict_handler='error', add_help=True)")

    def set_defaults(self, **kwargs):
        self.interp.check_data(kwargs)
        self.defaults.update(kwargs)

    def add_argument_group(self, *args, **kwargs):
        return self

    add_mutually_exclusive_group = add_argument_group

    def _convert(self, spec, text):
        interp, kind = self.interp, spec["type"]
        if kind is None:
            value = text
        elif getattr(kind, "pytype", None) in (int, float, str, bool):
            try:
                value = kind.pytype(text)
            except ValueError:
                raise ValueError(f"argument {'/'.join(spec['names'])}: invalid {kind.pytype.__name__} value: "
                                 f"'{text}'") from None
        else:
            value = interp.call(kind, [text], {})
        if spec["choices"] is not None and value not in interp.take(spec["choices"]):
            raise ValueError(f"argument {'/'.join(spec['names'])}: invalid choice: {value!r}")
        return value

    def parse_args(self, args=None, namespace=None):
        values, rest = self.parse_known_args(args, namespace)
        if rest:
            raise ValueError(f"unrecognized arguments: {' '.join(rest)}")
        return values

    def parse_known_args(self, args=None, namespace=None):
        interp = self.interp
        words = [] if args is None else interp.take(args)
        if any(type(w) is not str for w in words):
            raise TypeError("parse_args() takes a list of strings")
        values = {s["dest"]: s["default"] for s in self.specs}
        values.update(self.defaults)
        by_name = {n: s for s in self.specs if s["optional"] for n in s["names"]}
        positionals = [s for s in self.specs if not s["optional"]]
        seen, rest, i = set(), [], 0
        while i < len(words):
            word = words[i]
            name, _, inline = word.partition("=") if word.startswith("--") else (word, "", "")
            spec = by_name.get(name) if word.startswith("-") and len(word) > 1 else None
            i += 1
            if spec is None:
                if word.startswith("-") and len(word) > 1:
                    rest.append(word)
                elif positionals:
                    spec = positionals.pop(0)
                    take = len(words) - i + 1 if spec["nargs"] in ("*", "+") else 1
                    found = words[i - 1:i - 1 + take]
                    i += take - 1
                    converted = [self._convert(spec, w) for w in found]
                    values[spec["dest"]] = converted if spec["nargs"] in ("*", "+") else converted[0]
                    seen.add(spec["dest"])
                else:
                    rest.append(word)
                continue
            seen.add(spec["dest"])
            action = spec["action"]
            if action in ("store_true", "store_false"):
                values[spec["dest"]] = action == "store_true"
            elif action == "store_const":
                values[spec["dest"]] = spec["const"]
            elif action == "count":
                values[spec["dest"]] = (values[spec["dest"]] or 0) + 1
            else:
                if inline:
                    found = [inline]
                elif spec["nargs"] in ("*", "+"):
                    found = []
                    while i < len(words) and not words[i].startswith("-"):
                        found.append(words[i])
                        i += 1
                else:
                    if i >= len(words):
                        raise ValueError(f"argument {'/'.join(spec['names'])}: expected one argument")
                    found = [words[i]]
                    i += 1
                converted = [self._convert(spec, w) for w in found]
                value = converted if spec["nargs"] in ("*", "+") else converted[0]
                if action == "append":
                    values[spec["dest"]] = [*(values[spec["dest"]] or []), value]
                else:
                    values[spec["dest"]] = value
        missing = [s for s in self.specs if s["required"] and s["dest"] not in seen]
        if missing:
            raise ValueError("the following arguments are required: " + ", ".join(
                "/".join(s["names"]) if s["optional"] else s["dest"] for s in missing))
        for s in self.specs:  # a string default goes through the argument's type, as argparse does
            if s["dest"] not in seen and type(values[s["dest"]]) is str and s["type"] is not None \
                    and s["action"] == "store":
                values[s["dest"]] = self._convert(s, values[s["dest"]])
        return namespace_of(interp, values), rest


def namespace_of(interp, values: dict):
    """An argparse Namespace: an instance of a class named Namespace, its attributes the parsed values, printed as
    Python prints one (`Namespace(lr=0.1, epochs=3)`)."""
    from .dataclasses_module import DataclassMethod  # (its methods bind as a program's do)
    from .objects import UserClass, UserInstance

    cls = interp.__dict__.get("_argparse_namespace")
    if cls is None:
        cls = UserClass("Namespace", (), interp, interp.B.Module)
        cls.ns["__repr__"] = DataclassMethod("__repr__", lambda self: "Namespace(" + ", ".join(
            f"{k}={interp.repr_value(v)}" for k, v in self.attrs.items()) + ")", interp)
        interp._argparse_namespace = cls
    ns = UserInstance(cls)
    ns.attrs.update(values)
    return ns


def argparse_module(interp) -> ModuleProxy:
    def parser(prog=None, usage=None, description=None, epilog=None, parents=(), formatter_class=None,
               prefix_chars="-", fromfile_prefix_chars=None, argument_default=None, conflict_handler="error",
               add_help=True, allow_abbrev=True, exit_on_error=True):
        return ArgumentParser(interp, description)

    def namespace(**kwargs):
        interp.check_data(kwargs)
        return namespace_of(interp, kwargs)

    return ModuleProxy("argparse", {"ArgumentParser": Builtin("ArgumentParser", parser, interp),
                                    "Namespace": Builtin("Namespace", namespace, interp),
                                    "ArgumentDefaultsHelpFormatter": None, "RawTextHelpFormatter": None})


_PARSER_METHODS = ("add_argument", "parse_args", "parse_known_args", "set_defaults", "add_argument_group",
                   "add_mutually_exclusive_group")
ATTRIBUTE_RULES[ArgumentParser] = (("description", *_PARSER_METHODS), {n: _method(n) for n in _PARSER_METHODS})
REPR_TYPES = (*REPR_TYPES, ArgumentParser)


class NullContext:
    """`contextlib.nullcontext(enter_result=None)`: a `with` that does nothing (nanoGPT's `ctx` on the CPU)."""

    __slots__ = ("enter_result",)

    def __init__(self, enter_result=None):
        self.enter_result = enter_result

    def __enter__(self):
        return self.enter_result

    def __exit__(self, *exc):
        return False


NullContext.__name__ = NullContext.__qualname__ = "nullcontext"  # `<contextlib.nullcontext object at ...>`-like text


def contextlib_module(interp) -> ModuleProxy:
    return ModuleProxy("contextlib", {"nullcontext": BuiltinType("contextlib.nullcontext", NullContext, NullContext,
                                                                 interp)})


ATTRIBUTE_RULES[NullContext] = (("enter_result",), {})
CONTEXT_TYPES = (*CONTEXT_TYPES, NullContext)
