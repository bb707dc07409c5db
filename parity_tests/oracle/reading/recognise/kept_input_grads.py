"""Recogniser: a NumPy backward that returns nothing and keeps the input's gradient on the object,
the way some layer libraries chain their layers through a cache:

    def backward(self, dout):
        ...
        self.cache["dx"] = dx                 (or self.dx = dx, self.grads["d_x"] = dx)

Before, `backward(dout)` returning None was a WRONG_TYPE ("expected the gradients as a tuple"),
whatever the code kept. Now, when it returns None, the input's gradient is looked for among the
arrays that appeared or changed during the backward (grad_behaviour.snapshot, taken around it),
with the input's shape and a last name that says so: `dx`, `d_x`, `grad_x`, `x_grad`, `dinput(s)`,
`grad_input`, or d/grad + the forward's own argument name (`dX`, `d_query`, `grad_memory`). The
one nearest the object is taken (`cache.dx` over `attention.cache.dx`, a part's own); two at the
same depth holding different values are never chosen between. Where nothing fits, the gradient is
reported missing, saying that backward returned None: the verdict cannot be a match, and the report
says why instead of blaming the type. The report names where each gradient was read."""
from __future__ import annotations

import numpy as np

_PLAIN = ("dx", "d_x", "grad_x", "x_grad", "dinput", "dinputs", "d_input", "d_inputs", "grad_input",
          "grad_inputs", "input_grad", "dx_in", "grad_in")


def _names(arg: str) -> set[str]:
    a = arg.lower()
    return set(_PLAIN) | {f"d{a}", f"d_{a}", f"grad_{a}", f"{a}_grad", f"grad{a}"}


def _unchanged(before: dict, path: str, arr: np.ndarray) -> bool:
    old = before.get(path)
    return old is not None and old.shape == arr.shape and np.array_equal(old, arr, equal_nan=True)


def read(before: dict, after: dict, targets: list[tuple[str, tuple]], params: set,
         notes: list) -> tuple[list, str]:
    """For each (argument name, shape) in `targets`, the gradient the backward kept (or None), from
    the snapshots `before` and `after` it; `params` are the parameter arrays' paths (never taken).
    Returns (gradients in the order of `targets`, the reason to give for those not found)."""
    out: list = []
    for arg, shape in targets:
        names = _names(arg)
        hits = [p for p, a in after.items()
                if p not in params and tuple(a.shape) == tuple(shape) and not _unchanged(before, p, a)
                and p.rsplit(".", 1)[-1].lower() in names]
        if not hits:
            out.append(None)
            continue
        depth = min(p.count(".") for p in hits)
        near = [p for p in hits if p.count(".") == depth]
        if any(not np.array_equal(after[near[0]], after[p]) for p in near[1:]):
            out.append(None)
            continue
        out.append(after[near[0]])
        text = (f"backward(dout) returned None: the gradient of {arg!r} was read from {near[0]} "
                f"(an array with its shape and name that the backward wrote)")
        if text not in notes:
            notes.append(text)
    why = ("backward(dout) returned None and kept no gradient for it that the oracle can read (an array "
           "of its shape, written in backward, named dx / grad_x / d<argument>); return the input "
           "gradients, or keep them under such a name")
    return out, why
