"""Recogniser: a NumPy module class written for one (T, d) sequence at a time (`x: (seq_len,
d_model)`, `q @ k.T`, a causal mask from `x.shape[0]`), as learners' layers often are. The oracle's
(batch, T, d) inputs made its forward raise (or return another shape), and right code was RAISED or
WRONG_SHAPE; function_calls finds the same style for plain functions.

Found by a probe on the module as built, with its own weights: a call on a batch of three sequences
raises or returns a shape other than its input's, and the same call on the first sequence alone,
(T, d), returns (T, d). Then only batch 1 is drawn, the batch axis is dropped on the way in and put
back on the way out (execute.feed, _one_sequence_out), a NumPy backward gets the upstream gradient
of that one sequence and its input gradients get the axis back (execute_backward), and the report
says batches were not compared. The same for a torch module (`seq_len, d_model = x.shape`): the
leaves autograd differentiates keep their batch axis of 1 and the module is handed their first
sequence, so the input gradients come back (1, T, d) without a hand-written backward to adapt.
"""
from __future__ import annotations

import numpy as np

from ..calls import Finished, run_limited
from . import function_calls
from .layout import array_out

COMPONENTS = ("ffn", "layernorm", "mha", "encoder_layer", "decoder_layer")


def applies(adapter) -> bool:
    return adapter.comp.name in COMPONENTS and adapter.framework in ("numpy", "torch") and \
        adapter.mode in ("class", "instance") and adapter.hooks is None and \
        not adapter.caps.one_sequence and not adapter.caps.table and \
        getattr(adapter, "binding", None) is not None and \
        (adapter.probe if adapter.mode == "class" else adapter.obj) is not None


def probe(adapter) -> None:
    if not applies(adapter):
        return
    m = adapter.finish_module(adapter.probe if adapter.mode == "class" else adapter.obj)
    fn = adapter.call_target(m)
    D, dtype = adapter.probe_hyper()["d_model"], adapter.opts.dtype
    x = np.random.default_rng(13).standard_normal((3, 5, D)).astype(dtype)

    def out(inp):
        t = adapter.ops.from_np(inp)
        vals = {s.name: t for s in adapter.comp.inputs}
        vals.update({"x": t, "query": t, "key": t, "value": t, "key_value": t, "memory": t})
        vals.update({mk.name: None for mk in adapter.comp.masks})
        res = run_limited(lambda: adapter.binding.call(fn, vals), 10.0)
        return array_out(res.value) if isinstance(res, Finished) else None

    try:
        batched = out(x)
        if batched is not None and batched.shape == x.shape:
            return
        single = out(x[0])
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    if single is None or single.shape != x[0].shape or not np.all(np.isfinite(single)):
        return
    adapter.caps.one_sequence = True
    adapter.notes.append("the candidate computes one sequence at a time ((T, d) arrays): a call on "
                         "a batch failed or changed the shape and one on a single sequence ran, so "
                         "only batch 1 is drawn, handed over without its batch axis")


def one_upstream(dout, component: str):
    """The upstream gradient of batch 1 as one-sequence code takes it: (T, d)."""
    return function_calls.squeeze_input(dout, component)


def with_batch_axis(grads, n_inputs: int, component: str):
    """What a one-sequence backward returned, its first `n_inputs` input gradients given their
    batch axis back (parameter gradients and dicts as they came)."""
    if isinstance(grads, np.ndarray):
        return function_calls.unsqueeze(grads, component)
    if isinstance(grads, (tuple, list)):
        return type(grads)(function_calls.unsqueeze(g, component)
                           if i < n_inputs and isinstance(g, np.ndarray) else g
                           for i, g in enumerate(grads))
    return grads
