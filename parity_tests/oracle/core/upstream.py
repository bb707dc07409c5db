"""What a check's examples receive beyond their sizes, made unpredictable in the parent.

Array values (`secret_seed`): every component draws an example's arrays from its "seed", which
Hypothesis draws from the check's --seed (default 0): the same inputs at every run of `check`, the
hidden search's at every run too (its seed, unless the spec names one, is the public one + 1). Code
that holds answers for those inputs (`oracle_hostile` test: a table of the digests of the inputs
a run of the search hands over, right only on them) matched whatever it computed elsewhere. Each
drawn example's seed is now mixed with the check's secret salt (backend.salt, never sent to the
worker): the sizes Hypothesis draws, shrinks and reports stay the search's; the values are new at
every run. The report shows the mixed seed, so `--replay` (which does not mix) repeats an example
exactly.

Upstream gradient (`mixed`): the component draws it standard normal (components/base.py), and a
backward can tell that draw from a training step by its statistics (mean near 0, spread near 1 in
every example: `oracle_hostile/probe_shaped_upstream.py`, right only then, got `match`). Each
example's draw is scaled by 2**u (u uniform in [-4, 4]) after a shift s (uniform in [-1, 1]) of
its nonzero entries: dout' = 2**u * (dout + s * (dout != 0)) (a whole model's dout is 0 at padded
target positions, and stays so), from a generator seeded by the draw's bytes (themselves from the mixed
seed: unpredictable in a search, the same in a replay). A mean-reduced loss's small gradients, a
summed loss's offset ones and a scaled loss's large ones all look like this; no call stands out.

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


def secret_seed(example: dict, salt: int) -> dict:
    """The example with its array seed mixed with the check's secret `salt` (a new dict)."""
    if not isinstance(example, dict) or not isinstance(example.get("seed"), int):
        return example
    h = hashlib.blake2b(salt.to_bytes(16, "little") + b"seed"
                        + int(example["seed"]).to_bytes(8, "little"), digest_size=4)
    return {**example, "seed": int.from_bytes(h.digest(), "little")}


def mixed(case: Case, dtype: str) -> Case:
    """The case with its upstream gradient scaled and shifted (see the module's text)."""
    d = case.dout
    if d is None or not isinstance(d, np.ndarray) or d.size == 0:
        return case
    h = hashlib.blake2b(b"upstream" + str(d.shape).encode(), digest_size=16)
    h.update(np.ascontiguousarray(d).tobytes())
    rng = np.random.default_rng(int.from_bytes(h.digest(), "little"))
    scale, shift = 2.0 ** rng.uniform(-SPAN, SPAN), rng.uniform(-SHIFT, SHIFT)
    d = d.astype(np.float64)
    new = (scale * (d + shift * (d != 0))).astype(dtype).astype(REF)   # zeros (padding) kept
    return dataclasses.replace(case, dout=new)
