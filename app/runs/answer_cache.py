"""Answers served from what was already computed: a lecture hall runs the same program 200 times.

A run is deterministic when the same source with the same settings and options gives the same answer: every run
starts from the same seeds (torch's default generator at its default seed, Python's ``random`` at 0, each run in a
fresh fork of the same worker image). What is *not* deterministic is found in the program's tokens (never by running
or evaluating it): clocks (``time``, ``perf_counter``, ``datetime``…), ``id()``, a fresh seed (``torch.seed()``,
``seed()`` with no argument), ``np.random`` never seeded (NumPy's ``RandomState()`` draws its seed from the OS).
Such programs always run on their own.

* ``key``: sha256 of (source, options, the settings that shape an answer, this module's version); None when the
  program is not deterministic, sharing is off (``answer_cache_bytes`` = 0) or the key was seen to give an answer
  that cannot be shared.
* ``flights``: one execution per key in this process: concurrent identical requests wait for the first
  (``lead`` / ``settle``); a leader that could not answer (cancelled by its tab, busy, its worker died) settles with
  None and its followers try again (one of them leads).
* Answers a key may share: complete, not folded (a folded pass's ``run`` id is a capability to one owner's stored
  payloads: each run gets its own), not stopped or thinned by a time budget (``time_limit_s``, ``answer_time_s``…:
  they depend on the machine's load). Stored gzipped (and sent so to a client that takes gzip), bounded in
  bytes (``answer_cache_bytes``) and age (``answer_cache_ttl_s``): in this process (``LocalAnswers``), or in Redis
  with ``broker_url`` (``RedisAnswers``, shared by every process; the bound is the cluster's).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import logging
import re
import time
import tokenize
from collections import OrderedDict

import orjson

from app.core.answer import EVENT_SEPARATOR
from app.core.compression import gunzip, gzip_fast, gzip_small

log = logging.getLogger("flowgrad")
VERSION = "1"  # bump when what an answer holds changes for the same program (old entries are then never read)
REFUSED_KEYS = 4096  # keys remembered as "gave an answer that cannot be shared" (they skip the wait)
# settings that never shape an answer: where and how many processes serve, secrets, the cache itself
NOT_SHAPING = frozenset({"identity_secret", "broker_url", "host", "port", "workers", "allow_unshared_processes",
                         "answer_cache_bytes", "answer_cache_ttl_s", "ready_wait_s", "broker_ping_timeout_s",
                         "queue_limit", "queue_timeout_s", "busy_retry_after_s", "identity_queue_limit"})
CLOCKS = frozenset({"time", "perf_counter", "monotonic", "process_time", "time_ns", "perf_counter_ns",
                    "monotonic_ns", "datetime", "now", "today", "id", "urandom", "uuid4", "getrandbits"})
# an answer that mentions one of these limits was cut or thinned by time: another run may get further
TIMED = (b"time_limit_s", b"answer_time_s", b"max_wall_s", b"hard_kill_s")
FOLDED = b'"folded":true'
# errors that tell what happened to one run, not what the program does
CIRCUMSTANTIAL = frozenset({"Cancelled", "WorkerError", "Busy", "Unavailable", "TimeoutError", "MemoryError",
                            "LimitExceeded"})
# an answer no other request waited for is compressed fast (a hall of 200 different programs, `gzip_fast`); one
# that others waited for is sent to all of them, so smaller pays (`gzip_small`): app/core/compression.py
# every name ``deterministic`` looks for, as a whole word: a program without one needs no tokenizing (~2 ms)
_SUSPECT_WORD = re.compile(r"\b(?:" + "|".join(sorted(CLOCKS | {"seed", "random"})) + r")\b")


def deterministic(source: str) -> bool:
    """Whether ``source``'s tokens name nothing that differs between runs (see the module's docstring). A program
    that does not tokenize does not parse either: its answer, the syntax error, is the same every time."""
    if _SUSPECT_WORD.search(source) is None:  # no such word anywhere, so no such name token: skip tokenizing
        return True
    names: list[str] = []
    ops: list[str] = []
    with contextlib.suppress(tokenize.TokenError, SyntaxError, IndentationError):
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.NAME:
                names.append(tok.string)
                ops.append("")
            elif tok.type not in (tokenize.NL, tokenize.COMMENT):  # every other token keeps its place
                names.append("")
                ops.append(tok.string if tok.type == tokenize.OP else "\0")
    present = set(names)
    if present & CLOCKS:
        return False
    seeded = False
    for i, name in enumerate(names):
        if name == "seed" and i + 1 < len(ops) and ops[i + 1] == "(":
            if i + 2 < len(ops) and ops[i + 2] == ")":
                return False  # torch.seed(), np.random.seed(): a seed from the OS
            seeded = True
    return not ("numpy" in present and "random" in present and not seeded)


def _error_of(event: bytes):
    """The ``error`` of an answer (or a stream's ``done`` event) as ``app.core.answer.run_answer`` lays it out, read
    without parsing the passes after it: a ``"`` after a ``,`` is never inside a JSON string, so the first
    ``,"error":`` ends the head (``stdout``, ``type``) and the first ``,"variables":`` after it ends the error or
    lies inside it (a cut dict does not parse). Any other layout: the whole event is parsed."""
    start = event.find(b',"error":')
    if start > 0:
        try:
            head = orjson.loads(event[:start] + b"}")
            if type(head) is dict and "stdout" in head and head.keys() <= {"type", "stdout"}:
                at = start + len(b',"error":')
                if event.startswith(b"null,", at):
                    return None
                end = event.find(b',"variables":', at)
                if end > 0:
                    return orjson.loads(event[at:end])
        except orjson.JSONDecodeError:
            pass
    return orjson.loads(event).get("error")


def circumstantial(answer: bytes) -> bool:
    """Whether the answer (or a stream's events, ``done`` last) ended by what happened to this one run (cancelled,
    its worker replaced, memory, the server's state), not by what the program does."""
    try:
        error = _error_of(answer.rpartition(EVENT_SEPARATOR)[2])
    except (orjson.JSONDecodeError, AttributeError):
        return True
    return isinstance(error, dict) and error.get("type") in CIRCUMSTANTIAL


def shareable(answer: bytes) -> bool:
    """Whether a complete answer may be given to another request for the same key: not folded, not cut by time,
    not circumstantial."""
    return FOLDED not in answer and not any(limit in answer for limit in TIMED) and not circumstantial(answer)


class Flights:
    """Executions under way in this process, by key: the first request leads, the others wait for its answer.
    A flight older than ``stale_s`` (longer than any run can wait and run: a leader whose answer was never read
    to its end) is given up: it settles empty and the next request leads."""

    def __init__(self, stale_s: float = 120.0, clock=time.monotonic):
        self.stale_s, self.clock = stale_s, clock
        self.under_way: dict[str, tuple[asyncio.Future, float]] = {}
        self.leaders: dict[str, str | None] = {}  # key → the identity whose run it is
        self.asked: dict[str, int] = {}  # key → requests that found its run under way (they may wait for it)

    def get(self, key: str) -> asyncio.Future | None:
        entry = self.under_way.get(key)
        if entry is not None and self.clock() - entry[1] > self.stale_s:
            self.land(key, entry[0], None)
            return None
        if entry is None:
            return None
        self.asked[key] = self.asked.get(key, 0) + 1
        return entry[0]

    def lead(self, key: str, identity: str | None = None) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self.under_way[key] = (future, self.clock())
        self.asked.pop(key, None)
        self.leaders[key] = identity
        return future

    def led_by(self, key: str) -> str | None:
        return self.leaders.get(key)

    def land(self, key: str, future: asyncio.Future, answer: tuple[bytes, bytes] | None) -> None:
        entry = self.under_way.get(key)
        if entry is not None and entry[0] is future:
            del self.under_way[key]
            self.leaders.pop(key, None)
            self.asked.pop(key, None)
        if not future.done():
            future.set_result(answer)


class LocalAnswers:
    """Compressed answers in this process's memory: least recently used first out past ``max_bytes``."""

    def __init__(self, max_bytes: int, ttl_s: float, clock=time.monotonic):
        self.max_bytes, self.ttl_s, self.clock = max_bytes, ttl_s, clock
        self.entries: OrderedDict[str, tuple[bytes, float]] = OrderedDict()
        self.nbytes = 0

    async def get(self, key: str) -> bytes | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        if self.clock() - entry[1] > self.ttl_s:
            self._drop(key)
            return None
        self.entries.move_to_end(key)
        return entry[0]

    async def put(self, key: str, packed: bytes) -> None:
        if len(packed) > self.max_bytes:
            return
        if key in self.entries:
            self._drop(key)
        while self.entries and self.nbytes + len(packed) > self.max_bytes:
            self._drop(next(iter(self.entries)))
        self.entries[key] = (packed, self.clock())
        self.nbytes += len(packed)

    def _drop(self, key: str) -> None:
        packed, _ = self.entries.pop(key)
        self.nbytes -= len(packed)

    def state(self) -> dict:
        return {"entries": len(self.entries), "bytes": self.nbytes}


# KEYS: entry, index (sorted set: key → when stored), byte counter · ARGV: packed answer, now, max bytes, ttl (s)
# One script, so the byte bound holds across processes: the oldest entries go until the new one fits.
PUT = """
local size = string.len(ARGV[1])
local max = tonumber(ARGV[3])
if size > max then return 0 end
local old = redis.call('STRLEN', KEYS[1])
if old > 0 then redis.call('DECRBY', KEYS[3], old) redis.call('ZREM', KEYS[2], KEYS[1]) end
local total = tonumber(redis.call('GET', KEYS[3]) or '0')
while total + size > max do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)
  if #oldest == 0 then total = 0 redis.call('SET', KEYS[3], 0) break end
  local n = redis.call('STRLEN', oldest[1])
  redis.call('DEL', oldest[1])
  redis.call('ZREM', KEYS[2], oldest[1])
  total = tonumber(redis.call('DECRBY', KEYS[3], n))
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[2], KEYS[1])
redis.call('INCRBY', KEYS[3], size)
return 1
"""
PREFIX = "fg:ans:"
INDEX, BYTES = "fg:ans-index", "fg:ans-bytes"


class RedisAnswers:
    """Compressed answers in Redis, shared by every process (``PUT`` keeps the cluster's byte bound). An entry that
    expired by age leaves its index slot and bytes counted until the bound pushes it out (its ``DEL`` is a no-op).
    Redis away: a miss, and nothing stored (the run is then computed, as without sharing)."""

    def __init__(self, redis, max_bytes: int, ttl_s: float):
        self.redis, self.max_bytes, self.ttl_s = redis, max_bytes, ttl_s
        self._put = redis.register_script(PUT)

    async def get(self, key: str) -> bytes | None:
        try:
            return await self.redis.get(PREFIX + key)
        except Exception as e:  # noqa: BLE001 - a missing broker is a miss, not an error for the student
            log.warning("answer cache: Redis get failed: %s", e)
            return None

    async def put(self, key: str, packed: bytes) -> None:
        try:
            await self._put(keys=[PREFIX + key, INDEX, BYTES],
                            args=[packed, time.time(), self.max_bytes, max(1, int(self.ttl_s))])
        except Exception as e:  # noqa: BLE001
            log.warning("answer cache: Redis put failed: %s", e)

    def state(self) -> dict:
        return {"shared": "redis"}


class SharedAnswers:
    """Keys, flights and the store together: what the run service asks (app/runner/service.py)."""

    def __init__(self, settings, store):
        shaping = {k: v for k, v in settings.model_dump().items() if k not in NOT_SHAPING}
        self.fingerprint = hashlib.sha256(orjson.dumps(shaping, option=orjson.OPT_SORT_KEYS)).hexdigest()
        self.store = store
        self.flights = Flights(settings.queue_timeout_s + settings.max_wall_s + settings.supervisor_grace_s + 5)
        self.refused: OrderedDict[str, None] = OrderedDict()
        self.verdicts: OrderedDict[bytes, bool] = OrderedDict()  # program digest → deterministic()
        self.hits = self.shared_waits = self.stored = 0
        self._tasks: set[asyncio.Task] = set()
        self.storing: dict[str, bytes] = {}  # answers (gzipped) settled whose store.put is under way

    @classmethod
    def from_settings(cls, settings, redis=None) -> SharedAnswers | None:
        if settings.answer_cache_bytes <= 0:
            return None
        if redis is not None:
            return cls(settings, RedisAnswers(redis, settings.answer_cache_bytes, settings.answer_cache_ttl_s))
        return cls(settings, LocalAnswers(settings.answer_cache_bytes, settings.answer_cache_ttl_s))

    def key(self, source: str, options) -> str | None:
        program = hashlib.sha256(source.encode("utf-8", "replace")).digest()
        known = self.verdicts.get(program)
        if known is None:  # tokenizing is most of a hit's cost: a hall asks about one program 200 times
            known = self.verdicts[program] = deterministic(source)
            while len(self.verdicts) > REFUSED_KEYS:
                self.verdicts.popitem(last=False)
        if not known:
            return None
        digest = hashlib.sha256()
        for part in (VERSION, self.fingerprint, repr(tuple(options)), source):
            digest.update(part.encode("utf-8", "replace"))
            digest.update(b"\0")
        key = digest.hexdigest()
        return None if key in self.refused else key

    async def get(self, key: str) -> tuple[bytes, bytes] | None:
        """The key's answer as (plain, gzipped): the gzipped one goes as it is to a client that takes gzip."""
        packed = self.storing.get(key)  # settled, on its way into the store
        if packed is None:
            packed = await self.store.get(key)
        if packed is None:
            return None
        self.hits += 1
        return gunzip(packed), packed

    def settle(self, key: str, future: asyncio.Future, answer: bytes | None, complete: bool) -> bytes | None:
        """The leader's outcome: a shareable answer goes to the waiting requests and the store; a complete answer
        that cannot be shared marks the key refused (its later requests run on their own, without waiting); no
        answer, or a circumstantial one (cancelled, busy, its worker died), lets the waiting requests try again.
        Returns the shared answer gzipped (the leader's own request sends those bytes too), else None."""
        if answer is not None and complete and shareable(answer):
            entry = self.flights.under_way.get(key)
            shared = entry is not None and entry[0] is future and self.flights.asked.get(key, 0) > 0
            packed = gzip_small(answer) if shared else gzip_fast(answer)  # once for all
            self.flights.land(key, future, (answer, packed))
            self.storing[key] = packed
            task = asyncio.get_running_loop().create_task(self.store.put(key, packed))
            self._tasks.add(task)
            task.add_done_callback(lambda done: (self._tasks.discard(done), self.storing.pop(key, None)))
            self.stored += 1
            return packed
        if answer is not None and complete and not circumstantial(answer):  # the program's own: never shareable
            self.refused[key] = None
            while len(self.refused) > REFUSED_KEYS:
                self.refused.popitem(last=False)
        self.flights.land(key, future, None)
        return None

    def state(self) -> dict:
        return {"hits": self.hits, "shared_waits": self.shared_waits, "stored": self.stored,
                "under_way": len(self.flights.under_way), **self.store.state()}
