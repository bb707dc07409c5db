"""Recogniser: how a plain function taking its weights as arguments wants to be called (picoGPT's
`mha(x, c_attn, c_proj, n_head)`, `attention(q, k, v, mask)` on 2-D arrays). Found by probes that
run the function on a small example, never by names:

- **one sequence at a time**: code written for (T, d) arrays (`k.T`, `np.tri(x.shape[0])`, `np.hstack`
  over heads) raises or returns the wrong shape on a batch. When a call on a batch of 2 fails and
  the same call on one sequence, (T, d) (sdpa: one sequence and one head), gives the right shape,
  only batch 1 (and one head for sdpa) is drawn, the batch axes are dropped on the way in and put
  back on the way out, and the report says so.
- **matrices as (in, out)**: weights handed as arguments have no shape of their own to read. When
  the default (out, in) arrays make the call fail and (in, out) ones work (`x @ w`, as picoGPT's
  `linear`), every matrix is handed (in, out) (gradients too), and the report says so. The probe
  draws d_ff != d_model and packed q|k|v, so a wrong layout cannot fit by shape.
- **adds its mask to the scores** (picoGPT's `softmax(q @ k.T / sqrt(d) + mask)`): additive_mask's
  probe, for functions and sdpa too: a hidden key whose input changes moves the other outputs under
  a 0/1 mask and not under an additive one, so masks are handed over additive.
- **masks the future itself**: a function with no mask argument whose earlier outputs do not move
  when the last input changes, while later outputs do follow the first (builtin_causal, for
  functions): only causal masks are drawn.

A probe only picks how arrays are handed over; every quantity is still compared with the reference.
"""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from ...components.base import Case, _cast, draw_params
from ..calls import Finished, TimedOut, run_limited
from . import builtin_causal

EXAMPLES = {
    "sdpa": {"B": 2, "H": 2, "Tq": 3, "Tk": 3, "dk": 2, "dv": 2, "mask": None, "seed": 5},
    "mha": {"B": 2, "Tq": 3, "Tk": 3, "d_model": 4, "num_heads": 2, "mask": None, "seed": 5},
    "ffn": {"B": 2, "T": 3, "d_model": 4, "d_ff": 6, "activation": "relu", "seed": 5},
    "layernorm": {"B": 2, "T": 3, "d_model": 4, "eps": 1e-5, "scale": 1.0, "seed": 5},
    "encoder_layer": {"B": 2, "T": 3, "d_model": 4, "num_heads": 2, "d_ff": 6, "activation": "relu",
                      "eps": 1e-5, "norm_first": False, "mask": None, "seed": 5},
}


def batch_axes(component: str) -> int:
    """How many leading axes one-sequence code does not have: sdpa (B, H), the others (B,)."""
    return 2 if component == "sdpa" else 1


def squeeze_input(value, component: str):
    """An input as one-sequence code takes it: batch 1 dropped (sdpa: batch and head)."""
    if value is None or not hasattr(value, "shape"):
        return value
    return value[(0,) * batch_axes(component)]


def squeeze_mask(value):
    """A mask of batch 1 as one-sequence code takes it: (Tq, Tk)."""
    if value is None or not hasattr(value, "shape") or len(value.shape) <= 2:
        return value
    return value[(0,) * (len(value.shape) - 2)]


def unsqueeze(value, component: str):
    if value is None:
        return None
    return value[None, None] if component == "sdpa" else value[None]


class _Stop(Exception):
    """The probes' time is spent: no further probing (a looping or hanging candidate must not cost
    the time limit once per probe; the search reports it)."""


def _output(adapter, case) -> np.ndarray | None:
    def go():
        try:
            inst = adapter.instantiate(case)
            return adapter.execute(inst, case)
        except Exception:  # noqa: BLE001 - caught here: its text may be hostile (a __str__ that hangs)
            return None
    left = getattr(adapter, "calls_deadline", 0.0) - time.monotonic()
    if left <= 0:
        raise _Stop()
    res = run_limited(go, left)
    if isinstance(res, TimedOut) or time.monotonic() >= adapter.calls_deadline:
        raise _Stop()
    if not isinstance(res, Finished) or res.value is None:
        return None
    out = res.value.values.get("output")
    if out is None or tuple(out.shape) != tuple(case.out_shape):
        return None
    return out


def _case(adapter, single: bool, **change):
    ex = dict(EXAMPLES[adapter.comp.name], **change)
    if single:
        ex["B"] = 1
        if "H" in ex:
            ex["H"] = 1
    if adapter.comp.name != "encoder_layer":
        return adapter.comp.build(ex, adapter.opts.dtype, adapter.caps)
    return _layer_case(adapter.comp, ex, adapter.opts.dtype)


def _layer_case(comp, ex: dict, dtype: str) -> Case:
    """An encoder-layer probe case drawn in the worker, where the reference is not importable: its
    parameters are those of the layer's parts (attention, feed-forward, two norms)."""
    from ...components import get
    rng = np.random.default_rng(ex["seed"])
    hyper = comp.hyper_of(ex)
    B, T, D = ex["B"], ex["T"], ex["d_model"]
    shapes = {}
    for prefix, part in (("self_attn.", "mha"), ("feed_forward.", "ffn"), ("norm1.", "layernorm"),
                         ("norm2.", "layernorm")):
        shapes.update({prefix + k: v for k, v in get(part).param_shapes(hyper).items()})
    x = _cast(rng.standard_normal((B, T, D)), dtype)
    params = draw_params(rng, shapes, dtype)
    return Case(comp.name, ex, hyper, {"x": x}, {"mask": None}, params,
                _cast(rng.standard_normal((B, T, D)), dtype), (B, T, D))


def probe(adapter) -> None:
    name = adapter.comp.name
    if adapter.mode != "function" or name not in EXAMPLES or adapter.caps.table:
        return
    if adapter.hooks is not None:
        return
    # every probe call together gets one time limit (a looping or hanging candidate costs it once)
    adapter.calls_deadline = time.monotonic() + min(10.0, float(adapter.opts.timeout or 10.0))
    tried = [(False, adapter.opts.weight_layout)]
    if adapter.comp.tree is not None and adapter.opts.weight_layout == "out_in":
        tried.append((False, "in_out"))
    tried += [(True, layout) for _, layout in tried]
    start = adapter.opts.weight_layout
    for single, layout in tried:
        adapter.opts.weight_layout = layout
        adapter.caps.one_sequence = single
        try:
            fits = _output(adapter, _case(adapter, single)) is not None
        except _Stop:
            adapter.opts.weight_layout, adapter.caps.one_sequence = start, False
            return
        except Exception:  # noqa: BLE001 - the search reports what is wrong with the candidate
            fits = False
        if fits:
            break
    else:
        adapter.opts.weight_layout = start
        adapter.caps.one_sequence = False
        return
    if layout != start:
        adapter.layout_probed = True
        adapter.notes.append("the candidate computes x @ W: with (out, in) argument matrices "
                             "its call failed and with (in, out) ones it ran; read as "
                             "--weight-layout in_out (gradients too)")
    if single:
        adapter.notes.append("the candidate computes one sequence at a time ((T, d) arrays"
                             + (", one head" if name == "sdpa" else "") + "): a call on a batch "
                             "failed and one on a single sequence ran, so only batch 1"
                             + (" and one head are" if name == "sdpa" else " is") + " drawn")
    try:
        _causal(adapter, single)
        _additive(adapter, single)
    except _Stop:
        return


def _causal(adapter, single: bool) -> None:
    """builtin_causal's probe for a function: its weights come from a drawn case."""
    if adapter.comp.name not in builtin_causal.COMPONENTS:
        return
    mask = adapter.comp.masks[0]
    binding = getattr(adapter, "binding", None)
    if binding is None or mask.name not in binding.unbound or "causal" not in mask.kinds:
        return
    case = _case(adapter, single, **({"T": 4} if adapter.comp.name != "mha" else {"Tq": 4, "Tk": 4}))
    key = "x" if "x" in case.inputs else "query"
    rng = np.random.default_rng(7)
    D = case.inputs[key].shape[-1]

    def moved(pos: int):
        x = case.inputs[key].copy()
        x[:, pos] += rng.standard_normal(D)        # not a constant: a LayerNorm would remove it
        inputs = {k: (x if k == key or case.self_attention is False and k in ("key", "value")
                      else v) for k, v in case.inputs.items()}
        return replace(case, inputs=inputs)

    try:
        outs = [_output(adapter, c) for c in (case, moved(-1), moved(0))]
    except _Stop:
        raise
    except Exception:  # noqa: BLE001
        return
    if any(o is None for o in outs):
        return
    builtin_causal.decide(adapter, *outs, mask.name)


def _additive(adapter, single: bool) -> None:
    """additive_mask's probe for a function (sdpa included): its weights come from a drawn case."""
    opts = adapter.opts
    if not adapter.comp.masks:
        return
    mask = adapter.comp.masks[0]
    binding = getattr(adapter, "binding", None)
    if (opts.mask_convention, opts.mask_dtype) != ("keep", "bool") or binding is None or \
            mask.name in binding.unbound or adapter.caps.valid_lens or \
            adapter.caps.list_input:
        return
    key = {"sdpa": ("k", "v"), "mha": ("key", "value")}.get(adapter.comp.name, ("x",))
    case = _case(adapter, single, **({"T": 4} if "T" in EXAMPLES[adapter.comp.name]
                                     else {"Tq": 4, "Tk": 4}))
    if any(k not in case.inputs for k in key):
        key = ("x",)
    B, Tk = case.inputs[key[0]].shape[0], case.inputs[key[0]].shape[-2]
    keep = np.ones((B, 1, case.out_shape[-2], Tk), dtype=bool)
    keep[-1, ..., -1] = False                      # the last sequence does not see its last key
    rng = np.random.default_rng(9)
    moved = dict(case.inputs)
    for k in key:
        a = case.inputs[k].copy()
        a[-1, ..., -1, :] += 3.0 * rng.standard_normal(a.shape[-1])
        moved[k] = a
    hidden, changed = replace(case, masks={mask.name: keep}), None
    changed = replace(hidden, inputs=moved)
    rows = slice(0, -1) if key == ("x",) else slice(None)  # self-attention: its own output moves

    def leaks() -> bool | None:
        a, b = _output(adapter, hidden), _output(adapter, changed)
        if a is None or b is None or not np.all(np.isfinite(a)):
            return None
        a, b = a[-1, ..., rows, :], b[-1, ..., rows, :]
        return bool(np.abs(a - b).max() > 1e-6 * max(1.0, float(np.abs(a).max())))

    try:
        if leaks() is not True:
            return
        opts.mask_convention, opts.mask_dtype = "additive", "float"
        if leaks() is not False:
            opts.mask_convention, opts.mask_dtype = "keep", "bool"
            return
    except Exception as exc:  # noqa: BLE001 - the examples report what is wrong with the candidate
        opts.mask_convention, opts.mask_dtype = "keep", "bool"
        if isinstance(exc, _Stop):
            raise
        return
    adapter.notes.append("the candidate adds its mask to the scores: under a 0/1 boolean mask a "
                         "hidden key still changed the other positions' outputs, under an additive "
                         "float mask (0 / -inf) it did not; masks handed over additive, as "
                         "--mask-convention additive --mask-dtype float")
