"""Recogniser: attention and layers that take their sequences time-first, (T, B, d) (fairseq-style
code, torch.nn.MultiheadAttention's default layout). Found by a probe when the adapter is prepared,
on the small probe build: with two sequences, a change at one position of sequence 1 must leave
sequence 0's output alone. Fed (B, T, d), time-first code mixes them (it takes the batch axis for
time) or raises; fed (T, B, d), it keeps them apart. Only when both hold are the inputs handed over
(T, B, d) and the output read back from (T, B, d); gradients flow back through the transpose, and
the report says so. Batch-first code fails the second test (fed (T, B, d) it mixes the two), and a
candidate mixing its sequences either way stays batch-first and is compared as it is."""
from __future__ import annotations

import numpy as np

from ..calls import Finished, run_limited
from .layout import array_out

COMPONENTS = ("mha", "encoder_layer", "decoder_layer")


def _call(adapter, fn, x: np.ndarray, mem: np.ndarray):
    ops, dtype = adapter.ops, adapter.opts.dtype
    t = ops.from_np(x.astype(dtype))
    vals = {"x": t, "query": t, "key": t, "value": t, "memory": ops.from_np(mem.astype(dtype))}
    vals.update({m.name: None for m in adapter.comp.masks})
    try:
        res = run_limited(lambda: adapter.binding.call(fn, vals), 10.0)
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return None
    if not isinstance(res, Finished):
        return None
    return array_out(res.value)


def _moved(a, b, index) -> bool:
    return float(np.abs(a[index] - b[index]).max()) > 1e-9 * max(1.0, float(np.abs(a).max()))


def probe(adapter) -> None:
    if adapter.comp.name not in COMPONENTS or adapter.hooks is not None:
        return
    obj = adapter.probe if adapter.mode == "class" else adapter.obj if adapter.mode == "instance" else None
    if obj is None or adapter.caps.list_input:
        return
    try:
        fn = adapter.finish_module(obj)
    except Exception:  # noqa: BLE001
        return
    conventions = ("keep", "drop") if adapter.opts.mask_convention == "keep" else (adapter.opts.mask_convention,)
    found = None
    for conv in conventions:               # a padding flag read the other way round hides every key
        adapter.opts.mask_convention, before = conv, adapter.opts.mask_convention
        try:
            found = _time_first(adapter, fn)
        finally:
            adapter.opts.mask_convention = before
        if found is not None:
            break
    if found:
        adapter.caps.time_first = True
        adapter.notes.append("the candidate takes its sequences time-first, (T, B, d): a probe found one "
                             "sequence's positions changing another's output when fed (B, T, d), never "
                             "when fed (T, B, d); inputs handed over and outputs read back time-first")


def _time_first(adapter, fn) -> bool | None:
    """True: time-first; False: not; None: no finite answer fed time-first (try another reading)."""
    D = int(adapter.probe_hyper()["d_model"])
    B, T, S = 2, 3, 4
    rng = np.random.default_rng(5)
    x, mem = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    x2 = x.copy()
    x2[1, 0] += 1.0                                    # sequence 1, position 0
    adapter.caps.time_first = True                     # parts of masks cut from (T, B, d) inputs
    try:
        tf = [_call(adapter, fn, a.swapaxes(0, 1), mem.swapaxes(0, 1)) for a in (x, x2)]
    finally:
        adapter.caps.time_first = False
    if any(o is None or o.shape != (T, B, D) or not np.all(np.isfinite(o)) for o in tf):
        return None
    if _moved(*tf, (slice(None), 0)) or not _moved(*tf, (slice(None), 1)):
        return False                                   # fed (T, B, d), sequence 0 must stay put
    bf = [_call(adapter, fn, a, mem) for a in (x, x2)]
    return not (all(o is not None and o.shape == (B, T, D) for o in bf) and not _moved(*bf, 0))
