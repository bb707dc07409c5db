"""Names that say an array is a bias (`b1`, `b_2`, `bias1`, `b_ff`, `ffn_bias`, `biases`): a
function's weight arguments have no shapes to go by, so the fallback that places a block's weights
by order skips arrays named so (it took `b1` for the second feed-forward weight of a layer handed
`{"w1", "b1", "w2", "b2"}`)."""
from __future__ import annotations

import re

from .leaf_words import BIAS_WORDS
from .trees import LINEAR_BIAS

_WORDS = "|".join(BIAS_WORDS)
_BIAS = re.compile(rf"({_WORDS})(_?\d+|_\w+)?|\w+_({_WORDS})")


def named_as_bias(name: str) -> bool:
    """Whether the last part of `name` says it is a bias."""
    leaf = name.rsplit(".", 1)[-1]
    return leaf in LINEAR_BIAS or _BIAS.fullmatch(leaf) is not None
