"""The argument rules both twins share: numbers, flags, names and configs, never an array or a tensor.

npformer.guards.validation and torchformer.guards.validation export these same functions (torchformer
imports them from here), so a rule and its message are written once: `check_probability("p", 1.0)`
raises the same error in npformer and in torchformer. Each message names the argument, what was
expected and what came.
"""
from __future__ import annotations

import os

import numpy as np

from npformer.models.config import ACTIVATIONS, TransformerConfig


def is_int(v) -> bool:
    """A Python or NumPy integer, not a bool."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def is_real(v) -> bool:
    """A Python or NumPy real number (integer or float), not a bool."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def random_kind(v) -> str:
    """The type of `v` for a message about generators: numpy's and torch's by their public names
    ("numpy.random.Generator", "torch.Generator"), so that a torch Generator refused where a numpy
    one is expected is not reported as "got Generator"."""
    top, name = type(v).__module__.split(".")[0], type(v).__name__
    return {"numpy": f"numpy.random.{name}", "torch": f"torch.{name}"}.get(top, name)


def check_positive_int(name: str, v) -> int:
    if not is_int(v) or v < 1:
        raise ValueError(f"{name}: expected a positive int, got {v!r}")
    return int(v)


def check_count(name: str, n) -> int:
    """A non-negative int (a length, an offset)."""
    if not is_int(n) or n < 0:
        raise ValueError(f"{name}: expected a non-negative int, got {n!r}")
    return int(n)


def check_pad_id(pad_id) -> int | None:
    """A padding id: None (no padding) or an int a token id can equal, 0 to int64's largest. A
    negative or larger one matches no id, so its mask would silently keep every position."""
    if pad_id is None:
        return None
    if not is_int(pad_id):
        raise TypeError(f"pad_id: expected an int or None, got {type(pad_id).__name__}")
    if not 0 <= pad_id <= np.iinfo(np.int64).max:
        raise ValueError(f"pad_id: expected None or an int from 0 to 2**63 - 1 (a token id), got {pad_id}")
    return int(pad_id)


def check_length(name: str, length: int, max_len: int) -> None:
    if length > max_len:
        raise ValueError(f"{name}: expected a sequence length <= max_len={max_len}, got {length}")


def check_has_keys(name: str, shape, axis: int) -> None:
    """Attention needs at least one key: `shape[axis]` (the length of a sequence, memory or keys)
    of 0 is refused, in both twins alike (a softmax over no keys has nothing to normalise)."""
    if shape[axis] == 0:
        raise ValueError(f"{name}: expected at least one position to attend to (length >= 1 along "
                         f"axis {axis}), got shape {tuple(shape)}")


def check_real(name: str, v, *, positive: bool = False) -> float:
    """A finite Python or NumPy number, not a bool (a scale, an epsilon); > 0 when `positive`."""
    kind = "a positive finite float" if positive else "a finite float"
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected {kind}, got {type(v).__name__}")
    if not np.isfinite(float(v)) or (positive and not v > 0):
        raise ValueError(f"{name}: expected {kind}, got {v!r}")
    return float(v)


def check_cache_list(caches, num_layers: int) -> None:
    """None, or a list of one cache dict per decoder layer (what an incremental decode starts with:
    `[{} for _ in range(num_layers)]`)."""
    if caches is None:
        return
    if not isinstance(caches, list):
        raise TypeError(f"caches: expected None or a list of {num_layers} dicts (one per layer), got "
                        f"{type(caches).__name__}")
    if len(caches) != num_layers:
        raise ValueError(f"caches: expected a list of {num_layers} dicts (one per layer), got "
                         f"{len(caches)}")
    for i, cache in enumerate(caches):
        if not isinstance(cache, dict):
            raise TypeError(f"caches[{i}]: expected a dict {{'self': {{...}}, 'cross': {{...}}}} (one "
                            f"per layer; {{}} to start), got {type(cache).__name__}")


def check_probability(name: str, p) -> float:
    """A drop probability in [0, 1) (p = 1 would drop everything and divide by zero)."""
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name}: expected a float in [0, 1), got {type(p).__name__}")
    if not 0.0 <= float(p) < 1.0:
        raise ValueError(f"{name}: expected a float in [0, 1), got {p!r}")
    return float(p)


SEED_MAX = 2**63 - 1   # torch's generators take 64 bits, and the dropout one is seeded with seed + 1


def check_seed(seed) -> int:
    """A seed (a model's initialisation, sampling): an int from 0 to SEED_MAX, the same range in
    both twins, so a seed that works with one backend works with the other."""
    if not is_int(seed) or seed < 0:
        raise ValueError(f"seed: expected a non-negative int, got {seed!r}")
    if seed > SEED_MAX:
        raise ValueError(f"seed: expected an int from 0 to 2**63 - 1 (a 64-bit generator seed), "
                         f"got {seed}")
    return int(seed)


def check_flag(name: str, v) -> bool:
    if not isinstance(v, bool):
        raise TypeError(f"{name}: expected a bool, got {v!r}")
    return v


def check_activation(name: str, v) -> str:
    """One of the activation names both twins know (a str, compared exactly), else a ValueError
    naming `name` and the value."""
    if not (isinstance(v, str) and v in ACTIVATIONS):
        raise ValueError(f"{name}: expected one of {tuple(ACTIVATIONS)}, got {v!r}")
    return v


def check_training_mode(module, mode) -> bool:
    """Module.train's mode (either twin): a bool (NumPy's too), as torch.nn.Module.train requires;
    else a ValueError naming the module's class and the value."""
    if not isinstance(mode, (bool, np.bool_)):
        raise ValueError(f"{type(module).__name__}.train: mode: expected a bool (True: training, "
                         f"False: evaluation), got {mode!r}")
    return bool(mode)


def check_generator(rng) -> np.random.Generator:
    """A task's random stream: a numpy Generator (an int seed or the legacy RandomState would
    otherwise fail deep inside the drawing, naming nothing)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng: expected a numpy Generator (np.random.default_rng(seed)), got "
                        f"{type(rng).__name__}")
    return rng


def check_texts(texts) -> list:
    """Input texts: a list (or tuple) of them, never one str, whose characters would otherwise be
    read as one input each."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"texts: expected a list of input strings, got one {type(texts).__name__} "
                        f"{texts[:40]!r} (its characters would be read as {len(texts)} inputs); wrap "
                        f"it in a list")
    try:
        return list(texts)
    except TypeError:
        raise TypeError(f"texts: expected a list of input strings, got {type(texts).__name__}") \
            from None


def check_config(name: str, config) -> TransformerConfig:
    if not isinstance(config, TransformerConfig):
        raise TypeError(f"{name}: expected a TransformerConfig, got {type(config).__name__}")
    return config


def physical_memory() -> int | None:
    """This machine's memory in bytes, None where the platform does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _meminfo_available() -> int | None:
    """The kernel's MemAvailable (free memory plus the caches it can reclaim) plus free swap, in
    bytes (/proc/meminfo); None where there is no such file."""
    text = _read("/proc/meminfo")
    fields = {}
    for line in (text or "").splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            fields[key] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    if "MemAvailable" not in fields:
        return None
    return fields["MemAvailable"] + fields.get("SwapFree", 0)


def _cgroup_headroom() -> int | None:
    """What this process's cgroup (v2) memory limit still allows: memory.max less memory.current,
    plus the inactive file cache the kernel reclaims first; None without a limit."""
    line = next((x for x in (_read("/proc/self/cgroup") or "").splitlines()
                 if x.startswith("0::")), None)
    for folder in ([f"/sys/fs/cgroup{line[3:].rstrip('/')}"] if line else []) + ["/sys/fs/cgroup"]:
        limit, current = _read(f"{folder}/memory.max"), _read(f"{folder}/memory.current")
        if limit is None or current is None:
            continue
        if not limit.strip().isdigit() or not current.strip().isdigit():
            return None                                            # "max": no limit
        stat = dict(x.split()[:2] for x in (_read(f"{folder}/memory.stat") or "").splitlines()
                    if len(x.split()) >= 2)
        inactive = int(stat.get("inactive_file", "0")) if stat.get("inactive_file", "").isdigit() \
            else 0
        return max(0, int(limit) - int(current) + inactive)
    return None


def available_memory() -> int | None:
    """The bytes this process can still allocate, the bound every memory check compares with: the
    least of this machine's memory (physical_memory), what the kernel counts as available (free
    memory, the caches it can reclaim and free swap: what other processes hold is not ours) and the
    headroom under this process's cgroup limit (a container's memory.max, often below the machine's).
    None where the machine's memory cannot be read (the checks then refuse nothing)."""
    total = physical_memory()
    if not total:
        return total
    return min([total] + [m for m in (_meminfo_available(), _cgroup_headroom()) if m is not None])


def check_config_fits_memory(name: str, config: TransformerConfig) -> None:
    """Refuse, before anything is allocated, a config whose weights alone cannot fit in this
    machine's memory (an absurd layer count or width would otherwise build until the process is
    killed, or fail deep inside NumPy). A lower bound, counted with Python ints: every layer's
    attention and feed-forward weights, one embedding table and the positional table."""
    mem = available_memory()
    if not mem:
        return
    c = config
    d, f = int(c.d_model), int(c.d_ff)
    layers = int(c.num_encoder_layers) + int(c.num_decoder_layers)
    params = layers * (4 * d * d + 2 * d * f) + max(int(c.src_vocab), int(c.tgt_vocab)) * d \
        + int(c.max_len) * d
    nbytes = params * np.dtype(c.dtype).itemsize
    if nbytes > mem:
        raise ValueError(
            f"{name}: expected a model that fits in this machine's available memory "
            f"({format_bytes(mem)}), got "
            f"at least {params:,} parameters ({format_bytes(nbytes)} in {c.dtype}) from "
            f"d_model={d}, d_ff={f}, num_encoder_layers={c.num_encoder_layers}, "
            f"num_decoder_layers={c.num_decoder_layers}, vocabulary {max(c.src_vocab, c.tgt_vocab)}, "
            f"max_len={c.max_len}")


def check_decoding_fits_memory(name: str, got: str, rows: int, host_row: int, model_row: int,
                               device_memory: int | None = None) -> None:
    """Refuse, before the rows are built, a decode whose arrays cannot fit: `rows` rows (batch x beams)
    of at least `host_row` bytes of NumPy bookkeeping each (log-probabilities, candidates, tokens) and
    `model_row` bytes of the model's own (encoder memory, key/value caches), counted with Python
    ints. The model's part is on the device with `device_memory` bytes, or (None) in this machine's
    memory with the bookkeeping. `name` is the argument the message names, `got` what it was."""
    mem = available_memory()
    pools = [(rows * host_row, mem, "this machine's available memory")] if device_memory else \
        [(rows * (host_row + model_row), mem, "this machine's available memory")]
    if device_memory:
        pools.append((rows * model_row, device_memory, "the device's memory"))
    for need, have, where in pools:
        if have and need > have:
            raise ValueError(
                f"{name}: expected a decode that fits in {where} ({format_bytes(have)}), got {got}: "
                f"{rows:,} rows of at least {need // rows:,} bytes each, {format_bytes(need)}")


def check_training_fits_memory(config: TransformerConfig, T: int, classification: bool,
                               batch_size: int | None, eval_size: int | None,
                               device_memory: int | None = None, processes: int = 1) -> None:
    """Refuse, before a batch is drawn, a TrainConfig.batch_size or eval_size whose arrays cannot fit:
    per training example one attention-weight array (heads, T, T) and, unless classifying, the logits
    (T, vocabulary), in the model's dtype, in `device_memory` bytes (None: this machine's memory);
    per held-out example its source and target ids, (T,) int64 each. T is the task's longest row (a
    batch is padded to its longest row). Lower bounds, counted with Python ints; None skips a size.
    `processes` > 1 (DistributedDataParallel): each device holds ceil(batch_size / processes) rows;
    processes on this machine's memory (device_memory None) share it, so it holds every row."""
    mem = available_memory()
    per_device = None
    if batch_size is not None and processes > 1 and device_memory:
        per_device = -(-int(batch_size) // int(processes))
    item = np.dtype(config.dtype).itemsize
    row = int(config.num_heads) * T * T + (0 if classification else T * int(config.tgt_vocab))
    model_pool = (device_memory, "the device's") if device_memory else (mem, "this machine's available")
    sizes = [("batch_size", batch_size, row * item, *model_pool,
              f"one attention-weight array (heads={config.num_heads}, T={T}, T)"
              + ("" if classification else f" and the logits (T, vocabulary {config.tgt_vocab})")
              + f" in {config.dtype}"),
             ("eval_size", eval_size, 2 * T * 8, mem, "this machine's available",
              f"its source and target ids (T={T}, int64)")]
    for name, n, per, have, where, what in sizes:
        rows = per_device if name == "batch_size" and per_device is not None else n
        if n is not None and have and rows * per > have:
            split = f" ({rows:,} on each of {processes} processes' devices)" if rows != n else \
                (f" (the {processes} processes share it)" if name == "batch_size" and processes > 1
                 else "")
            raise ValueError(
                f"TrainConfig.{name}: expected a size whose arrays fit in {where} memory "
                f"({format_bytes(have)}), got {n:,}{split}: at least {per:,} bytes per example for "
                f"{what}, {format_bytes(rows * per)} (T: the task's longest row)")


def check_examples_fit_memory(name: str, n: int, per_example: int, what: str) -> None:
    """Refuse, before anything is drawn, `n` examples (a task's `sample` or `heldout`) whose arrays
    cannot fit in this machine's memory: at least `per_example` bytes each, for `what`. A lower
    bound, counted with Python ints (n = 10**10 would end in NumPy's raw MemoryError)."""
    mem = available_memory()
    need = int(n) * int(per_example)
    if mem and need > mem:
        raise ValueError(f"{name}: expected a number of examples whose arrays fit in this machine's "
                         f"available memory ({format_bytes(mem)}), got {int(n):,}: at least {per_example:,} "
                         f"bytes per example for {what}, {format_bytes(need)}")


def format_bytes(nbytes: int) -> str:
    """A byte count for a message: whole bytes below 1 KiB, else one decimal in the largest binary
    unit it reaches, up to PiB ("512 B", "64.0 KiB", "1,536.0 PiB"). The one formatter of sizes in
    both twins' messages (memory bounds here, checkpoint limits in npformer.io.checkpoint_read)."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, float, np.integer, np.floating)):
        raise TypeError(f"nbytes: expected a number of bytes, got {type(nbytes).__name__}")
    n = float(nbytes)
    if abs(n) < 1024:
        return f"{n:.0f} B"
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        n /= 1024
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:,.1f} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover


def check_model_mask_shape(name: str, shape: tuple, batch: int, keep_arg: str) -> None:
    """The shape of a model's attention-mask argument: 4-D (batch, heads, q_len, k_len) with size-1
    axes broadcasting, or 2-D (q_len, k_len) shared by the batch. Refused: rank 1 or 3 (which axes?),
    and a 2-D mask whose first axis is the batch size (> 1), which could be a torch-style
    (batch, k_len) key-padding mask: those go in `keep_arg`."""
    if len(shape) not in (2, 4):
        raise ValueError(f"{name}: expected a 4-D (batch, heads, q_len, k_len) keep-mask (size-1 "
                         f"axes broadcast) or a 2-D (q_len, k_len) one, got shape {shape}; a "
                         f"(batch, k_len) key-padding keep-mask goes in {keep_arg}")
    if len(shape) == 2 and batch > 1 and shape[0] == batch:
        raise ValueError(f"{name}: a 2-D mask is read as (q_len, k_len), but shape {shape} starts "
                         f"with the batch size {batch}, so it could be a (batch, k_len) key-padding "
                         f"mask: ambiguous. Pass key padding as {keep_arg} (True = a real token) "
                         f"or a 4-D mask (batch, heads, q_len, k_len)")


def check_key_keep_shape(name: str, shape: tuple, batch: int, k_len: int) -> None:
    """The shape of a (batch, k_len) key keep-mask (True = a real token; the NEGATION of torch's
    key_padding_mask)."""
    if shape != (batch, k_len):
        raise ValueError(f"{name}: expected a (batch, k_len) = ({batch}, {k_len}) key keep-mask "
                         f"(True = real token), got shape {shape}")


def refuse_masked(name: str, x) -> None:
    """A numpy.ma masked array is refused (both twins): the math reads the values under its mask, while its own
    min/max/isfinite skip them, so a masked id of 99 passed the range check and a masked NaN the finite
    check (an IndexError, or a NaN, deep inside the model)."""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"{name}: expected a plain numpy array, got a masked array (numpy.ma) of shape "
                        f"{x.shape}: the values under its mask would be used as they are; fill them "
                        f"first, e.g. {name}.filled(0), and pass a keep-mask for what to ignore")
