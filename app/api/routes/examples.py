"""``GET /api/examples``: the example programs (``examples/*.py``, first line ``# Title``)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter

from app.api.deps import ExamplesDirDep
from app.api.schemas import Example
from app.core.responses import OrjsonResponse

router = APIRouter(prefix="/api", tags=["examples"])


def load_examples(folder: Path) -> list[dict]:
    out = []
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        first = text.partition("\n")[0]
        if first.startswith("#"):
            title = first.lstrip("#").strip() or path.stem
        else:
            title = path.stem.replace("_", " ").title()
        out.append({"id": path.stem, "title": title, "source": text})
    return out


@router.get("/examples", response_model=list[Example])
async def examples(folder: ExamplesDirDep) -> OrjsonResponse:
    return OrjsonResponse(load_examples(folder))
