"""Parse a program and check its syntax tree before anything runs.

Everything here is iterative (an explicit stack), so a hostile tree cannot overflow the Python
stack. Checks run on the parsed tree, after the parser's NFKC normalisation of identifiers, so
Unicode lookalikes of `__class__` or `eval` are seen as what they are.
"""

from __future__ import annotations

import ast
import gc
import os
import threading
import warnings

from .errors import ProgramError, limit_error
from .instance_protocol import PROTOCOL_METHODS

ALLOWED_STMTS = (
    ast.Module, ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.While, ast.If,
    ast.Break, ast.Continue, ast.Pass, ast.FunctionDef, ast.Return, ast.ClassDef, ast.Import,
    ast.ImportFrom, ast.With, ast.Assert, ast.Delete, ast.Try, ast.Raise, ast.Global, ast.Nonlocal,
)
ALLOWED_EXPRS = (
    ast.BoolOp, ast.NamedExpr, ast.BinOp, ast.UnaryOp, ast.Lambda, ast.IfExp, ast.Dict, ast.Set,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Compare, ast.Call,
    ast.FormattedValue, ast.JoinedStr, ast.Constant, ast.Attribute, ast.Subscript, ast.Starred,
    ast.Name, ast.List, ast.Tuple, ast.Slice, ast.Yield, ast.YieldFrom,
)
ALLOWED_OTHER = (ast.arguments, ast.arg, ast.keyword, ast.alias, ast.comprehension, ast.withitem, ast.ExceptHandler)
# Leaf-like helper nodes: not counted, not descended into.
UNCOUNTED = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)

ALLOWED = ALLOWED_STMTS + ALLOWED_EXPRS + ALLOWED_OTHER

UNSUPPORTED = {
    ast.AsyncFunctionDef: "'async def' functions are",
    ast.AsyncFor: "'async for' loops are",
    ast.AsyncWith: "'async with' statements are",
    ast.Await: "'await' expressions are",
    ast.Match: "'match' statements are",
}
for _name, _what in (("TryStar", "'try ... except*' statements are"), ("TypeAlias", "'type' statements are")):
    if hasattr(ast, _name):
        UNSUPPORTED[getattr(ast, _name)] = _what

# Dunder names a program may use: reading `__name__` (it is "__main__").
ALLOWED_DUNDER_NAMES = {"__name__"}
# Dunder attributes a program may read (never assign): what they give is `Attributes.dunder_attribute`.
DUNDER_READS = frozenset({"__name__", "__class__", "__doc__", "__qualname__", "__version__"})
# methods a class body may define: __init__, __enter__/__exit__ and Python's protocols (instance_protocol.py;
# module, dataset and exception classes take fewer: calls.Calls._check_class_dunders)
# (__post_init__: what a @dataclass's generated __init__ calls last, sandbox/dataclasses_module.py)
CLASS_DUNDER_NAMES = frozenset({"__init__", "__enter__", "__exit__", "__post_init__"}) | PROTOCOL_METHODS


def _unsupported(what: str, node, line) -> ProgramError:
    return ProgramError(
        "NotImplementedError", f"{what} not supported in flowgrad programs",
        getattr(node, "lineno", line), getattr(node, "col_offset", 0),
    )


def bad_name(name: str) -> bool:
    """Variable, function, parameter and class names: no dunder names (single `_x` is fine)."""
    return name.startswith("__") and name not in ALLOWED_DUNDER_NAMES


# NOTE: CPython 3.11's AST constructor keeps a recursion counter per interpreter, which two threads parsing at once
# share: one of them then fails with a spurious "AST constructor recursion depth mismatch" (python/cpython#106905).
# Every parse here takes this lock (the server's trace builder parses too: app/trace/hierarchy.py); a forked run
# process gets a fresh one, as a lock a parent's thread held at the fork would never be released in the child.
_PARSE_LOCK = threading.Lock()


def _fresh_lock() -> None:
    global _PARSE_LOCK
    _PARSE_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_fresh_lock)


def parse_python(source: str, filename: str = "<unknown>") -> ast.Module:
    """ast.parse, one thread at a time; a depth mismatch that still comes (a collector's callback that ran during
    the parse) is parsed once more with the collector off."""
    with _PARSE_LOCK:
        try:
            return ast.parse(source, filename=filename, mode="exec")
        except SystemError as e:
            if "recursion depth mismatch" not in str(e):
                raise
        enabled = gc.isenabled()
        gc.disable()
        try:
            return ast.parse(source, filename=filename, mode="exec")
        finally:
            if enabled:
                gc.enable()


def parse_program(source: str, limits) -> ast.Module:
    """Parse and check `source`; raise ProgramError (or LimitError) on any problem."""
    if not isinstance(source, str):
        raise ProgramError("TypeError", "the program must be text")
    if len(source) > limits.max_source_chars:
        raise limit_error(f"program is {len(source):,} characters long", "max_source_chars", limits.max_source_chars, 1, 0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings would go to the host's stderr
            tree = parse_python(source, "<program>")
    except SyntaxError as e:  # includes IndentationError, TabError
        line = e.lineno
        col = (e.offset - 1) if isinstance(e.offset, int) and e.offset > 0 else 0
        msg = e.msg if isinstance(e.msg, str) else "invalid syntax"
        if "null bytes" in msg:
            line = source.count("\n", 0, max(source.find("\0"), 0)) + 1
        raise ProgramError(type(e).__name__, msg, line if line is not None else 1, col) from None
    except (ValueError, UnicodeError) as e:
        bad = next((i for i, ch in enumerate(source) if "\ud800" <= ch <= "\udfff" or ch == "\0"), 0)
        line = source.count("\n", 0, bad) + 1
        msg = "source code cannot contain null bytes" if "null" in str(e) else (
            "source code contains characters that cannot be encoded")
        raise ProgramError("SyntaxError", msg, line, 0) from None
    except (RecursionError, MemoryError):
        raise ProgramError("SyntaxError", "program is too deeply nested for the parser", 1, 0) from None
    check_tree(tree, limits)
    return tree


def check_tree(tree: ast.Module, limits) -> None:
    max_depth = limits.max_ast_depth
    max_nodes = limits.max_ast_nodes
    max_bits = limits.max_int_bits
    count = 0
    # (node, depth, line of nearest located ancestor, parent node, inside a function, inside a loop)
    stack = [(tree, 1, 1, None, False, False)]
    pop = stack.pop
    push = stack.append
    while stack:
        node, depth, line, parent, in_func, in_loop = pop()
        if isinstance(node, UNCOUNTED):
            continue
        line = getattr(node, "lineno", line)
        count += 1
        if count > max_nodes:
            raise limit_error(f"program has more than {max_nodes:,} syntax tree nodes", "max_ast_nodes", max_nodes,
                              line, getattr(node, "col_offset", 0))
        if depth > max_depth:
            raise limit_error(f"program is nested more than {max_depth:,} levels deep", "max_ast_depth", max_depth,
                              line, getattr(node, "col_offset", 0))
        t = type(node)
        if not isinstance(node, ALLOWED):
            what = UNSUPPORTED.get(t) or f"'{t.__name__}' syntax is"
            raise _unsupported(what, node, line)
        _check_node(node, t, line, parent, max_bits)
        if (t is ast.Yield or t is ast.YieldFrom) and not in_func:
            raise ProgramError("SyntaxError", "'yield' outside function", line, node.col_offset)
        if t is ast.Nonlocal and not in_func:
            raise ProgramError("SyntaxError", "nonlocal declaration not allowed at module level", line,
                               node.col_offset)
        if t is ast.Return and not in_func:
            raise ProgramError("SyntaxError", "'return' outside function", line, node.col_offset)
        if (t is ast.Break or t is ast.Continue) and not in_loop:
            raise ProgramError("SyntaxError", f"'{t.__name__.lower()}' outside loop", line, node.col_offset)
        if t is ast.FunctionDef or t is ast.Lambda:
            in_func, in_loop = True, False
        elif t is ast.ClassDef:
            in_func, in_loop = False, False
        if t is ast.For or t is ast.While:
            # the loop's body (not its iterable or else-part) is inside the loop
            for child in ast.iter_child_nodes(node):
                inside = child in node.body
                push((child, depth + 1, line, node, in_func, in_loop or inside))
            continue
        for child in ast.iter_child_nodes(node):
            push((child, depth + 1, line, node, in_func, in_loop))


def _check_node(node, t, line, parent, max_bits):
    col = getattr(node, "col_offset", 0)
    if t is ast.Name:
        if bad_name(node.id) or (node.id in ALLOWED_DUNDER_NAMES and not isinstance(node.ctx, ast.Load)):
            raise ProgramError("NameError", f"names starting with '__' such as '{node.id}' are not allowed "
                               "in flowgrad programs", line, col)
    elif t is ast.Attribute:
        # `_x` is decided at run time (attributes.Attributes.private_attribute_refusal): program objects only
        if node.attr.startswith("__"):
            ok = isinstance(node.ctx, ast.Load) and (node.attr in DUNDER_READS or (
                node.attr == "__init__" and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id == "super"))
            if not ok:
                raise ProgramError("AttributeError", f"attributes starting with '_' such as '{node.attr}' are "
                                   "not allowed in flowgrad programs", line, col)
    elif t is ast.FunctionDef:
        if node.name in CLASS_DUNDER_NAMES:
            if not isinstance(parent, ast.ClassDef):
                raise ProgramError("NameError", f"'{node.name}' can only be defined inside a class", line, col)
        elif node.name.startswith("__"):
            raise ProgramError("NotImplementedError", f"defining '{node.name}' is not supported in flowgrad "
                               "programs (a class may define __init__, __enter__/__exit__, __call__, __len__, __getitem__, "
                               "__iter__/__next__, __repr__/__str__, comparisons and operators)", line, col)
    elif t is ast.ClassDef:
        if node.keywords:
            raise _unsupported("class keywords (metaclass=...) are", node, line)
        if bad_name(node.name):
            raise ProgramError("NameError", f"class name '{node.name}' is not allowed", line, col)
    elif t is ast.Yield or t is ast.YieldFrom:
        # a statement of its own, or the value of an assignment: where the interpreter can suspend
        pt = type(parent)
        if not (pt is ast.Expr or ((pt is ast.Assign or pt is ast.AnnAssign) and parent.value is node)):
            raise _unsupported("'yield' inside an expression (other than `x = yield ...`) is", node, line)
    elif t is ast.Global or t is ast.Nonlocal:
        for name in node.names:
            if bad_name(name) or name in ALLOWED_DUNDER_NAMES:
                raise ProgramError("NameError", f"name '{name}' is not allowed", line, col)
    elif t is ast.ExceptHandler:
        if node.name is not None and bad_name(node.name):
            raise ProgramError("NameError", f"name '{node.name}' is not allowed", line, col)
    elif t is ast.arg:
        if bad_name(node.arg):
            raise ProgramError("NameError", f"parameter name '{node.arg}' is not allowed", line, col)
    elif t is ast.keyword:
        # `_x=` is decided at run time (calls.Calls.ev_Call): calls of the program's own functions only
        if node.arg is not None and node.arg.startswith("__"):
            raise ProgramError("NameError", f"keyword argument '{node.arg}' is not allowed", line, col)
    elif t is ast.alias:
        if node.name == "*":
            raise _unsupported("starred imports ('from ... import *') are", node, line)
        if node.name.startswith("_") or any(p.startswith("_") for p in node.name.split(".")):
            raise ProgramError("ImportError", f"cannot import '{node.name}'", line, col)
        if node.asname is not None and bad_name(node.asname):
            raise ProgramError("NameError", f"name '{node.asname}' is not allowed", line, col)
    elif t is ast.ImportFrom:
        if node.level:
            raise _unsupported("relative imports are", node, line)
    elif t is ast.Delete:
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                raise _unsupported("deleting attributes is", node, line)
    elif t is ast.comprehension:
        if node.is_async:
            raise _unsupported("async comprehensions are", node, line)
    elif t is ast.Constant:
        v = node.value
        if type(v) is int and v.bit_length() > max_bits:
            raise limit_error(f"integer literal has {v.bit_length():,} bits", "max_int_bits", max_bits, line, col)
