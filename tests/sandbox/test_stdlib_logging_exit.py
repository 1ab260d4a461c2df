"""`logging`, `sys.exit` / `exit()` / `SystemExit` / `KeyboardInterrupt`, `tqdm.write` and a scheduler's state dict
loaded back (sandbox/stdlib_logging.py, sandbox/stdlib_tools.py): what training scripts do at their top and bottom.
Each program prints what CPython prints (run in a subprocess: logging's state is process-wide); what they are handed
is bounded, and nothing they return reaches outside."""
from __future__ import annotations

import subprocess
import sys

import pytest
from sandbox_testing import err, leaks, ok, run

LOGGING = """import logging
import sys
import io

log = logging.getLogger("train")
log.setLevel(logging.DEBUG)
h = logging.StreamHandler(sys.stdout)
h.setFormatter(logging.Formatter("[%(levelname)-8s] %(name)s | %(message)s"))
log.addHandler(h)
log.propagate = False
log.debug("debug %s", [1, 2])
log.info("a dict %(a)s", {"a": 5})
child = logging.getLogger("train.model")
child.warning("from child %d", 3)
print(child.getEffectiveLevel(), child.parent.name, log.parent.name, log.isEnabledFor(logging.INFO))
child.propagate = True
buf = io.StringIO()
h2 = logging.StreamHandler(buf)
h2.setLevel(logging.ERROR)
h2.setFormatter(logging.Formatter("{levelname}:{message}", style="{"))
child.addHandler(h2)
child.error("bad %.2f", 1.23456)
child.info("not in buf")
print(repr(buf.getvalue()))
print(logging.getLevelName(20), logging.getLevelName("ERROR"), logging.getLevelName(25))
logging.info("root info: stderr, below WARNING")
logging.error("root error: stderr")
print(logging.getLogger() is logging.root, logging.getLogger("train") is log, log.hasHandlers())
fh = logging.FileHandler("run.log", mode="w")
fh.setFormatter(logging.Formatter("%(message)s"))
log.addHandler(fh)
log.info("to the file too")
fh.close()
print(open("run.log").read())
logging.disable(logging.CRITICAL)
log.critical("hidden")
print(log, logging.getLogger(), h, fh.level)
"""

BASIC_CONFIG = """import logging
import sys
import torch

logging.basicConfig(level=logging.INFO, format="%(levelname)s:%(name)s:%(message)s", stream=sys.stdout)
logger = logging.getLogger(__name__)
logger.info("starting")
w = torch.tensor([1.0, 2.0], requires_grad=True)
for i in range(3):
    loss = (w ** 2).sum()
    loss.backward()
    logger.info("step %d loss %.4f", i, loss.item())
    with torch.no_grad():
        w -= 0.1 * w.grad
    w.grad.zero_()
logger.debug("hidden")
logging.warning("done %s", w)
logging.basicConfig(level=logging.DEBUG, format="ignored: %(message)s")
logger.debug("still hidden: basicConfig did nothing")
logging.basicConfig(level=logging.DEBUG, format="%(name)s %(message)s", stream=sys.stdout, force=True)
logger.debug("now shown")
"""

EXITS = """import sys
import torch
try:
    sys.exit(3)
except Exception:
    print("not here")
except SystemExit as e:
    print("caught", e.code, type(e).__name__, repr(e), e.args)
try:
    for i in range(3):
        print(i)
except KeyboardInterrupt:
    print("interrupted")
try:
    raise SystemExit("bye")
except BaseException as e:
    print(type(e).__name__, e)
try:
    try:
        exit()
    finally:
        print("finally runs")
except SystemExit as e:
    print(e.code is None, isinstance(e, Exception), isinstance(e, BaseException))
print(torch.ones(2).sum())
"""


def cpython_subprocess(source: str, cwd) -> subprocess.CompletedProcess:
    """CPython running `source` (trusted test text) in a process of its own."""
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.mark.parametrize("source", [LOGGING, BASIC_CONFIG, EXITS], ids=["loggers", "basic_config", "exits"])
def test_a_program_prints_what_cpython_prints(source, tmp_path):
    if "torch" in source:
        pytest.importorskip("torch")
    expected = cpython_subprocess(source, tmp_path)
    assert expected.returncode == 0, expected.stderr
    out = run(source)
    assert out.error is None, out.error
    assert out.stdout == expected.stdout


@pytest.mark.parametrize("call, status, message", [
    ("sys.exit(2)", 2, "the program exited (sys.exit / SystemExit) with status 2"),
    ("sys.exit('config not found')", 1, "config not found"),
    ("exit(True)", 1, "the program exited (sys.exit / SystemExit) with status 1"),
    ("raise SystemExit(5)", 5, "the program exited (sys.exit / SystemExit) with status 5"),
])
def test_an_exit_with_a_failure_status_is_the_run_s_error_on_its_line(call, status, message, tmp_path):
    source = f"import sys\nprint('before')\n{call}\nprint('after')\n"
    assert cpython_subprocess(source, tmp_path).returncode == status
    out = run(source)
    assert out.stdout == "before\n"
    assert out.error["type"] == "SystemExit" and out.error["message"] == message and out.error["line"] == 3


@pytest.mark.parametrize("call", ["sys.exit()", "sys.exit(0)", "exit()", "quit(0)", "raise SystemExit"])
def test_an_exit_with_success_ends_the_run_and_says_where(call):
    # the output so far stays; the run's error names the exit and its line, so the page says why it stopped there
    out = run(f"import sys\nprint('before')\nfor i in range(3):\n    {call}\nprint('after')\n")
    assert out.stdout == "before\n"
    assert out.error == {"type": "SystemExit", "message": "the program exited (sys.exit / SystemExit) with status 0",
                         "line": 4, "column": 4}


def test_tqdm_write_prints_a_line_to_stdout():
    assert ok("from tqdm import tqdm\nimport sys\nbar = tqdm(range(2))\nfor i in bar:\n    tqdm.write(f'epoch {i}')\n"
              "tqdm.write('x', end='')\ntqdm.write('hidden', file=sys.stderr)\nprint()\nprint(tqdm)\n") \
        == "epoch 0\nepoch 1\nx\n<class 'tqdm.std.tqdm'>\n"


CHECKPOINT = """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
x, y = torch.randn(8, 3), torch.randn(8, 1)
for epoch in range(3):
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    sched.step()
torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict()}, "ckpt.pt")
ck = torch.load("ckpt.pt")
opt2 = torch.optim.Adam(model.parameters(), lr=0.01)
sched2 = torch.optim.lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
opt2.load_state_dict(ck["opt"])
sched2.load_state_dict(ck["sched"])
print(sorted(ck["sched"]), sched2.get_last_lr(), sched2.last_epoch)
for epoch in range(3):
    opt2.step()
    sched2.step()
    print(sched2.get_last_lr(), opt2.param_groups[0]["lr"])
"""


def test_a_scheduler_s_state_dict_loads_back_as_under_pytorch(tmp_path):
    pytest.importorskip("torch")
    expected = cpython_subprocess(CHECKPOINT, tmp_path)
    assert expected.returncode == 0, expected.stderr
    out = run(CHECKPOINT)
    assert out.error is None, out.error
    assert out.stdout == expected.stdout and "'_last_lr'" in out.stdout


@pytest.mark.parametrize("source, kind", [
    ("import logging\nfor i in range(10 ** 6):\n    logging.getLogger(f'l{i}')", "ValueError"),
    ("import logging\nlogging.getLogger('a.' * 200)", "ValueError"),
    ("import logging, sys\nlogging.basicConfig(stream=sys.stdout, format='%(message)999999999s')\nlogging.error('x')",
     "LimitExceeded"),
    ("import logging, sys\nlogging.basicConfig(stream=sys.stdout, format='{message:>999999999}', style='{')\n"
     "logging.error('x')", "LimitExceeded"),
    ("import logging, sys\nlogging.basicConfig(stream=sys.stdout)\nlogging.error('%999999999d', 1)", "LimitExceeded"),
    ("import logging, sys\nlogging.basicConfig(stream=sys.stdout)\nwhile True:\n    logging.error('x' * 10 ** 5)",
     "LimitExceeded"),
    ("import logging\nlogging.basicConfig(filename='a.log')\nwhile True:\n    logging.error('x' * 10 ** 5)",
     "LimitExceeded"),
    ("import logging\nh = logging.StreamHandler(print)", "TypeError"),
    ("import logging\nlogging.getLogger().addHandler(print)", "TypeError"),
    ("import logging\nlogging.Formatter('%(message)s', style='$')", "ValueError"),
    ("import logging\nlogging.getLogger().setLevel('LOUD')", "ValueError"),
    ("import logging\nlogging.Logger('x' * 10 ** 6)", "TypeError"),
    ("from tqdm import tqdm\ntqdm.write('x', file=print)", "TypeError"),
    ("import sys\nsys.exit('x' * 10 ** 9)", "LimitExceeded"),
])
def test_what_they_are_handed_is_bounded(source, kind):
    e = err(source + "\n")
    assert e["type"] == kind, e
    assert not leaks(e["message"])


@pytest.mark.parametrize("line", [
    "logging.getLogger().interp", "logging.getLogger().registry", "logging.getLogger().log.__self__",
    "logging.getLogger().manager", "logging.root.handlers.__class__.__init__", "logging.StreamHandler().stream.interp",
    "logging.Formatter().format", "logging.Formatter().fmt.__class__.__mro__", "logging.basicConfig.fn",
    "logging.getLogger().__dict__", "tqdm.write.fn", "tqdm.fn", "sys.exit.fn", "exit.__self__",
    "logging.getLogger().parent.registry", "getattr(logging.root, '_' + '_class__')",
])
def test_what_they_return_reaches_nothing_outside(line):
    e = err(f"import logging, sys\nfrom tqdm import tqdm\ny = {line}\nprint(y)\n")
    assert e["type"] in ("AttributeError", "SandboxViolation", "TypeError"), e
    assert e["line"] == 3 and not leaks(e["message"])


def test_a_format_with_lookups_is_refused_as_python_refuses_it_or_dropped():
    e = err("import logging, sys\nlogging.basicConfig(stream=sys.stdout, format='%(msg.__class__)s')\n")
    assert e["type"] == "ValueError" and e["line"] == 2  # (Python: "Invalid format ... for '%' style")
    for fmt in ("{msg.__class__}", "{msg[0]}"):  # Python looks them up; flowgrad's str.format does not: dropped
        assert ok(f"import logging, sys\nlogging.basicConfig(stream=sys.stdout, format='{fmt}', style='{{')\n"
                  "logging.error('x')\nprint('goes on')\n") == "goes on\n"


@pytest.mark.parametrize("source", [
    "logging.basicConfig(stream=sys.stdout)\nlogging.error('%s %s', 1)",
    "logging.basicConfig(stream=sys.stdout)\nlogging.error('%(a)s', {'b': 1})",
])
def test_a_record_that_does_not_format_is_dropped_as_python_reports_it_on_stderr(source, tmp_path):
    program = f"import logging, sys\n{source}\nprint('goes on')\n"
    assert cpython_subprocess(program, tmp_path).stdout == "goes on\n"
    assert ok(program) == "goes on\n"


def test_handlers_a_program_appends_to_a_logger_s_list_are_never_called():
    out = ok("import logging, sys\nlog = logging.getLogger('a')\nlog.handlers.append(print)\n"
             "log.handlers.append(logging.StreamHandler(sys.stdout))\nlog.warning('once')\nprint(len(log.handlers))\n")
    assert out == "once\n2\n"


def test_a_scheduler_s_load_state_dict_sets_only_its_own_state():
    out = ok("import torch\nopt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)\n"
             "s = torch.optim.lr_scheduler.StepLR(opt, step_size=1)\n"
             "s.load_state_dict({'_last_lr': [0.5], 'optimizer': None, '__class__': int, '_secret': 1, 'step': 3})\n"
             "print(s.get_last_lr(), type(s).__name__, s.optimizer is opt)\n")
    assert out == "[0.5] StepLR True\n"
    e = err("import torch\nopt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)\n"
            "s = torch.optim.lr_scheduler.StepLR(opt, step_size=1)\ns.load_state_dict({'_last_lr': [0] * 10 ** 8})\n")
    assert e["type"] == "LimitExceeded" and e["line"] == 4
    # elsewhere names handed to the engine still may not start with '_'
    e = err("import torch\nm = torch.nn.Linear(1, 1)\nm.load_state_dict({'_weight': torch.ones(1, 1)})\n")
    assert e["type"] == "ValueError" and e["line"] == 3
