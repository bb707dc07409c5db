"""Recogniser: a head count fixed by the candidate's own code (`H = 8` at the top of the file,
`nn.MultiheadAttention(d_model, H)` inside a layer that takes only d_model), which no constructor
argument sets. The oracle draws d_model from 1 up, so the candidate's own `d_model % h` check (or
torch's) fails on nearly every example and the layer is never compared.

Found by a probe, when the class does not build at d_model 3 and 5 with one head asked for: built at
every d_model up to 48, it builds exactly at the multiples of one H > 1, and at d_model = H it still
builds when asked for H + 1 heads (so it never reads the head count it is given; code that takes the
count and wants even widths is not this). Then every example is drawn with num_heads = H and
d_model a multiple of H, the probes after this one see the candidate built at 2H, and the report
names the head count as a size the code fixes (a NOT COMPARED sizes gap: other head counts are not
reached). The module-level constant holding H, when there is one, is named in the note.
"""
from __future__ import annotations

import dataclasses
import math
import time

COMPONENTS = ("mha", "encoder_layer", "decoder_layer", "model")
WIDEST = 48
BUDGET_S = 10.0


def _builds(adapter, d_model: int, heads: int, until: float) -> bool:
    """Whether the class builds at these sizes (built as the probe build is, in this thread)."""
    if time.monotonic() > until:
        raise TimeoutError
    hyper = dict(adapter.probe_hyper(), d_model=d_model, num_heads=heads, d_k=max(1, d_model // heads),
                 d_v=max(1, d_model // heads))
    try:
        adapter.construct(hyper)
    except Exception:  # noqa: BLE001 - any failure to build is a width it does not accept
        return False
    return True


def _constant(adapter, h: int) -> str | None:
    """The module-level integer constant equal to h, named like a head count, if any."""
    try:
        items = list(vars(adapter.source_module()).items())
    except TypeError:
        return None
    return next((n for n, v in items if type(v) is int and v == h
                 and ("head" in n.lower() or n in ("H", "h", "NH", "N_H"))), None)


def probe(adapter) -> None:
    if adapter.comp.name not in COMPONENTS or adapter.mode != "class" or adapter.hooks is not None:
        return
    if "num_heads" in adapter.opts.settings or "d_model" in adapter.opts.settings:
        return                     # fixed by the user, or the whole width fixed (global_width)
    notes = list(adapter.notes)     # the extra builds' guesses are the probe build's again
    until = time.monotonic() + BUDGET_S
    try:
        if _builds(adapter, 3, 1, until) or _builds(adapter, 5, 1, until):
            return
        widths = [d for d in range(1, WIDEST + 1) if _builds(adapter, d, 1, until)]
        h = math.gcd(*widths) if widths else 0
        if h < 2 or widths != list(range(h, WIDEST + 1, h)) or not _builds(adapter, h, h + 1, until):
            return
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    finally:
        adapter.notes[:] = notes
    adapter.caps.fixed_sizes["num_heads"] = h
    # the probes after this one build and call the candidate at a width it accepts
    adapter.opts = dataclasses.replace(adapter.opts, settings=dict(adapter.opts.settings, num_heads=h,
                                                                   d_model=2 * h))
    try:
        adapter.probe = adapter.construct(adapter.probe_hyper())
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        pass
    const = _constant(adapter, h)
    adapter.notes.append(f"the head count is fixed by the candidate's code at {h}"
                         + (f" (module-level {const} = {h})" if const else "")
                         + f": built with one head asked for, it accepted exactly the d_model that are "
                         f"multiples of {h}, and it ignores the head count it is given; every example "
                         f"drawn with num_heads = {h}, d_model a multiple of {h}")
