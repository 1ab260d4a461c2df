"""The classroom as the app holds it: this process's hub and the broker chosen by the settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.classroom.broker import Limits, MemoryBroker
from app.classroom.hub import Hub


@dataclass
class Classroom:
    hub: Hub
    broker: Any  # MemoryBroker or RedisBroker: the same methods
    streams: dict[str, int] = field(default_factory=dict)  # identity → class event streams open in this process


def limits_of(settings) -> Limits:
    return Limits(max_sessions=settings.max_sessions, max_followers=settings.max_followers,
                  idle_s=settings.session_idle_s, code_length=settings.session_code_length,
                  max_questions=settings.max_questions, max_answer_changes=settings.max_answer_changes,
                  follower_timeout_s=3 * settings.follower_heartbeat_s,
                  max_sessions_per_identity=settings.max_sessions_per_identity, unjoined_s=settings.session_unjoined_s,
                  max_followers_per_identity=settings.max_followers_per_identity,
                  presenter_quiet_s=settings.presenter_quiet_s, shared_runs_max_bytes=settings.shared_runs_max_bytes)


def make_classroom(settings) -> Classroom:
    hub = Hub(settings.session_keep_events, settings.hub_max_bytes)
    if settings.broker_url:
        from app.classroom.redis_broker import RedisBroker  # only with a broker: `redis` is then needed
        return Classroom(hub, RedisBroker(settings.broker_url, limits_of(settings), hub))
    return Classroom(hub, MemoryBroker(limits_of(settings), hub))
