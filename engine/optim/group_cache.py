"""The last checked copy of an optimizer's `param_groups`, reused while the groups are unchanged.

Every step reads the groups through Optimizer._checked_groups (type checks of every parameter and
hyperparameter); in a training loop they rarely change. A snapshot holds the groups' dicts, keys, values and
parameters themselves (so their ids cannot be reused while it lives) and is valid while each is the same
object: a program that assigns `group["lr"] = 0.01` (a new object) or appends a parameter gets a fresh check.
Values that can change without being replaced (a tensor lr, a list of betas) make the groups uncacheable.
"""
from __future__ import annotations

from operator import is_

_IMMUTABLE = (int, float, bool, str, type(None))


def _immutable(v):
    t = type(v)
    if t in _IMMUTABLE:
        return True
    return t is tuple and all(type(x) in _IMMUTABLE for x in v)


def snapshot(groups, checked):
    """A snapshot of the program's `groups` whose check gave `checked`, or None when they may change in place."""
    parts = []
    for g in groups:
        for k, v in g.items():
            if k != "params" and not _immutable(v):
                return None
        parts.append((g, tuple(g), tuple(g.values()), g["params"], tuple(g["params"])))
    return groups, tuple(groups), tuple(parts), checked


def lookup(snap, groups):
    """The checked groups of the snapshot if `groups` is still what it holds, else None."""
    if snap is None or snap[0] is not groups or len(groups) != len(snap[1]) or not all(map(is_, groups, snap[1])):
        return None
    for g, keys, values, params, param_items in snap[2]:
        if (len(g) != len(keys) or not all(map(is_, g, keys)) or not all(map(is_, g.values(), values))
                or g["params"] is not params or len(params) != len(param_items)
                or not all(map(is_, params, param_items))):
            return None
    return snap[3]
