"""Read and write the safetensors format with numpy alone (no pickle, no extra dependency).

A .safetensors file is

    8 bytes        N, the header length, unsigned 64-bit little-endian
    N bytes        a JSON object: {name: {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
                   optionally "__metadata__": {str: str}}
    the rest       raw little-endian tensor bytes; each tensor's bytes are data[begin:end]

Nothing in the file is executed. Before any tensor is read the reader checks the header length
against the file size, that every entry has a known dtype, a shape of non-negative ints and offsets
with end - begin == prod(shape) * itemsize, and that the offsets tile the data area exactly (no gap,
no overlap, nothing past the end). bfloat16 (BF16) is widened to float32 exactly (it is float32's
upper half).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from npformer.io.files import atomic_write, check_overwrite, file_path, write_target_problem

DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
          "I8": "i1", "U8": "u1", "BOOL": "?", "BF16": "<u2"}
NAMES = {np.dtype(v): k for k, v in DTYPES.items() if k != "BF16"}
MAX_HEADER = 100 * 2 ** 20          # 100 MiB of JSON: far above any real model's header


class SafetensorsError(ValueError):
    """A file that is not a valid safetensors file; the message names the file and the problem."""

    def __init__(self, path, problem: str):
        super().__init__(f"{path}: not a valid safetensors file: {problem}")


def read_header(path) -> tuple[dict, dict, int]:
    """(entries {name: (dtype, shape, begin, end)}, metadata, data_start), all checked (see above)."""
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise SafetensorsError(path, f"expected at least 8 bytes, got {len(head)}")
        n = int.from_bytes(head, "little")
        if n > min(size - 8, MAX_HEADER):
            raise SafetensorsError(path, f"header length {n} exceeds the file ({size} bytes) or "
                                         f"{MAX_HEADER} bytes")
        raw = f.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except ValueError as e:          # not UTF-8, not JSON, a number of more than 4300 digits
        raise SafetensorsError(path, f"header is not JSON ({e})") from None
    except RecursionError:
        raise SafetensorsError(path, "header: JSON nested too deeply to read") from None
    if not isinstance(header, dict):
        raise SafetensorsError(path, f"header: expected a JSON object, got {type(header).__name__}")
    meta = header.pop("__metadata__", None) or {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise SafetensorsError(path, "__metadata__: expected an object of strings")
    data_start, data_size = 8 + n, size - 8 - n
    entries, spans = {}, []
    for name, e in header.items():
        if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
            raise SafetensorsError(path, f"{name}: expected keys dtype, shape, data_offsets, got {e!r}")
        dt, shape, offs = e["dtype"], e["shape"], e["data_offsets"]
        if not isinstance(dt, str) or dt not in DTYPES:          # a list or object is unhashable
            raise SafetensorsError(path, f"{name}: dtype {dt!r} not one of {sorted(DTYPES)}")
        if not (isinstance(shape, list)
                and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
            raise SafetensorsError(path, f"{name}: shape must be a list of non-negative ints, got "
                                         f"{shape!r}")
        if not (isinstance(offs, list) and len(offs) == 2
                and all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offs)
                and offs[0] <= offs[1]):
            raise SafetensorsError(path, f"{name}: data_offsets must be [begin, end], got {offs!r}")
        want = math.prod(shape) * np.dtype(DTYPES[dt]).itemsize     # Python ints: no overflow
        if offs[1] - offs[0] != want:
            raise SafetensorsError(path, f"{name}: {dt} {shape} needs {want} bytes, data_offsets "
                                         f"span {offs[1] - offs[0]}")
        entries[name] = (dt, tuple(shape), offs[0], offs[1])
        spans.append((offs[0], offs[1], name))
    end = 0
    for begin, stop, name in sorted(spans):
        if begin != end:
            raise SafetensorsError(path, f"{name}: data starts at {begin}, expected {end} (gap or "
                                         f"overlap)")
        end = stop
    if end != data_size:
        raise SafetensorsError(path, f"tensors cover {end} bytes of data, the file holds {data_size}")
    return entries, meta, data_start


def read_safetensors(path, names=None) -> dict[str, np.ndarray]:
    """{name: array} of every tensor (or of `names`), in the file's dtypes (BF16 -> float32)."""
    entries, _, start = read_header(path)
    wanted = entries if names is None else {k: entries[k] for k in names if k in entries}
    out = {}
    with open(path, "rb") as f:
        for name, (dt, shape, begin, stop) in wanted.items():
            f.seek(start + begin)
            count = (stop - begin) // np.dtype(DTYPES[dt]).itemsize
            a = np.fromfile(f, dtype=DTYPES[dt], count=count)
            if a.size != count:
                raise SafetensorsError(path, f"{name}: file ended early")
            if dt == "BF16":
                a = (a.astype(np.uint32) << 16).view(np.float32)        # exact widening
            out[name] = a.reshape(shape).astype(a.dtype.newbyteorder("="), copy=False)
    return out


def _output_path(path, overwrite: bool) -> Path:
    """`path` as a Path a file can be written at: refused (an OSError naming it, before anything is
    written) when it is a folder, when its folder is missing or a file, or when it exists and not
    `overwrite`."""
    path = file_path(path, "path")
    overwrite = check_overwrite(overwrite)
    problem = write_target_problem(path)
    if problem is not None:              # OSError(errno, ...) is IsADirectoryError, ... by errno
        raise OSError(*problem, str(path))
    if path.exists() and not overwrite:
        raise FileExistsError(f"path: {path} exists; pass overwrite=True to replace it")
    return path


def write_safetensors(path, tensors: dict, metadata: dict | None = None,
                      overwrite: bool = False) -> Path:
    """Write {name: array} atomically (temp file, fsync, rename); an existing file is replaced only
    with overwrite=True. Arrays are stored in their own dtype, little-endian, C order."""
    path = _output_path(path, overwrite)
    arrays, header, offset = [], {}, 0
    for name, v in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensors: expected str names, got {type(name).__name__}")
        a = np.ascontiguousarray(v)
        if a.dtype not in NAMES:
            raise TypeError(f"tensors[{name!r}]: dtype {a.dtype} cannot be stored")
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        header[name] = {"dtype": NAMES[a.dtype.newbyteorder("=")], "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        arrays.append(a)
        offset += a.nbytes
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError(f"metadata: expected a dict of str to str, got {type(metadata).__name__}")
    for k, v in (metadata or {}).items():      # the format stores text: 3 would come back as "3"
        if not (isinstance(k, str) and isinstance(v, str)):
            raise TypeError(f"metadata: expected str keys and str values (safetensors stores "
                            f"text), got {k!r}: {v!r} ({type(k).__name__}: {type(v).__name__})")
    if metadata:
        header["__metadata__"] = dict(metadata)
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)                                       # 8-byte aligned data

    def write(f) -> None:
        f.write(len(raw).to_bytes(8, "little"))
        f.write(raw)
        for a in arrays:
            f.write(a.tobytes())

    atomic_write(path, write)                  # temp file, fsync, rename, folder fsync
    return path
