"""orjson-rendered JSON responses (strict JSON: non-finite floats are encoded as strings upstream)."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import JSONResponse

from app.trace.values import clean


class OrjsonResponse(JSONResponse):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(clean(content), option=orjson.OPT_NON_STR_KEYS)
