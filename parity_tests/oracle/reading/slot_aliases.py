"""Arrays a NumPy candidate lists a second time: `self.params = [self.W_fc, self.b_fc, ...]` (an
optimiser's list), also gathered from its parts (`self.params = self.ln1.params + self.attn.params`).
The list's items are the very arrays its attributes hold, so they are no parameters of their own:
a list slot whose array IS (the same object as) an attribute slot's array is dropped. Before, a
list of random weights was "randomly initialised arrays the reference has no counterpart for"
(INTERFACE_ERROR); a list of ones and zeros was left as constructed. Lists holding arrays no
attribute holds keep their slots."""
from __future__ import annotations


def drop_listed_twice(slots: dict) -> dict:
    """`slots` less the list items that are an attribute slot's own array (see the docstring)."""
    def listed(s) -> bool:
        return isinstance(getattr(s, "container", None), list)

    held = {id(s.array()) for s in slots.values() if not listed(s)}
    return {n: s for n, s in slots.items() if not (listed(s) and id(s.array()) in held)}


LISTS = (("params", "grads"), ("parameters", "gradients"), ("params", "gradients"))
"""A parameter list beside a gradient list of the same length: `self.params = [self.W, self.b]`,
backward setting `self.grads = [dW, db]`: grads[i] is the gradient of the array params[i] is."""


def listed_grad(holder, arr) -> tuple[str, object] | None:
    """(where, gradient) for the array `arr` an attribute of `holder` holds, when `holder` lists it
    in a parameter list beside a gradient list of the same length (see LISTS); else None."""
    for pname, gname in LISTS:
        ps, gs = getattr(holder, pname, None), getattr(holder, gname, None)
        if isinstance(ps, list) and isinstance(gs, list) and len(ps) == len(gs):
            at = [i for i, p in enumerate(ps) if p is arr]
            if len(at) == 1 and hasattr(gs[at[0]], "shape"):
                return f"{gname}[{at[0]}]", gs[at[0]]
    return None
