"""The names a user may give a component: the canonical one, or a common way of writing it.

People name components as their code does (`LayerNorm`, `multi_head_attention`, `FeedForward`,
`PositionalEncoding`), so a name is compared after dropping case and every character that is not a
letter or digit, against the canonical names and the aliases below. What the oracle reports (the
verdict, the JSON report, the grade) always carries the canonical name.

"attention" alone is refused as ambiguous: it is the scaled dot-product function (sdpa) in some
courses and the multi-head module (mha) in others, and the two are checked differently.
"""
from __future__ import annotations

import difflib
import re

# normalised alias -> canonical name (the canonical names normalise to themselves, see canonical())
ALIASES = {
    "scaleddotproductattention": "sdpa", "scaleddotproduct": "sdpa", "dotproductattention": "sdpa",
    "multiheadattention": "mha", "multiheadedattention": "mha", "multihead": "mha",
    "multiheadselfattention": "mha",
    "positionalencoding": "positional", "sinusoidalpositionalencoding": "positional",
    "positionalencodings": "positional", "posencoding": "positional", "pe": "positional",
    "feedforward": "ffn", "positionwisefeedforward": "ffn", "feedforwardnetwork": "ffn",
    "positionwiseffn": "ffn", "pointwisefeedforward": "ffn",
    "layernormalization": "layernorm", "ln": "layernorm",
    "encoderlayer": "encoder_layer", "encoderblock": "encoder_layer",
    "transformerencoderlayer": "encoder_layer",
    "decoderlayer": "decoder_layer", "decoderblock": "decoder_layer",
    "transformerdecoderlayer": "decoder_layer",
    "transformer": "model", "encoderdecoder": "model", "seq2seq": "model",
}
AMBIGUOUS = {"attention": "sdpa (scaled dot-product attention: a function of q, k, v) or mha "
                          "(multi-head attention: a module with its projections)"}


def _normal(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def canonical(name, known) -> str:
    """The canonical component name `name` stands for, among `known` (the canonical names).

    Raises KeyError naming the argument, the expected names and what came, with the closest names
    when it looks like a typo.
    """
    expected = f"component: expected one of {', '.join(known)}"
    if not isinstance(name, str):
        raise KeyError(f"{expected}, got {name!r}")
    if name in known:
        return name
    key = _normal(name)
    by_key = {_normal(k): k for k in known}
    if key in by_key:
        return by_key[key]
    if key in ALIASES and ALIASES[key] in known:
        return ALIASES[key]
    if key in AMBIGUOUS:
        raise KeyError(f"{expected}, got {name!r}, which could mean {AMBIGUOUS[key]}: give one")
    close = difflib.get_close_matches(key, list(by_key) + [a for a, c in ALIASES.items() if c in known],
                                      n=2, cutoff=0.75)
    hint = sorted({by_key.get(c) or ALIASES[c] for c in close})
    more = f" (did you mean {' or '.join(hint)}?)" if hint else ""
    raise KeyError(f"{expected}, got {name!r}{more}")
