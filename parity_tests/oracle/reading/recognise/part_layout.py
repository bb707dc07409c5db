"""Recogniser: the axes of a key padding taken as a part of the mask (recognise/mask_parts). A
padding part named for what it is (`pad_attn_mask`, `src_pad_mask`) is handed over as (batch, S) by
default, as torch's key_padding_mask; much code keeps it broadcastable instead, (batch, 1, 1, S) as
its data loader builds it (`mask[:, None, None]`), or (batch, 1, S) as the Annotated Transformer's
`(src != pad).unsqueeze(-2)`, and ANDs it with a causal (1, 1, T, T) mask or hands it to
`masked_fill`: a (batch, S) part then raises, or broadcasts across the wrong axes.

Found by behaviour, in the worker, without the reference, before the causal probe (which needs a
call that runs): batch 1's last key is padded and its input changed (x, and memory for a decoder);
a layout fits when the call returns the input's shape, finite, and batch 1's other positions do not
move (under the default convention or the flipped one, which recognise/part_convention settles
later). (batch, S) stays whenever it fits; otherwise the first of (batch, 1, 1, S), (batch, 1, S)
that fits is used for every padding part, and the report says so. Every quantity is still
compared with the reference."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..calls import Finished, run_limited
from .layout import array_out

COMPONENTS = ("encoder_layer", "decoder_layer")
LAYOUTS = {"flat": "(batch, {k})", "rank4": "(batch, 1, 1, {k})", "rank3": "(batch, 1, {k})"}


def shaped(pad: np.ndarray, layout: str | None) -> np.ndarray:
    """A (B, Tk) padding part in the chosen layout."""
    return pad[:, None, None, :] if layout == "rank4" else pad[:, None, :] if layout == "rank3" \
        else pad


def probe(adapter) -> None:
    b, opts = getattr(adapter, "binding", None), adapter.opts
    if adapter.comp.name not in COMPONENTS or b is None or adapter.mode not in ("class", "instance") \
            or adapter.hooks is not None or (opts.mask_convention, opts.mask_dtype) != ("keep", "bool"):
        return
    if not any(k.startswith("padding_mask:") for k in (b.guessed or {}).values()):
        return
    obj = adapter.probe if adapter.mode == "class" else adapter.obj
    if obj is None:
        return
    from ..slots import convert_mask
    fn = adapter.finish_module(obj)
    D, dtype = adapter.probe_hyper()["d_model"], opts.dtype
    rng = np.random.default_rng(13)
    x, mem = rng.standard_normal((2, 3, D)), rng.standard_normal((2, 4, D))   # B, T, S all differ
    x2, mem2 = x.copy(), mem.copy()
    x2[1, -1] += 3.0 * rng.standard_normal(D)                   # the padded keys' inputs change
    mem2[1, -1] += 3.0 * rng.standard_normal(D)
    keeps = {}
    for m, k in zip(adapter.comp.masks, (3, 4)):
        keep = np.ones((2, 1, 3, k if adapter.comp.name == "decoder_layer" else 3), dtype=bool)
        keep[1, :, :, -1] = False
        keeps[m.name] = keep

    def out(inp, memory):
        t = adapter.ops.from_np(inp.astype(dtype))
        vals = {"x": t, "query": t, "key": t, "value": t, "memory": adapter.ops.from_np(memory.astype(dtype))}
        vals.update({n: adapter.ops.from_np(convert_mask(k, opts, dtype)) for n, k in keeps.items()})
        res = run_limited(lambda: b.call(fn, vals), 10.0)
        return array_out(res.value) if isinstance(res, Finished) else None

    def fits(layout: str) -> bool:
        adapter.part_layout = layout
        for convention in ("keep", "drop"):
            opts.mask_convention = convention
            try:
                a, c = out(x, mem), out(x2, mem2)
            finally:
                opts.mask_convention = "keep"
            if a is None or c is None or a.shape != x.shape or not np.all(np.isfinite(a)) or \
                    not np.all(np.isfinite(c)):
                continue
            if np.abs(a[1, :-1] - c[1, :-1]).max() <= 1e-6 * max(1.0, float(np.abs(a).max())):
                return True
        return False

    chosen = None
    try:
        chosen = next((lay for lay in LAYOUTS if fits(lay)), None)
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        chosen = None
    adapter.part_layout = None if chosen in (None, "flat") else chosen
    if adapter.part_layout is not None:
        said = {f"(batch, {k})": LAYOUTS[chosen].format(k=k) for k in ("S", "T")}
        for arg, meaning in b.guessed.items():  # the parts' texts say the axes they are handed in
            if meaning.startswith("padding_mask:") and hasattr(b.constants.get(arg), "text"):
                b.constants[arg] = replace(b.constants[arg], text=_axes(b.constants[arg].text, said))
        notes = [_axes(n, said) if "key padding of" in n else n for n in adapter.notes]
        adapter.notes[:] = [n for i, n in enumerate(notes) if n not in notes[:i]]
        adapter.notes.append(f"the candidate's key padding parts are broadcastable masks: a "
                             f"(batch, S) part raised or leaked, {LAYOUTS[chosen].format(k='S')} "
                             f"ran and hid the padded key; every padding part handed over so")


def _axes(note: str, said: dict) -> str:
    for old, new in said.items():
        note = note.replace(old, new)
    return note
