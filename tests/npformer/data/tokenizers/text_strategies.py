"""Hypothesis strategies for tokenizer tests: text built from the pieces that trip tokenizers up.

A text is a list of fragments joined: runs of letters and digits from all of Unicode, whitespace runs
(including the exotic White_Space characters and the ASCII separators U+001C..U+001F that
`str.isspace` calls spaces), newlines, contractions, emoji (with skin tones, flags and ZWJ
sequences), punctuation and symbols, accented and upper-case letters, CJK ideographs (including the
range where Google's and Hugging Face's BERT disagree), controls and format characters, special tokens spelled out.
"""
from __future__ import annotations

import os

from hypothesis import settings
from hypothesis import strategies as st

PROFILE = os.environ.get("NPFORMER_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
# tokenizers are cheap: many more examples than the model-building parity tests
EXAMPLES = {"dev": 150, "ci": 400, "thorough": 5000}.get(PROFILE, 150)


def text_settings(n: int = EXAMPLES):
    return settings(max_examples=n, deadline=None, derandomize=PROFILE == "ci", print_blob=True)


WHITESPACE = " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2009\u200a\u2028\u2029\u202f\u205f\u3000\x1c\x1d\x1e\x1f"
CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'RE", "n't", "'", "''", " '"]
EMOJI = ["😀", "👍🏽", "🇫🇷", "👨\u200d👩\u200d👧", "❤️", "🤖", "\U0001fae0"]
PUNCTUATION = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~¡¿«»—–…“”‘’·•§¶€£¥©®°±×÷")
ACCENTED = list("éÉèàÀüÜñÑçÇÅåøØœŒßİıΣσςﬁǅÆǲὈ") + ["e\u0301", "A\u030a"]
SPECIALS = ["[MASK]", "[CLS]", "[SEP]", "[PAD]", "[UNK]", "<|endoftext|>", "[mask]", "<|endoftext|",
            "[MASK"]
CONTROLS = ["\x00", "\x01", "\x7f", "\u200b", "\u200d", "\ufeff", "\ufffd", "\ue000", "\u00ad"]

letters_digits = st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=8)
ascii_words = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
                      min_size=1, max_size=10)
whitespace_runs = st.text(st.sampled_from(WHITESPACE), min_size=1, max_size=4)
cjk = st.one_of(st.characters(min_codepoint=0x4E00, max_codepoint=0x4E80),
                st.characters(min_codepoint=0x3400, max_codepoint=0x3420),
                st.characters(min_codepoint=0x2B800, max_codepoint=0x2B940),   # the disputed range
                st.characters(min_codepoint=0xF900, max_codepoint=0xF920))

fragment = st.one_of(
    ascii_words, ascii_words, letters_digits, whitespace_runs, st.just(" "), st.just("\n"),
    st.sampled_from(CONTRACTIONS), st.sampled_from(EMOJI), st.sampled_from(PUNCTUATION),
    st.sampled_from(ACCENTED), cjk, st.sampled_from(CONTROLS), st.sampled_from(SPECIALS),
    st.characters(codec="utf-8"),                       # any encodable character at all
)

texts = st.lists(fragment, max_size=25).map("".join)
