"""The run-process factory: a process forked once from the warm run image (``app.runner.runproc``, before the
worker loads the rest), which forks every run process after it.

Why not fork from the worker itself: a fork write-protects every page of the parent, so after each per-run fork
the worker page-faulted once on every page it then wrote while building the trace (~1,650 faults a run, 4-10 us
each on this kind of VM) and paid the fork (~4 ms). The zygote writes almost nothing between forks, so those
faults are gone; the worker no longer forks per run (only a folded run's payload process).

The worker keeps its pipes with the run process (it creates them and hands the run process's ends over with
``SCM_RIGHTS``); the zygote answers with the pid, reaps its children and tells each one's wait status, which the
worker turns into the run's error (``session.exit_problem``). When the worker goes, the zygote kills its
children and exits (its socket closes; ``PR_SET_PDEATHSIG`` if the worker is killed).

Messages on the socket (``SOCK_SEQPACKET``, one struct each): worker → zygote ``b"W"``/``b"C"`` (a warm or a
cold run process) with two descriptors, ``b"K"`` (kill this child: only where pidfds are refused); zygote → worker
``b"P"`` (its pid, with its pidfd where pidfds work) and ``b"X"`` (a child's pid and wait status).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing.connection as mpc
import os
import select
import signal
import socket
import struct
import time
from collections.abc import Callable

MESSAGE = struct.Struct("=cii")  # kind, pid, wait status
ANSWER_TIMEOUT_S = 10.0  # a zygote silent this long (stopped, swapped out for good) is replaced
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    try:
        prctl = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").prctl
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux/glibc: the closed socket still ends it
        pass


def _pidfds_work() -> bool:
    """Whether this kernel lets us open pidfds (Linux 5.3+, not blocked by a seccomp filter)."""
    try:
        os.close(os.pidfd_open(os.getpid()))
        return True
    except (OSError, AttributeError):
        return False


def serve_runs(sock: socket.socket, run_child: Callable[[mpc.Connection, mpc.Connection, bool], None]) -> None:
    """The zygote's loop: fork a run process per request (``run_child(job_reader, event_writer, warm)`` runs in
    it and must not return), report each child's exit; return when the worker's socket closes.

    Children are watched through pidfds; where pidfds are refused (an old kernel, a seccomp filter) through
    ``SIGCHLD`` and ``waitpid``, and the worker then asks the zygote for kills (``b"K"``): only the reaper can
    kill a pid without racing its reuse."""
    _die_with_parent()
    use_pidfds = _pidfds_work()
    children: dict[int, int] = {}  # pidfd (or the pid itself without pidfds) → pid of a run process not yet reaped
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    wake_r = wake_w = -1
    if not use_pidfds:  # SIGCHLD writes a byte to wake_w: the poll wakes for an exit as it would on a pidfd
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        poller.register(wake_r, select.POLLIN)

    def report_exited() -> None:
        try:
            while os.read(wake_r, 4096):
                pass
        except BlockingIOError:
            pass
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if children.pop(pid, None) is not None:
                sock.send(MESSAGE.pack(b"X", pid, status))

    def kill(key: int) -> None:
        if use_pidfds:
            signal.pidfd_send_signal(key, signal.SIGKILL)
        else:
            os.kill(key, signal.SIGKILL)

    while True:
        for fd, _events in poller.poll():
            if fd == wake_r:
                report_exited()
                continue
            if fd != sock.fileno():
                pid = children.pop(fd)
                poller.unregister(fd)
                os.close(fd)
                _, status = os.waitpid(pid, 0)
                sock.send(MESSAGE.pack(b"X", pid, status))
                continue
            try:
                msg, fds, _flags, _addr = socket.recv_fds(sock, MESSAGE.size, 2)
            except OSError:
                msg, fds = b"", []
            if len(msg) == MESSAGE.size and not fds and MESSAGE.unpack(msg)[0] == b"K":
                pid = MESSAGE.unpack(msg)[1]
                if not use_pidfds and pid in children:  # not reaped yet: the pid is still this child's
                    kill(pid)
                continue
            if len(msg) != MESSAGE.size or len(fds) != 2:  # the worker is gone (or confused): so are its runs
                for f in fds:
                    os.close(f)
                for key, pid in children.items():
                    try:
                        kill(key)
                        os.waitpid(pid, 0)
                    except (OSError, ChildProcessError):
                        pass
                return
            warm = MESSAGE.unpack(msg)[0] == b"W"
            pid = os.fork()
            if pid == 0:  # ---------------- the run process
                code = 0
                try:
                    sock.close()
                    if use_pidfds:
                        for pidfd in children:
                            os.close(pidfd)
                    else:
                        signal.set_wakeup_fd(-1)
                        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                        os.close(wake_r)
                        os.close(wake_w)
                    run_child(mpc.Connection(fds[0], writable=False), mpc.Connection(fds[1], readable=False), warm)
                except BaseException:  # noqa: BLE001
                    code = 1
                finally:
                    os._exit(code)
            for f in fds:
                os.close(f)
            if not use_pidfds:
                children[pid] = pid
                sock.send(MESSAGE.pack(b"P", pid, 0))
                continue
            pidfd = os.pidfd_open(pid)
            children[pidfd] = pid
            poller.register(pidfd, select.POLLIN)
            # the worker gets its own pidfd of the child: its kills can never reach a reused pid
            socket.send_fds(sock, [MESSAGE.pack(b"P", pid, 0)], [pidfd])


class ZygoteClient:
    """The worker's side: ask for a run process, kill one, learn how it ended."""

    def __init__(self, pid: int, sock: socket.socket):
        self.pid, self.sock = pid, sock
        sock.settimeout(ANSWER_TIMEOUT_S)
        self.exits: dict[int, int] = {}  # pid → wait status, reported and not yet asked for
        self.pidfds: dict[int, int] = {}  # pid → pidfd of a run process not yet reaped (kills never hit a reused pid)

    def fork(self, job_reader: mpc.Connection, event_writer: mpc.Connection, warm: bool) -> int:
        """A new run process holding these two pipe ends (the caller closes its copies); its pid. OSError or
        EOFError: the zygote is gone."""
        socket.send_fds(self.sock, [MESSAGE.pack(b"W" if warm else b"C", 0, 0)],
                        [job_reader.fileno(), event_writer.fileno()])
        while True:
            kind, pid = self._next()
            if kind == b"P":
                return pid

    def reap(self, pid: int) -> int:
        """SIGKILL the run process ``pid`` (harmless when it has finished) and return its wait status (0 when
        the zygote could not tell: it died)."""
        pidfd = self.pidfds.pop(pid, None)
        if pidfd is not None:
            try:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            except OSError:
                pass
            os.close(pidfd)
        try:
            if pidfd is None and pid not in self.exits:  # no pidfd (refused here): the zygote, its reaper, kills
                self.sock.send(MESSAGE.pack(b"K", pid, 0))
            while pid not in self.exits:
                self._next()
        except (OSError, EOFError):
            return 0
        return self.exits.pop(pid)

    def _next(self) -> tuple[bytes, int]:
        data, fds, _flags, _addr = socket.recv_fds(self.sock, MESSAGE.size, 1)
        if len(data) != MESSAGE.size:
            for f in fds:
                os.close(f)
            raise EOFError("the zygote is gone")
        kind, pid, status = MESSAGE.unpack(data)
        if kind == b"X":
            self.exits[pid] = status
        elif fds:
            self.pidfds[pid] = fds[0]
        return kind, pid

    def close(self) -> None:
        """End the zygote (it kills its children) and wait for it."""
        for pidfd in self.pidfds.values():
            os.close(pidfd)
        self.pidfds.clear()
        self.sock.close()
        deadline = time.monotonic() + ANSWER_TIMEOUT_S
        try:
            while os.waitpid(self.pid, os.WNOHANG) == (0, 0):
                if time.monotonic() > deadline:
                    os.kill(self.pid, signal.SIGKILL)
                    os.waitpid(self.pid, 0)
                    return
                time.sleep(0.005)
        except (ChildProcessError, ProcessLookupError):
            pass

    def kill(self) -> None:
        """A zygote that stopped answering: SIGKILL and reap it."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.close()
