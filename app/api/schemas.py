"""Request and response models (the response models document /docs; answers are pre-serialised)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.trace.policy import MAX_ASKED_PASSES


class RunRequest(BaseModel):
    model_config = ConfigDict(extra="ignore", json_schema_extra={
        "examples": [{"source": "import torch\nx = torch.tensor(2.0, requires_grad=True)\n"
                                "z = (x + 3) ** 2\nz.backward()\nprint(x.grad)\n"}]})

    source: str = Field(..., description="the program (a PyTorch subset)")
    client_id: str | None = Field(None, max_length=128,
                                  description="one run per client: a new run cancels this client's last")
    passes: list[Annotated[int, Field(ge=0)]] = Field(
        default_factory=list, max_length=MAX_ASKED_PASSES,
        description="passes to record in full besides the first and the last ones: a training run's middle pass, "
                    "recorded on demand by running the program again (runs are deterministic)")
    values: Literal["full", "summary"] = Field(
        "full", description="`variables` with every element of every value and gradient (full), or with values "
        "above value_limit elements as summaries (summary: what the page needs to draw)")


class ErrorInfo(BaseModel):
    type: str
    message: str
    line: int | None = None
    column: int | None = None


Value = Any  # number | "nan" | "inf" | "-inf" | nested list | {"summary": true, ...}


class Variable(BaseModel):
    shape: list[int]
    dtype: str | None = None
    value: Value
    grad: Value | None
    requires_grad: bool
    is_leaf: bool
    grad_fn: str | None


class Step(BaseModel):
    step: int
    loss: float | str | None
    param_norm: float | str | None
    grad_norm: float | str | None


class Pass(BaseModel):
    index: int
    loss: float | str | None
    graph: dict[str, Any] | None = Field(description="nodes, edges, clusters, groups with layout; null = summary")
    frames: list[dict[str, Any]]
    folded: str | None = Field(None, description="present when the pass was folded to fit a budget: how and why")


class Figure(BaseModel):
    svg: str = Field(description="the figure as SVG text (matplotlib's); show it as an image, never inline")
    at: int = Field(description="characters (code points) of stdout printed before the figure")


class Trace(BaseModel):
    """The answer (app/core/answer.py builds it; tests/app/test_answer_shape.py keeps the two the same)."""

    stdout: str
    error: ErrorInfo | None
    variables: dict[str, Variable]
    ops: dict[str, dict[str, Any]]
    passes: list[Pass]
    steps: list[Step]
    modules: dict[str, dict[str, Any]]
    figures: list[Figure] = Field(default_factory=list, description="plots the program showed, in order")
    truncated: bool = Field(description="something was cut or folded by a limit (truncated_reason says what)")
    truncated_reason: str | None = Field(None, description="why the trace is truncated, naming the limits")
    elapsed_ms: float | None = None
    timing_ms: dict[str, float] | None = Field(None, description="the run's parts: start, run, trace (ms)")


class Problem(BaseModel):
    detail: Any
    error: ErrorInfo | None = None


class Example(BaseModel):
    id: str
    title: str
    source: str


class Health(BaseModel):
    status: str
    graphviz: str | None
    pool: dict[str, Any]
    answers: dict[str, Any] | None = None  # the answer cache's counts (None: sharing is off)
    runs: dict[str, Any] | None = None  # the run store's counts (with a broker: what went through Redis)
    process: str | None = None  # this server process's id (random per start; X-Flowgrad-Process says it too)


class Readiness(BaseModel):
    status: str  # "ready" or "unavailable"
    checks: dict[str, bool]  # "workers" (a sandbox worker ready), "broker" (with broker_url: Redis answers)
    workers_ready: int
