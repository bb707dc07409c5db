"""The `soak` mode (sandbox/modes.py registers it): one instance called many times, as a training
loop calls a layer, before the call that is compared (classes only, as the repeat mode: a function
keeps no instance state, and its calls over a check add up anyway).

The `repeat` mode calls an instance twice; code that turns wrong on its third call, or its tenth (a
cache that overflows, a counter that switches paths, a "warm-up" that ends), was never seen. Here a
fresh instance is called `soak_calls(case)` - 1 times, each a forward and a
backward on inputs of another value (the example's rolled and scaled), then once more on the
mode's own inputs with its weights written again with other values (as the repeat mode writes
them, as an optimizer step does), whose output and attention weights the parent compares with its
reference on those weights (gradients are not: what a style accumulates over calls is its own
business). A copy of a weight kept from some call on is stale there. How many calls is
not a number a submission can read in advance: it is drawn from the mode's inputs, which the
parent draws from the check's secret: on about half the examples, log-uniform between SOAK_MIN
and SOAK_MAX, so a check of some 40 examples meets counts across that range.
The calls before the compared one stop after SOAK_SECONDS (a slow candidate then makes fewer), so
a right candidate costs no more than that per example.

A counter over the whole process (wrong after the 1000th call, or the 300th instance built) is not
bounded by any of this: a check makes a few hundred calls (docs/ORACLE.md, red-team round 15).
Nothing here decides anything (core/modes.py compares).
"""
from __future__ import annotations

import dataclasses
import time
import zlib

import numpy as np

from ..components import REF, Case

SOAK_MIN, SOAK_MAX = 3, 16        # calls of one instance, the compared one included
SOAK_SECONDS = 2.0                # the calls before the compared one stop after this long


def soak_calls(case: Case) -> int:
    """How many calls this example's soak makes: 0 (no soak) on about half the examples, else
    log-uniform in [SOAK_MIN, SOAK_MAX]; from the bytes of the mode's inputs (drawn by the parent
    from the check's secret)."""
    h = zlib.crc32(b"soak" + b"".join(np.ascontiguousarray(a).tobytes() for a in case.inputs.values()))
    if (h >> 24) % 2:
        return 0
    u = (h % 100003) / 100002
    return max(SOAK_MIN, min(SOAK_MAX, int(SOAK_MIN * (SOAK_MAX / SOAK_MIN) ** u + 0.5)))


def warm_case(case: Case, i: int) -> Case:
    """The i-th call before the compared one: every float input rolled by i + 1 along its last
    axis and scaled; masks, weights and upstream gradient the example's."""
    f = (1.0, -0.5, 1.5)[i % 3]
    return dataclasses.replace(case, inputs={
        n: (np.roll(a, i + 1, axis=-1) * f if a.dtype == REF and a.ndim else a)
        for n, a in case.inputs.items()})


def soak(ad, case: Case, tick=lambda: None) -> dict:
    calls = soak_calls(case)
    if ad.mode in ("instance", "function", "pair") or not calls:
        return {}              # one object for every call already, or none to keep state in
    inst = ad.instantiate(case)
    if inst.table or inst.obj is None:
        return {}
    start = time.monotonic()
    for i in range(calls - 1):
        ad.execute(inst, warm_case(case, i))
        if time.monotonic() - start > SOAK_SECONDS:
            break
    tick()                     # the compared call is a stage of its own under the parent's --timeout
    from .modes import updated_weights  # (modes.py imports this module)
    p = ad.execute(inst, dataclasses.replace(case, params=updated_weights(case.params)), grad=False)
    return {k: v for k, v in p.values.items() if k in ("output", "attention_weights")}
