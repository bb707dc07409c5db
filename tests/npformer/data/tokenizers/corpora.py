"""Small deterministic corpora for training vocabularies in tests (a few KiB, built here, seeded)."""
from __future__ import annotations

import random

from .text_strategies import ACCENTED, CONTRACTIONS, EMOJI, PUNCTUATION

WORDS = [
    "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "and", "then", "it", "runs",
    "away", "from", "a", "hunter", "who", "is", "tired", "of", "walking", "through", "forest", "on",
    "rainy", "days", "tokenizer", "merges", "pairs", "bytes"
]


def mixed_corpus(n_lines: int = 400, seed: int = 0) -> str:
    """Lines of English-like words mixed with numbers, contractions, accents, CJK, emoji, punctuation."""
    rng = random.Random(seed)
    lines = []
    for _ in range(n_lines):
        parts = []
        for _ in range(rng.randint(3, 12)):
            r = rng.random()
            if r < 0.55:
                w = rng.choice(WORDS)
                parts.append(w.capitalize() if rng.random() < 0.2 else w)
            elif r < 0.62:
                parts.append(str(rng.randint(0, 99999)))
            elif r < 0.70:
                parts.append(rng.choice(WORDS) + rng.choice(CONTRACTIONS))
            elif r < 0.78:
                parts.append("".join(rng.choice(ACCENTED) for _ in range(rng.randint(1, 4))))
            elif r < 0.85:
                parts.append("".join(chr(rng.randint(0x4E00, 0x4E40)) for _ in range(rng.randint(1, 3))))
            elif r < 0.92:
                parts.append(rng.choice(EMOJI))
            else:
                parts.append(rng.choice(PUNCTUATION) * rng.randint(1, 3))
        sep = rng.choice([" ", " ", " ", "  ", "\t"])
        lines.append(sep.join(parts))
    return "\n".join(lines) + "\n"
