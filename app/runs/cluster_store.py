"""The run store of several processes (``broker_url``): any process serves any run's groups, search and export.

The process that ran a program keeps its payloads in its own ``RunStore`` (answered from memory, no round trip)
and writes them to Redis, one hash per run (a field per folded pass, ``app.runs.wire``: compressed, no pickle).
Another process asked for the run reads the pass from Redis, waiting while the run is *pending* there (announced,
payloads still being built), and keeps what it read in a small cache of decoded passes (a page opens many
groups of one pass). Across the cluster the store is bounded like one process's: ``run_store_max_bytes`` (the
compressed bytes in Redis), ``run_store_max_runs`` and ``run_store_ttl_s`` (since last use, renewed by reads),
room made by dropping the least recently used run of the identity holding the most (``PUT``, one script).
Redis away: a run is served by the process that ran it, as without a broker.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict

from starlette.concurrency import run_in_threadpool

from app.runs import wire
from app.runs.store import EXPIRED, PENDING_FORGET_S, RUN_ID, RunStore
from app.trace.payloads import PassPayloads

log = logging.getLogger("flowgrad")
P = "fg:run:"  # P..id: the run's hash (field "p<k>" per pass, "owner"); P.."pending:"..id; the accounts below
CACHE_SHARE = 4  # decoded passes read from Redis: at most this fraction of run_store_max_bytes in this process
POLL_FIRST_S, POLL_MAX_S = 0.02, 0.25  # a pending run is looked at again after this long, doubling
ANNOUNCE_GRACE_S = 0.2  # a run unknown to Redis is asked once more: its announcement may be on its way

# ARGV: run, owner, now, max bytes, max runs, ttl, then (field, blob) pairs. Accounts: P.."size" (run → bytes),
# P.."owner" (run → owner), P.."held" (owner → bytes), P.."count" (owner → runs), P.."of:"..owner (zset run → used),
# P.."total", P.."n". Runs unused past ttl are dropped first; then, until the new run fits, the least recently used
# run of the owner holding the most (bytes when bytes are short, runs when runs are; the new run counted as its
# owner's), as app/runs/store.py does in one process.
PUT = """
local P = 'fg:run:'
local run, owner, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local maxb, maxn, ttl = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local function drop(r)
  local size = tonumber(redis.call('HGET', P..'size', r) or '0')
  local o = redis.call('HGET', P..'owner', r) or ''
  redis.call('DEL', P..r)
  redis.call('HDEL', P..'size', r)
  redis.call('HDEL', P..'owner', r)
  redis.call('ZREM', P..'of:'..o, r)
  redis.call('DECRBY', P..'total', size)
  redis.call('DECR', P..'n')
  redis.call('HINCRBY', P..'held', o, -size)
  if redis.call('HINCRBY', P..'count', o, -1) <= 0 then
    redis.call('HDEL', P..'held', o)
    redis.call('HDEL', P..'count', o)
  end
end
redis.call('DEL', P..'pending:'..run)
local size = 0
for i = 8, #ARGV, 2 do size = size + string.len(ARGV[i]) end
if size > maxb then return 0 end
if redis.call('HEXISTS', P..'size', run) == 1 then drop(run) end
for _, o in ipairs(redis.call('HKEYS', P..'count')) do
  for _, r in ipairs(redis.call('ZRANGEBYSCORE', P..'of:'..o, '-inf', now - ttl)) do drop(r) end
end
while true do
  local total = tonumber(redis.call('GET', P..'total') or '0')
  local n = tonumber(redis.call('GET', P..'n') or '0')
  local by_bytes = total + size > maxb
  if not by_bytes and n + 1 <= maxn then break end
  local heaviest, most = nil, -1
  local table_ = redis.call('HGETALL', P..(by_bytes and 'held' or 'count'))
  for i = 1, #table_, 2 do
    local held = tonumber(table_[i + 1])
    if table_[i] == owner then held = held + (by_bytes and size or 1) end
    if held > most then heaviest, most = table_[i], held end
  end
  if heaviest == nil then redis.call('SET', P..'total', 0) redis.call('SET', P..'n', 0) break end
  local oldest = redis.call('ZRANGE', P..'of:'..heaviest, 0, 0)
  if #oldest == 0 then
    redis.call('HDEL', P..'held', heaviest)
    redis.call('HDEL', P..'count', heaviest)
  else
    drop(oldest[1])
  end
end
redis.call('HSET', P..run, 'owner', owner, unpack(ARGV, 7))
redis.call('EXPIRE', P..run, ttl)
redis.call('HSET', P..'size', run, size)
redis.call('HSET', P..'owner', run, owner)
redis.call('ZADD', P..'of:'..owner, now, run)
redis.call('INCRBY', P..'total', size)
redis.call('INCR', P..'n')
redis.call('HINCRBY', P..'held', owner, size)
redis.call('HINCRBY', P..'count', owner, 1)
return 1
"""

# ARGV: run, field, now, ttl → {1, blob} (stored: its use renewed), {2} (pending), {0} (neither)
GET = """
local P = 'fg:run:'
local run = ARGV[1]
local blob = redis.call('HGET', P..run, ARGV[2])
if blob then
  local owner = redis.call('HGET', P..run, 'owner') or ''
  redis.call('EXPIRE', P..run, tonumber(ARGV[4]))
  redis.call('ZADD', P..'of:'..owner, 'XX', tonumber(ARGV[3]), run)
  return {1, blob}
end
if redis.call('EXISTS', P..run) == 1 then return {1, false} end
if redis.call('EXISTS', P..'pending:'..run) == 1 then return {2} end
return {0}
"""
STORED, PENDING, UNKNOWN = 1, 2, 0


class ClusterRunStore:
    """``RunStore``'s interface (what the pool fills and the routes read) over this process's store and Redis."""

    def __init__(self, local: RunStore, redis):
        self.local = local
        self.redis = redis
        self._put = redis.register_script(PUT)
        self._get = redis.register_script(GET)
        self.cache: OrderedDict[tuple[str, int], tuple[PassPayloads, float]] = OrderedDict()  # read from Redis
        self.cache_bytes = 0
        self.announcing: dict[str, asyncio.Task] = {}
        self._tasks: set[asyncio.Task] = set()
        self.written = self.written_bytes = self.read = self.failed = 0

    @property
    def ttl_s(self) -> float:
        return self.local.ttl_s

    def _spawn(self, work) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ---------------------------------------------------------------- filling (the pool, on the event loop)
    def expect(self, run: str, owner: str | None = None) -> None:
        self.local.expect(run, owner)
        if RUN_ID.fullmatch(run):
            self.announcing[run] = self._spawn(self._announce(run))

    def put(self, run: str, passes: dict[int, PassPayloads], owner: str | None = None) -> None:
        owner = owner or self.local.pending.get(run, (None, 0.0, ""))[2]
        self.local.put(run, passes, owner)
        if RUN_ID.fullmatch(run):
            self._spawn(self._write(run, dict(passes), owner or ""))

    def abandon(self, run: str) -> None:
        self.local.abandon(run)
        if RUN_ID.fullmatch(run):
            self._spawn(self._forget_pending(run))

    async def _announce(self, run: str) -> None:
        try:
            await self.redis.set(P + "pending:" + run, b"1", ex=int(PENDING_FORGET_S))
        except Exception as e:  # noqa: BLE001 - Redis away: the run is served by this process only
            self.failed += 1
            log.warning("run store: Redis announce failed: %s", e)

    async def _after_announce(self, run: str) -> None:
        task = self.announcing.pop(run, None)
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)  # the pending mark never lands after the payloads

    async def _write(self, run: str, passes: dict[int, PassPayloads], owner: str) -> None:
        await self._after_announce(run)
        try:
            blobs = await run_in_threadpool(lambda: [(f"p{k}", wire.encode(p)) for k, p in passes.items()])
            s = self.local
            args = [run, owner, time.time(), s.max_bytes, s.max_runs, max(1, int(s.ttl_s))]
            for name, blob in blobs:
                args += [name, blob]
            if await self._put(keys=[], args=args):
                self.written += 1
                self.written_bytes += sum(len(b) for _, b in blobs)
        except Exception as e:  # noqa: BLE001
            self.failed += 1
            log.warning("run store: Redis write of a run failed: %s", e)

    async def _forget_pending(self, run: str) -> None:
        await self._after_announce(run)
        try:
            await self.redis.delete(P + "pending:" + run)
        except Exception as e:  # noqa: BLE001
            self.failed += 1
            log.warning("run store: Redis failed: %s", e)

    # ---------------------------------------------------------------- reading
    def _held_here(self, run: str) -> bool:
        return run in self.local.runs or run in self.local.pending

    async def wait(self, run: str, k: int, timeout: float) -> PassPayloads | None:
        if self._held_here(run):
            got = await self.local.wait(run, k, timeout)
            if got is not None:
                return got
        cached = self._cached(run, k)
        if cached is not None:
            return cached
        return await self._fetch(run, k, timeout)

    async def wait_run(self, run: str, timeout: float) -> dict[int, PassPayloads]:
        if self._held_here(run):
            got = await self.local.wait_run(run, timeout)
            if got:
                return got
        if not RUN_ID.fullmatch(run):
            return {}
        try:
            fields = await self.redis.hkeys(P + run)
        except Exception as e:  # noqa: BLE001
            log.warning("run store: Redis read failed: %s", e)
            return {}
        if not fields:  # pending, or unknown: wait until it is stored
            if (await self._poll(run, "owner", timeout))[0] != STORED:
                return {}
            try:
                fields = await self.redis.hkeys(P + run)
            except Exception:  # noqa: BLE001
                return {}
        out: dict[int, PassPayloads] = {}
        for name in fields:
            if name.startswith(b"p") and name[1:].isdigit():
                got = await self.wait(run, int(name[1:]), timeout)
                if got is not None:
                    out[int(name[1:])] = got
        return out

    async def _fetch(self, run: str, k: int, timeout: float) -> PassPayloads | None:
        """Pass ``k`` of ``run`` from Redis, waiting up to ``timeout`` seconds while the run is pending."""
        state, blob = await self._poll(run, f"p{k}", timeout)
        if state != STORED or not blob:
            return None  # expired, unknown, or the run is there without this pass
        try:
            payloads = await run_in_threadpool(wire.decode, blob) if len(blob) > 65_536 else wire.decode(blob)
        except wire.BadPayloads as e:  # another version's entry, or damaged: as if it expired
            log.warning("run store: unreadable payloads in Redis for a run: %s", e)
            return None
        self.read += 1
        self._keep(run, k, payloads)
        return payloads

    async def _poll(self, run: str, field: str, timeout: float) -> tuple[int, bytes | None]:
        """(STORED, the run's ``field`` or None) once the run is in Redis, within ``timeout`` seconds while it is
        pending; (UNKNOWN, None) when it is not there (or Redis is away)."""
        if not RUN_ID.fullmatch(run):
            return UNKNOWN, None
        deadline, pause, asked_again = time.monotonic() + timeout, POLL_FIRST_S, False
        while True:
            try:
                got = await self._get(keys=[], args=[run, field, time.time(), max(1, int(self.ttl_s))])
            except Exception as e:  # noqa: BLE001 - Redis away: only this process's runs are served
                log.warning("run store: Redis read failed: %s", e)
                return UNKNOWN, None
            if got[0] == STORED:
                return STORED, got[1] or None
            if got[0] == UNKNOWN:
                if asked_again:
                    return UNKNOWN, None
                asked_again, pause = True, ANNOUNCE_GRACE_S
            if time.monotonic() + pause > deadline:
                return got[0], None
            await asyncio.sleep(pause)
            pause = min(POLL_MAX_S, pause * 2)

    def _cached(self, run: str, k: int) -> PassPayloads | None:
        entry = self.cache.get((run, k))
        if entry is None:
            return None
        if time.monotonic() - entry[1] > self.ttl_s:
            self._uncache((run, k))
            return None
        self.cache.move_to_end((run, k))
        return entry[0]

    def _keep(self, run: str, k: int, payloads: PassPayloads) -> None:
        room = self.local.max_bytes // CACHE_SHARE
        size = payloads.nbytes()
        if size > room:
            return
        if (run, k) in self.cache:
            self._uncache((run, k))
        while self.cache and self.cache_bytes + size > room:
            self._uncache(next(iter(self.cache)))
        self.cache[(run, k)] = (payloads, time.monotonic())
        self.cache_bytes += size

    def _uncache(self, key: tuple[str, int]) -> None:
        payloads, _ = self.cache.pop(key)
        self.cache_bytes -= payloads.nbytes()

    def missing(self, run: str) -> str:
        """Every process writes its runs to Redis: a run not found there expired (or never was)."""
        return EXPIRED

    def state(self) -> dict:
        return {**self.local.state(), "shared": "redis", "written": self.written, "written_bytes": self.written_bytes,
                "read": self.read, "cached": len(self.cache), "cached_bytes": self.cache_bytes, "failed": self.failed}
