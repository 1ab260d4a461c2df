"""A run's files: `torch.save`/`torch.load`, `open()` and `io.BytesIO`/`io.StringIO` on a per-run in-memory store.

A flowgrad program has no disk. The names it writes (with `open(name, 'w')` or `torch.save(obj, name)`) live in
this run's `RunFiles` and nowhere else, bounded by `SandboxLimits.max_file_bytes` (all files together, with
what `torch.save` copied) and `max_files`, and are gone when the run ends. Any other name is Python's
FileNotFoundError, saying so. `torch.save` keeps an `engine.serialization` snapshot (tensors copied, no program
object), not pickle bytes: `torch.load` builds new tensors from it; reading it as bytes is refused.
"""

from __future__ import annotations

import codecs
import io
import pickle
import posixpath
import weakref

from .errors import limit_error
from .objects import Builtin, BuiltinType, ModuleProxy

MAX_NAME_CHARS = 1024  # a file name (Linux allows 4,096 for a path, 255 per component)
NO_DISK = "flowgrad programs have no disk: only files the program wrote itself"
_NEWLINES = (None, "", "\n", "\r", "\r\n")


class UnpicklingError(pickle.UnpicklingError, RuntimeError):
    """pickle's error for a file torch.save did not write; a program catches it as the RuntimeError it also is."""


class _Content:
    """What one file holds: bytes written with open() (`data`), or what torch.save kept (`saved`)."""

    __slots__ = ("data", "saved")

    def __init__(self):
        self.data = bytearray()
        self.saved = None

    def size(self):
        return self.saved.nbytes if self.saved is not None else len(self.data)


class RunFiles:
    """The files of one run (made on first use: `files_of(interp)`)."""

    def __init__(self, interp):
        limits = interp.limits
        self.check_time = interp.check_time
        self.max_bytes = limits.max_file_bytes
        self.max_files = limits.max_files
        self.serialization = interp.B.serialization
        self.entries: dict[str, _Content] = {}
        self.nbytes = 0

    def charge(self, content, new_size):
        """Resize `content` to new_size bytes in the budget (before anything is written)."""
        total = self.nbytes - content.size() + new_size
        if total > self.max_bytes:
            raise limit_error(f"the program's files would hold {total:,} bytes", "max_file_bytes", self.max_bytes)
        self.nbytes = total

    def release(self, content):
        """An in-memory buffer the program dropped: its bytes leave the budget."""
        self.nbytes -= content.size()

    def lookup(self, name):
        content = self.entries.get(_key(name))
        if content is None:
            raise FileNotFoundError(f"[Errno 2] No such file or directory: {name!r} ({NO_DISK})")
        return content

    def create(self, name):
        key = _key(name)
        content = self.entries.get(key)
        if content is None:
            if len(self.entries) >= self.max_files:
                raise limit_error(f"the program would have more than {self.max_files:,} files", "max_files",
                                  self.max_files)
            content = self.entries[key] = _Content()
        return content

    def save(self, content, obj):
        room = self.max_bytes - (self.nbytes - content.size())
        try:
            saved = self.serialization.snapshot(obj, max_bytes=room, progress=self.check_time)
        except self.serialization.SnapshotTooLarge:
            raise limit_error(f"the program's files would hold more than {self.max_bytes:,} bytes with this "
                              "torch.save", "max_file_bytes", self.max_bytes) from None
        self.charge(content, saved.nbytes)
        content.data = bytearray()
        content.saved = saved


def _key(name):
    """The store's key of a file name: Python's checks on it, then its normalised path."""
    if type(name) is not str:
        raise TypeError(f"expected str, bytes or os.PathLike object, not {type(name).__name__}")
    if "\0" in name:
        raise ValueError("embedded null byte")
    if len(name) > MAX_NAME_CHARS:
        raise OSError(f"[Errno 36] File name too long: '{name[:40]}...'")
    key = posixpath.normpath(name)
    if name == "":
        raise FileNotFoundError(f"[Errno 2] No such file or directory: '' ({NO_DISK})")
    if key in (".", "/", "..") or name.endswith("/"):
        raise IsADirectoryError(f"[Errno 21] Is a directory: {name!r}")
    return key


class RunFile:
    """An open file of the run (what `open()` returns) or an in-memory buffer (`io.BytesIO`/`io.StringIO`)."""

    def __init__(self, files, content, name, mode, binary, readable, writable, append, encoding, errors, newline):
        self.files = files
        self.content = content
        self.name = name
        self.mode = mode
        self.binary = binary
        self.can_read = readable
        self.can_write = writable
        self.append = append
        self.encoding = encoding
        self.errors = errors or "strict"
        self.newline = newline
        self.pos = len(content.data) if append else 0
        self.closed = False

    def __repr__(self):
        if self.name is None:
            return f"<_io.{'BytesIO' if self.binary else 'StringIO'} object>"
        if self.binary:
            kind = "BufferedRandom" if self.can_read and self.can_write else \
                "BufferedReader" if self.can_read else "BufferedWriter"
            return f"<_io.{kind} name={self.name!r}>"
        return f"<_io.TextIOWrapper name={self.name!r} mode={self.mode!r} encoding={self.encoding!r}>"

    # ---- checks
    def _open(self):
        if self.closed:
            raise ValueError("I/O operation on closed file.")

    def _readable(self):
        self._open()
        if not self.can_read:
            raise io.UnsupportedOperation("not readable")
        return self._bytes()

    def _bytes(self):
        if self.content.saved is not None:
            raise OSError(f"{self.name or 'this buffer'!r} holds what torch.save wrote: flowgrad keeps it as "
                          "tensors, not bytes; read it back with torch.load")
        return self.content.data

    # ---- reading
    def _decode(self, raw):
        text = raw.decode(self.encoding, self.errors)
        if self.newline is None:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return text

    def read(self, size=-1):
        data = self._readable()
        if size is None:
            size = -1
        if type(size) is not int:
            raise TypeError(f"argument should be integer or None, not '{type(size).__name__}'")
        start = self.pos
        if self.binary:
            end = len(data) if size < 0 else min(len(data), start + size)
            self.pos = max(end, start)
            return bytes(data[start:end])
        if size < 0:
            self.pos = max(len(data), start)
            return self._decode(bytes(data[start:]))
        rest = bytes(data[start:]).decode(self.encoding, self.errors)
        take = size
        while True:  # NOTE: '\r\n' reads as one '\n': take raw characters until `size` translated ones
            text = self._decode(rest[:take].encode(self.encoding, self.errors))
            if len(text) >= size or take >= len(rest):
                break
            take += size - len(text)
        if rest[take - 1:take] == "\r" and rest[take:take + 1] == "\n":
            take += 1
        self.pos = start + len(rest[:take].encode(self.encoding, self.errors))
        return self._decode(rest[:take].encode(self.encoding, self.errors))

    def readline(self, size=-1):
        data = self._readable()
        start = self.pos
        if start >= len(data):
            return b"" if self.binary else ""
        if self.binary or self.newline == "\n":
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end + 1
        else:
            ends = [e for e in (data.find(b"\n", start), data.find(b"\r", start)) if e >= 0]
            if not ends:
                end = len(data)
            else:
                end = min(ends) + 1
                if data[end - 1:end] == b"\r" and data[end:end + 1] == b"\n" and self.newline in (None, "\r\n"):
                    end += 1
        if type(size) is int and size >= 0:
            end = min(end, start + size)
        self.pos = end
        raw = bytes(data[start:end])
        return raw if self.binary else self._decode(raw)

    def readlines(self, hint=-1):
        lines = []
        while True:
            line = self.readline()
            if not line:
                return lines
            lines.append(line)

    def __iter__(self):
        self._open()
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    # ---- writing
    def write(self, value):
        self._open()
        if not self.can_write:
            raise io.UnsupportedOperation("not writable")
        if self.binary:
            if type(value) not in (bytes, bytearray):
                raise TypeError(f"a bytes-like object is required, not '{type(value).__name__}'")
            raw = bytes(value)
        else:
            if type(value) is not str:
                raise TypeError(f"write() argument must be str, not {type(value).__name__}")
            text = value if self.newline in (None, "", "\n") else value.replace("\n", self.newline)
            raw = text.encode(self.encoding, self.errors)
        content = self.content
        if content.saved is not None:
            self.files.charge(content, 0)
            content.saved = None
        data = content.data
        start = len(data) if self.append else self.pos
        end = start + len(raw)
        if end > len(data):
            self.files.charge(content, end)
            if start > len(data):  # past the end after a seek: the gap reads as zero bytes, as in a real file
                data.extend(bytes(start - len(data)))
        data[start:end] = raw
        self.pos = end
        return len(value)

    def writelines(self, lines):
        for i, line in enumerate(lines):
            if not i & 1023:  # an endless iterable of empty strings costs no bytes: the clock stops it
                self.files.check_time()
            self.write(line)

    # ---- position and state
    def tell(self):
        self._open()
        return self.pos

    def seek(self, offset, whence=0):
        self._open()
        if type(offset) is not int or type(whence) is not int:
            raise TypeError("an integer is required")
        base = {0: 0, 1: self.pos, 2: len(self.content.data)}.get(whence)
        if base is None:
            raise ValueError(f"invalid whence ({whence}, should be 0, 1 or 2)")
        if base + offset < 0:
            raise ValueError(f"negative seek position {offset}")
        self.pos = base + offset
        return self.pos

    def getvalue(self):
        self._open()
        data = self._bytes()
        return bytes(data) if self.binary else self._decode(bytes(data))

    def readable(self):
        self._open()
        return self.can_read

    def writable(self):
        self._open()
        return self.can_write

    def seekable(self):
        self._open()
        return True

    def flush(self):
        self._open()

    def close(self):
        self.closed = True

    def __enter__(self):
        self._open()
        return self

    def __exit__(self, *exc):
        self.close()
        return False


READ_ATTRIBUTES = ("name", "mode", "closed")
METHODS = ("read readline readlines write writelines tell seek getvalue readable writable seekable flush close "
           "__enter__ __exit__").split()
ATTRIBUTE_RULES = {RunFile: ([*READ_ATTRIBUTES, *METHODS[:-2]],
                             {m: (lambda name: lambda interp, f: getattr(f, name))(m) for m in METHODS[:-2]})}
CONTEXT_TYPES = (RunFile,)


def files_of(interp) -> RunFiles:
    files = interp.__dict__.get("run_files")
    if files is None:
        files = interp.run_files = RunFiles(interp)
    return files


def _parse_mode(mode):
    """Python's checks on open()'s mode: (readable, writable, append, create-only, binary)."""
    if type(mode) is not str:
        raise TypeError(f"open() argument 'mode' must be str, not {type(mode).__name__}")
    chars = set(mode)
    if len(chars) != len(mode) or not chars <= set("rwxabt+"):
        raise ValueError(f"invalid mode: '{mode}'")
    kinds = chars & set("rwxa")
    if len(kinds) != 1:
        raise ValueError("must have exactly one of create/read/write/append mode")
    if "t" in chars and "b" in chars:
        raise ValueError("can't have text and binary mode at once")
    kind = kinds.pop()
    plus = "+" in chars
    return kind == "r" or plus, kind != "r" or plus, kind == "a", kind, "b" in chars


def open_function(interp):
    """The program's `open()`: files of this run only."""

    def open_(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None, closefd=True, opener=None):
        if type(file) is int:
            raise OSError(f"[Errno 9] Bad file descriptor ({NO_DISK})")
        readable, writable, append, kind, binary = _parse_mode(mode)
        if opener is not None:
            raise TypeError("open(opener=...) is not supported in flowgrad programs: it would call program code "
                            "to open a real file")
        if binary and encoding is not None:
            raise ValueError("binary mode doesn't take an encoding argument")
        if binary and errors is not None:
            raise ValueError("binary mode doesn't take an errors argument")
        if binary and newline is not None:
            raise ValueError("binary mode doesn't take a newline argument")
        if newline not in _NEWLINES or (newline is not None and type(newline) is not str):
            raise ValueError(f"illegal newline value: {newline}")
        encoding = _encoding(encoding)
        if errors is not None and (type(errors) is not str or len(errors) > 64):
            raise TypeError("open() argument 'errors' must be str or None")
        files = files_of(interp)
        if kind == "r":
            content = files.lookup(file)
        elif kind == "x":
            if _key(file) in files.entries:
                raise FileExistsError(f"[Errno 17] File exists: {file!r}")
            content = files.create(file)
        else:
            content = files.create(file)
            if kind == "w":
                files.charge(content, 0)
                content.data = bytearray()
                content.saved = None
        return RunFile(files, content, file, mode, binary, readable, writable, append, encoding, errors, newline)

    return open_


def _encoding(encoding):
    if encoding is None:
        return "UTF-8"
    if type(encoding) is not str:
        raise TypeError(f"open() argument 'encoding' must be str or None, not {type(encoding).__name__}")
    if len(encoding) > 64:
        raise LookupError("unknown encoding: " + encoding[:64])
    codecs.lookup(encoding)  # LookupError("unknown encoding: x"), as open() raises it
    return encoding


def io_module(interp) -> ModuleProxy:
    """`import io`: in-memory buffers (BytesIO is what torch.save can write to)."""
    def buffer(binary):
        def make(initial=None, newline="\n"):
            files = files_of(interp)
            content = _Content()
            if initial is not None:
                want = (bytes, bytearray) if binary else (str,)
                if type(initial) not in want:
                    raise TypeError(f"a bytes-like object is required, not '{type(initial).__name__}'" if binary
                                    else f"initial_value must be str or None, not {type(initial).__name__}")
                raw = bytes(initial) if binary else initial.encode("utf-8")
                files.charge(content, len(raw))
                content.data = bytearray(raw)
            f = RunFile(files, content, None, "rb+" if binary else "r+", binary, True, True, False, "utf-8",
                        None, None if binary else newline)
            weakref.finalize(f, files.release, content)
            return f
        return make

    return ModuleProxy("io", {
        "BytesIO": BuiltinType("BytesIO", RunFile, buffer(True), interp),
        "StringIO": BuiltinType("StringIO", RunFile, buffer(False), interp),
        "open": Builtin("open", open_function(interp), interp),  # `from io import open` (the builtin's alias)
    })


# ---------------------------------------------------------------- torch.save / torch.load
def _target(files, f, writing):
    """The file content torch.save writes or torch.load reads: a name, an open binary file or a BytesIO."""
    if type(f) is str:
        return files.create(f) if writing else files.lookup(f)
    if type(f) is RunFile:
        f._open()
        if writing and not f.can_write:
            raise io.UnsupportedOperation("write")
        if not writing and not f.can_read:
            raise io.UnsupportedOperation("read")
        if not f.binary:
            raise TypeError("write() argument must be str, not bytes" if writing else
                            "a bytes-like object is required, not 'str'")
        return f.content
    if writing:
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    raise AttributeError(f"'{type(f).__name__}' object has no attribute 'seek'. You can only torch.load from a "
                         "file that is seekable. Please pre-load the data into a buffer like io.BytesIO and try to "
                         "load from it instead.")


def _check_location(map_location, device_type):
    """map_location as torch.load reads it, for tensors saved on the CPU: None, 'cpu', a CPU device, or a dict
    whose 'cpu' entry is one of these; CUDA is PyTorch's error on a CPU-only machine."""
    if map_location is None:
        return
    if type(map_location) is dict:
        target = map_location.get("cpu")
        if type(target) is str or type(target) is device_type:
            _check_location(target, device_type)
        return
    if type(map_location) is device_type:
        where = str(map_location)
    elif type(map_location) is str:
        where = map_location[:64]
    else:
        raise TypeError("torch.load(map_location=...) takes a string, a torch.device or a dict in flowgrad programs "
                        "(a function would be called on every storage; every tensor is on the CPU already)")
    if where == "cpu" or where.startswith("cpu:"):
        return
    if where.startswith("cuda"):
        raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                           "False. If you are running on a CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.")
    raise RuntimeError(f"don't know how to restore data location of torch.storage.UntypedStorage "
                       f"(tagged with {where})")


def torch_functions(interp) -> dict:
    """torch.save and torch.load of this run."""

    def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
             _disable_byteorder_record=False):
        files = files_of(interp)
        content = _target(files, f, writing=True)
        files.save(content, obj)
        if type(f) is RunFile:
            f.pos = 0

    def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
        if weights_only is not None and type(weights_only) is not bool:
            raise TypeError("torch.load(weights_only=...) takes True, False or None")
        if pickle_module is not None:
            raise TypeError("Can not safely load weights when explicit pickle_module is specified")
        _check_location(map_location, interp.B.device)
        content = _target(files_of(interp), f, writing=False)
        if content.saved is None:
            first = bytes(content.data[:1])
            why = " (this file was written with open(), not torch.save: torch.load reads what torch.save wrote)"
            raise UnpicklingError((f"invalid load key, {first.decode('latin-1')!r}." if first
                                          else "Ran out of input") + why)
        return interp.B.serialization.restore(content.saved, progress=interp.check_time)

    return {"save": save, "load": load}


def torch_module_for(interp, base: ModuleProxy) -> ModuleProxy:
    """`torch` for this run: the Backend's names plus this run's save/load."""
    attrs = dict(base.attrs)
    attrs.update((name, Builtin(name, fn, interp)) for name, fn in torch_functions(interp).items())
    return ModuleProxy("torch", attrs)
