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
             A NumPy or torch module a probe found computing one (T, d) sequence at a time
             (recognise/one_sequence_modules: a batch of three raised or changed the shape
             there) is called, forward only, on a batch of two: the example's sequence and a
             second one drawn from its bytes; the first sequence's output is compared. Code
             refusing that batch everywhere is not compared there; code taking it and mixing
             the sequences (attention over every token of the batch, statistics over the
             batch) fails (oracle_hostile/batch_probe_refusal.py).

Answers {} where no probe adapted the form, or the example has no mask for a mask-form run.
"""
from __future__ import annotations

import dataclasses
import zlib

import numpy as np

from ..components import Case
from .ctor_modes import forward_only
from .raised_there import candidate_raised


def assigned_form(ad, case: Case, tick=lambda: None) -> dict:
    ranked = getattr(ad, "given_mask_rank", 4) == 4 and ad.opts.mask_rank == 3 and \
        any(m is not None for m in case.masks.values()) and case.out_shape[0] >= 2
    merged = bool(getattr(ad.caps, "bh_layout", False))
    if getattr(ad.caps, "one_sequence", False) and case.out_shape[0] == 1:
        return batch_of_two(ad, case)
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


def _with_partner(a: np.ndarray, rng) -> np.ndarray:
    """(1, ...) float array -> (2, ...): itself, then a sequence of its shape and scale."""
    other = rng.standard_normal(a.shape) * (float(np.std(a)) or 1.0)
    return np.concatenate([a, other.astype(a.dtype)], 0)


def _batch(case: Case, first: dict, rng=None) -> Case:
    """The batch-1 `case` as a batch of two: its sequence, then a sequence drawn by `rng` (or
    itself again)."""
    def two(v):
        other = v if rng is None else \
            (rng.standard_normal(v.shape) * (float(np.std(v)) or 1.0)).astype(v.dtype)
        return np.concatenate([v, other], 0)
    return dataclasses.replace(
        case, inputs={k: two(v) for k, v in first.items()},
        masks={k: (None if m is None else np.concatenate([m, m], 0)) for k, m in case.masks.items()},
        dout=np.concatenate([case.dout, case.dout], 0), out_shape=(2,) + tuple(case.out_shape[1:]),
        weights_shape=None if case.weights_shape is None else (2,) + tuple(case.weights_shape[1:]),
        row_keep=None if case.row_keep is None else np.concatenate([case.row_keep] * 2, 0))


def batch_of_two(ad, case: Case) -> dict:
    """One-sequence code called on a batch of two (the example's sequence first): the first
    sequence's output, or {} where it refuses the batch or returns another shape, or where its
    first sequence alone and twice over as a batch differ (code whose batch axis means nothing)."""
    floats = {k: v for k, v in case.inputs.items() if v.dtype.kind == "f" and v.shape[:1] == (1,)}
    if len(floats) != len(case.inputs) or ad.comp.name == "sdpa":
        return {}
    rng = np.random.default_rng(zlib.crc32(b"".join(np.ascontiguousarray(v).tobytes()
                                                     for v in floats.values())))
    shape = (2,) + tuple(case.out_shape[1:])
    try:
        alone = forward_only(ad, ad.instantiate(case), case).get("output")
        ad.caps.one_sequence = False
        outs = []
        for batch in (_batch(case, floats), _batch(case, floats, rng)):
            inst = ad.instantiate(batch)
            outs.append(None if inst.table else forward_only(ad, inst, batch).get("output"))
    except Exception as exc:  # noqa: BLE001 - refusing a batch: not compared there
        if not candidate_raised(exc):
            raise
        return {}
    finally:
        ad.caps.one_sequence = True
    if alone is None or any(o is None or tuple(np.shape(o)) != shape for o in outs):
        return {}
    alone, twice = (np.asarray(a, dtype=float) for a in (alone, outs[0][:1]))
    if alone.shape != twice.shape or not np.allclose(twice, alone, rtol=1e-3,
                                                     atol=1e-3 * (np.abs(alone).max() or 1.0)):
        return {}
    return {"output": outs[1][:1]}
