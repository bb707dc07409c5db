"""GPT-2's pre-tokenisation: split text into the pieces BPE merges never cross.

GPT-2 splits text with this regular expression before any merge is applied:

    's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+

Python's `re` has no \\p{L} (letter) or \\p{N} (number), so this file reads the text with a small
hand-written scanner that tries the same alternatives, in the same order, at each position:

    1. a contraction:       's 't 're 've 'm 'll 'd   (lower case only, as in the pattern)
    2. letters:             an optional single space, then one or more letters    " hello"
    3. numbers:             an optional single space, then one or more numbers    " 2024"
    4. other symbols:       an optional single space, then one or more characters that are
                            neither whitespace, letter nor number                 " ..."
    5. whitespace \\s+(?!\\S): a whitespace run not followed by a non-space; a run followed by a
                            word gives back its last character, which joins the word as its space
    6. whitespace \\s+:      what is left (a lone whitespace character before a word, like "\\n")

The pieces are a partition of the text: joined, they give the text back exactly.

Character classes come from `unicodedata`:
    letter      general category L*  (Lu, Ll, Lt, Lm, Lo)
    number      general category N*  (Nd, Nl, No)
    whitespace  Unicode's White_Space property (the list below; `str.isspace` differs: it also
                calls U+001C..U+001F whitespace, which the regex engines behind GPT-2 do not)
"""
from __future__ import annotations

import unicodedata

__all__ = ["gpt2_pieces", "is_letter", "is_number", "is_space", "split_specials"]

# Unicode's White_Space property (PropList.txt), what \s means in a Unicode regex.
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000")

CONTRACTIONS = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d")   # tried in this order


def is_space(ch: str) -> bool:
    return ch in WHITE_SPACE


def is_letter(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "L"


def is_number(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "N"


def is_other(ch: str) -> bool:
    """Neither whitespace, letter nor number: the class [^\\s\\p{L}\\p{N}]."""
    return not (is_space(ch) or is_letter(ch) or is_number(ch))


def _run_end(text: str, start: int, in_class) -> int:
    """First position at or after `start` whose character is not in the class."""
    end = start
    while end < len(text) and in_class(text[end]):
        end += 1
    return end


def _piece_end(text: str, i: int) -> int:
    """End of the piece that starts at position i (alternatives 1 to 6, first match wins)."""
    # 1. contractions
    for c in CONTRACTIONS:
        if text.startswith(c, i):
            return i + len(c)
    # 2-4. an optional space, then a run of letters, numbers or other symbols
    body = i + 1 if text[i] == " " and i + 1 < len(text) else i
    for in_class in (is_letter, is_number, is_other):
        if in_class(text[body]):
            return _run_end(text, body, in_class)
    # 5. whitespace not followed by a non-space: the whole run at the end of the text, else the
    #    run less its last character (a run of one character cannot give one back: go on to 6)
    end = _run_end(text, i, is_space)
    if end == len(text):
        return end
    if end - 1 > i:
        return end - 1
    # 6. the whitespace run itself (here: one character before a word)
    return end


def gpt2_pieces(text: str) -> list[str]:
    """The pieces GPT-2's pattern finds in `text`, in order; "".join(pieces) == text."""
    pieces = []
    i = 0
    while i < len(text):
        end = _piece_end(text, i)
        pieces.append(text[i:end])
        i = end
    return pieces


def split_specials(text: str, specials) -> list[tuple[str, bool]]:
    """`text` cut at every occurrence of a special token (like "<|endoftext|>" or "[MASK]"), as
    (chunk, is_special) pairs in order. The leftmost occurrence wins, and the longest special
    where two start at the same place; the chunks between are ordinary text."""
    out = []
    start = 0
    while True:
        # where each special next occurs (-len: the longest first on a tie)
        hits = [(text.find(s, start), -len(s), s) for s in specials if s]
        hits = [h for h in hits if h[0] >= 0]
        if not hits:
            break
        pos, _, special = min(hits)
        if pos > start:
            out.append((text[start:pos], False))
        out.append((special, True))
        start = pos + len(special)
    if start < len(text):
        out.append((text[start:], False))
    return out
