"""The wire format between the oracle (parent) and a submission's worker (child): plain data only.

One message = an 8-byte little-endian length of the header, the header (UTF-8 JSON, an object), then
the raw bytes of every array it lists, back to back:

    header = {"op": "...", ...plain JSON..., "arrays": [{"name": str, "dtype": "<f8"|"|b1"|"<i8",
                                                         "shape": [int, ...]}, ...]}

Arrays are C-ordered little-endian float64, bool or int64, nothing else. Nothing is ever unpickled:
the reader checks the header size, every name, dtype and shape, and the byte count each implies,
before reading a byte of data, and copies the data into fresh plain `numpy.ndarray`s. Any violation is
a `ProtocolError` (the parent turns it into a failing verdict; it never trusts the rest of the message).
"""
from __future__ import annotations

import json
import os
import select
import struct
import time

import numpy as np

DTYPES = {"<f8": np.dtype("<f8"), "|b1": np.dtype("|b1"), "<i8": np.dtype("<i8")}
MAX_HEADER = 4 << 20          # bytes of JSON header
MAX_ARRAYS = 512              # arrays in one message
MAX_PAYLOAD = 512 << 20       # bytes of array data in one message
MAX_NDIM = 8
MAX_NAME = 200


class ProtocolError(Exception):
    """A message that breaks the format (or a peer that closed the pipe)."""


class Closed(ProtocolError):
    """The other side closed its end (a child that exited or died)."""


class Deadline(ProtocolError):
    """No complete message before the deadline."""


def _plain(a) -> np.ndarray:
    """`a` as a fresh, C-ordered plain ndarray of one of the wire dtypes."""
    arr = np.asarray(a)
    if arr.dtype == np.bool_:
        dt = DTYPES["|b1"]
    elif np.issubdtype(arr.dtype, np.integer):
        dt = DTYPES["<i8"]
    else:
        dt = DTYPES["<f8"]
    return np.ascontiguousarray(np.array(arr, dtype=dt, copy=True, subok=False))


def encode(header: dict, arrays: dict | None = None) -> bytes:
    """Header + arrays as one message (arrays: name -> array-like, converted to a wire dtype)."""
    specs, chunks = [], []
    for name, a in (arrays or {}).items():
        arr = _plain(a)
        specs.append({"name": str(name), "dtype": arr.dtype.str, "shape": list(arr.shape)})
        chunks.append(arr.tobytes())
    h = dict(header)
    h["arrays"] = specs
    raw = json.dumps(h, separators=(",", ":"), allow_nan=True).encode("utf-8")
    if len(raw) > MAX_HEADER:
        raise ProtocolError(f"message header of {len(raw)} bytes is over {MAX_HEADER}")
    return struct.pack("<Q", len(raw)) + raw + b"".join(chunks)


def _check_specs(specs, limit: int = MAX_PAYLOAD) -> list[tuple[str, np.dtype, tuple, int]]:
    if not isinstance(specs, list) or len(specs) > MAX_ARRAYS:
        raise ProtocolError("header 'arrays': expected a list of at most "
                            f"{MAX_ARRAYS} array descriptions")
    out, total, names = [], 0, set()
    for s in specs:
        if not isinstance(s, dict) or set(s) != {"name", "dtype", "shape"}:
            raise ProtocolError(f"array description: expected name/dtype/shape, got {str(s)[:200]}")
        name, dt, shape = s["name"], s["dtype"], s["shape"]
        if not isinstance(name, str) or not name or len(name) > MAX_NAME or name in names:
            raise ProtocolError(f"array name: expected a new non-empty string, got {str(name)[:80]!r}")
        if dt not in DTYPES:
            raise ProtocolError(f"array {name!r}: dtype must be one of {sorted(DTYPES)}, "
                                f"got {str(dt)[:40]!r}")
        if (not isinstance(shape, list) or len(shape) > MAX_NDIM
                or not all(type(n) is int and 0 <= n <= MAX_PAYLOAD for n in shape)):
            raise ProtocolError(f"array {name!r}: shape must be a list of at most {MAX_NDIM} "
                                f"non-negative ints, got {str(shape)[:80]}")
        size = DTYPES[dt].itemsize
        for n in shape:
            size *= n
            if size > MAX_PAYLOAD:
                break
        total += size
        if total > min(limit, MAX_PAYLOAD):
            raise ProtocolError(f"message arrays exceed {min(limit, MAX_PAYLOAD)} bytes "
                                "(more than this request can need)")
        names.add(name)
        out.append((name, DTYPES[dt], tuple(shape), size))
    return out


def decode(header_bytes: bytes, limit: int = MAX_PAYLOAD) -> tuple[dict, list]:
    try:
        header = json.loads(header_bytes.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError, MemoryError) as exc:
        # RecursionError: a forged header nesting lists 100 000 deep must not take the parent down
        raise ProtocolError(f"message header is not plain JSON: {type(exc).__name__}: "
                            f"{str(exc)[:200]}") from None
    if not isinstance(header, dict):
        raise ProtocolError("message header: expected a JSON object")
    return header, _check_specs(header.get("arrays", []), limit)


class Reader:
    """Reads messages from a file descriptor, with a deadline (parent) or blocking (child)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buf = bytearray()

    def _fill(self, n: int, deadline: float | None) -> None:
        while len(self.buf) < n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Deadline("no answer before the deadline")
                ready, _, _ = select.select([self.fd], [], [], left)
                if not ready:
                    raise Deadline("no answer before the deadline")
            chunk = os.read(self.fd, min(max(n - len(self.buf), 1 << 16), 16 << 20))
            if not chunk:
                raise Closed("the other side closed the pipe")
            self.buf += chunk

    def _take(self, n: int, deadline: float | None) -> bytes:
        self._fill(n, deadline)
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def read(self, deadline: float | None = None,
             limit: int = MAX_PAYLOAD) -> tuple[dict, dict[str, np.ndarray]]:
        """One message; `limit`: the most array bytes it may declare (refused before reading)."""
        (n,) = struct.unpack("<Q", self._take(8, deadline))
        if n > MAX_HEADER:
            raise ProtocolError(f"message header of {n} bytes is over {MAX_HEADER}")
        header, specs = decode(self._take(n, deadline), limit)
        arrays = {}
        for name, dt, shape, size in specs:
            data = self._take(size, deadline)
            arrays[name] = np.frombuffer(data, dtype=dt).reshape(shape).copy()
        return header, arrays


def write_all(fd: int, data: bytes, deadline: float | None = None) -> None:
    """Write everything; with a deadline the fd must be non-blocking (a child that stops reading
    cannot block the parent)."""
    view = memoryview(data)
    while view:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Deadline("the other side stopped reading")
            _, ready, _ = select.select([], [fd], [], left)
            if not ready:
                raise Deadline("the other side stopped reading")
        try:
            n = os.write(fd, view[: 1 << 20])
        except BlockingIOError:
            continue
        except (BrokenPipeError, OSError) as exc:
            raise Closed(f"the other side closed the pipe ({exc.__class__.__name__})") from None
        view = view[n:]
