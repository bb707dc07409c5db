"""Which characters two Unicode databases may legitimately classify differently.

Our tokenizers read character classes from Python's `unicodedata` (Unicode 14.0 on Python 3.11).
Hugging Face's `tokenizers` carries its own tables: the GPT-2 pattern's regex engine knows a newer
Unicode (it calls letters some code points Python still calls unassigned, Cn), and BertNormalizer /
BertPreTokenizer use Unicode 8.0 category tables (so punctuation, format characters and combining
marks assigned since are not punctuation, dropped or stripped there), with Rust's own (newer)
lower-casing. A character can only be classified differently if its category changed between
Unicode versions or it is unassigned in ours, which `unicodedata.ucd_3_2_0` (Unicode 3.2, in the
stdlib) lets a test check without trusting either tokenizer.
"""
from __future__ import annotations

import unicodedata


def unassigned_here(ch: str) -> bool:
    """Unassigned in Python's Unicode database (a newer one may have assigned it)."""
    return unicodedata.category(ch) == "Cn"


def version_dependent(ch: str) -> bool:
    """Unassigned here, or its category is not the one Unicode 3.2 gave it (assigned or changed
    since): the only characters two Unicode versions can disagree on."""
    return unassigned_here(ch) or unicodedata.ucd_3_2_0.category(ch) != unicodedata.category(ch)
