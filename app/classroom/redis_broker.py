"""Sessions in Redis, so several server processes (or hosts) share them (``FLOWGRAD_BROKER_URL``).

Keys per session (all expire after ``idle_s`` without a touch): ``fg:s:CODE`` a hash (token digest,
created, seq, latest state, the current question's public view, tally seq), ``fg:f:CODE`` a sorted set
of followers by last-seen time, ``fg:q:CODE`` the questions (JSON by id), ``fg:a:CODE:ID`` /
``fg:c:CODE:ID`` each question's answers and answer counts, ``fg:m:CODE`` follower tokens taken per identity;
``fg:sessions`` all codes and ``fg:o:OWNER`` each identity's codes, scored by when they expire (for
``max_sessions`` and ``max_sessions_per_identity``). A session no follower joined expires ``unjoined_s``
after it was made. Every published change is one Lua script (bump ``seq``, store, ``PUBLISH``), so
``seq`` order is publish order and Redis pub/sub delivers it in that order to every process; each
process has one pattern subscription feeding its ``Hub``. Redis away: the presenter's calls fail with
503 "broker unavailable", followers keep their last state, and the subscription reconnects by itself.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import time

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from app.classroom.broker import (
    NOT_FOUND,
    NOT_PRESENTER,
    BrokerDown,
    Forbidden,
    Limits,
    NoSuchQuestion,
    NoSuchSession,
    QuestionClosed,
    SessionFull,
    TooManyAnswers,
    TooManyOwnFollowers,
    TooManyOwnSessions,
    TooManySessions,
    new_question,
    own_followers_message,
    own_sessions_message,
    public_question,
    state_payload,
    tally_payload,
)
from app.classroom.codes import new_code
from app.classroom.hub import Hub, sse_frame

log = logging.getLogger("flowgrad")
CHANNEL_PREFIX = "fg:ch:"

# One round trip per published change (a presenter at 10 states/s waited on ~6 before): the presenter's token, the
# session's life (idle_s once joined, else what is left of unjoined_s), the frame, PUBLISH and every key's expiry.
# KEYS: session hash, followers, questions, follower tokens taken, shared run, fg:sessions
# ARGV: state ('' keeps it), public question ('' keeps it), channel, now, idle ttl, away ('' keeps it, '0' / '1'),
# ended ('1': the last frame, then the session's keys go), presenter heard ('1'), token digest ('' : not checked),
# unjoined_s, code, owners' key prefix, the class run's progress ('' keeps it, '-' clears it)
# Returns the new seq; -1 no such session, -2 the digest is not the presenter's.
PUBLISH_STATE = """
local digest = redis.call('HGET', KEYS[1], 'digest')
if not digest then return -1 end
if ARGV[9] ~= '' and ARGV[9] ~= digest then return -2 end
local now, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
local created, joined, owner = unpack(redis.call('HMGET', KEYS[1], 'created', 'joined', 'owner'))
local life = ttl
if not (joined and tonumber(joined) ~= 0) then
  local left = (tonumber(created) or now) + tonumber(ARGV[10]) - now
  life = math.max(1, math.floor(math.min(ttl, left)))
end
if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], 'state', ARGV[1]) end
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'qpub', ARGV[2]) end
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'away', ARGV[6]) end
if ARGV[8] == '1' then redis.call('HSET', KEYS[1], 'seen', ARGV[4]) end
if ARGV[13] == '-' then redis.call('HDEL', KEYS[1], 'progress')
elseif ARGV[13] ~= '' then redis.call('HSET', KEYS[1], 'progress', ARGV[13]) end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('HSET', KEYS[1], 'touched', ARGV[4])
local st = redis.call('HGET', KEYS[1], 'state') or 'null'
local q = redis.call('HGET', KEYS[1], 'qpub') or 'null'
local tail = ''
if redis.call('HGET', KEYS[1], 'away') == '1' then tail = ',"away":true' end
if ARGV[7] == '1' then tail = tail .. ',"ended":true' end
local progress = redis.call('HGET', KEYS[1], 'progress')
if progress then tail = tail .. ',"progress":' .. progress end
redis.call('PUBLISH', ARGV[3], seq .. ' {"seq":' .. seq .. ',"state":' .. st .. ',"question":' .. q .. tail .. '}')
local owned = (owner and owner ~= '') and (ARGV[12] .. owner) or nil
if ARGV[7] == '1' then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
  redis.call('ZREM', KEYS[6], ARGV[11])
  if owned then redis.call('ZREM', owned, ARGV[11]) end
  return seq
end
for i = 1, 5 do redis.call('EXPIRE', KEYS[i], life) end
redis.call('ZADD', KEYS[6], now + life, ARGV[11])
if owned then
  redis.call('ZADD', owned, now + life, ARGV[11])
  redis.call('EXPIRE', owned, ttl)
end
return seq
"""

# KEYS: answers, changes, session hash · ARGV: follower, value, max changes, max answers, channel, qid, ttl
ANSWER = """
local n = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if n >= tonumber(ARGV[3]) then return -1 end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then return -2 end
redis.call('HSET', KEYS[2], ARGV[1], n + 1)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[7])
redis.call('EXPIRE', KEYS[2], ARGV[7])
local t = redis.call('HINCRBY', KEYS[3], 'tally', 1)
local vals = redis.call('HVALS', KEYS[1])
redis.call('PUBLISH', ARGV[5], t .. ' {"seq":' .. t .. ',"question":"' .. ARGV[6] .. '","count":' .. #vals ..
  ',"values":[' .. table.concat(vals, ',') .. ']}')
return t
"""


def _down(method):
    """Redis unreachable → the caller gets 503 'broker unavailable', never a 500."""
    @functools.wraps(method)
    async def wrapper(self, *args, **kwargs):
        try:
            return await method(self, *args, **kwargs)
        except (RedisError, OSError) as e:
            raise BrokerDown(f"the session broker (Redis) is unavailable: {type(e).__name__}; "
                             "followers keep their last state, try again in a moment") from None
    return wrapper


class RedisBroker:
    def __init__(self, url: str, limits: Limits, hub: Hub):
        self.url = url
        self.limits = limits
        self.hub = hub
        # a bounded pool that queues: 200 followers joining at once wait their turn instead of opening
        # 200 connections (and timing some out) on a busy machine
        # (a class of 1,000 joining at once queues here for seconds on a busy machine: 30 s before "unavailable")
        pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=32, timeout=30, socket_timeout=5,
                                                        socket_connect_timeout=5, health_check_interval=10)
        self.redis = aioredis.Redis(connection_pool=pool)
        self._listener: asyncio.Task | None = None
        self._publish = self.redis.register_script(PUBLISH_STATE)
        self._answer = self.redis.register_script(ANSWER)

    @property
    def ttl(self) -> int:
        return max(1, int(self.limits.idle_s))

    async def start(self) -> None:
        self._listener = asyncio.create_task(self._listen())

    async def stop(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            try:
                await self._listener
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - shutting down
                pass
        await self.redis.aclose()

    async def _listen(self) -> None:
        """One pattern subscription per process; after a lost connection, resubscribe and hand every
        channel with listeners here the latest event (whatever was published meanwhile is covered)."""
        while True:
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.psubscribe(CHANNEL_PREFIX + "*")
                await self._catch_up()
                while True:
                    message = await pubsub.get_message(timeout=5.0)
                    if message is None or message.get("type") != "pmessage":
                        continue
                    name = message["channel"].decode()[len(CHANNEL_PREFIX):]
                    seq, _, payload = message["data"].partition(b" ")
                    self.hub.put(name, int(seq), sse_frame(int(seq), payload, "tally" if name.startswith("tally:") else None))
            except asyncio.CancelledError:
                await pubsub.aclose()
                raise
            except (RedisError, OSError) as e:
                log.warning("classroom broker: lost Redis (%s); reconnecting", type(e).__name__)
                try:
                    await pubsub.aclose()
                except Exception:  # noqa: BLE001 - the connection is already gone
                    pass
                await asyncio.sleep(0.5)

    async def _catch_up(self) -> None:
        for name in list(self.hub.channels):
            kind, _, code = name.partition(":")
            try:
                if kind == "state":
                    latest = await self.latest(code)
                    if latest is not None:
                        self.hub.put(name, latest[0], sse_frame(latest[0], latest[1]))
            except Exception:  # noqa: BLE001 - best effort: the next event repairs it
                pass

    def _key(self, code: str) -> str:
        return "fg:s:" + code

    async def _soonest(self, key: str, now: float) -> int:
        first = await self.redis.zrange(key, 0, 0, withscores=True)
        return max(1, math.ceil(first[0][1] - now)) if first else 1

    @_down
    async def create(self, digest: str, owner: str = "") -> str:
        now = time.time()
        mine = "fg:o:" + owner
        await self.redis.zremrangebyscore("fg:sessions", "-inf", now)
        await self.redis.zremrangebyscore(mine, "-inf", now)
        if owner and await self.redis.zcard(mine) >= self.limits.max_sessions_per_identity:
            raise TooManyOwnSessions(own_sessions_message(self.limits), retry_after=await self._soonest(mine, now))
        if await self.redis.zcard("fg:sessions") >= self.limits.max_sessions:
            raise TooManySessions(f"the server holds its limit of {self.limits.max_sessions} class sessions "
                                  f"(max_sessions); try again when one ends",
                                  retry_after=await self._soonest("fg:sessions", now))
        while True:
            code = new_code(self.limits.code_length)
            if await self.redis.hsetnx(self._key(code), "digest", digest):
                break
        life = max(1, int(min(self.limits.unjoined_s, self.limits.idle_s)))
        await self.redis.hset(self._key(code), mapping={"created": now, "touched": now, "seq": 0, "tally": 0,
                                                        "owner": owner, "joined": 0, "seen": now})
        await self.redis.expire(self._key(code), life)
        await self.redis.zadd("fg:sessions", {code: now + life})
        if owner:
            await self.redis.zadd(mine, {code: now + life})
            await self.redis.expire(mine, self.ttl)
        return code

    async def _life(self, code: str, now: float) -> tuple[int, str]:
        """Seconds the session lives from ``now`` (idle_s once joined; else what is left of unjoined_s), its owner."""
        created, joined, owner = await self.redis.hmget(self._key(code), "created", "joined", "owner")
        if joined and int(joined):
            return self.ttl, (owner or b"").decode()
        left = float(created or now) + self.limits.unjoined_s - now
        return max(1, int(min(self.limits.idle_s, left))), (owner or b"").decode()

    @_down
    async def mint_follower(self, code: str, identity: str) -> None:
        """``identity`` takes one more follower token of this session: at most max_followers_per_identity."""
        key = "fg:m:" + code
        pipe = self.redis.pipeline(transaction=False)  # round trips, not commands, are what a joining class costs
        pipe.hexists(self._key(code), "digest")
        pipe.hexists(key, identity)
        pipe.hlen(key)
        alive, known, browsers = await pipe.execute()
        if not alive:
            raise NoSuchSession(NOT_FOUND)
        if not known and browsers >= 4 * self.limits.max_followers:
            raise SessionFull("this session has been joined from too many browsers (4 x max_followers)")
        pipe = self.redis.pipeline(transaction=False)
        pipe.hincrby(key, identity, 1)
        pipe.expire(key, self.ttl)
        taken, _ = await pipe.execute()
        if taken > self.limits.max_followers_per_identity:
            await self.redis.hincrby(key, identity, -1)
            raise TooManyOwnFollowers(own_followers_message(self.limits))

    @_down
    async def alive(self, code: str) -> bool:
        # the digest, not the key: a write racing the session's end can leave a hash without it behind
        return bool(await self.redis.hexists(self._key(code), "digest"))

    @_down
    async def digest(self, code: str) -> str | None:
        digest = await self.redis.hget(self._key(code), "digest")
        return None if digest is None else digest.decode()

    @_down
    async def info(self, code: str) -> dict | None:
        h = await self.redis.hgetall(self._key(code))
        if not h or b"digest" not in h:
            return None
        return {"code": code, "digest": h[b"digest"].decode(), "seq": int(h.get(b"seq", 0)),
                "created": float(h.get(b"created", 0)), "followers": await self._count(code),
                "question": orjson.loads(h[b"qpub"]) if h.get(b"qpub") else None,
                "presenter_seen": float(h.get(b"seen") or h.get(b"created") or 0), "away": h.get(b"away") == b"1",
                "run": h[b"run"].decode() if h.get(b"run") else None,
                "progress": orjson.loads(h[b"progress"]) if h.get(b"progress") else None}

    async def _must(self, code: str) -> None:
        if not await self.redis.exists(self._key(code)):
            raise NoSuchSession(NOT_FOUND)

    @_down
    async def latest(self, code: str) -> tuple[int, bytes] | None:
        seq, state, q, away, progress = await self.redis.hmget(self._key(code), "seq", "state", "qpub", "away",
                                                               "progress")
        if not seq or int(seq) == 0:
            return None
        return int(seq), state_payload(int(seq), state or b"null", q or b"null", away == b"1", progress=progress or b"")

    async def _touch(self, code: str, conn: str | None = None) -> None:
        """Two round trips: the session's keys live another ``idle_s`` (what is left of ``unjoined_s`` while nobody
        joined), and ``conn`` is seen now."""
        life, owner = await self._life(code, time.time())
        await self._touched(code, conn, life, owner)

    async def _touched(self, code: str, conn: str | None, life: int, owner: str, joined: bool = False) -> None:
        """One pipeline: the session's keys live ``life`` more seconds, ``conn`` is seen now (and, on a join, the
        session counts as joined: it lives idle_s from now on)."""
        now = time.time()
        pipe = self.redis.pipeline(transaction=False)
        if joined:
            pipe.hset(self._key(code), "joined", 1)
        if conn is not None:
            pipe.zadd("fg:f:" + code, {conn: now})
        pipe.zadd("fg:sessions", {code: now + life})
        if owner:
            pipe.zadd("fg:o:" + owner, {code: now + life})
            pipe.expire("fg:o:" + owner, self.ttl)
        for key in (self._key(code), "fg:f:" + code, "fg:q:" + code, "fg:m:" + code, "fg:r:" + code):
            pipe.expire(key, life)
        await pipe.execute()

    async def _publish_state(self, code: str, state: bytes = b"", question: bytes = b"", away: str = "0",
                             ended: bool = False, heard: bool = True, digest: str = "", progress: bytes = b"") -> int:
        """One published frame, one round trip; by default the presenter spoke (seen now, not away)."""
        seq = await self._publish(keys=[self._key(code), "fg:f:" + code, "fg:q:" + code, "fg:m:" + code,
                                        "fg:r:" + code, "fg:sessions"],
                                  args=[state, question, CHANNEL_PREFIX + "state:" + code, time.time(), self.ttl, away,
                                        "1" if ended else "", "1" if heard else "", digest,
                                        self.limits.unjoined_s, code, "fg:o:", progress])
        if seq == -1:
            raise NoSuchSession(NOT_FOUND)
        if seq == -2:
            raise Forbidden(NOT_PRESENTER)
        return int(seq)

    @_down
    async def post_state(self, code: str, state: bytes, digest: str = "") -> int:
        """The presenter's new state; with ``digest`` (its token's), checked in the same round trip."""
        return await self._publish_state(code, state=state, digest=digest)

    async def _heard(self, code: str) -> None:
        """The presenter spoke: seen now; followers told it was away hear it is back."""
        await self._must(code)
        if await self.redis.hget(self._key(code), "away") == b"1":
            await self._publish_state(code)
        else:
            await self.redis.hset(self._key(code), "seen", time.time())

    @_down
    async def presence(self, code: str, here: bool = True) -> None:
        if here:
            await self._heard(code)
        elif await self.redis.hget(self._key(code), "away") != b"1":
            await self._publish_state(code, away="1", heard=False)

    @_down
    async def check_presenter(self, code: str) -> None:
        seen, away = await self.redis.hmget(self._key(code), "seen", "away")
        if seen is not None and away != b"1" and time.time() - float(seen) > self.limits.presenter_quiet_s:
            await self._publish_state(code, away="1", heard=False)

    @_down
    async def end(self, code: str) -> int:
        return await self._publish_state(code, ended=True)  # the presenter's share of sessions comes back at once

    @_down
    async def put_run(self, code: str, run_id: str, compressed: bytes) -> None:
        await self._heard(code)
        life, _ = await self._life(code, time.time())
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset("fg:r:" + code, mapping={"id": run_id, "answer": compressed})
        pipe.expire("fg:r:" + code, life)
        pipe.hset(self._key(code), "run", run_id)
        await pipe.execute()

    @_down
    async def progress(self, code: str, progress: bytes | None) -> int:
        """The class's run under way (``None``: it ended): one frame; the presenter is not "heard" by it."""
        return await self._publish_state(code, away="", heard=False, progress=progress or b"-")

    @_down
    async def get_run(self, code: str, run_id: str) -> bytes | None:
        pipe = self.redis.pipeline(transaction=False)  # one round trip: a whole class asks at the same moment
        pipe.hexists(self._key(code), "digest")
        pipe.hmget("fg:r:" + code, "id", "answer")
        alive, (got, answer) = await pipe.execute()
        if not alive:
            raise NoSuchSession(NOT_FOUND)
        return answer if got is not None and got.decode() == run_id else None

    async def _count(self, code: str) -> int:
        key = "fg:f:" + code
        await self.redis.zremrangebyscore(key, "-inf", time.time() - self.limits.follower_timeout_s)
        return await self.redis.zcard(key)

    @_down
    async def join(self, code: str, conn: str) -> None:
        """Two round trips (a class of 1,000 opens its streams at once): the checks, then the writes."""
        key, followers = self._key(code), "fg:f:" + code
        pipe = self.redis.pipeline(transaction=False)
        pipe.hget(key, "owner")
        pipe.hexists(key, "digest")
        pipe.zscore(followers, conn)
        pipe.zremrangebyscore(followers, "-inf", time.time() - self.limits.follower_timeout_s)
        pipe.zcard(followers)
        owner, alive, known, _, count = await pipe.execute()
        if not alive:
            raise NoSuchSession(NOT_FOUND)
        if known is None and count >= self.limits.max_followers:
            raise SessionFull(f"this session already has {self.limits.max_followers} followers (max_followers)")
        await self._touched(code, conn, self.ttl, (owner or b"").decode(), joined=True)

    async def heartbeat(self, code: str, conn: str) -> None:
        try:
            await self._touch(code, conn)
        except (RedisError, OSError):
            pass  # presence is best effort: the stream itself goes on

    async def leave(self, code: str, conn: str) -> None:
        try:
            await self.redis.zrem("fg:f:" + code, conn)
        except (RedisError, OSError):
            pass

    async def _question_raw(self, code: str, qid: str) -> dict:
        raw = await self.redis.hget("fg:q:" + code, qid)
        if raw is None:
            raise NoSuchQuestion(f"no question {qid!r} in this session")
        return orjson.loads(raw)

    @_down
    async def open_question(self, code: str, spec: dict) -> dict:
        await self._must(code)
        q = new_question(spec)
        await self.redis.hset("fg:q:" + code, q["id"], orjson.dumps(q))
        ids = await self.redis.hkeys("fg:q:" + code)
        if len(ids) > self.limits.max_questions:  # forget the oldest
            stored = [orjson.loads(v) for v in await self.redis.hvals("fg:q:" + code)]
            stored.sort(key=lambda s: s["opened"])
            for old in stored[: len(ids) - self.limits.max_questions]:
                await self.redis.hdel("fg:q:" + code, old["id"])
                await self.redis.delete(f"fg:a:{code}:{old['id']}", f"fg:c:{code}:{old['id']}")
        await self._publish_state(code, question=orjson.dumps(public_question(q)))
        seq = await self.redis.hincrby(self._key(code), "tally", 1)
        await self.redis.publish(CHANNEL_PREFIX + "tally:" + code, str(seq).encode() + b" " + tally_payload(seq, q["id"], []))
        return q

    @_down
    async def answer(self, code: str, qid: str, follower: str, value: float) -> None:
        q = await self._question_raw(code, qid)
        if q["status"] != "open":
            raise QuestionClosed("this question is closed: the answer has been revealed")
        result = await self._answer(keys=[f"fg:a:{code}:{qid}", f"fg:c:{code}:{qid}", self._key(code)],
                                    args=[follower, orjson.dumps(value), self.limits.max_answer_changes,
                                          self.limits.max_followers, CHANNEL_PREFIX + "tally:" + code, qid, self.ttl])
        if result == -1:
            raise TooManyAnswers(f"at most {self.limits.max_answer_changes} answers per question (max_answer_changes)")
        if result == -2:
            raise SessionFull(f"this question already has {self.limits.max_followers} answers (max_followers)")

    @_down
    async def reveal(self, code: str, qid: str) -> dict:
        q = await self._question_raw(code, qid)
        q["status"] = "revealed"
        await self.redis.hset("fg:q:" + code, qid, orjson.dumps(q))
        current = await self.redis.hget(self._key(code), "qpub")
        if current and orjson.loads(current).get("id") == qid:
            await self._publish_state(code, question=orjson.dumps(public_question(q)))
        return q

    @_down
    async def question(self, code: str, qid: str) -> dict:
        q = await self._question_raw(code, qid)
        answers = {k.decode(): float(v) for k, v in (await self.redis.hgetall(f"fg:a:{code}:{qid}")).items()}
        return {**q, "values": list(answers.values()), "_answers": answers}

    @_down
    async def tally(self, code: str, qid: str) -> tuple[int, bytes]:
        seq = int(await self.redis.hget(self._key(code), "tally") or 0)
        values = [float(v) for v in await self.redis.hvals(f"fg:a:{code}:{qid}")]
        return seq, tally_payload(seq, qid, values)
