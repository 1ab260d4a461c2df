"""The last checked copy of an optimizer's `param_groups`, reused while the groups are unchanged.

Every step reads the groups through Optimizer._checked_groups (type checks of every parameter and
hyperparameter); in a training loop they rarely change. A snapshot holds the groups' objects themselves (the
list, each dict, its keys and values, its params list and parameters, so their ids cannot be reused while it
lives) in one flat tuple, and is valid while the same walk over the groups meets the same objects in the same
places: a program that assigns `group["lr"] = 0.01` (a new object) or appends a parameter gets a fresh check.
Values that can change without being replaced (a tensor lr, a list of betas) make the groups uncacheable.
"""
from __future__ import annotations

from operator import is_

_IMMUTABLE = (int, float, bool, str, type(None))
ENABLED = True  # False: no snapshots, every step checks the groups (bench/engine.py --without group_cache)


def _immutable(v):
    t = type(v)
    if t in _IMMUTABLE:
        return True
    return t is tuple and all(type(x) in _IMMUTABLE for x in v)


def _walk(groups):
    """The groups' objects in one flat list (lengths included, so no two shapes of groups walk alike), or None
    where a part is not a list or dict (the full check reports it)."""
    if type(groups) is not list:
        return None
    out = [groups, len(groups)]
    for g in groups:
        if type(g) is not dict:
            return None
        params = g.get("params")
        if type(params) is not list:
            return None
        out += (g, len(g), *g, *g.values(), len(params), *params)
    return out


def snapshot(groups, checked):
    """A snapshot of the program's `groups` whose check gave `checked`, or None when they may change in place."""
    if not ENABLED:
        return None
    for g in groups:
        for k, v in g.items():
            if k != "params" and not _immutable(v):
                return None
    walk = _walk(groups)
    return None if walk is None else (tuple(walk), checked)


def lookup(snap, groups):
    """The checked groups of the snapshot if `groups` is still what it holds, else None.
    NOTE: identity, never ==: a tensor's == is elementwise (and a length over 256 is a fresh int: a miss)."""
    if snap is None or not ENABLED:
        return None
    walk = _walk(groups)
    held = snap[0]
    if walk is None or len(walk) != len(held) or not all(map(is_, walk, held)):
        return None
    return snap[1]
