"""Recogniser: a torch parameter that is frozen (`nn.Parameter(table, requires_grad=False)`, a
sinusoid table a model computes once and keeps as a parameter rather than a buffer). It is not
trained, so it is a constant of the candidate's own code, as a buffer is: when the reference has no
counterpart for it, it is left as the candidate computed it (and what it computed is what the
outputs compare), not an interface error. The report names it. A frozen parameter the reference
does have a counterpart for is placed as any other."""
from __future__ import annotations


def place(adapter, unclaimed: list, slots: dict) -> list:
    """`unclaimed` less the frozen torch parameters among them (see the module docstring)."""
    if adapter.framework != "torch" or adapter.opts.allow_unmapped:
        return unclaimed
    frozen = [n for n in unclaimed if getattr(getattr(slots.get(n), "p", None), "requires_grad", True) is False]
    if frozen:
        note = (f"frozen parameters (requires_grad=False) the reference has no counterpart for, kept as "
                f"the candidate computes them (constants of its code, as buffers): {', '.join(frozen)}")
        if note not in adapter.notes:
            adapter.notes.append(note)
    return [n for n in unclaimed if n not in frozen]
