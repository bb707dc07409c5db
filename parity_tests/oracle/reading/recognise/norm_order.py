"""Recogniser: a layer that normalises before each sublayer (pre-norm, x + f(LN(x))) rather than
after the residual sum (post-norm, LN(x + f(x))), when nothing tells the oracle which: no
`norm_first` constructor argument and none fixed with --set.

Found by behaviour, not by names: every norm of the layer gets gain 0 and a drawn bias, written
through the weight slots as a scored run writes them (the other weights drawn). Then each norm's
output is its bias, the same at every position. Post-norm code returns the last norm's output: the
same at every position, whatever x was. Pre-norm code returns x plus what its sublayers make of
those constant rows (attention over equal rows is one row; a feed-forward of a constant is one
row): output - x is the same at every position while the output is not. Only that second pattern
sets the finding (the parent then draws pre-norm references); anything else leaves the default.
Never decided by comparing with the reference; what building and calling the layer for this probe
teaches the adapter (layout probes, notes) is put back afterwards.
A layer found so is checked right as pre-norm, and the report names the gap `norm_order`
(core/completeness): the paper's layer is post-norm, so grading fails it unless the assignment sets
norm_first (its settings) or leaves `norm_order` out of `require`.
"""
from __future__ import annotations

import copy

import numpy as np

from ..calls import Finished, run_limited

COMPONENTS = ("encoder_layer", "decoder_layer")
PARTS = {"encoder_layer": (("self_attn.", "mha"), ("norm1.", "layernorm"),
                           ("feed_forward.", "ffn"), ("norm2.", "layernorm")),
         "decoder_layer": (("self_attn.", "mha"), ("norm1.", "layernorm"), ("cross_attn.", "mha"),
                           ("norm2.", "layernorm"), ("feed_forward.", "ffn"), ("norm3.", "layernorm"))}


def probe(adapter) -> None:
    """Set caps.norm_first when the layer is pre-norm by the behaviour above."""
    if adapter.comp.name not in COMPONENTS or adapter.mode not in ("class", "instance"):
        return
    if adapter.hooks is not None or "norm_first" in adapter.opts.settings or _takes_norm_first(adapter):
        return
    if adapter.caps.table or adapter.caps.time_first or adapter.caps.one_sequence:
        return
    case = _case(adapter)
    if case is None:
        return
    out = _output(adapter, case)
    if out is None:
        return
    x = np.asarray(case.inputs["x"], dtype=np.float64)
    scale = max(1.0, float(np.abs(x).max()), float(np.abs(out).max()))
    tol = (1e-9 if adapter.opts.dtype == "float64" else 1e-4) * scale
    same_rows = np.abs(out - out[:, :1]).max() <= tol
    offset = out - x
    offset_rows = np.abs(offset - offset[:, :1]).max() <= tol
    if offset_rows and not same_rows:
        adapter.caps.norm_first = True
        adapter.notes.append("the layer normalises before each sublayer: with every norm's gain 0 "
                             "(written through its weights) its output minus its input was the "
                             "same at every position, as in pre-norm code (post-norm code would "
                             "return the last norm's bias); checked as --set norm_first=true")


def part_shapes(component: str, hyper: dict) -> dict:
    """A layer's reference parameter shapes from its parts' (the layer's own reference may not be
    importable in the worker)."""
    from ...components import get
    shapes = {}
    for prefix, part in PARTS[component]:
        shapes.update({prefix + k: tuple(v) for k, v in get(part).param_shapes(hyper).items()})
    return shapes


def _takes_norm_first(adapter) -> bool:
    """A class whose constructor takes the norm order is built with the drawn one: nothing to find."""
    from .. import naming
    if adapter.mode != "class":
        return False
    sig = naming.signature_of(adapter.obj.__init__)
    names = {p.name.lower() for p in sig.parameters.values()} if sig else set()
    return bool(names & {a.lower() for a in naming.HYPER_ALIASES["norm_first"]})


def _case(adapter):
    """A small case at the probe's sizes, every norm's gain 0 and its bias drawn."""
    from ...components.base import Case, _cast, draw_params
    hyper = adapter.probe_hyper()
    if adapter.caps.d_ff_ratio:             # a feed-forward width the code fixes (ffn_width)
        hyper["d_ff"] = adapter.caps.d_ff_ratio * hyper["d_model"]
    hyper["d_ff"] = adapter.caps.fixed_sizes.get("d_ff", hyper["d_ff"])
    rng = np.random.default_rng(13)
    B, T, S, D = 2, 4, 3, hyper["d_model"]
    try:
        shapes = part_shapes(adapter.comp.name, hyper)
    except Exception:  # noqa: BLE001
        return None
    params = draw_params(rng, shapes, adapter.opts.dtype)
    norms = [n for n in params if n.startswith("norm")]
    if not any(n.endswith("weight") for n in norms):
        return None
    for n in norms:
        if n.endswith("weight"):
            params[n] = np.zeros_like(params[n])
    inputs = {"x": _cast(rng.standard_normal((B, T, D)), adapter.opts.dtype)}
    if adapter.comp.name == "decoder_layer":
        inputs["memory"] = _cast(rng.standard_normal((B, S, D)), adapter.opts.dtype)
    ex = dict(hyper, B=B, T=T, S=S, seed=13, **{m.name: None for m in adapter.comp.masks})
    case = Case(adapter.comp.name, ex, hyper, inputs, {m.name: None for m in adapter.comp.masks},
                params, _cast(rng.standard_normal((B, T, D)), adapter.opts.dtype), (B, T, D))
    return case


def _output(adapter, case):
    """The layer's output on `case`, built and called as a scored run does; whatever that run
    teaches the adapter (layout probes decided on this case's norm order, notes) is put back."""
    saved, notes, caps = dict(vars(adapter)), list(adapter.notes), copy.deepcopy(adapter.caps)
    opts, layout = adapter.opts, adapter.opts.weight_layout
    adapter.layout_probed = True         # this case's norm order may be wrong: no layout decided on it
    try:
        return _run(adapter, case)
    finally:
        opts.weight_layout = layout
        vars(adapter).clear()
        vars(adapter).update(saved)
        adapter.notes[:] = notes
        adapter.caps = caps


def _run(adapter, case):
    def go():
        try:
            inst = adapter.instantiate(case)
            return adapter.execute(inst, case, grad=False)
        except Exception:  # noqa: BLE001 - its text may be hostile
            return None
    res = run_limited(go, 10.0)
    if not isinstance(res, Finished) or res.value is None:
        return None
    out = res.value.values.get("output")
    if out is None or tuple(np.shape(out)) != tuple(case.out_shape):
        return None
    return np.asarray(out, dtype=np.float64)
