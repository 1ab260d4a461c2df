"""This server process's id: random per start, so it names one process of a cluster and one life of it."""

from __future__ import annotations

import secrets

PROCESS_ID = secrets.token_hex(6)
