"""`logging` as training scripts use it: `basicConfig(level=..., format=..., stream=sys.stdout)`, `getLogger(__name__)`,
`logger.info("epoch %d loss %.4f", epoch, loss)`, handlers to sys.stdout / sys.stderr / the run's files, formatters.

Records go where Python's go: to stderr by default (not the program's output, so a default `logging.info` shows
nothing, as in a terminal run it shows nothing on stdout), to stdout with `stream=sys.stdout` or
`StreamHandler(sys.stdout)`, into a run file with `filename=` / `FileHandler` (readable with open() afterwards).
Messages and formats are formatted by the interpreter's checked `%` / `str.format` (no attribute lookups, bounded
widths); filters, adapters, config dictionaries and custom handler classes are not here.
"""
from __future__ import annotations

import re
import time

from .files import RunFile, open_function
from .objects import Builtin, BuiltinType, ModuleProxy
from .stdlib_tools import StdStream

# Python's Formatter(validate=True): a format needs one field of its style
_PERCENT_FIELD = re.compile(r"%\(\w+\)[#0+ -]*(\*|\d+)?(\.(\*|\d+))?[diouxefgcrsa%]", re.I)
_BRACE_FIELD = re.compile(r"\{[^{}]+\}")
LEVELS = {"CRITICAL": 50, "FATAL": 50, "ERROR": 40, "WARNING": 30, "WARN": 30, "INFO": 20, "DEBUG": 10, "NOTSET": 0}
LEVEL_NAMES = {50: "CRITICAL", 40: "ERROR", 30: "WARNING", 20: "INFO", 10: "DEBUG", 0: "NOTSET"}
BASIC_FORMAT = "%(levelname)s:%(name)s:%(message)s"
MAX_LOGGERS = 1000  # getLogger names a run keeps (each is a small object; a loop of fresh names would grow them)
MAX_HANDLERS = 100  # handlers one logger keeps
MAX_NAME_CHARS = 200  # a logger's name: finding its parent walks its dotted prefixes on every record
START = time.time()  # (relativeCreated counts from the import of logging, as Python's does)


def _level(value) -> int:
    if type(value) is int:
        return value
    if type(value) is str and value in LEVELS:
        return LEVELS[value]
    if type(value) is str:
        raise ValueError(f"Unknown level: {value[:100]!r}")
    raise TypeError(f"Level not an integer or a valid string: {value!r:.100}")


class Formatter:
    """`logging.Formatter(fmt, datefmt, style)`: the record's fields into `fmt` (%-style, or '{' style)."""

    __slots__ = ("fmt", "datefmt", "style")

    def __init__(self, fmt=None, datefmt=None, style="%", validate=True, *, defaults=None):
        if style not in ("%", "{"):
            raise ValueError("Style must be one of: %, { (the '$' style is not available in flowgrad)")
        if fmt is not None and type(fmt) is not str or datefmt is not None and type(datefmt) is not str:
            raise TypeError("fmt and datefmt must be strings")
        self.fmt = fmt if fmt is not None else "%(message)s" if style == "%" else "{message}"
        self.datefmt = datefmt
        self.style = style
        if validate and not (_PERCENT_FIELD if style == "%" else _BRACE_FIELD).search(self.fmt):
            raise ValueError(f"Invalid format '{self.fmt[:200]}' for '{style}' style")  # (Python's check)

    def format(self, interp, record: dict) -> str:
        if ("%(asctime)" if self.style == "%" else "{asctime") in self.fmt:
            created = record["created"]
            if self.datefmt:
                record["asctime"] = time.strftime(self.datefmt[:200], time.localtime(created))
            else:
                record["asctime"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(created)) + \
                    f",{record['msecs']:03.0f}"
        if self.style == "%":
            return interp._percent(self.fmt, record)
        return interp.safe_format(self.fmt, (), record)

    def __repr__(self):
        return "<logging.Formatter object>"


class Handler:
    """A StreamHandler (sys.stdout / sys.stderr / a run file or StringIO), a FileHandler or a NullHandler."""

    __slots__ = ("kind", "stream", "level", "formatter", "terminator", "name")

    def __init__(self, kind, stream, level=0):
        self.kind = kind
        self.stream = stream
        self.level = level
        self.formatter = None
        self.terminator = "\n"
        self.name = None

    def setLevel(self, level):  # noqa: N802 — logging's names
        self.level = _level(level)

    def setFormatter(self, fmt):  # noqa: N802
        if fmt is not None and type(fmt) is not Formatter:
            raise TypeError("setFormatter() takes a logging.Formatter in flowgrad")
        self.formatter = fmt

    def flush(self):
        return None

    def close(self):
        if type(self.stream) is RunFile and self.kind == "FileHandler":
            self.stream.close()

    def emit_record(self, interp, record):
        if self.kind == "NullHandler" or record["levelno"] < self.level:
            return
        try:
            text = (self.formatter or DEFAULT_FORMATTER).format(interp, record) + self.terminator
        except (TypeError, ValueError, KeyError, IndexError):
            return  # Python's handleError: "--- Logging error ---" on stderr, and the program goes on
        self.stream.write(text)  # StdStream: stdout prints, stderr is dropped; RunFile: the run's file budget

    def __repr__(self):
        name = getattr(self.stream, "name", None)  # StreamHandler's: the stream's name, as Python shows it
        shown = f"{name} " if type(name) is str and name else ""
        return f"<{self.kind} {shown}({LEVEL_NAMES.get(self.level, f'Level {self.level}')})>"


DEFAULT_FORMATTER = Formatter()


class Logger:
    """`logging.getLogger(name)`: a level, handlers, `propagate`; its parent is the nearest dotted ancestor."""

    __slots__ = ("interp", "registry", "name", "level", "handlers", "propagate", "disabled")

    def __init__(self, interp, registry, name, level=0):
        self.interp, self.registry = interp, registry
        self.name = name
        self.level = level
        self.handlers: list = []
        self.propagate = True
        self.disabled = False

    @property
    def parent(self):
        if self.name == "root":
            return None
        name = self.name
        while "." in name:
            name = name.rsplit(".", 1)[0]
            if name in self.registry.loggers:
                return self.registry.loggers[name]
        return self.registry.root

    def setLevel(self, level):  # noqa: N802
        self.level = _level(level)

    def getEffectiveLevel(self):  # noqa: N802
        logger = self
        while logger is not None:
            if logger.level:
                return logger.level
            logger = logger.parent
        return 0

    def isEnabledFor(self, level):  # noqa: N802
        return not self.disabled and level > self.registry.disabled_below and level >= self.getEffectiveLevel()

    def addHandler(self, handler):  # noqa: N802
        if type(handler) is not Handler:
            raise TypeError("addHandler() takes a logging handler in flowgrad")
        if handler not in self.handlers:
            if len(self.handlers) >= MAX_HANDLERS:
                raise ValueError(f"a logger keeps at most {MAX_HANDLERS} handlers in flowgrad")
            self.handlers.append(handler)

    def removeHandler(self, handler):  # noqa: N802
        if handler in self.handlers:
            self.handlers.remove(handler)

    def hasHandlers(self):  # noqa: N802
        logger = self
        while logger is not None:
            if logger.handlers:
                return True
            logger = logger.parent if logger.propagate else None
        return False

    def getChild(self, suffix):  # noqa: N802
        return self.registry.get(suffix if self.name == "root" else f"{self.name}.{suffix}")

    def log(self, level, msg, *args, exc_info=None, stack_info=False, stacklevel=1, extra=None):
        level = _level(level) if type(level) is not int else level
        if self.isEnabledFor(level):
            self._emit(level, msg, args)

    def debug(self, msg, *args, **kwargs):
        self.log(10, msg, *args, **kwargs)

    def info(self, msg, *args, **kwargs):
        self.log(20, msg, *args, **kwargs)

    def warning(self, msg, *args, **kwargs):
        self.log(30, msg, *args, **kwargs)

    warn = warning

    def error(self, msg, *args, **kwargs):
        self.log(40, msg, *args, **kwargs)

    exception = error  # (the traceback Python appends is not reproduced: the message alone)

    def critical(self, msg, *args, **kwargs):
        self.log(50, msg, *args, **kwargs)

    fatal = critical

    def _emit(self, level, msg, args):
        interp = self.interp
        if len(args) == 1 and type(args[0]) is dict and args[0]:
            args = args[0]  # logging's rule: one mapping is the %-format's mapping
        try:
            message = interp.to_str(msg) if not args else interp._percent(interp.to_str(msg), args)
        except (TypeError, ValueError, KeyError, IndexError):
            return  # (Python formats in the handler, and reports a bad message on stderr: nothing on stdout)
        now = time.time()
        rec = interp.rec
        record = {"name": self.name, "msg": msg, "message": message, "levelno": level,
                  "levelname": LEVEL_NAMES.get(level, f"Level {level}"), "pathname": "program.py",
                  "filename": "program.py", "module": "program", "lineno": getattr(rec, "line", None) or 0,
                  "funcName": "<module>", "created": now, "msecs": (now - int(now)) * 1000,
                  "relativeCreated": (now - START) * 1000, "thread": 1, "threadName": "MainThread",
                  "process": 1, "processName": "MainProcess"}
        logger = self
        while logger is not None:
            for handler in logger.handlers:
                if type(handler) is Handler:  # (`logger.handlers` is a list the program can append anything to)
                    handler.emit_record(interp, record)
            logger = logger.parent if logger.propagate else None
        # no handler anywhere: Python's last resort writes WARNING and above to stderr (not the program's output)

    def __repr__(self):
        return f"<{'RootLogger' if self.name == 'root' else 'Logger'} {self.name} " \
               f"({LEVEL_NAMES.get(self.getEffectiveLevel(), self.getEffectiveLevel())})>"


class Loggers:
    """The run's logger registry (Python's `logging.Logger.manager`)."""

    def __init__(self, interp):
        self.interp = interp
        self.root = Logger(interp, self, "root", 30)
        self.loggers: dict[str, Logger] = {}
        self.disabled_below = -1  # logging.disable(level): records at or below it are dropped

    def get(self, name=None):
        if name is None or name == "root" or name == "":
            return self.root
        if type(name) is not str:
            raise TypeError("A logger name must be a string")
        if len(name) > MAX_NAME_CHARS:
            raise ValueError(f"a logger name has at most {MAX_NAME_CHARS} characters in flowgrad")
        logger = self.loggers.get(name)
        if logger is None:
            if len(self.loggers) >= MAX_LOGGERS:
                raise ValueError(f"a run makes at most {MAX_LOGGERS:,} loggers in flowgrad")
            self.interp.alloc(len(name) + 16, "logger")
            logger = self.loggers[name] = Logger(self.interp, self, name)
        return logger


_LOGGER_METHODS = ("setLevel", "getEffectiveLevel", "isEnabledFor", "addHandler", "removeHandler", "hasHandlers",
                   "getChild", "log", "debug", "info", "warning", "warn", "error", "exception", "critical", "fatal")
_HANDLER_METHODS = ("setLevel", "setFormatter", "flush", "close")


def _method(name):
    return lambda interp, obj: getattr(obj, name)


# attribute rules (sandbox/attributes.py): (readable names, methods handed out, names a program may assign)
ATTRIBUTE_RULES = {
    Logger: (("name", "level", "handlers", "propagate", "disabled", "parent", *_LOGGER_METHODS),
             {n: _method(n) for n in _LOGGER_METHODS}, ("propagate", "disabled")),
    Handler: (("level", "formatter", "stream", "terminator", "name", *_HANDLER_METHODS),
              {n: _method(n) for n in _HANDLER_METHODS}, ("terminator", "name")),
    Formatter: (("datefmt",), {}, ()),
}
REPR_TYPES = (Logger, Handler, Formatter)


def _unregistered(interp, registry, name, level):
    """`logging.Logger(name)`: a logger getLogger does not return (as Python's), checked as getLogger's names are."""
    if type(name) is not str or len(name) > MAX_NAME_CHARS:
        raise TypeError(f"logging.Logger(name) takes a str of at most {MAX_NAME_CHARS} characters in flowgrad")
    interp.alloc(len(name) + 16, "logger")
    return Logger(interp, registry, name, _level(level))


def logging_module(interp) -> ModuleProxy:
    registry = Loggers(interp)
    root = registry.root

    def stream_handler(stream=None):
        if stream is None:
            stream = StdStream(interp, False)  # (Python's default: sys.stderr)
        if type(stream) not in (StdStream, RunFile):
            raise TypeError("StreamHandler() takes sys.stdout, sys.stderr or an open file in flowgrad")
        return Handler("StreamHandler", stream)

    def file_handler(filename, mode="a", encoding=None, delay=False, errors=None):
        return Handler("FileHandler", open_function(interp)(filename, mode, encoding=encoding, errors=errors))

    def basic_config(*, level=None, format=None, datefmt=None, style="%", stream=None, filename=None,  # noqa: A002
                     filemode="a", handlers=None, force=False, encoding=None, errors=None):
        if force:
            root.handlers.clear()
        if root.handlers:  # Python's rule: basicConfig does nothing once the root logger has a handler
            return
        if handlers is not None and (stream is not None or filename is not None):
            raise ValueError("'stream' or 'filename' should not be specified together with 'handlers'")
        if stream is not None and filename is not None:
            raise ValueError("'stream' and 'filename' should not be specified together")
        if handlers is None:
            handlers = [file_handler(filename, filemode, encoding, errors=errors) if filename is not None
                        else stream_handler(stream)]
        formatter = Formatter(format if format is not None else BASIC_FORMAT if style == "%" else "{levelname}:"
                              "{name}:{message}", datefmt, style)
        for h in interp.take(handlers):
            if h.formatter is None:
                h.setFormatter(formatter)
            root.addHandler(h)
        if level is not None:
            root.setLevel(level)

    def module_level(level):
        def log(msg, *args, **kwargs):
            if not root.handlers:
                basic_config()  # as Python's module-level functions do
            root.log(level, msg, *args, **kwargs)
        return log

    def log(level, msg, *args, **kwargs):
        module_level(_level(level))(msg, *args, **kwargs)

    def disable(level=50):
        registry.disabled_below = _level(level)

    def get_level_name(level):
        if type(level) is int:
            return LEVEL_NAMES.get(level, f"Level {level}")
        return LEVELS.get(level, f"Level {level}")

    fns = {"basicConfig": basic_config, "getLogger": registry.get, "log": log, "disable": disable,
           "getLevelName": get_level_name, "captureWarnings": lambda capture: None, "shutdown": lambda: None,
           **{name.lower(): module_level(LEVELS[name]) for name in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")},
           "warn": module_level(30), "exception": module_level(40), "fatal": module_level(50)}
    attrs = {n: Builtin(n, f, interp) for n, f in fns.items()}
    attrs.update(LEVELS)
    attrs["BASIC_FORMAT"] = BASIC_FORMAT
    attrs["root"] = root
    for name, make in (("StreamHandler", stream_handler), ("FileHandler", file_handler),
                       ("NullHandler", lambda: Handler("NullHandler", None))):
        attrs[name] = BuiltinType(name, Handler, make, interp)
    attrs["Formatter"] = BuiltinType("Formatter", Formatter, Formatter, interp)
    attrs["Logger"] = BuiltinType("Logger", Logger, lambda name, level=0: _unregistered(interp, registry, name, level),
                                  interp)
    return ModuleProxy("logging", attrs)
