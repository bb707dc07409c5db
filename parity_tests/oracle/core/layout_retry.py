"""A whole model whose square matrices are used as `x @ W` (stored (in, out)), checked once more so.

For attention and the layers that hold it, a probe decides the layout of bare square matrices before
the search (reading/recognise/layout.py); for a whole model no such probe can be worked out by hand
(embeddings, positions, two stacks, tied tables and the output projection all lie between the
attention and the logits). So when a model's check ends MISMATCH with the weights handed over as
(out, in) (the default), the whole check runs again with --weight-layout in_out: its square matrices
(in, out), except those of a class whose non-square weights show (out, in) (nn.Linear's: see
recognise/class_layout). The second answer is taken when it matched, or when its difference is of
float32 rounding size (the float32 re-check, core/float32_tables, then decides); otherwise the first
stands, with the second's end as a note.

This cannot buy a match: it only picks how the reference's weights are handed over, and every
quantity is still compared with the reference on every example, the first search's counterexample
first (a second search alone could miss a rare bug the first met). Code right under one layout is
right code; code that mixes layouts, or is wrong, fails both. The cost is one example more for a
model that did not match, a search more when that example passes. A replay keeps its options, and a
mismatch of float32 rounding size goes to the float32 re-check alone.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from .verdicts import CheckResult

COMPONENTS = ("model",)                       # the layers have recognise/layout's probe


def retry(component: str, first: CheckResult, opts, run: Callable) -> tuple[CheckResult, object]:
    """(result, the options it was found with): `first` and `opts`, or the in_out check's.
    `run(opts, replay=None)` runs a check."""
    if component not in COMPONENTS or first.verdict != "mismatch" or opts.weight_layout != "out_in":
        return first, opts
    if first.float32_sized or first.example is None:
        return first, opts              # rounding's own re-check decides; nothing to replay
    other = dataclasses.replace(opts, weight_layout="in_out")
    # the first's counterexample must pass under in_out before a whole search is run: a new search
    # alone could miss a bug its draws happen not to meet
    second = run(other, replay=first.example)
    if _fits(second):
        second = run(other)
    if _fits(second):
        second.notes.insert(0, "the model's square matrices are used as x @ W (stored (in, out)): "
                               "handed over as (out, in) it gave MISMATCH (" + first.message + "); "
                               "checked again with --weight-layout in_out (gradients too), that "
                               "example included")
        return second, other
    first.notes.append(f"checked again with --weight-layout in_out (are its square matrices used "
                       f"as x @ W?): {second.verdict}: {second.message}")
    return first, opts


def _fits(res: CheckResult) -> bool:
    """Matched, or differed by float32 rounding only (the float32 re-check decides)."""
    return res.verdict == "match" or (res.verdict == "mismatch" and res.float32_sized)
