"""Recogniser: a candidate that holds no weights at all where the component has weight matrices (a
"feed-forward" that only applies an activation, a layer whose blocks keep nothing).

Such code cannot compute the component for the reference's weights, whatever it does with its
input, so the check stops with an interface error that says exactly that, names the reference's
matrices it lacks, and says what to do if the weights do exist somewhere the oracle cannot see
(module-level arrays, another object's attributes): hand them over with --map or an adapter file.
It replaces the generic "cannot tell where the candidate keeps ..." message only when the
candidate's parameter list is empty.
"""
from __future__ import annotations


def message(kind: str, space, missing: list, ref_shapes: dict) -> str | None:
    """The interface error's text for a weightless candidate, or None."""
    if space.names:
        return None
    matrices = [m for m in missing if len(tuple(ref_shapes[m])) == 2]
    if not matrices:
        return None
    listed = ", ".join(f"{m} {tuple(ref_shapes[m])}" for m in matrices)
    return (f"the candidate holds no parameters or weight arrays at all, but a {kind} has weight "
            f"matrices ({listed}): code without weights cannot compute the {kind} for the "
            f"reference's weights (a block that only applies an activation is not the "
            f"component). If its weights live outside the module (module-level arrays, another "
            f"object), hand them over with --map REF=CAND or an adapter file")
