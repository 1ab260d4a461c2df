"""`os` (the read-only parts programs use), `string`, `unicodedata` and `statistics`, built per run.

`os` knows nothing of the server: paths are string operations (`os.path.join/basename/...`); what exists is
what the run itself wrote (`torch.save`, `open(..., 'w')`: sandbox/files.py) and the folders above it:
`exists`/`isfile`/`isdir`/`getsize` read the run's files (`makedirs` does nothing), the working directory is a fixed stand-in
and `os.environ` is the run's own empty dict (`os.environ.get("X", d)` is `d`; a program's writes stay
in its run). `unicodedata.normalize` is bounded before it runs (NFKD makes at most 18 characters of one);
`statistics` takes at most STATISTICS_MAX_ITEMS numbers (its sums are Python code the clock cannot
interrupt).
"""

from __future__ import annotations

import fnmatch
import numbers
import posixpath
import statistics
import string
import unicodedata

from .errors import limit_error
from .files import files_of
from .objects import Builtin, ModuleProxy

FAKE_CWD = "/program"  # os.getcwd(): never the server's
MAX_PATH_CHARS = 4096  # PATH_MAX: longer paths are refused as the OS would
NORMALIZE_GROWTH = 18  # the most characters NFKD/NFKC make of one (U+FDFA)
STATISTICS_MAX_ITEMS = 100_000


def _path_text(value, what="path"):
    if not isinstance(value, str):
        raise TypeError(f"expected str, bytes or os.PathLike object, not {type(value).__name__}")
    if len(value) > MAX_PATH_CHARS:
        raise OSError(f"File name too long: a {what} of {len(value):,} characters (limit {MAX_PATH_CHARS})")
    return value


def os_modules(interp):
    """(`os`, `os.path`) of one run."""
    def join(a, *parts):
        for p in (a, *parts):
            _path_text(p)
        r = posixpath.join(a, *parts)
        interp.alloc(len(r), "string")
        return _path_text(r)

    def text_fn(fn):
        def f(p):
            return fn(_path_text(p))
        return f

    def stored(p):
        """The run's file at path p, or None (Python's exists/isfile never raise for a bad or too long name)."""
        if not isinstance(p, str):
            raise TypeError(f"stat: path should be string, bytes, os.PathLike or integer, not {type(p).__name__}")
        if len(p) > MAX_PATH_CHARS or "\0" in p or p == "" or p.endswith("/"):  # 'f.pt/' is no file
            return None
        return files_of(interp).entries.get(posixpath.normpath(p))

    def exists(p):
        return stored(p) is not None or isdir(p)

    def isfile(p):
        return stored(p) is not None

    def isdir(p):
        if stored(p) is not None or len(p) > MAX_PATH_CHARS or "\0" in p or p == "":
            return False
        folder = posixpath.normpath(p)
        if folder in (".", "/", FAKE_CWD):
            return True  # the working directory (and the root above it) always exists
        prefix = folder + "/"
        return any(key.startswith(prefix) for key in files_of(interp).entries)  # at most max_files names

    def getsize(p):
        if stored(p) is None and isdir(p):
            return 4096  # a folder's size on the usual filesystems
        return files_of(interp).lookup(p).size()  # torch.save'd: the bytes the snapshot holds

    def makedirs(name, mode=0o777, exist_ok=False):
        _path_text(name)  # nothing is made: the run has no disk

    def getenv(key, default=None):
        if not isinstance(key, str):
            raise TypeError(f"str expected, not {type(key).__name__}")
        return environ.get(key, default)

    environ: dict = {}
    interp.own(environ)
    path_fns = {"join": join, "exists": exists, "isfile": isfile, "isdir": isdir, "getsize": getsize,
                "basename": text_fn(posixpath.basename),
                "dirname": text_fn(posixpath.dirname), "splitext": text_fn(posixpath.splitext),
                "split": text_fn(posixpath.split), "normpath": text_fn(posixpath.normpath),
                "isabs": text_fn(posixpath.isabs)}
    path = ModuleProxy("os.path", {n: Builtin(n, f, interp) for n, f in path_fns.items()})
    path.attrs["sep"] = "/"
    def listdir(p="."):
        folder = posixpath.normpath(_path_text(p))
        if not isdir(folder):
            raise FileNotFoundError(f"[Errno 2] No such file or directory: {p!r}")
        names = run_paths(interp, folder)
        interp.alloc(len(names), "list")
        return names

    fns = {"getcwd": lambda: FAKE_CWD, "makedirs": makedirs, "mkdir": makedirs, "getenv": getenv,
           "listdir": listdir}
    attrs = {n: Builtin(n, f, interp) for n, f in fns.items()}
    attrs.update(path=path, environ=environ, sep="/", linesep="\n", curdir=".", pardir="..", name="posix")
    return ModuleProxy("os", attrs), path


def run_paths(interp, folder: str) -> list:
    """The names in `folder` of the run's files (their folders once each), in the order they were made."""
    prefix = "" if folder in (".", FAKE_CWD) else folder.rstrip("/") + "/"
    names: dict = {}
    for key in files_of(interp).entries:  # (at most max_files names)
        if key.startswith(prefix) and key != prefix:
            names.setdefault(key[len(prefix):].split("/", 1)[0], None)
    return list(names)


def glob_module(interp):
    """`glob.glob(pattern)`: the run's files whose path matches (Python's rules: '*' and '?' stay within one
    folder and skip names starting with '.'; '**' with recursive=True spans folders)."""
    def glob(pathname, *, root_dir=None, dir_fd=None, recursive=False, include_hidden=False):
        pattern = _path_text(pathname, "pattern")
        dot = "./" if pattern.startswith("./") else ""
        parts = posixpath.normpath(pattern).split("/")
        paths: dict = {}  # the run's files and the folders they are in, in the order they were made
        for key in files_of(interp).entries:  # (at most max_files names)
            names = key.split("/")
            for k in range(1, len(names) + 1):
                paths.setdefault("/".join(names[:k]), None)
        found = []
        for path in paths:
            names = path.split("/")
            if recursive and parts[-1] == "**" and _matches(parts[:-1], names, True, include_hidden):
                found.append(dot + path + "/")  # (Python's: 'data/**' gives the folder itself as 'data/')
            elif _matches(parts, names, recursive, include_hidden):
                found.append(dot + path)
        interp.alloc(len(found), "list")
        return found

    fns = {"glob": glob, "iglob": lambda *a, **k: iter(glob(*a, **k)),
           "escape": lambda p: _path_text(p).replace("[", "[[]").replace("*", "[*]").replace("?", "[?]")}
    return ModuleProxy("glob", {n: Builtin(n, f, interp) for n, f in fns.items()})


def _matches(parts, names, recursive, hidden) -> bool:
    """Whether a file's path components `names` match the pattern's `parts` (iterative: no deep recursion)."""
    states = {(0, 0)}
    while states:
        nxt = set()
        for i, j in states:
            if i == len(parts):
                if j == len(names):
                    return True
                continue
            part = parts[i]
            if part == "**" and recursive:
                nxt.add((i + 1, j))  # zero folders
                if j < len(names) and (hidden or not names[j].startswith(".")):
                    nxt.add((i, j + 1))
            elif j < len(names) and fnmatch.fnmatchcase(names[j], part) and (
                    hidden or not names[j].startswith(".") or part.startswith(".")):
                nxt.add((i + 1, j + 1))
        states = nxt
    return False


def string_module(interp):
    attrs = {n: getattr(string, n) for n in ("ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits",
                                             "hexdigits", "octdigits", "punctuation", "whitespace", "printable")}

    def capwords(s, sep=None):
        if not isinstance(s, str):
            raise TypeError(f"descriptor 'split' for 'str' objects doesn't apply to a '{type(s).__name__}' object")
        interp.alloc(len(s), "string")
        return string.capwords(s, sep)

    attrs["capwords"] = Builtin("capwords", capwords, interp)
    return ModuleProxy("string", attrs)


def unicodedata_module(interp):
    def normalize(form, s):
        if isinstance(s, str) and len(s) * NORMALIZE_GROWTH > interp.max_seq:
            raise limit_error(f"unicodedata.normalize of {len(s):,} characters (it may make {NORMALIZE_GROWTH} of each)",
                              "max_live_elements", interp.max_seq)
        r = unicodedata.normalize(form, s)
        interp.alloc(len(r), "string")
        return r

    def name(ch, *default):
        return unicodedata.name(ch, *default)

    fns = {"normalize": normalize, "category": unicodedata.category, "name": name, "lookup": unicodedata.lookup,
           "combining": unicodedata.combining, "decimal": unicodedata.decimal, "digit": unicodedata.digit,
           "numeric": unicodedata.numeric, "east_asian_width": unicodedata.east_asian_width,
           "bidirectional": unicodedata.bidirectional, "mirrored": unicodedata.mirrored,
           "is_normalized": unicodedata.is_normalized}
    attrs = {n: Builtin(n, f, interp) for n, f in fns.items()}
    attrs["unidata_version"] = unicodedata.unidata_version
    return ModuleProxy("unicodedata", attrs)


_STATISTICS = ("mean fmean median median_low median_high median_grouped mode multimode stdev pstdev variance pvariance "
               "quantiles geometric_mean harmonic_mean").split()


def statistics_module(interp):
    def data_of(data, counting):
        items = interp.take(data)
        if len(items) > STATISTICS_MAX_ITEMS:
            raise limit_error(f"statistics over {len(items):,} values", None, f"{STATISTICS_MAX_ITEMS:,} values")
        for x in items:
            if counting and type(x) is str:  # mode("aab"): counted, never computed with
                continue
            if not isinstance(x, numbers.Real) or type(x).__module__ not in ("builtins", "numpy"):
                raise TypeError(f"can't convert type '{interp.type_name(x)}' to numerator/denominator")
        return items

    def wrap(fname):
        fn = getattr(statistics, fname)

        def call(data, *args, **kwargs):
            items = data_of(data, fname in ("mode", "multimode"))
            if fname == "quantiles":
                n = interp.as_count(kwargs.get("n", args[0] if args else 4))
                if type(n) is int and n > interp.max_seq:
                    raise limit_error(f"quantiles(n={n:,})", "max_live_elements", interp.max_seq)
            r = fn(items, *args, **kwargs)
            interp.check_time()
            return r
        return call

    attrs = {n: Builtin(n, wrap(n), interp) for n in _STATISTICS}
    return ModuleProxy("statistics", attrs)
