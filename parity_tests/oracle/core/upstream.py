"""The upstream gradient each example's backward receives: the component draws it standard normal
(components/base.py), and a backward can tell that draw from a training step by its statistics
(mean near 0, spread near 1 in every example: `oracle_hostile/probe_shaped_upstream.py`, right only
then, got `match`). Here, in the parent, before anything is sent, each example's draw is scaled by
2**u (u uniform in [-4, 4]) after a shift s (uniform in [-1, 1]): dout' = 2**u * (dout + s), from a
generator seeded by the check's own secret salt and the draw's bytes (the same example gives the
same gradient within one check, so Hypothesis replays and shrinks alike; another check draws other
scales; the worker never sees the salt). A mean-reduced loss's small gradients, a summed loss's
offset ones and a scaled loss's large ones all look like this; no call stands out.

Correct code is unaffected beyond rounding: gradients are linear in dout, the reference receives
the same dout' and the tolerance scales with the reference's largest value (never below its atol).
The dout' is rounded to the check's dtype, as the draw was.
"""
from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from ..components import REF, Case

SPAN = 4.0        # u in [-SPAN, SPAN]: scales from 1/16 to 16
SHIFT = 1.0       # s in [-SHIFT, SHIFT]


def mixed(case: Case, salt: int, dtype: str) -> Case:
    """The case with its upstream gradient scaled and shifted (see the module's text)."""
    d = case.dout
    if d is None or not isinstance(d, np.ndarray) or d.size == 0:
        return case
    h = hashlib.blake2b(salt.to_bytes(16, "little") + b"upstream" + str(d.shape).encode(),
                        digest_size=16)
    h.update(np.ascontiguousarray(d).tobytes())
    rng = np.random.default_rng(int.from_bytes(h.digest(), "little"))
    scale, shift = 2.0 ** rng.uniform(-SPAN, SPAN), rng.uniform(-SHIFT, SHIFT)
    new = (scale * (d.astype(np.float64) + shift)).astype(dtype).astype(REF)
    return dataclasses.replace(case, dout=new)
