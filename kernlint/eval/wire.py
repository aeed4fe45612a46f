"""The data format between the trusted judge and the processes that run problem or candidate code.

A message is a frame: ``KLW1``, the header's length (8 bytes, little endian), a JSON header, then
the raw payloads back to back. The header's ``payloads`` lists each payload (``tensor``: dtype and
shape, read back with ``torch.frombuffer``; ``text``: UTF-8). Nothing in a frame can run code when
it is read: no pickle, no ``torch.load``.

Values (outputs, inputs, init arguments) travel as JSON with tensors replaced by ``{"$t": i}``,
the index of their payload; anything that is neither JSON nor a tensor becomes ``{"$repr": ...}``
(it can only compare unequal).

The ``artifacts`` entry of an answer header is where compiled-kernel data (PTX, TTGIR) leaves a
candidate process: a list of ``{"kernel", "kind", "text"}`` with ``text`` the key of a text payload
(``texts`` of :func:`read`). The judge reads them as text; it never imports or runs them.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

MAGIC = b"KLW1"
#: an executor's exit status when its own (the harness's) imports failed, before any problem or
#: candidate code ran (EX_TEMPFAIL): the judge retries the job once with fresh executors
HARNESS_FAILED = 75
#: a header larger than this is not a harness message
MAX_HEADER = 64 * 1024 * 1024


class WireError(Exception):
    """The peer closed the channel, sent a malformed frame, or did not answer in time."""


class _Encoder:
    def __init__(self) -> None:
        self.payloads: list[dict] = []
        self.blobs: list[bytes] = []

    def tensor(self, t) -> dict:
        import torch

        t = t.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        t = t.contiguous()
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        self.payloads.append({"type": "tensor", "dtype": str(t.dtype).removeprefix("torch."),
                              "shape": list(t.shape), "nbytes": len(raw)})
        self.blobs.append(raw)
        return {"$t": len(self.payloads) - 1}

    def text(self, s: str) -> int:
        raw = s.encode()
        self.payloads.append({"type": "text", "nbytes": len(raw)})
        self.blobs.append(raw)
        return len(self.payloads) - 1

    def value(self, x: Any) -> Any:
        import torch

        if isinstance(x, torch.Tensor):
            return self.tensor(x)
        if isinstance(x, dict):
            return {"$d": [[str(k), self.value(v)] for k, v in x.items()]}
        if isinstance(x, (list, tuple)):
            return {"$l" if isinstance(x, list) else "$u": [self.value(v) for v in x]}
        if x is None or isinstance(x, (bool, int, str)):
            return x
        if isinstance(x, float):
            return x if x == x and abs(x) != float("inf") else {"$f": repr(x)}
        return {"$repr": repr(x)[:200]}


def _decode_value(x: Any, payloads: list) -> Any:
    if isinstance(x, dict):
        if "$t" in x:
            return payloads[int(x["$t"])]
        if "$d" in x:
            return {k: _decode_value(v, payloads) for k, v in x["$d"]}
        if "$l" in x:
            return [_decode_value(v, payloads) for v in x["$l"]]
        if "$u" in x:
            return tuple(_decode_value(v, payloads) for v in x["$u"])
        if "$f" in x:
            return float(x["$f"])
        if "$repr" in x:
            return Opaque(x["$repr"])
    return x


class Opaque:
    """A value that was neither JSON nor a tensor on the other side; equal only to itself."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"<opaque {self.text}>"


def encode(header: dict, values: dict[str, Any] | None = None, texts: dict[str, str] | None = None) -> bytes:
    """A frame: ``header`` plus ``values`` (encoded into ``header["values"]``) and text payloads
    (their indices in ``header["texts"]``)."""
    enc = _Encoder()
    head = dict(header)
    if values:
        head["values"] = {k: enc.value(v) for k, v in values.items()}
    if texts:
        head["texts"] = {k: enc.text(v) for k, v in texts.items()}
    head["payloads"] = enc.payloads
    raw = json.dumps(head, default=str).encode()
    return MAGIC + struct.pack("<Q", len(raw)) + raw + b"".join(enc.blobs)


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise WireError("timeout")
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise WireError("closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _torch_dtype(name: str):
    import torch

    dt = getattr(torch, name, None)
    if not isinstance(dt, torch.dtype):
        raise WireError(f"unknown dtype {name!r}")
    return dt


def read(fd: int, deadline: float | None = None) -> tuple[dict, dict[str, Any], dict[str, str]]:
    """(header, values, texts) of the next frame on ``fd``."""
    import torch

    if _read_exact(fd, 4, deadline) != MAGIC:
        raise WireError("not a harness frame")
    (n,) = struct.unpack("<Q", _read_exact(fd, 8, deadline))
    if n > MAX_HEADER:
        raise WireError("header too large")
    try:
        head = json.loads(_read_exact(fd, n, deadline))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WireError(f"malformed header: {exc}") from None
    if not isinstance(head, dict):
        raise WireError("malformed header")
    decoded: list[Any] = []
    try:
        for p in head.get("payloads", []):
            raw = _read_exact(fd, int(p["nbytes"]), deadline)
            if p["type"] == "text":
                decoded.append(raw.decode(errors="replace"))
                continue
            dt, shape = _torch_dtype(p["dtype"]), [int(s) for s in p["shape"]]
            flat = torch.frombuffer(bytearray(raw), dtype=torch.uint8) if raw else torch.empty(0, dtype=torch.uint8)
            decoded.append(flat.view(dt).reshape(shape) if raw else torch.empty(shape, dtype=dt))
        values = {k: _decode_value(v, decoded) for k, v in head.pop("values", {}).items()}
        texts = {k: decoded[int(i)] for k, i in head.pop("texts", {}).items()}
    except (KeyError, TypeError, ValueError, IndexError, RuntimeError) as exc:
        raise WireError(f"malformed payload: {exc}") from None
    return head, values, texts


def write(fd: int, frame: bytes) -> None:
    view = memoryview(frame)
    while view:
        n = os.write(fd, view)
        view = view[n:]
