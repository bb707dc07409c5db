"""Reading a checkpoint file (npformer.io.checkpoint_file's format) safely: declared sizes are checked
before any array is read, nothing is unpickled, and every problem is a CheckpointError naming the file."""
from __future__ import annotations

import json
import os
import stat
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from npformer.guards.rules import format_bytes
from npformer.io.checkpoint_file import (
    FORMAT_NAME,
    FORMAT_VERSION,
    HEADER_FIELDS,
    OPTIMIZER_STATE_KEYS,
    Checkpoint,
    CheckpointError,
    CheckpointNotFoundError,
    checkpoint_path,
)
from npformer.models.config import TransformerConfig

__all__ = ["load_checkpoint", "as_checkpoint", "check_weights", "rename_optimizer_state",
           "parameter_bytes_bound", "MAX_ENTRIES", "MAX_HEADER_BYTES"]

# -- reading ------------------------------------------------------------------------------------------
MAX_ENTRIES = 50_000                  # zip members a checkpoint may hold (a model has hundreds)
MAX_HEADER_BYTES = 64 << 20           # the JSON header entry
_NO_CONFIG_FLOOR = 256 << 20          # total array bytes allowed without a config: max(this, 2 x file)


def parameter_bytes_bound(config: TransformerConfig) -> int:
    """An upper bound on the bytes of one model's weights under `config` (every model class, float64,
    with slack for heads a model may add): what a checkpoint's declared sizes are checked against
    before anything is read. Exact names and shapes are checked later (check_weights)."""
    c = config
    D, F = int(c.d_model), int(c.d_ff)
    V = max(int(c.src_vocab), int(c.tgt_vocab), int(c.vocab_size))
    M, C = int(c.max_len), int(c.num_classes)
    attn = 4 * D * D + 4 * D
    ffn = 2 * D * F + D + F
    enc = attn + ffn + 4 * D
    dec = 2 * attn + ffn + 6 * D
    n = (int(c.num_encoder_layers) * enc + int(c.num_decoder_layers) * dec + 3 * V * D + V
         + 2 * M * D + D * C + C + D * D + 8 * D)
    return 8 * 2 * n + (1 << 20)


_NPY_HEADER_ERRORS = (ValueError, TypeError, IndexError, KeyError, SyntaxError, RecursionError)


def _npy_header(zf: zipfile.ZipFile, info: zipfile.ZipInfo):
    """(shape, dtype, header length) of one .npy member, reading only its first bytes."""
    with zf.open(info) as f:
        version = np.lib.format.read_magic(f)
        try:
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, _, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f"unsupported .npy version {version}")
        except _NPY_HEADER_ERRORS as e:      # numpy's parser of the header dict raises these too
            if isinstance(e, ValueError):
                raise
            raise ValueError(f"{type(e).__name__}: {e}") from None
        return shape, dtype, f.tell()


def _torch_hint(entry: str) -> str:
    """What to do with a torch.save file (a zip whose pickle is `<name>/data.pkl`), else ""."""
    if not entry.endswith("/data.pkl"):
        return ""
    return ("; it is a torch.save file (a pickle, not unpickled here): write a checkpoint with "
            "save_checkpoint(path, model), or load a torch state dict into a torchformer model "
            "with model.load_state_dict(torch.load(path, weights_only=True))")


def _check_declared_sizes(path: Path, zf: zipfile.ZipFile) -> None:
    """Every entry's declared size and shape checked against the archive, the file and the config
    before a single array is read: a header declaring terabytes, or an entry that inflates far
    beyond what the config's weights can need (a deflate bomb), is refused here, in milliseconds."""
    infos = zf.infolist()
    if len(infos) > MAX_ENTRIES:
        raise CheckpointError(path, f"holds {len(infos)} zip entries (at most {MAX_ENTRIES}): not an "
                                    f"npformer checkpoint")
    disk = path.stat().st_size
    if sum(i.compress_size for i in infos) > disk:
        raise CheckpointError(path, "the zip directory declares more data than the file holds "
                                    "(truncated or crafted archive)")
    by_name = {}
    for i in infos:
        if i.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise CheckpointError(path, f"entry {i.filename!r}: unsupported zip compression "
                                        f"{i.compress_type}")
        if i.flag_bits & 0x1:                     # zipfile would ask for a password (RuntimeError)
            raise CheckpointError(path, f"entry {i.filename!r} is encrypted (a checkpoint never is)")
        if i.compress_type == zipfile.ZIP_STORED and i.compress_size != i.file_size:
            raise CheckpointError(path, f"entry {i.filename!r}: stored entry declares "
                                        f"{i.file_size} bytes but holds {i.compress_size}")
        if not i.filename.endswith(".npy"):
            raise CheckpointError(path, f"entry {i.filename!r} is not a NumPy array (.npy) "
                                        f"member: not an .npz checkpoint{_torch_hint(i.filename)}")
        by_name[i.filename[:-4]] = i
    # the header's config bounds every other entry
    config = None
    hinfo = by_name.get("header")
    if hinfo is not None:
        if hinfo.file_size > MAX_HEADER_BYTES:
            raise CheckpointError(path, f"header entry declares {format_bytes(hinfo.file_size)} (at "
                                        f"most {format_bytes(MAX_HEADER_BYTES)})")
        try:
            with zf.open(hinfo) as f:
                text = np.lib.format.read_array(f, allow_pickle=False)
            cfg = json.loads(str(text[()])).get("config")
            config = TransformerConfig.from_dict(cfg) if isinstance(cfg, dict) else None
        except Exception:  # noqa: BLE001 - a bad header is reported by load_checkpoint's checks
            config = None
    if config is not None:
        per_entry = parameter_bytes_bound(config)
        total_cap = 4 * per_entry + MAX_HEADER_BYTES
        why = f"the config (d_model={config.d_model}, {config.num_encoder_layers}+" \
              f"{config.num_decoder_layers} layers) needs at most {format_bytes(per_entry)} per entry"
    else:
        per_entry = total_cap = max(_NO_CONFIG_FLOOR, 2 * disk)
        why = f"a checkpoint without a config may hold at most {format_bytes(total_cap)} of arrays"
    total = 0
    for name, i in by_name.items():
        if i.file_size > max(per_entry, MAX_HEADER_BYTES if name == "header" else 0) + 4096:
            raise CheckpointError(path, f"entry {name!r} declares {format_bytes(i.file_size)} once "
                                        f"inflated ({format_bytes(i.compress_size)} stored); {why}: "
                                        f"refused before reading")
        try:
            shape, dtype, hlen = _npy_header(zf, i)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
            raise CheckpointError(path, f"corrupt archive entry {name!r}: {type(e).__name__}: "
                                        f"{e}") from None
        except ValueError as e:
            raise CheckpointError(path, f"entry {name!r}: bad .npy header: {e}") from None
        if dtype.hasobject:
            raise CheckpointError(path, f"corrupt archive entry {name!r}: object arrays are refused "
                                        f"(they would be unpickled, which is never done)")
        count = 1
        for d in shape:
            count *= int(d)
        nbytes = count * dtype.itemsize
        if hlen + nbytes != i.file_size:
            raise CheckpointError(path, f"entry {name!r} declares shape {tuple(shape)} {dtype} "
                                        f"({format_bytes(nbytes)}) but the archive holds "
                                        f"{format_bytes(max(i.file_size - hlen, 0))} for it: "
                                        f"refused before reading")
        total += nbytes
        if total > total_cap:
            raise CheckpointError(path, f"entries declare {format_bytes(total)} in all; {why}: "
                                        f"refused before reading")


_SPECIAL_FILES = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_a_file(path: Path) -> str:
    """What `path` is instead of a checkpoint file, and where the checkpoint may be."""
    if path.is_dir():
        if (path / "config.json").is_file():
            return ("is a folder, not a checkpoint file; it is a Hugging Face model folder "
                    "(config.json): load it with from_pretrained")
        try:
            inside = sorted(p.name for p in path.iterdir() if p.suffix == ".npz" and p.is_file())
        except OSError:
            inside = []
        if inside:
            shown = ", ".join(inside[:3]) + (f" and {len(inside) - 3} more" if len(inside) > 3 else "")
            return f"is a folder, not a checkpoint file; it holds {shown}: name the file"
        return "is a folder, not a checkpoint file (.npz)"
    mode = path.stat().st_mode
    kind = next((name for test, name in _SPECIAL_FILES if test(mode)), "not a regular file")
    return f"is {kind}, not a checkpoint file: a checkpoint is read from a regular file (.npz)"


def _read_arrays(path: Path) -> dict[str, np.ndarray]:
    """All arrays of the archive, read eagerly after every declared size was checked (see
    _check_declared_sizes); any container-level problem becomes CheckpointError."""
    if not path.exists():
        link = f" (a symbolic link to {os.readlink(path)!r}, which leads nowhere)" \
            if path.is_symlink() else ""
        raise CheckpointNotFoundError(path, f"no such file{link}")
    if not path.is_file():
        raise CheckpointError(path, _not_a_file(path))
    with open(path, "rb") as f:
        magic = f.read(4)
    if not zipfile.is_zipfile(path):
        if magic == b"PK\x03\x04":
            raise CheckpointError(path, "truncated or corrupt zip archive (no central directory); "
                                        "the file was probably cut short while being written or copied")
        hint = ("; a .safetensors file holds weights only: load its Hugging Face folder with "
                "from_pretrained" if path.suffix == ".safetensors" else "")
        raise CheckpointError(path, f"not an .npz checkpoint (the file does not start with a zip "
                                    f"signature; first bytes {magic!r}){hint}")
    out: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(path) as zf:
            _check_declared_sizes(path, zf)
        with np.load(path, allow_pickle=False) as npz:
            for key in npz.files:
                value = npz[key]
                if not isinstance(value, np.ndarray):       # a zip member that is not a .npy
                    raise CheckpointError(path, f"entry {key!r} is not a NumPy array (.npy) "
                                                f"member: not an .npz checkpoint")
                out[key] = value
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError,
            NotImplementedError, RuntimeError, struct.error, OverflowError) as e:
        if isinstance(e, CheckpointError):
            raise
        raise CheckpointError(path, f"corrupt archive entry: {type(e).__name__}: {e}") from None
    return out


def _scalar_str(path: Path, arrays: dict, key: str) -> str:
    a = arrays[key]
    if a.ndim != 0 or a.dtype.kind != "U":
        raise CheckpointError(path, f"{key!r}: expected a 0-d string array, got dtype {a.dtype} and "
                                    f"shape {a.shape}")
    return str(a[()])


def _native_float(path: Path, what: str, a: np.ndarray) -> np.ndarray:
    """`a` in this machine's byte order when it is float16/32/64 (what a checkpoint holds), else a
    CheckpointError: a big-endian '>f4' array holds the same numbers, a float128 or complex one
    is not a weight of either twin."""
    if a.dtype.kind != "f" or a.dtype.itemsize not in (2, 4, 8):
        raise CheckpointError(path, f"{what}: expected a float array (float16, float32 or float64), got "
                                    f"dtype {a.dtype}")
    return a.astype(a.dtype.newbyteorder("="), copy=False)


def load_checkpoint(path) -> Checkpoint:
    """Read and validate a checkpoint file (either twin's); nothing is built or changed.

    Checks the container, the format name and version, the header's fields, that the weights listed in
    the header are all present as float arrays, the config, and the optimizer state's structure.
    Shapes against a model are checked by `load_model` / `restore`.
    """
    path = checkpoint_path(path)
    arrays = _read_arrays(path)
    for key in ("format", "format_version", "header"):
        if key not in arrays:
            raise CheckpointError(path, f"missing entry {key!r}: not an npformer checkpoint "
                                        f"(entries found: {sorted(arrays)[:8]})")
    fmt = _scalar_str(path, arrays, "format")
    if fmt != FORMAT_NAME:
        raise CheckpointError(path, f"format: expected {FORMAT_NAME!r}, got {fmt!r}")
    v = arrays["format_version"]
    if v.ndim != 0 or not np.issubdtype(v.dtype, np.integer):
        raise CheckpointError(path, f"format_version: expected a 0-d integer, got {v.dtype} {v.shape}")
    version = int(v)
    if version != FORMAT_VERSION:
        raise CheckpointError(path, f"unknown format version {version} (this npformer reads version "
                                    f"{FORMAT_VERSION}; a newer release may have written it)")
    try:
        header = json.loads(_scalar_str(path, arrays, "header"))
    except ValueError as e:            # JSONDecodeError, or a number of more than 4300 digits
        raise CheckpointError(path, f"header is not valid JSON: {e}") from None
    except RecursionError:
        raise CheckpointError(path, "header: JSON nested too deeply to read") from None
    if not isinstance(header, dict):
        raise CheckpointError(path, f"header: expected a JSON object, got {type(header).__name__}")
    for name, typ in HEADER_FIELDS.items():
        if name not in header:
            raise CheckpointError(path, f"header lacks field {name!r}")
        if not isinstance(header[name], typ) or (typ is int and isinstance(header[name], bool)):
            raise CheckpointError(path, f"header field {name!r}: unexpected type "
                                        f"{type(header[name]).__name__}")
    if header["step"] < 0:
        raise CheckpointError(path, f"header field 'step': expected >= 0, got {header['step']}")

    # config
    config = None
    if header["config"] is not None:
        try:
            config = TransformerConfig.from_dict(header["config"])
        except (TypeError, ValueError) as e:
            raise CheckpointError(path, f"invalid config: {e}") from None

    # weights
    keys = header["model_keys"]
    present = [k[len("model/"):] for k in arrays if k.startswith("model/")]
    missing = [k for k in keys if k not in present]
    extra = [k for k in present if k not in keys]
    if missing or extra:
        raise CheckpointError(path, f"weights do not match the header's list: missing {missing}, "
                                    f"unexpected {extra}")
    state: dict[str, np.ndarray] = {}
    for k in keys:
        a = _native_float(path, f"weight {k!r}", arrays[f"model/{k}"])
        if not np.isfinite(a).all():                   # training never saves these: corruption
            raise CheckpointError(path, f"weight {k!r}: expected finite values, got "
                                        f"{int(a.size - np.isfinite(a).sum())} NaN or inf")
        state[k] = a

    # optimizer
    opt_keys = [k for k in arrays if k.startswith("optim/")]
    optimizer_state = None
    if header["optimizer"] is None:
        if opt_keys:
            raise CheckpointError(path, f"optimizer arrays {opt_keys[:4]} but no optimizer header")
    else:
        oh = header["optimizer"]
        for name, typ in (("type", str), ("hyperparams", dict), ("param_names", list)):
            if not isinstance(oh.get(name), typ):
                raise CheckpointError(path, f"optimizer header field {name!r}: missing or not a "
                                            f"{typ.__name__}")
        names = oh["param_names"]
        ostate: dict[str, dict[str, Any]] = {}
        for k in opt_keys:
            pname, _, skey = k[len("optim/"):].rpartition("/")
            if pname not in names or skey not in OPTIMIZER_STATE_KEYS:
                raise CheckpointError(path, f"unexpected optimizer entry {k!r} (parameter not in "
                                            f"the optimizer's list, or unknown state key)")
            a = arrays[k]
            if skey == "step":
                if a.ndim != 0 or not np.issubdtype(a.dtype, np.integer) or int(a) < 0:
                    raise CheckpointError(path, f"{k}: expected a 0-d non-negative integer, got "
                                                f"{a.dtype} {a.shape}")
                ostate.setdefault(pname, {})[skey] = int(a)
            else:
                a = _native_float(path, k, a)
                ostate.setdefault(pname, {})[skey] = a
        optimizer_state = {"type": oh["type"], "hyperparams": oh["hyperparams"],
                           "param_names": list(names), "state": ostate}
    unknown = [k for k in arrays if k not in ("format", "format_version", "header")
               and not k.startswith(("model/", "optim/"))]
    if unknown:
        raise CheckpointError(path, f"unexpected entries {unknown[:8]}")
    return Checkpoint(path=str(path), format_version=version, writer=header["writer"],
                      model_class=header["model_class"], config=config, state=state,
                      optimizer_state=optimizer_state, schedule_state=header["schedule"],
                      step=header["step"], metadata=header["metadata"],
                      versions=header["versions"])


def as_checkpoint(path_or_ckpt) -> Checkpoint:
    return path_or_ckpt if isinstance(path_or_ckpt, Checkpoint) else load_checkpoint(path_or_ckpt)


def _some(names: list, limit: int = 8) -> str:
    """A list of names, the first `limit` of them and a count of the rest."""
    shown = ", ".join(repr(n) for n in names[:limit])
    return f"[{shown}{f', ... and {len(names) - limit} more' if len(names) > limit else ''}]"


def check_weights(ckpt: Checkpoint, expected: dict[str, tuple[int, ...]],
                  model_class: str | None = None) -> None:
    """Raise CheckpointError unless the saved weights have exactly `expected`'s names and shapes.

    `model_class`: the class name of the model being loaded into; when the file holds another
    class's weights, the message starts by saying so. Long name lists are shortened (first 8)."""
    missing = [k for k in expected if k not in ckpt.state]
    unexpected = [k for k in ckpt.state if k not in expected]
    shapes = [f"{k}: model {tuple(s)} vs file {ckpt.state[k].shape}" for k, s in expected.items()
              if k in ckpt.state and tuple(ckpt.state[k].shape) != tuple(s)]
    problems = []
    if missing:
        problems.append(f"missing weights {_some(missing)}")
    if unexpected:
        problems.append(f"unexpected weights {_some(unexpected)}")
    if shapes:
        problems.append("wrong shapes: " + "; ".join(shapes[:8])
                        + (f"; ... and {len(shapes) - 8} more" if len(shapes) > 8 else ""))
    if problems:
        intro = "does not fit the model"
        if model_class is not None and ckpt.model_class != model_class:
            intro = (f"holds a {ckpt.model_class}'s weights; the model is a {model_class}, so "
                     f"they do not fit")
        raise CheckpointError(ckpt.path, intro + ": " + "; ".join(problems))


def rename_optimizer_state(ckpt_path, sd: dict[str, Any], names_from: list[str],
                           names_to: list[str]) -> dict[str, Any]:
    """The same optimizer state dict with parameter i renamed names_from[i] -> names_to[i]."""
    m = dict(zip(names_from, names_to))
    missing = [n for n in sd["param_names"] if n not in m]
    if missing:
        raise CheckpointError(ckpt_path, f"optimizer state for parameters {missing} that the "
                                         f"model/optimizer do not have")
    return {"type": sd["type"], "hyperparams": sd["hyperparams"],
            "param_names": [m[n] for n in sd["param_names"]],
            "state": {m[n]: s for n, s in sd["state"].items()}}
