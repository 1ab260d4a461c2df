"""A folded pass's payloads as one compressed byte string, for the run store in Redis (app/runs/cluster_store.py).

No pickle: a value read back from Redis is parsed, never executed. Layout: 4 bytes (big-endian) of header length,
the header (JSON: the tables' keys, the small tables, each blob's length), then the blobs; all of it zlib level 1
(the cores and frames are compressed already, the entries and search results are plain JSON and shrink 4-6x).
"""

from __future__ import annotations

import zlib

import orjson

from app.trace.payloads import PassPayloads


class BadPayloads(ValueError):
    """Bytes that are not an encoded pass (another version, or damaged)."""


def encode(p: PassPayloads) -> bytes:
    blobs = [*p.cores.values(), *p.entries.values(), *p.frames.values(), *(result for _, result in p.search)]
    header = orjson.dumps({"v": 1, "cores": list(p.cores), "entries": list(p.entries), "frames": list(p.frames),
                           "children": p.children, "sizes": p.sizes, "raw": p.raw,
                           "search": [text for text, _ in p.search], "measured": p.nbytes(),
                           "lens": [len(b) for b in blobs]})
    return zlib.compress(b"".join([len(header).to_bytes(4, "big"), header, *blobs]), 1)


def decode(data: bytes) -> PassPayloads:
    try:
        raw = zlib.decompress(data)
        n = int.from_bytes(raw[:4], "big")
        h = orjson.loads(raw[4:4 + n])
        if h.get("v") != 1:
            raise BadPayloads(f"payloads of version {h.get('v')!r}")
        at, blobs = 4 + n, []
        for length in h["lens"]:
            blobs.append(raw[at:at + length])
            at += length
        if at != len(raw):
            raise BadPayloads("payloads of the wrong length")
        parts = iter(blobs)
        p = PassPayloads(cores={g: next(parts) for g in h["cores"]}, entries={g: next(parts) for g in h["entries"]},
                         frames={g: next(parts) for g in h["frames"]}, children=h["children"], sizes=h["sizes"],
                         raw=h["raw"], search=[(text, next(parts)) for text in h["search"]])
    except (zlib.error, orjson.JSONDecodeError, KeyError, TypeError, AttributeError, StopIteration) as e:
        raise BadPayloads(str(e)) from None
    p.measured = int(h.get("measured") or 0) or p.measure()
    return p
