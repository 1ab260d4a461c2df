"""What the server keeps of a folded pass (docs/trace.md §5): its groups' payloads as encoded pieces, built by
the worker (``app.trace.folded``), pickled over the worker's pipe (``app.runner.protocol.RunStored``), kept by
the run store (``app.runs.store``) and assembled there per request. Plain bytes and dicts: the server process
loads this module without the trace builder or the engine.
"""

from __future__ import annotations

import sys
import zlib
from dataclasses import dataclass, field

import orjson


def pack(data: bytes) -> bytes:
    # NOTE: values are most of a payload (a 20,000-node pass of 256-element tensors: 60 MB of JSON); level 1
    # keeps them 4-5x smaller in the store and on the worker's pipe for ~1/10 of the time it took to build them
    return zlib.compress(data, 1)


@dataclass
class PassPayloads:
    """What the run store keeps of one folded pass: encoded pieces (``cores`` and ``frames`` compressed,
    ``pack``) assembled per request."""

    cores: dict[str, bytes] = field(default_factory=dict)  # gid → {"id","width","height","nodes","edges","clusters"}
    entries: dict[str, bytes] = field(default_factory=dict)  # gid → its tree entry
    frames: dict[str, bytes] = field(default_factory=dict)  # gid → '"12":{…},"13":{…}' (frames of its own nodes)
    children: dict[str, list[str]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    raw: dict[str, int] = field(default_factory=dict)  # gid → bytes of its core and frames once unpacked
    search: list[tuple[str, bytes]] = field(default_factory=list)  # (lower-case text, its result as JSON)
    measured: int = 0  # bytes these objects hold in memory (measure(): once, where they are built)

    def measure(self) -> int:
        """Count what the pieces hold in memory, Python's object headers and containers included (a payload's
        bytes alone counted half of what a 3,300-group pass held), and keep it for nbytes()."""
        size = sys.getsizeof
        total = 0
        for table in (self.cores, self.entries, self.frames, self.sizes, self.raw):
            total += size(table) + sum(size(k) + size(v) for k, v in table.items())
        total += size(self.children) + sum(size(k) + size(v) for k, v in self.children.items())  # v: gids counted as keys
        total += size(self.search) + sum(size(e) + size(e[0]) + size(e[1]) for e in self.search)
        self.measured = total
        return total

    def nbytes(self) -> int:
        return self.measured or self.measure()

    # ------------------------------------------------------------- answers
    def subtree(self, gid: str) -> list[str]:
        out, stack = [], [gid]
        while stack:
            g = stack.pop()
            out.append(g)
            stack.extend(reversed(self.children.get(g, ())))
        return out

    def _groups(self, gids: list[str]) -> bytes:
        return b"{" + b",".join(b'"' + g.encode() + b'":' + self.entries[g] for g in gids) + b"}"

    def payload(self, gid: str, descendants_limit: int) -> bytes:
        """The group endpoint's answer (docs/trace.md §5)."""
        sub = self.subtree(gid)
        whole = self.sizes.get(gid, 0) <= descendants_limit
        # NOTE: a big subtree's frames would be the whole pass (a 3,300-step fold: 10 MB); its answer holds the
        # frames of its own nodes, and each smaller group below brings its subtree's frames with its descendants
        unpack = zlib.decompress
        frames = b",".join(unpack(self.frames[g]) for g in (sub if whole else [gid]) if self.frames.get(g))
        listed = sub if whole else [gid, *self.children.get(gid, ())]  # the whole tree is in the pass already
        parts = [unpack(self.cores[gid])[:-1], b',"groups":', self._groups(listed), b',"frames":{', frames, b"}"]
        if whole:
            # the descendants' own "groups" are left out: this answer's "groups" holds them all
            desc = [b'"' + d.encode() + b'":' + unpack(self.cores[d]) for d in sub[1:]]
            parts += [b',"descendants":{', b",".join(desc), b"}"]
        return b"".join(parts) + b"}"

    def offline(self, gid: str) -> bytes:
        """A group's payload for the offline file: frames, no descendants (each group is there)."""
        return self.payload(gid, -1)

    def offline_bytes(self) -> int:
        """The size of ``offline_all`` from the stored sizes, nothing unpacked (an upper bound within a few
        bytes a group)."""
        entries = self.entries
        total = 2
        for gid in self.cores:
            listed = [gid, *self.children.get(gid, ())]
            total += len(gid) + 48 + self.raw.get(gid, 0) + sum(len(entries.get(g, b"")) + len(g) + 4 for g in listed)
        return total

    def offline_all(self, max_bytes: int) -> bytes | None:
        """``{gid: offline payload}`` of every group, or None as soon as it passes ``max_bytes``."""
        parts, used = [], 2
        for gid in self.cores:
            part = b'"' + gid.encode() + b'":' + self.offline(gid)
            used += len(part) + 1
            if used > max_bytes:
                return None
            parts.append(part)
        return b"{" + b",".join(parts) + b"}"

    def find(self, q: str, limit: int) -> dict:
        q = q.lower()
        results, total = [], 0
        for text, res in self.search:
            if q in text:
                total += 1
                if len(results) < limit:
                    results.append(orjson.loads(res))
        return {"results": results, "total": total}
