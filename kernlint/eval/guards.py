"""Process-level guards used inside the worker: no network, and snapshots of global state that a
candidate must not change (timers, synchronize, precision flags, thread count)."""

from __future__ import annotations

import socket
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
