"""One more of the worker's runs (sandbox/modes.py registers it): the example handed over in the
form the assignment names, where a probe found the candidate refusing it and the oracle adapted.

    assigned_form  a multi-head attention or layer whose masks a probe adapted to (batch, Tq, Tk)
             (recognise/mask_rank: a (batch, 1, Tq, Tk) mask raised or gave a wrong shape there),
             or an attention function adapted to (batch * heads, T, d) tensors
             (recognise/bh_layout: a call on (batch, heads, T, d) raised there): called once more
             with masks of four axes / inputs of four axes, as the assignment hands them over.
             Code that refuses that form (raises, or returns another shape, as code written for
             the other form does) is not compared there, as in the layout runs; code that runs
             and returns the assignment's shapes is compared with the reference like the main
             run. Masks only on examples of two sequences or more, as the probe's: a layer
             written for three axes (`mask.unsqueeze(1)`) given four broadcasts them over the
             batch a second time, which changes its output's shape only when the batch is not 1
             (at batch 1 it keeps the shape and mixes heads and positions: right code, wrong
             there, never asked to take that form). A probe's call can be recognised (its
             inputs are fixed), so code refusing the assignment's form only there, while
             computing it wrongly everywhere else, was never compared in that form
             (oracle_hostile/rank_probe_refusal.py, bh_probe_refusal.py).

Answers {} where no probe adapted the form, or the example has no mask for a mask-form run.
"""
from __future__ import annotations

import numpy as np

from ..components import Case
from .raised_there import candidate_raised


def assigned_form(ad, case: Case, tick=lambda: None) -> dict:
    ranked = getattr(ad, "given_mask_rank", 4) == 4 and ad.opts.mask_rank == 3 and \
        any(m is not None for m in case.masks.values()) and case.out_shape[0] >= 2
    merged = bool(getattr(ad.caps, "bh_layout", False))
    if not (ranked or merged):
        return {}
    rank, bh = ad.opts.mask_rank, ad.caps.bh_layout
    ad.opts.mask_rank, ad.caps.bh_layout = (4 if ranked else rank), (False if merged else bh)
    try:
        inst = ad.instantiate(case)
        if inst.table:
            return {}
        got = dict(ad.execute(inst, case).values)
    except Exception as exc:  # noqa: BLE001 - refusing the assignment's form: not compared there
        if not candidate_raised(exc):
            raise
        return {}
    finally:
        ad.opts.mask_rank, ad.caps.bh_layout = rank, bh
    out = got.get("output")
    if out is None or tuple(np.shape(out)) != tuple(case.out_shape):
        return {}                      # another shape: written for the other form, not compared
    weights = got.get("attention_weights")
    if weights is not None and tuple(np.shape(weights)) != tuple(case.weights_shape or ()):
        got.pop("attention_weights")
    return got

