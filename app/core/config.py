"""Every limit and knob of the server, in one pydantic-settings class.

Values come from the environment with the prefix ``FLOWGRAD_`` (``FLOWGRAD_TIME_LIMIT_S=5``) or a
``.env`` file. ``get_settings()`` is cached; tests override it with
``app.dependency_overrides[get_settings] = lambda: Settings(...)`` or build an app with
``create_app(Settings(...))``.

This is the only place a default limit is written: the engine, the sandbox, the recorder, the
trace builder and the layout get every value from here, explicitly. The interpreter limits
(``LIMIT_FIELDS``: source size … output size, time) are handed to the sandbox as its
``SandboxLimits`` (``build_sandbox_limits``, called by the worker: core imports no feature
package); the pool and the worker enforce the process limits (hard kill, memory, CPU); the trace
builder and the layout use the rest. The budgets on what grows with a program (answer bytes,
strings, paths, drawn nodes, time: docs/trace.md §4) go to the recorder, the runner, the trace
builder and the answer fitting (``app.trace.budget``); ``max_request_bytes`` to the body-limit
middleware (``app.main.BodyLimit``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.core.cpus import usable_cores


def _cores() -> int:
    return usable_cores()


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="FLOWGRAD_", env_file=".env", extra="ignore")

    # ---- §2 limits (the interpreter enforces most of them; every one is a setting here) ----
    max_source_chars: int = Field(65_536, ge=1, description="characters of program text (real programs are 4-20 KB: "
                                  "makemore's backprop exercise 15 KB, d2l's RNN from scratch 18 KB); the parse, step "
                                  "and memory budgets do the protecting")
    max_ast_depth: int = Field(50, ge=1, description="depth of the syntax tree")
    max_ast_nodes: int = Field(40_000, ge=1, description="nodes of the syntax tree (a dense 64 KB program in the "
                               "makemore/d2l style has ~14,000-18,000, 220-275 a KB; a 64 KB list of small ints 32,800)")
    max_graph_nodes: int = Field(10_000, ge=1, description="graph (op) nodes per pass: from the end of one backward() "
                                 "through the next (engine.trace_events.opens_pass)")
    max_tensor_elements: int = Field(4_000_000, ge=1, description="elements of one tensor (pytorch/examples' MNIST "
                                     "CNN: conv2's output on a 64-image batch is 64x64x24x24 = 2,359,296; a "
                                     "convolution's im2col goes by runs of images of at most 2,097,152)")
    max_live_elements: int = Field(16_000_000, ge=1, description="tensor elements alive at once (also: items of one list or string)")
    max_op_flops: int = Field(200_000_000, ge=1, description="multiply-adds of one matrix product (LeNet's "
                              "largest on a 64-image batch: 10 million; a 1000x1000 @ 1000x1000 is 1,000 million)")
    max_int_bits: int = Field(4_096, ge=8, description="bits of an integer result")
    max_loop_iterations: int = Field(1_000_000, ge=1, description="iterations of one loop (bench/programs: at most "
                                     "20,000; an endless `while True: pass` stops here in about a second)")
    max_steps: int = Field(50_000_000, ge=1, description="interpreter steps per run (total budget; bench/programs: "
                           "at most 180,000; time_limit_s binds first on any real program)")
    max_output_bytes: int = Field(65_536, ge=1, description="bytes of printed output")
    time_limit_s: float = Field(20.0, gt=0, description="the run's CPU seconds (cooperative: the run stops itself and "
                                "says how far it got). bench/long.py's longest program, bigram, takes 9.3-10.1 s of "
                                "sandbox CPU with recording: every bench program finishes with 2x headroom")
    hard_kill_s: float = Field(25.0, gt=0, description="CPU seconds after which the run's process is killed (time_limit_s "
                               "is the cooperative stop; this is the net under it, so load never changes where a run stops)")
    max_wall_s: float = Field(60.0, gt=0, description="wall seconds after which the run's process is killed whatever its CPU "
                              "time: the net for a run that cannot progress (frozen, or a machine too loaded to run it)")
    # plots a program draws (matplotlib.pyplot, sandbox/plots.py)
    max_figures: int = Field(20, ge=0, description="figures one run may make")
    max_figure_points: int = Field(100_000, ge=1, description="data points (and histogram bins) of one figure")
    max_plot_label_chars: int = Field(200, ge=1, description="characters of a plot label, title or text")
    max_figure_bytes: int = Field(2_000_000, ge=10_000, description="bytes of SVG all of a run's figures may take")
    # files a program writes (open(), torch.save): in memory, per run, gone after it (sandbox/files.py)
    max_file_bytes: int = Field(64_000_000, ge=0, description="bytes of all the files one run writes (a checkpoint "
                                "of 2 million float32 parameters with Adam's state is 24 MB)")
    max_files: int = Field(100, ge=0, description="files one run may create")
    preload_matplotlib: bool = Field(True, description="import matplotlib in each worker at start (else in the first "
                                                       "run that plots, ~0.3 s each time)")

    # ---- §3 isolation ----
    workers: int = Field(default_factory=_cores, ge=1, description="worker processes (one per core the "
                         "process may use: the affinity mask capped by the cgroup CPU quota)")
    queue_limit: int = Field(256, ge=0, description="runs waiting for a worker before 'busy'")
    queue_timeout_s: float = Field(20.0, gt=0, description="longest wait for a worker before 'busy'")
    memory_limit_mb: int = Field(512, ge=64, description="address space a run may add (RLIMIT_AS)")
    worker_start_timeout_s: float = Field(30.0, gt=0)
    supervisor_interval_s: float = Field(0.2, gt=0)
    supervisor_grace_s: float = Field(2.0, gt=0, description="a run past hard_kill_s + this: its worker is replaced")
    worker_max_rss_mb: int = Field(400, ge=64, description="a worker whose resident memory grew past this after a run "
                                                           "is recycled (a fresh one takes its place) before it serves again")

    # ---- fairness: who is asking (app/core/identity.py) and their share (issue 22) ----
    identity_secret: str | None = Field(None, min_length=16, description="key of the signed identity cookie and "
                                        "follower tokens; unset: a random key per process (cookies and tokens then "
                                        "die with it). With several processes (broker_url) set the SAME value on all")
    identity_cookie: str = Field("flowgrad_id", description="name of the signed identity cookie")
    identities_per_address: int = Field(200, ge=1, description="distinct identity cookies honoured from one client "
                                        "address (a class behind one NAT); a further one counts as the address itself")
    identity_window_s: float = Field(600.0, gt=0, description="an identity holds its place at an address this long "
                                     "after it was last seen there")
    identity_queue_limit: int = Field(2, ge=0, description="runs one identity may have waiting (one more runs); "
                                      "past it 429 with Retry-After")
    busy_retry_after_s: int = Field(2, ge=1, description="Retry-After of a 429 'busy' answer")
    ready_wait_s: float = Field(2.0, ge=0, description="/readyz answers 503 unless a sandbox worker is ready within "
                                "this many seconds (and the broker, when configured, answers a ping)")
    broker_ping_timeout_s: float = Field(1.0, gt=0, description="how long /readyz waits for the broker's PONG")
    allow_unshared_processes: bool = Field(False, description="start a second server process beside a sibling "
                                           "(same parent and port) without broker_url, with a loud warning instead "
                                           "of refusing: only behind sticky routing (README 'Deployment')")
    answer_cache_bytes: int = Field(64_000_000, ge=0, description="bytes (compressed) of the answers of deterministic "
                                    "runs kept to serve the same program again (in Redis with broker_url, shared by "
                                    "every process; 0: no sharing)")
    answer_cache_ttl_s: float = Field(3600.0, gt=0, description="a shared answer is forgotten this long after it "
                                      "was computed")

    # ---- §4 trace and layout ----
    full_passes_head: int = Field(3, ge=0, description="first passes that keep a full graph")
    full_passes_tail: int = Field(2, ge=0, description="last passes that keep a full graph")
    max_passes: int = Field(10_000, ge=1, description="passes kept (summaries) before 'truncated'")
    quiet_passes: bool = Field(True, description="middle passes of a loop whose length is known run without "
                               "recording (their loss and norms kept) while more than the last passes are surely to "
                               "come, and the run has used less than 80 % of its time_limit_s (app/runner/quiet.py)")
    max_events: int = Field(500_000, ge=1, description="recorder events per pass (from the end of one backward() "
                            "through the next, as max_graph_nodes); past them the run stops with LimitExceeded. "
                            "bench/long.py's biggest pass, bigram's sampling after training, records ~157,000")
    # ---- §4 budgets on what grows with the program (past one: folded, and `truncated_reason` says why) ----
    max_answer_bytes: int = Field(16_000_000, ge=65_536, description="bytes of one run's answer: the /api/run body, "
                                  "or all the events of one /api/stream; past it passes are folded or summarised")
    max_string_chars: int = Field(1_000, ge=16, description="characters of one string in an event (name, module "
                                  "repr, message); longer ones are cut with a visible '…[+N chars]'")
    max_path_chars: int = Field(300, ge=16, description="characters of one module or parameter path (model.0.weight)")
    max_drawn_nodes: int = Field(5_000, ge=10, description="nodes of one pass's graph; a bigger pass is summarised")
    answer_time_s: float = Field(3.5, gt=0, description="time to draw graphs: from the run's start for the passes drawn "
                                 "as they close, and again from its end for those drawn then (the last ones); graphs "
                                 "not drawn by then (less a margin to send the answer) stay summaries")
    value_limit: int = Field(256, ge=1, description="elements sent per value before summarising")
    group_threshold: int = Field(150, ge=10, description="graphs above this many nodes are grouped")
    group_chunk: int = Field(120, ge=10, description="target nodes per group when grouping")
    layout_cache_size: int = Field(512, ge=0, description="layouts kept per worker")
    dot_timeout_s: float = Field(2.0, gt=0, description="one Graphviz call; slower → fallback layout")
    dot_binary: str = Field("dot", description="Graphviz dot executable")

    # ---- big passes fold into a group tree (issue 11: app/trace/hierarchy.py, folded.py; docs/trace.md §5) ----
    fold_threshold: int = Field(400, ge=10, description="a pass whose graph has more nodes is folded: modules, "
                                "repeated loop bodies and repeated modules become groups drawn collapsed")
    max_folded_nodes: int = Field(50_000, ge=10, description="nodes of one folded pass; a bigger pass is summarised")
    fold_max_children: int = Field(40, ge=4, description="direct units of one group (a longer fold is chunked)")
    group_payload_nodes: int = Field(2_000, ge=0, description="a group's answer also carries every descendant's "
                                     "payload when its whole subtree has at most this many nodes")
    run_store_max_bytes: int = Field(256_000_000, ge=1_000_000, description="bytes of group payloads the server "
                                     "keeps (all runs); the least recently used runs go first")
    run_store_ttl_s: float = Field(1800.0, gt=0, description="a run's payloads are forgotten this long after its "
                                   "last use")
    run_store_max_runs: int = Field(64, ge=1, description="runs whose payloads the server keeps")
    run_store_entry_bytes: int = Field(4_096, ge=0, description="bytes counted per stored run and per pass on top of "
                                       "their measured payloads (dicts, events, bookkeeping the measure does not see)")

    # ---- classroom sessions (app/classroom, docs/classroom.md) ----
    broker_url: str | None = Field(None, description="redis://host:port/db: sessions shared by several server "
                                   "processes; unset: in this process's memory")
    max_sessions: int = Field(1_000, ge=1, description="class sessions held at once")
    max_followers: int = Field(500, ge=1, description="followers of one session (and answers to one question)")
    session_idle_s: float = Field(3 * 3600, gt=0, description="a session nobody touched this long is forgotten")
    max_state_bytes: int = Field(65_536, ge=256, description="bytes of one presenter state")
    session_code_length: int = Field(6, ge=4, le=16, description="characters of a join code")
    session_keep_events: int = Field(64, ge=1, description="recent events kept per session per process; a follower "
                                     "further behind gets the latest state instead")
    max_questions: int = Field(50, ge=1, description="questions remembered per session")
    max_answer_changes: int = Field(20, ge=1, description="answers one follower may give to one question")
    class_progress_every_s: float = Field(0.5, ge=0, description="a class run's progress (\"running…\", passes, "
                                          "the loss curve) goes to its followers at most this often: one frame each")
    follower_heartbeat_s: float = Field(15.0, gt=0, description="a follower stream's keep-alive and presence interval")
    max_sessions_per_identity: int = Field(3, ge=1, description="live class sessions one identity may hold; past it "
                                           "429 with Retry-After")
    session_unjoined_s: float = Field(600.0, gt=0, description="a session no follower has joined is forgotten this "
                                      "long after it was made (session_idle_s once someone joined)")
    max_followers_per_identity: int = Field(3, ge=1, description="follower tokens one identity may take in one session")
    presenter_quiet_s: float = Field(30.0, gt=0, description="a presenter not heard from this long is shown to its "
                                     "followers as away (\"Waiting for the teacher…\"); its page beats every 5 s")
    shared_runs_max_bytes: int = Field(256_000_000, ge=1_000_000, description="bytes of presenters' shared runs "
                                       "(gzip) this process keeps; past it the least recently touched sessions' go")
    max_streams_per_identity: int = Field(8, ge=1, description="class event streams one identity may hold open in "
                                          "this process (presenter's tally included)")
    hub_max_bytes: int = Field(32_000_000, ge=65_536, description="bytes of recent session frames this process keeps "
                               "for its followers (all sessions); past it the biggest channels drop their oldest "
                               "frames and a follower behind gets the latest state instead")

    # ---- export: the page as one offline file (app/export, POST /api/export/html) ----
    max_export_bytes: int = Field(12_000_000, ge=65_536, description="bytes of one exported .html file (the "
                                  "page's ~1.5 MB of scripts, styles and fonts plus the trace, at most max_answer_bytes); "
                                  "a bigger one is refused with 413")

    # ---- serving ----
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    max_request_bytes: int = Field(1_048_576, ge=1024, description="largest request body accepted (a program of "
                                   "max_source_chars as JSON: up to 12 bytes a character, \\ud83d\\ude00)")
    client_cookie: str = "flowgrad_client"
    send_timeout_s: float = Field(30.0, gt=0, description="longest wait for a client to take the next piece of an "
                                  "answer; past it the connection is dropped (a client that never reads)")
    send_chunk_bytes: int = Field(65_536, ge=1024, description="an answer is written in pieces of at most this many "
                                  "bytes, each waiting for the client: bytes waiting to be written per connection")

    @model_validator(mode="after")
    def _kill_after_limit(self) -> Settings:
        if self.hard_kill_s < self.time_limit_s:
            raise ValueError("hard_kill_s must be >= time_limit_s")
        if self.max_wall_s < self.hard_kill_s:
            raise ValueError("max_wall_s must be >= hard_kill_s")
        if self.max_steps < self.max_loop_iterations:
            raise ValueError("max_steps must be >= max_loop_iterations (each iteration is at least one step)")
        return self

    def limit_values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in LIMIT_FIELDS}


LIMIT_FIELDS = (
    "max_source_chars", "max_ast_depth", "max_ast_nodes", "max_graph_nodes", "max_tensor_elements",
    "max_live_elements", "max_int_bits", "max_loop_iterations", "max_steps", "max_output_bytes",
    "time_limit_s", "max_wall_s", "max_op_flops",
) + ("max_figures", "max_figure_points", "max_plot_label_chars", "max_figure_bytes") + ("max_file_bytes", "max_files")


def build_sandbox_limits(cls: Any, values: dict[str, Any]) -> Any:
    """Construct ``cls`` (the sandbox's ``SandboxLimits``) from ``values`` (``Settings.limit_values()``),
    passing only the fields it declares (dataclass or pydantic)."""
    fields: set[str] | None = None
    if hasattr(cls, "__dataclass_fields__"):
        fields = set(cls.__dataclass_fields__)
    elif hasattr(cls, "model_fields"):
        fields = set(cls.model_fields)
    if fields is None:
        return cls(**values)
    return cls(**{k: v for k, v in values.items() if k in fields})


@lru_cache
def get_settings() -> Settings:
    return Settings()
