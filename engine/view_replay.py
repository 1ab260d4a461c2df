"""PyTorch's view replay after an in-place write under autograd: every other view of the written base takes the
base's new history (AsStridedBackward0 of it), so that gradients through a view used after a write to its base, or
to another view of that base, are PyTorch's. (PyTorch does it lazily, when the view is next used; doing it at the
write gives the same graph, since a view's history can only change through such a write.)"""
from __future__ import annotations

from .dispatch import apply
from .ops import OPS
from .views import live_views, view_positions


def has_views(base) -> bool:
    return bool(live_views(base))


def replay_views(base, written=None) -> None:
    """Each live view of `base` but `written` (the view the op wrote through, already re-derived) becomes
    AsStridedBackward0 of base's current history; views that no longer share base's memory are left alone."""
    if not base._requires_grad:
        return
    for view in live_views(base):
        if view is written or view is base:
            continue
        try:
            where = view_positions(base._data, view._data)
        except RuntimeError:  # an expanded view (one element read twice): PyTorch refuses writes through it only
            continue
        if where is None:
            continue
        key, strides = where
        view._grad_fn = apply(OPS["as_strided_view"], (base,), (key, strides))._grad_fn
        view._requires_grad = True
