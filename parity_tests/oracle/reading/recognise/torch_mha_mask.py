"""Recogniser: layers built on `torch.nn.MultiheadAttention` that hand their mask argument straight to
it (`self.self_attn(x, x, x, attn_mask=src_mask)`), as tutorials wrapping the library module do.
torch wants that mask in its own form: True (or -inf) = hidden, shape (Tq, Tk) or (batch*heads, Tq,
Tk); the oracle's default (B, 1, Tq, Tk) keep-mask makes it raise.

Found by a probe, only for a candidate holding a `torch.nn.MultiheadAttention`: a call with a padding
mask in the chosen convention raises, the same call with the mask in torch's form works. Then masks
are handed over as (batch*heads, Tq, Tk), True = hidden (or the chosen --mask-convention when it is
not "keep"), and the report says so. Not when the instructor fixed the rank, or fixed "keep"
(Options.declared): masks are then handed over as declared, as everywhere else.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..calls import Finished, run_limited

COMPONENTS = ("mha", "encoder_layer", "decoder_layer")


def heads_merged(mask: np.ndarray, heads: int) -> np.ndarray:
    """(B, Hm, Tq, Tk) -> (B*heads, Tq, Tk), Hm 1 broadcast over the heads."""
    B, _, Tq, Tk = mask.shape
    return np.broadcast_to(mask, (B, heads, Tq, Tk)).reshape(B * heads, Tq, Tk).copy()


def torch_form(keep: np.ndarray, opts, dtype: str, heads: int, torch_convention: bool = True) -> np.ndarray:
    """(batch*heads, Tq, Tk); in torch's convention (True = hidden) unless torch_convention is
    False (merged_mask: the chosen convention)."""
    from ..slots import convert_mask
    conv = "drop" if opts.mask_convention == "keep" and torch_convention else opts.mask_convention
    return heads_merged(convert_mask(keep, replace(opts, mask_convention=conv, mask_rank=4), dtype),
                        heads)


def fixed_by_instructor(opts) -> bool:
    """The mask options the instructor fixed (Options.declared) rule the torch form out: a fixed
    rank (torch's is (batch*heads, Tq, Tk)), or a fixed "keep" convention (torch's is True =
    hidden). Masks are then handed over as declared, and a layer that cannot take them fails."""
    declared = tuple(getattr(opts, "declared", ()) or ())
    return "mask_rank" in declared or ("mask_convention" in declared and opts.mask_convention == "keep")


def probe(adapter) -> None:
    if adapter.framework != "torch" or adapter.comp.name not in COMPONENTS or \
            adapter.mode not in ("class", "instance") or adapter.hooks is not None:
        return
    if fixed_by_instructor(adapter.opts):
        return
    binding = getattr(adapter, "binding", None)
    mask = adapter.comp.masks[0]
    if binding is None or mask.name in binding.unbound or adapter.caps.valid_lens or \
            adapter.caps.list_input:
        return
    obj = adapter.probe if adapter.mode == "class" else adapter.obj
    torch = adapter.ops.torch
    if not isinstance(obj, torch.nn.Module) or \
            not any(isinstance(m, torch.nn.MultiheadAttention) for m in obj.modules()):
        return                       # (a plain class using torch: building it says what is wrong)
    from ..slots import convert_mask
    m = adapter.finish_module(obj)
    hyper = adapter.probe_hyper()
    D, H, dtype = hyper["d_model"], hyper["num_heads"], adapter.opts.dtype
    rng = np.random.default_rng(3)
    x = adapter.ops.from_np(rng.standard_normal((2, 3, D)).astype(dtype))
    keep = np.ones((2, 1, 3, 3), dtype=bool)
    keep[1, :, :, -1] = False                                  # batch 1: last key is padding

    def attempt(as_given: np.ndarray):
        vals = {s.name: x for s in adapter.comp.inputs}
        vals.update({"x": x, "query": x, "key": x, "value": x, "key_value": x})
        vals.update({mk.name: adapter.ops.from_np(as_given) for mk in adapter.comp.masks})
        return run_limited(lambda: binding.call(m, vals), 10.0)

    if isinstance(attempt(convert_mask(keep, adapter.opts, dtype)), Finished):
        return
    if isinstance(attempt(torch_form(keep, adapter.opts, dtype, H)), Finished):
        adapter.torch_mha_mask = True
        adapter.notes.append("the candidate hands its mask to torch.nn.MultiheadAttention (the "
                             "(batch, 1, Tq, Tk) mask raised there): masks handed over in torch's "
                             "form, (batch*heads, Tq, Tk), True = hidden")
