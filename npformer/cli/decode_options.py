"""The decoding options of `npformer generate` that go together only one way, checked the same for
every kind of checkpoint (npformer.cli.lm, npformer.cli.text, npformer.cli.text_tasks)."""
from __future__ import annotations

from npformer.cli.errors import CliError

__all__ = ["refuse_alpha_without_beam", "sampling_requested"]


def refuse_alpha_without_beam(args) -> None:
    """`--alpha` is the beam search's length penalty: given without --beam K > 1 it did nothing."""
    given = getattr(args, "given", {}) or {}
    if "alpha" in given and args.beam <= 1:
        raise CliError(f"{given['alpha']}: the length penalty of beam search; it needs --beam K "
                       f"with K > 1 (greedy decoding and sampling have no length penalty)")


def sampling_requested(args) -> bool:
    """Whether any sampling option (--temperature/--top-k/--top-p/--seed) was given."""
    return any(getattr(args, k, None) is not None for k in ("temperature", "top_k", "top_p", "seed"))
