"""What the trace builder writes in a drawn node and a cluster's title, and the node sizes that fit it
(app/layout/sizes.py measures; app/trace/labels.py formats an op's parameters as the page does)."""

from __future__ import annotations

from dataclasses import dataclass

from app.layout.sizes import op_size, tensor_size
from app.trace.labels import op_text


def cluster_title(name: str, cls: str | None) -> str:
    """Room for the page's cluster title: collapse toggle, then "model.0 · Linear"."""
    return "    " + name + (f" · {cls}" if cls else "")


def node_op_text(n: dict) -> str:
    return op_text(n.get("op"), n.get("label"), n.get("params"))


def node_size(n: dict) -> tuple[float, float]:
    """Sizes that fit what the page writes in the node (app/layout/sizes.py)."""
    if n["kind"] == "op":
        return op_size(node_op_text(n))
    named = bool(n.get("name")) or n.get("role") == "constant"
    return tensor_size(n["label"] or "", n.get("shape"), named=named)


@dataclass(frozen=True)
class FoldOptions:
    """How big passes fold (settings fold_threshold, max_folded_nodes, fold_max_children); ``source``
    names loop variables in labels (parsed, never run); ``run`` is the run's id in the run store."""

    threshold: int
    max_nodes: int
    max_children: int
    source: str = ""
    run: str = ""
    cpu_budget_s: float | None = None  # CPU seconds folding one pass may take (the run's hard_kill_s)
