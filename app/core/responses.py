"""orjson-rendered JSON responses (strict JSON: non-finite floats become "nan", "inf", "-inf")."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import JSONResponse

from app.core.jsonsafe import clean


class OrjsonResponse(JSONResponse):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(clean(content), option=orjson.OPT_NON_STR_KEYS)
