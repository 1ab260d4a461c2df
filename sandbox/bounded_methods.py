"""Bounded stand-ins for methods that would build unbounded data in C (attributes.py hands them out in place of the
methods themselves): each counts what it will allocate against the run's budgets first."""
from __future__ import annotations

import itertools
import operator
import sys

from .objects import INTS


def str_format(interp, s):
    return lambda *args, **kwargs: interp.safe_format(s, args, kwargs)


def str_join(interp, s):
    def join(iterable):
        items = interp.take(iterable)
        total = len(s) * max(len(items) - 1, 0)
        for x in items:
            if type(x) is str:
                total += len(x)
        interp.alloc(total, "string")
        return s.join(items)
    return join


def str_replace(interp, s):
    def replace(old, new, count=-1):
        count = interp.as_count(count)
        if type(old) is str and type(new) is str and len(new) > len(old):
            n = s.count(old) if old else len(s) + 1
            if count is not None and count >= 0:
                n = min(n, count)
            interp.alloc(len(s) + n * (len(new) - len(old)), "string")
        return s.replace(old, new, count)
    return replace


def str_pad(name):
    def factory(interp, s):
        method = getattr(s, name)

        def pad(width, *args):
            width = interp.as_count(width)  # a tensor's __index__ would size the string unchecked
            if type(width) in INTS:
                interp.alloc(width, "string")
            return method(width, *args)
        return pad
    return factory


def tensor_tolist(interp, t):
    def tolist():
        interp.alloc(interp.list_items(t.shape), "list")  # the inner lists too: (10**5, 10**5, 0) is 10**10 of them
        return t.tolist()
    return tolist


def list_extend(interp, xs):
    def extend(iterable):
        items = interp.take(iterable)
        interp.alloc(len(xs) + len(items), "list")
        xs.extend(items)
    return extend


def bounded_extend(name):
    def factory(interp, xs):
        method = getattr(xs, name)

        def extend(iterable):
            items = interp.take(iterable)
            interp.alloc(len(xs) + len(items), "deque")
            method(items)
        return extend
    return factory


def set_method(name):
    def factory(interp, s):
        method = getattr(s, name)

        def call(*others):
            return method(*[interp.take(o) if type(o) not in (set, frozenset, dict) else o for o in others])
        return call
    return factory


def dict_update(interp, d):
    def update(*args, **kwargs):
        if len(args) > 1:
            raise TypeError(f"update expected at most 1 argument, got {len(args)}")
        if args:
            a = args[0]
            d.update(a if isinstance(a, dict) else interp.take(a))
        d.update(kwargs)
    return update


def list_index(interp, xs):
    # list.index's error message is the repr of the value, made in C: of a list sharing its sublists
    # [[[0] * 1000] * 1000] * 1000 that is 3 GB of text. operator.indexOf says "not in sequence".
    def index(value, start=0, stop=sys.maxsize):
        start, stop, _ = slice(start, stop).indices(len(xs))
        return operator.indexOf(itertools.islice(xs, start, stop), value) + start
    return index


def copy_method(interp, obj):
    def copy():
        interp.alloc(len(obj))
        c = obj.copy()
        return interp.own(c) if interp.owns(obj) else c
    return copy


def data_ptr_method(interp, obj):
    """Tensor.data_ptr / a storage's data_ptr: the run's stand-in numbers (formatting.FakeAddresses.pointer), never
    the server's memory; views share their storage's, copies do not."""
    place = interp.B.storage_place
    return lambda: interp.addresses.pointer(*place(obj))


def owned_state_dict(interp, module):
    """Module.state_dict(): a fresh OrderedDict of the module's tensors, the program's to edit (the DQN tutorial's soft
    update sets its items) as any dict it made; an optimizer's live state keeps the narrower dict rule."""
    def state_dict(*args, **kwargs):
        return interp.own(module.state_dict(*args, **kwargs))
    return state_dict
