"""What a run shares with the other processes of a cluster (``broker_url``): its tab's slot and its identity's share.

* A tab's run is marked in Redis (``fg:slot:<sha256 of the slot>`` → the process running it): ``POST /api/cancel``
  or the tab's next run, answered by another process, publishes a cancel on ``fg:cancel`` and the process that runs
  it cancels it (``listen``).
* An identity's runs going or waiting are counted across processes (``fg:held:<identity>``): past one running and
  ``identity_queue_limit`` waiting in the whole cluster, a new run is busy (429), as in one process. A count is
  kept alive by each new run (``HELD_TTL_S``): the runs of a process that died stop counting once its identity is
  quiet that long.
* An identity runs one run at a time in the whole cluster, as in one process: a run takes the identity's turn
  (``fg:turn:<identity>``, set only when free) before it is queued, and gives it back when it ends; a run of the
  identity on another process waits for it (``take_turn``, within ``queue_timeout_s``).
Redis away: each process keeps its own runs, slots and shares (as without a broker).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import secrets
import time
from collections.abc import Awaitable, Callable

log = logging.getLogger("flowgrad")
ME = secrets.token_hex(8)  # this life of this process (siblings on one port share PROCESS_ID, never this)
CANCELS = "fg:cancel"
TURN_POLL_S = 0.05  # how often a run waiting for its identity's turn on another process asks again
# delete the slot mark only while it is still this process's (a newer run elsewhere may have taken the slot)
RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
# ARGV: limit, ttl → the count after this run was added, or -1 when it did not fit (nothing added)
ADMIT = """
local n = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
if n > tonumber(ARGV[1]) then redis.call('DECR', KEYS[1]) return -1 end
return n
"""
LEAVE = "if tonumber(redis.call('DECR', KEYS[1])) <= 0 then redis.call('DEL', KEYS[1]) end return 1"


def _slot_key(slot: str) -> str:
    return "fg:slot:" + hashlib.sha256(slot.encode("utf-8", "replace")).hexdigest()


def _turn_key(identity: str) -> str:
    return "fg:turn:" + hashlib.sha256(identity.encode("utf-8", "replace")).hexdigest()


def _held_key(identity: str) -> str:
    return "fg:held:" + hashlib.sha256(identity.encode("utf-8", "replace")).hexdigest()


class ClusterRuns:
    def __init__(self, redis, settings, cancel_here):
        """``cancel_here(slot)``: cancel this process's run of the tab ``slot`` (the pool's)."""
        self.redis = redis
        self.cancel_here = cancel_here
        self.limit = 1 + settings.identity_queue_limit
        self.queue_timeout_s = settings.queue_timeout_s
        self.ttl_s = int(settings.queue_timeout_s + settings.max_wall_s + settings.supervisor_grace_s + 30)
        self._release = redis.register_script(RELEASE)
        self._admit = redis.register_script(ADMIT)
        self._leave = redis.register_script(LEAVE)
        self._listener: asyncio.Task | None = None
        self._tasks: set[asyncio.Task] = set()
        self.cancels_sent = self.cancels_taken = 0
        self.marks = itertools.count(1)

    # ---------------------------------------------------------------- a tab's run
    async def mark(self, slot: str | None) -> str | None:
        """This process runs the tab ``slot``'s run now; the mark to ``unmark`` when it ends (a newer run of the tab
        marks it again: an older run's end leaves the newer mark alone)."""
        if not slot:
            return None
        mark = f"{ME}:{next(self.marks)}"
        with self._tolerant("mark a run"):
            await self.redis.set(_slot_key(slot), mark, ex=self.ttl_s)
        return mark

    def unmark(self, slot: str | None, mark: str | None) -> None:
        if slot and mark:
            self._spawn(self._unmark(slot, mark))

    async def _unmark(self, slot: str, mark: str) -> None:
        with self._tolerant("unmark a run"):
            await self._release(keys=[_slot_key(slot)], args=[mark])

    async def cancel_elsewhere(self, slot: str | None) -> bool:
        """Cancel the tab's run when another process runs it; whether one did."""
        if not slot:
            return False
        with self._tolerant("cancel a run"):
            mark = await self.redis.get(_slot_key(slot))
            owner = mark.partition(b":")[0] if mark is not None else None
            if owner is not None and owner != ME.encode():
                await self.redis.publish(CANCELS, owner + b"\n" + slot.encode("utf-8", "replace"))
                self.cancels_sent += 1
                return True
        return False

    async def listen(self) -> None:
        """Take the cancels addressed to this process, until stopped (``stop``); reconnects when Redis comes back."""
        me = ME.encode()
        while True:
            try:
                async with self.redis.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.subscribe(CANCELS)
                    async for message in pubsub.listen():
                        owner, _, slot = bytes(message.get("data") or b"").partition(b"\n")
                        if owner == me:
                            self.cancels_taken += 1
                            self.cancel_here(slot.decode("utf-8", "replace"))
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - Redis away: cancels reach this process's runs only
                log.warning("cluster: the cancel channel failed (%s); again in 1 s", e)
                await asyncio.sleep(1.0)

    def start(self) -> None:
        self._listener = asyncio.get_running_loop().create_task(self.listen())

    async def stop(self, timeout_s: float = 3.0) -> None:
        """Stop listening; the marks and counts under way get ``timeout_s`` (Redis away: a stop never hangs)."""
        waiting = set(self._tasks)
        if self._listener is not None:
            self._listener.cancel()
            waiting.add(self._listener)
        if waiting:
            await asyncio.wait(waiting, timeout=timeout_s)

    # ---------------------------------------------------------------- an identity's share
    async def admit(self, identity: str | None) -> bool:
        """Count one more run of ``identity`` in the cluster; False (nothing counted) past its share."""
        if identity is None:
            return True
        with self._tolerant("count a run"):
            return int(await self._admit(keys=[_held_key(identity)], args=[self.limit, self.ttl_s])) > 0
        return True

    async def take_turn(self, identity: str | None,
                        given_up: Callable[[], Awaitable[bool]]) -> str | None | bool:
        """Wait for ``identity``'s turn to run in the cluster: its mark (``give_turn`` it back when the run ends);
        None when there is nothing to hold (no identity, Redis away); False when ``given_up()`` (cancelled, the
        client left) or ``queue_timeout_s`` passed first."""
        if identity is None:
            return None
        mark = f"{ME}:{next(self.marks)}"
        deadline = time.monotonic() + self.queue_timeout_s
        try:
            with self._tolerant("take a turn"):
                while not await self.redis.set(_turn_key(identity), mark, nx=True, ex=self.ttl_s):
                    if await given_up() or time.monotonic() > deadline:
                        return False
                    await asyncio.sleep(TURN_POLL_S)
                return mark
        except BaseException:  # interrupted, perhaps after Redis set it: give it back (only if it is this mark)
            self.give_turn(identity, mark)
            raise
        return None

    def give_turn(self, identity: str | None, mark: str | None) -> None:
        if identity is not None and mark:
            self._spawn(self._give_turn(identity, mark))

    async def _give_turn(self, identity: str, mark: str) -> None:
        with self._tolerant("give a turn back"):
            await self._release(keys=[_turn_key(identity)], args=[mark])

    def leave(self, identity: str | None) -> None:
        if identity is not None:
            self._spawn(self._leave_now(identity))

    async def _leave_now(self, identity: str) -> None:
        with self._tolerant("uncount a run"):
            await self._leave(keys=[_held_key(identity)])

    def _spawn(self, work) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @contextlib.contextmanager
    def _tolerant(self, what: str):
        try:
            yield
        except Exception as e:  # noqa: BLE001 - Redis away: this process decides alone
            log.warning("cluster: could not %s in Redis: %s", what, e)

    def state(self) -> dict:
        return {"cancels_sent": self.cancels_sent, "cancels_taken": self.cancels_taken}
