"""The `frozen_input` mode (sandbox/modes.py registers it): torch, the forward and backward with
inputs that need no gradient, as a network's first layer meets its data (a norm on raw features),
a layer after a frozen one its input, or a cross-attention over a frozen encoder its memory. On
about half the examples every float input is detached (the parameters still need gradients; a
candidate without parameters is not run so), on the rest every one but the first (the query, the
decoder's x), chosen from the bytes of the mode's inputs (drawn by the parent from the check's
secret). The output, the weights, every parameter gradient and the gradients of the inputs left
attached come back; the parent compares them with its reference on the mode's own inputs.

The main run's inputs always require gradients, so a backward taking another path when some do not
(a custom `autograd.Function` reading `ctx.needs_input_grad`, code testing `x.requires_grad`) was
never run: a layer norm whose gain gradient drops a term then, an attention whose query gradient
loses its scale when the keys need none, matched (`oracle_hostile/frozen_input_grads.py`).
Nothing here decides anything (core/modes.py compares).
"""
from __future__ import annotations

import zlib

import numpy as np

from ..components import REF, Case
from ..core.options import CandidateProblem
from .layout_modes import relist, with_feed
from .raised_there import zero_gradients


def frozen_names(case: Case) -> list[str]:
    """The float inputs this example detaches: all of them, or all but the first."""
    names = [n for n, a in case.inputs.items() if a.dtype == REF]
    h = zlib.crc32(b"frozen" + b"".join(np.ascontiguousarray(case.inputs[n]).tobytes() for n in names))
    return names[1:] if len(names) > 1 and h % 2 else names


def frozen_input(ad, case: Case, tick=lambda: None) -> dict:
    names = frozen_names(case)
    if ad.framework != "torch" or getattr(ad, "hooks", None) is not None or not names or \
            (not case.params and len(names) == sum(a.dtype == REF for a in case.inputs.values())):
        return {}
    inst = ad.instantiate(case)
    if inst.table:
        return {}
    frozen: list[str] = []

    def wrap(real):
        def feed(c, grad):
            leaves, feeds, fed_np, masks_np, mask_feeds, values = real(c, grad)
            moved = {}
            for n, f in list(feeds.items()):
                if n in names and getattr(f, "requires_grad", False):
                    moved[id(f)] = feeds[n] = f.detach()
                    frozen.append(n)
            for k, v in list(values.items()):
                if id(v) in moved:
                    values[k] = moved[id(v)]
            relist(values, moved)                       # forward([q, k, v]): recognise/list_input
            kept = {n: leaf for n, leaf in leaves.items() if n not in frozen}
            return kept, feeds, fed_np, masks_np, mask_feeds, values
        return feed

    def run() -> dict:
        try:
            return dict(ad.execute(inst, case).values)
        except CandidateProblem as exc:
            if exc.verdict != "missing_gradient" or not frozen:
                raise
            tick()             # each call is a stage of its own under the parent's --timeout
            return zero_gradients(ad, case, frozen)

    got = with_feed(ad, wrap, run)
    return {k: v for k, v in got.items()
            if k.split(":", 1)[-1] not in frozen or not k.startswith("grad_input:")} if frozen else {}

