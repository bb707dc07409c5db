"""The mask options a recogniser adapted to what a submission appears to read, as the worker
reports them (session.prepare): set back where the instructor fixed them (`hold_declared`), and
otherwise named to the parent, where each is a gap of the requirement `mask_convention`
(core/completeness): the convention (True = hidden, additive: `adapted_convention`) and the form
((B, Tq, Tk), or spread over heads merged into the batch axis: `adapted_form`). A form adapted to
is no more the assignment's than a convention: a layer refusing the (B, 1, Tq, Tk) mask only when
the call looks like the oracle's probe, while reading it wrongly everywhere else, was handed
three-axis masks ever after and matched (oracle_hostile/rank_probe_refusal.py)."""
from __future__ import annotations


def hold_declared(adapter, declared: dict) -> None:
    """The mask options the instructor fixed (Options.declared) set back to their declared values
    where a recogniser adapted them to what the submission appears to read (an additive mask, a
    flipped padding part), with a note naming both: the submission is called as declared, and one
    reading masks otherwise is compared (and fails) as such."""
    opts = getattr(adapter, "opts", None)
    changed = {k: getattr(opts, k) for k, v in declared.items() if getattr(opts, k, v) != v}
    if not changed:
        return
    for k in changed:
        setattr(opts, k, declared[k])
    said = ", ".join(f"{k} {v!r}" for k, v in changed.items())
    fixed = ", ".join(f"{k} {declared[k]!r}" for k in changed)
    adapter.notes.append(f"not adapted: the submission appears to read masks with {said}, but the "
                         f"instructor fixed {fixed}: masks are handed over as declared, and every "
                         f"example is compared so")


def adapted_convention(adapter, given: str) -> str | None:
    """The mask convention a recogniser adapted the masks to (True = hidden, additive), where it is
    not the one the check was given (declared, or the default keep); None otherwise. Reported to
    the parent, where it is the gap `mask_convention` (core/completeness)."""
    opts = getattr(adapter, "opts", None)
    now = getattr(opts, "mask_convention", given)
    if now == given and given == "keep" and getattr(adapter, "torch_mha_mask", False):
        now = "drop"                      # torch's form: True = hidden (recognise/torch_mha_mask)
    return now if now != given else None


def adapted_form(adapter, given_rank: int) -> str | None:
    """The form a recogniser adapted the masks to where it is not the one the check was given (the
    declared rank, or the default (B, 1, Tq, Tk)): "rank3" for (B, Tq, Tk) (recognise/mask_rank),
    "heads_merged" for (B * heads, Tq, Tk) (recognise/merged_mask); None otherwise."""
    opts = getattr(adapter, "opts", None)
    if getattr(adapter, "heads_merged_mask", False):
        return "heads_merged"
    return "rank3" if getattr(opts, "mask_rank", given_rank) != given_rank else None
