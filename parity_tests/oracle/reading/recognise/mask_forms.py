"""Recogniser: a mask argument taken in a form of fewer axes than the oracle's (batch, 1, Tq, Tk),
under a general name:

    key padding   (batch, Tk): `forward(query, key, value, mask)` documented "mask: (batch, keys)",
                  expanded by the layer itself (`mask[:, None, None, :]`)
    shared        (Tq, Tk): one mask for the whole batch (`scores[:, :, mask == 0] = -inf`, a
                  `tril` the caller builds once)

The oracle's mask then raises or returns the wrong shape, and right code was RAISED.

Found by a probe (only while the mask options are the defaults and undeclared, after
recognise/mask_rank found no rank that runs): the last key is hidden (in batch 1 for a key
padding, in every batch for a shared mask) and batch 1's input there is changed; a form fits when
the call runs, returns the input's shape, finite, and batch 1's other positions do not move, under
True = seen or (tried second) True = hidden. Then every mask is handed over in that form (a key
padding's row is the last query's, which for a padding mask is every row; a shared mask is batch
0's), only masks that form can say are drawn (key padding: none and padding; shared: none, causal
and one random mask for the whole batch), the others are listed as not compared, and the report
says so. For multi-head attention and encoder layers, and decoder layers in the key padding form
(both masks; one that masks the future itself, found by a call whose later input moves no earlier
output, gets causal draws without padding only); every quantity is still compared with the reference.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..calls import Finished, run_limited
from .layout import array_out

COMPONENTS = ("mha", "encoder_layer", "decoder_layer")
FORMS = {"key_padding": ("(batch, Tk)", ("none", "padding")),
         "shared": ("(Tq, Tk), one for the whole batch", ("none", "causal", "random_2d"))}


def cut(mask: np.ndarray, form: str | None) -> np.ndarray:
    """A converted (B, Hm, Tq, Tk) mask in `form`."""
    if form == "key_padding":
        return np.ascontiguousarray(mask[:, 0, -1, :])
    if form == "shared":
        return np.ascontiguousarray(mask[0, 0])
    return mask


def as_call_mask(adapter, mask):
    """A converted (B, Hm, Tq, Tk) mask as the candidate takes it (this recogniser's form, when it
    chose one; unchanged otherwise)."""
    return mask if mask is None else cut(mask, getattr(adapter, "mask_form", None))


def masks_undecided(adapter, components) -> bool:
    """Whether a mask-form probe may run: the component is one of `components`, the candidate a
    module bound to its forward, and the mask options the defaults, neither given nor declared by an
    assignment (model_mask_forms uses it too)."""
    opts = adapter.opts
    return adapter.comp.name in components and getattr(adapter, "binding", None) is not None \
        and adapter.mode in ("class", "instance") and adapter.hooks is None \
        and (opts.mask_convention, opts.mask_dtype, opts.mask_rank) == ("keep", "bool", 4) \
        and not set(getattr(opts, "declared", ()) or ()) & {"mask_convention", "mask_rank"}


def probe(adapter) -> None:
    opts, b = adapter.opts, getattr(adapter, "binding", None)
    if not masks_undecided(adapter, COMPONENTS):
        return
    if getattr(adapter, "torch_mha_mask", False) or getattr(adapter, "heads_merged_mask", False) or \
            adapter.caps.valid_lens or adapter.caps.list_input:
        return
    masks = adapter.comp.masks
    if any(mk.name in b.unbound or mk.name in (b.guessed or {}).values() for mk in masks):
        return
    mask, decoder = masks[0], adapter.comp.name == "decoder_layer"
    obj = adapter.probe if adapter.mode == "class" else adapter.obj
    if obj is None:
        return
    from ..slots import convert_mask
    m = adapter.finish_module(obj)
    fn = adapter.call_target(m)
    D, dtype = adapter.probe_hyper()["d_model"], opts.dtype
    rng = np.random.default_rng(17)
    x, mem = rng.standard_normal((2, 3, D)), rng.standard_normal((2, 4, D))
    x2, mem2 = x.copy(), mem.copy()
    x2[1, -1] += 3.0 * rng.standard_normal(D)                  # the hidden keys' inputs change
    mem2[1, -1] += 3.0 * rng.standard_normal(D)

    def keep_for(form, keys):
        keep = np.ones((2, 1, 3, keys), dtype=bool)
        if form is not False:                                  # False: every key seen
            keep[1 if form == "key_padding" else slice(None), :, :, -1] = False
        return keep

    def out(inp, convention, form, memory=mem, hide=True):
        t = adapter.ops.from_np(inp.astype(dtype))
        vals = {s.name: t for s in adapter.comp.inputs}
        vals.update({"x": t, "query": t, "key": t, "value": t, "key_value": t,
                     "memory": adapter.ops.from_np(memory.astype(dtype))})
        for mk in masks:
            keys = 4 if decoder and mk is not mask else 3
            given = convert_mask(keep_for(form if hide else False, keys),
                                 replace(opts, mask_convention=convention), dtype)
            vals[mk.name] = adapter.ops.from_np(cut(given, form))
        res = run_limited(lambda: b.call(fn, vals), 10.0)
        got = array_out(res.value) if isinstance(res, Finished) else None
        return got if got is not None and got.shape == x.shape and np.all(np.isfinite(got)) else None

    def hides(convention, form) -> bool:
        a, c = out(x, convention, form), out(x2, convention, form, mem2)
        return a is not None and c is not None and \
            np.abs(a[1, :-1] - c[1, :-1]).max() <= 1e-6 * max(1.0, float(np.abs(a).max()))

    def masks_future(convention) -> bool:
        """With every key seen, no earlier output moves when the last input changes."""
        later = x.copy()
        later[:, -1] += 3.0 * rng.standard_normal(D)
        a, c = out(x, convention, "key_padding", hide=False), out(later, convention, "key_padding",
                                                                  hide=False)
        return a is not None and c is not None and \
            np.abs(a[:, :-1] - c[:, :-1]).max() <= 1e-6 * max(1.0, float(np.abs(a).max()))

    kinds = adapter.caps.mask_kinds.get(mask.name, mask.kinds)
    forms = ("key_padding",) if decoder else tuple(FORMS)
    try:
        if out(x, "keep", None) is not None:
            return                           # the (batch, 1, Tq, Tk) mask runs: not this style
        found = next(((f, c) for f in forms for c in ("keep", "drop")
                      if (decoder or any(k in kinds for k in FORMS[f][1][1:])) and hides(c, f)), None)
        causal = decoder and found is not None and masks_future(found[1])
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    if found is None:
        return
    form, convention = found
    adapter.mask_form = form
    opts.mask_convention = convention
    # with the future masked by the layer, a causal mask with padding is not said: the oracle's keeps
    # the diagonal of a row the padding would empty, which causal AND padding cannot (mask_parts)
    said = ("causal",) if causal else FORMS[form][1]
    adapter.caps.mask_kinds[mask.name] = tuple(k for k in kinds if k in said)
    if decoder:
        mem_kinds = adapter.caps.mask_kinds.get(masks[1].name, masks[1].kinds)
        adapter.caps.mask_kinds[masks[1].name] = tuple(k for k in mem_kinds if k in FORMS[form][1])
    flipped = " True where a key is hidden (as --mask-convention drop)," if convention == "drop" \
        else ""
    names = ", ".join(repr(b.arg_of.get(mk.name, mk.name)) for mk in masks)
    adapter.notes.append(f"the candidate's {names} {'are' if decoder else 'is'} taken as "
                         f"{FORMS[form][0]}:{flipped} a (batch, 1, Tq, Tk) mask raised or gave a "
                         f"wrong shape, this form ran and hid the masked key; only masks it can "
                         f"say drawn ({', '.join(FORMS[form][1])})"
                         + ("; it masks the future itself, so only causal ones for "
                            f"{mask.name}" if causal else ""))
