"""Process-level guards used inside the worker: no network, no writes outside the executor's own
folder, and snapshots of global state that a candidate must not change (timers, synchronize,
precision flags, thread count)."""

from __future__ import annotations

import errno
import os
import socket
import sys
import threading
import time


class NetworkDisabled(OSError):
    pass


def block_network() -> None:
    """Best effort: make every socket connection fail inside this process."""

    def refuse(*_a, **_k):
        raise NetworkDisabled("network access is disabled during kernlint eval")

    class _NoSocket(socket.socket):
        def connect(self, *_a, **_k):  # noqa: D401
            refuse()

        def connect_ex(self, *_a, **_k):
            refuse()

        def sendto(self, *_a, **_k):
            refuse()

    socket.socket = _NoSocket  # type: ignore[misc]
    socket.create_connection = refuse  # type: ignore[assignment]
    socket.getaddrinfo = refuse  # type: ignore[assignment]


#: os.open flags that make an open a write
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
#: audit events that change the file system: event -> indices of the path arguments it changes
_CHANGES = {"os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.rename": (0, 1), "os.link": (1,),
            "os.symlink": (1,), "os.truncate": (0,), "os.chmod": (0,), "os.chown": (0,), "os.utime": (0,),
            "shutil.rmtree": (0,), "shutil.copyfile": (1,), "shutil.copytree": (1,), "shutil.move": (0, 1)}


class WriteBlocked(PermissionError):
    pass


def _inside(path, roots: tuple[str, ...], dir_fd=None) -> bool:
    if isinstance(path, int):  # an open descriptor: it was checked when it was opened
        return True
    path = os.fsdecode(path)
    if dir_fd is not None and dir_fd >= 0 and not os.path.isabs(path):  # the audit event says -1 for none
        path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
    real = os.path.realpath(path)
    return any(real == r or real.startswith(r + os.sep) for r in roots)


def block_writes_outside(*roots: str | None) -> None:
    """Make every write, create, remove or rename outside ``roots`` (and /dev, /proc/self) raise
    :class:`WriteBlocked` in this process: an audit hook, which the process cannot remove again.
    What it does not see (the same limit as :func:`block_network`): native code that calls the C
    library directly, and child processes."""
    allowed = tuple(os.path.realpath(r) for r in (*roots, "/dev", "/proc/self") if r)

    def hook(event: str, args: tuple) -> None:
        if event == "open":
            path, _mode, flags = args
            if flags is not None and flags & _WRITE_FLAGS and not _inside(path, allowed):
                raise WriteBlocked(errno.EACCES, "kernlint eval: writing outside the executor's folder is blocked",
                                   os.fsdecode(path))
        elif event in _CHANGES:
            dir_fd = args[-1] if event in ("os.remove", "os.rmdir", "os.mkdir") and isinstance(args[-1], int) else None
            for i in _CHANGES[event]:
                if i < len(args) and isinstance(args[i], (str, bytes, os.PathLike)) and not _inside(args[i], allowed, dir_fd):
                    raise WriteBlocked(errno.EACCES, f"kernlint eval: {event} outside the executor's folder is blocked",
                                       os.fsdecode(args[i]))

    sys.addaudithook(hook)


def _timer_table():
    import torch

    table = {
        "time.perf_counter": (time, "perf_counter"),
        "time.perf_counter_ns": (time, "perf_counter_ns"),
        "time.time": (time, "time"),
        "time.monotonic": (time, "monotonic"),
        "torch.cuda.synchronize": (torch.cuda, "synchronize"),
        "torch.cuda.Event": (torch.cuda, "Event"),
        "torch.cuda.Event.elapsed_time": (torch.cuda.Event, "elapsed_time"),
        "torch.cuda.Event.record": (torch.cuda.Event, "record"),
        "torch.cuda.Event.synchronize": (torch.cuda.Event, "synchronize"),
        "torch.cuda.current_stream": (torch.cuda, "current_stream"),
        "torch.Tensor.data_ptr": (torch.Tensor, "data_ptr"),
        "torch.allclose": (torch, "allclose"),
        "torch.equal": (torch, "equal"),
        "torch.testing.assert_close": (torch.testing, "assert_close"),
    }
    return table


def timer_snapshot() -> dict[str, object]:
    return {k: getattr(obj, attr, None) for k, (obj, attr) in _timer_table().items()}


def restore_timers(snap: dict[str, object]) -> None:
    for k, (obj, attr) in _timer_table().items():
        if getattr(obj, attr, None) is not snap[k]:
            try:
                setattr(obj, attr, snap[k])
            except (AttributeError, TypeError):
                pass


def changed_timers(snap: dict[str, object]) -> list[str]:
    return [k for k, (obj, attr) in _timer_table().items() if getattr(obj, attr, None) is not snap[k]]


def flag_snapshot() -> dict[str, object]:
    import torch

    flags = {
        "torch.backends.cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "torch.backends.cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "torch.get_float32_matmul_precision": torch.get_float32_matmul_precision(),
        "torch.get_default_dtype": str(torch.get_default_dtype()),
    }
    for name in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        flags[f"torch.backends.cuda.matmul.{name}"] = getattr(torch.backends.cuda.matmul, name, None)
    return flags


def changed_flags(before: dict[str, object]) -> list[str]:
    after = flag_snapshot()
    return [k for k in before if before[k] != after[k]]


def thread_count() -> int:
    return threading.active_count()
