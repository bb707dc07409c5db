"""A block's part named for its role with a word saying it holds that role's weights: NumPy code
handing a layer its weights in dicts (`transformer_encoder_layer(x, attn_weights, ff_weights,
num_heads)` with `ff_weights = {"w1", "b1", "w2", "b2"}`), or a class keeping `self.ffn_params`.
The role's alias (`ff`, `attn`) is looked for with such a word after it too, before the block is
left to the fallbacks that place what it holds by order (which, with no shapes to go by, took
`b1` for the second weight)."""
from __future__ import annotations

HOLDER_WORDS = ("weights", "params", "parameters", "weight", "param", "vars", "variables")


def with_holder_words(aliases) -> list[str]:
    """`aliases`, then each plain one (no dot, not empty) again with a holder word after it, then
    the parent itself ("", where the aliases hold it: tried last, as it is the loosest)."""
    named = [a for a in aliases if a]
    extra = [f"{a}_{w}" for a in named if "." not in a for w in HOLDER_WORDS]
    return named + [e for e in extra if e not in named] + ([""] if "" in aliases else [])
