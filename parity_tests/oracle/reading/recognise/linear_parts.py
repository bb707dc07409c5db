"""Recogniser: a torch block whose constructor takes its linear layers already built, by names that
say so (`MultiHeadAttentionLayer(d_model, h, qkv_fc, out_fc)`, whose `qkv_fc` is deep-copied into
the query, key and value projections; `PositionWiseFeedForwardLayer(fc1, fc2)`), as a model-building
function of its project hands them in. Before, the oracle had no value for such an argument and
passed a size by position, and the block held no weights (INTERFACE_ERROR).

A REQUIRED argument whose last word is `fc`, `linear`, `dense`, `proj` or `projection`, or that is
one of those words and a number (`fc1`, `linear_2`), gets a fresh `torch.nn.Linear` sized by the
role of the block being built (the component checked, or the class's name for a part: the words of
`submodules.ROLES`): in attention each is d_model -> d_model; in a feed-forward the first such
argument is d_model -> d_ff and the second d_ff -> d_model. Any other role, a third linear argument
of a feed-forward, or a NumPy block is left to the other recognisers. Each is a note.
"""
from __future__ import annotations

import inspect
import re
import sys

from .base import MISSING
from .submodules import ROLES

LAST_WORDS = ("fc", "linear", "dense", "proj", "projection")
NUMBERED = re.compile(r"(fc|linear|dense)_?\d")


def is_linear_name(name: str) -> bool:
    """Whether an argument's name says it is a linear layer (`qkv_fc`, `out_proj`, `fc1`)."""
    n = name.lower()
    words = [w for w in re.split(r"[^a-z0-9]+", n) if w]
    return bool(words) and (words[-1] in LAST_WORDS or NUMBERED.fullmatch(n) is not None)


def _role(ctx) -> str | None:
    if ctx.depth == 0 and ctx.component in ("mha", "ffn"):
        return ctx.component
    low = (ctx.target_name or "").lower()
    found = [(min((i for i, k in enumerate(keys) if k in low), default=None), role)
             for role, (_names, keys) in ROLES.items() if role in ("mha", "ffn")]
    found = [(rank, role) for rank, role in found if rank is not None]
    return found[0][1] if len(found) == 1 else None


def _linear_args(ctx) -> list[str]:
    """The target's required arguments named as linear layers, in order."""
    target = getattr(sys.modules.get(ctx.target_module or ""), str(ctx.target_name or ""), None)
    try:
        sig = inspect.signature(target.__init__)
    except (TypeError, ValueError, AttributeError):
        return []
    return [p.name for p in sig.parameters.values() if p.default is p.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and is_linear_name(p.name)]


def value(ctx, param, values: dict):
    if ctx.framework != "torch" or not is_linear_name(param.name) or "d_model" not in values:
        return MISSING
    role = _role(ctx)
    d = int(values["d_model"])
    if role == "mha":
        sizes = (d, d)
    elif role == "ffn" and "d_ff" in values:
        order = _linear_args(ctx)
        if len(order) != 2 or param.name not in order:
            return MISSING
        d_ff = int(values["d_ff"])
        sizes = (d, d_ff) if order.index(param.name) == 0 else (d_ff, d)
    else:
        return MISSING
    import torch
    ctx.note(f"constructor argument {param.name!r}: a linear layer handed in (by its name): built "
             f"nn.Linear({sizes[0]}, {sizes[1]}) for the {'attention' if role == 'mha' else 'feed-forward'}")
    return torch.nn.Linear(*sizes)
