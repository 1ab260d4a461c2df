"""A long-lived Graphviz ``dot -Tplain`` process.

Starting ``dot`` costs ~16 ms here, more than laying out a tutorial graph, so each worker keeps one
process and streams graphs through its stdin: ``dot`` lays out and prints each graph as soon as it
has read it, and ``-Tplain`` output ends every graph with a ``stop`` line, which frames the answers.
The DOT text is produced with the ``graphviz`` package (``graphviz.Digraph``); only the execution
is ours. A call that takes longer than its timeout kills the process (the next call starts a new
one) and raises ``LayoutTimeout`` so the caller can fall back to a cheaper layout.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import time
from dataclasses import dataclass, field

import graphviz

from app.layout.sizes import LAYOUT


class LayoutTimeout(Exception):
    pass


class DotMissing(RuntimeError):
    pass


def missing_dot_message(binary: str) -> str:
    return (f"flowgrad needs Graphviz's '{binary}' to lay out graphs, and it is not on PATH. Install it "
            "(Debian/Ubuntu: `sudo apt-get install graphviz`, or run `make setup`) and start again.")


@dataclass(frozen=True)
class Graphviz:
    """What the startup check found: ``dot``'s absolute path (handed to the workers, which then
    run it without looking it up again) and its version ('2.43.0', or "unknown")."""

    path: str
    version: str


def check_dot(binary: str) -> Graphviz:
    """The one ``dot`` check, made once when the app is built (``app.main.create_app``): where
    ``binary`` is and its version, or ``DotMissing`` with a message saying how to install it."""
    path = shutil.which(binary)
    if path is None:
        raise DotMissing(missing_dot_message(binary))
    return Graphviz(path, dot_version(path) or "unknown")


def dot_version(path: str) -> str | None:
    """The version of the ``dot`` at ``path`` as 'major.minor.patch' (the whole ``-V`` line if it
    has no such number), or None when it cannot be run."""
    try:
        out = subprocess.run([path, "-V"], capture_output=True, text=True, timeout=5)
    except Exception:  # noqa: BLE001 - any failure means "not usable"
        return None
    text = (out.stderr.strip() or out.stdout.strip())
    m = re.search(r"version (\d+(?:\.\d+)*)", text)
    return m.group(1) if m else (text or None)


@dataclass
class PlainGraph:
    width: float  # points
    height: float
    nodes: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)  # x, y, w, h
    edges: list[tuple[str, str, list[list[float]]]] = field(default_factory=list)  # tail, head, points


def parse_plain(text: str) -> PlainGraph:
    """Parse ``-Tplain`` output into points with y pointing down (centre + size for nodes)."""
    g = PlainGraph(0.0, 0.0)
    height_in = 0.0
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        tag = parts[0]
        if tag == "graph":
            g.width = float(parts[2]) * 72.0
            height_in = float(parts[3])
            g.height = height_in * 72.0
        elif tag == "node":
            name = parts[1].strip('"')
            x, y, w, h = (float(v) for v in parts[2:6])
            g.nodes[name] = (x * 72.0, (height_in - y) * 72.0, w * 72.0, h * 72.0)
        elif tag == "edge":
            tail, head, n = parts[1].strip('"'), parts[2].strip('"'), int(parts[3])
            coords = parts[4 : 4 + 2 * n]
            pts = [
                [round(float(coords[2 * i]) * 72.0, 2), round((height_in - float(coords[2 * i + 1])) * 72.0, 2)]
                for i in range(n)
            ]
            g.edges.append((tail, head, pts))
    return g


class DotProcess:
    """``binary`` is run as given (the workers get the absolute path found by ``check_dot``)."""

    def __init__(self, binary: str, timeout: float):
        self.binary = binary
        self.timeout = timeout
        self.proc: subprocess.Popen | None = None
        self.calls = 0

    def _start(self) -> subprocess.Popen:
        try:
            self.proc = subprocess.Popen(
                [self.binary, "-Tplain"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
        except OSError as e:
            raise DotMissing(f"Graphviz '{self.binary}' could not be started") from e
        return self.proc

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            try:
                proc.kill()
                proc.wait(timeout=1)
            except Exception:  # noqa: BLE001
                pass

    def layout(self, source: str, timeout: float | None = None) -> PlainGraph:
        timeout = self.timeout if timeout is None else timeout
        proc = self.proc if self.proc is not None and self.proc.poll() is None else self._start()
        self.calls += 1
        deadline = time.monotonic() + timeout
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(source.encode() + b"\n")
            proc.stdin.flush()
            fd = proc.stdout.fileno()
            buf = bytearray()
            while not (buf.endswith(b"stop\n") and (len(buf) == 5 or buf[-6:-5] == b"\n")):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise LayoutTimeout(f"dot took longer than {timeout} s")
                ready, _, _ = select.select([fd], [], [], left)
                if not ready:
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise LayoutTimeout("dot exited")
                buf += chunk
        except (LayoutTimeout, OSError, BrokenPipeError):
            self.close()
            raise LayoutTimeout("dot failed") from None
        return parse_plain(buf.decode("utf-8", "replace"))


CLUSTER_LABEL_PT = LAYOUT["clusterFont"]  # the page's cluster title font (config.js LAYOUT.clusterFont)


def digraph_source(
    nodes: list[tuple[str, float, float]],
    edges: list[tuple],
    clusters: list[tuple] | None = None,
    rankdir: str = "LR",
) -> str:
    """DOT text for fixed-size boxes (sizes in points) and edges, built with ``graphviz.Digraph``.

    ``clusters`` is a forest: (name, member node names, child clusters[, label]). Every cluster gets
    a label (its text, or a blank) so dot keeps a band free above its members for the page's title.
    """
    g = graphviz.Digraph("G")
    g.attr(rankdir=rankdir, nodesep="0.25", ranksep="0.35", mclimit="0.5")
    g.attr("node", shape="box", fixedsize="true", label="")
    in_cluster: set[str] = set()

    def add_cluster(parent: graphviz.Digraph, cl: tuple[str, list[str], list]) -> None:
        name, members, children = cl[:3]
        label = cl[3] if len(cl) > 3 and cl[3] else " "
        with parent.subgraph(name="cluster_" + name) as sub:
            sub.attr(label=label, labeljust="l", fontsize=str(CLUSTER_LABEL_PT), fontname="DejaVu Sans Mono")
            for m in members:
                in_cluster.add(m)
            for m in members:
                w, h = sizes[m]
                sub.node(m, width=f"{w / 72:.3f}", height=f"{h / 72:.3f}")
            for child in children:
                add_cluster(sub, child)

    sizes = {n: (w, h) for n, w, h in nodes}
    for cl in clusters or []:
        add_cluster(g, cl)
    for n, w, h in nodes:
        if n not in in_cluster:
            g.node(n, width=f"{w / 72:.3f}", height=f"{h / 72:.3f}")
    for a, b, *minlen in edges:  # (tail, head) or (tail, head, minlen)
        if minlen:
            g.edge(a, b, minlen=str(minlen[0]))
        else:
            g.edge(a, b)
    return g.source
