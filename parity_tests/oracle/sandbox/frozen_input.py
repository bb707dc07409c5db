"""The `frozen_input` mode (sandbox/modes.py registers it): torch, the forward and backward with
the inputs not requiring gradients while the parameters do, as a network's first layer meets its
data (a norm on raw features) or a layer after a frozen one meets its input. The output, the
weights and every parameter gradient come back (no input gradient: none is asked for); the parent
compares them with its reference on the mode's own inputs.

The main run's inputs always require gradients, so a backward taking another path when they do not
(a custom `autograd.Function` reading `ctx.needs_input_grad`, code testing `x.requires_grad`) was
never run: a layer norm whose gain gradient drops a term there matched
(`oracle_hostile/frozen_input_grads.py`). Nothing here decides anything (core/modes.py compares).
"""
from __future__ import annotations

from ..components import Case


def frozen_input(ad, case: Case, tick=lambda: None) -> dict:
    if ad.framework != "torch" or not case.params or getattr(ad, "hooks", None) is not None:
        return {}
    inst = ad.instantiate(case)
    if inst.table:
        return {}
    real, own, frozen = ad.feed, "feed" in vars(ad), []

    def feed(c, grad):
        leaves, feeds, fed_np, masks_np, mask_feeds, values = real(c, grad)
        moved = {}
        for n, f in list(feeds.items()):
            if getattr(f, "requires_grad", False):
                moved[id(f)] = feeds[n] = f.detach()
                frozen.append(n)
        for k, v in list(values.items()):
            if id(v) in moved:
                values[k] = moved[id(v)]
            elif isinstance(v, list):                   # forward([q, k, v]): recognise/list_input
                values[k] = [moved.get(id(x), x) for x in v]
        kept = {n: leaf for n, leaf in leaves.items() if n not in frozen}
        return kept, feeds, fed_np, masks_np, mask_feeds, values

    ad.feed = feed
    try:
        p = ad.execute(inst, case)
    finally:
        if own:
            ad.feed = real
        else:
            del ad.feed
    return {k: v for k, v in p.values.items() if not k.startswith("grad_input:")} if frozen else {}
