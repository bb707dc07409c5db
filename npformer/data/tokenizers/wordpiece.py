"""BERT's WordPiece tokenizer for a folder's `vocab.txt` (one token per line; line n is id n).

Encoding text, as BERT does (after cutting out the special tokens the text spells, such as
"[MASK]", exactly as written, as transformers does):
    1. clean: drop NUL, U+FFFD and control, format and private-use characters (Cc, Cf, Co; not
       tab, newline and carriage return); every whitespace character becomes a space
    2. put spaces around CJK ideographs, so each is a word of its own
    3. (uncased vocabularies) strip accents: NFD, then drop the combining marks (category Mn);
       then lower-case, character by character
    4. split on whitespace, and split every punctuation character off as a word of its own
       (ASCII symbols such as $ + < = > ^ ` | ~ count as punctuation, as in BERT)
    5. WordPiece each word: the longest prefix in the vocabulary, then the longest continuation
       written "##rest", and so on; a word longer than 100 characters, or one where no piece
       matches at some point, becomes [UNK] as a whole
    6. optionally [CLS] first and [SEP] last
Decoding: tokens joined by spaces, a "##" piece glued to the one before; special tokens skipped
by default; a ".", "?", "!" or "," token is written without the space before it (DECODE_CLEANUP).
"""
from __future__ import annotations

import os
import unicodedata

from .files import read_utf8_lines
from .ids import token_ids
from .pretokenize import is_space, split_specials
from .text_input import check_encodable, check_flag

__all__ = ["WordPieceTokenizer", "basic_tokenize", "wordpiece"]

MAX_WORD_CHARS = 100
CONTINUATION = "##"
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

# CJK Unified Ideographs, their extensions and compatibility blocks: the list of Hugging Face's
# BertNormalizer (`tokenizers`), which starts one range at 0x2B920 where Google's BERT starts it at
# 0x2B820; this file follows the former, which BertTokenizerFast uses and the tests compare with.
CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))

# Decoding writes a token after a space, then applies these replacements to it (as BERT's decoder
# in `tokenizers` does, token by token): so "hello" "," gives "hello,".
DECODE_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                  (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def is_cjk(ch: str) -> bool:
    return any(lo <= ord(ch) <= hi for lo, hi in CJK_RANGES)


def is_control(ch: str) -> bool:
    """A character step 1 drops: a control (Cc), format (Cf) or private-use (Co) character, but not
    tab, newline or CR. Unassigned code points (Cn) are kept, as Hugging Face's BERT keeps them
    (Google's drops them): a newer Unicode may have assigned them."""
    return ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs")


def is_punctuation(ch: str) -> bool:
    """Unicode punctuation (category P*), or any ASCII symbol that is not a letter or digit."""
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch)[0] == "P"


def clean_text(text: str) -> str:
    """Step 1 (drop NUL, U+FFFD and control characters; whitespace to spaces) and step 2 (CJK)."""
    out = []
    for ch in text:
        if ch == "\0" or ch == "\ufffd" or is_control(ch):
            continue
        if is_space(ch):
            out.append(" ")
        elif is_cjk(ch):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    return "".join(out)


def strip_accents(text: str) -> str:
    """Step 3: decompose (NFD) and drop the combining marks: "é" -> "e"."""
    return "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn")


def lower_each(text: str) -> str:
    """Step 3: lower-case every character on its own, as `tokenizers` does. (str.lower() differs on
    one letter: it writes a word-final capital sigma as the final form "ς", this writes "σ".)"""
    return "".join(ch.lower() for ch in text)


def split_whitespace(text: str) -> list[str]:
    """The non-empty runs of non-whitespace characters."""
    words, current = [], ""
    for ch in text:
        if is_space(ch):
            if current:
                words.append(current)
            current = ""
        else:
            current += ch
    if current:
        words.append(current)
    return words


def split_punctuation(word: str) -> list[str]:
    """Step 4: "don't!" -> ["don", "'", "t", "!"]."""
    pieces, current = [], ""
    for ch in word:
        if is_punctuation(ch):
            if current:
                pieces.append(current)
            pieces.append(ch)
            current = ""
        else:
            current += ch
    if current:
        pieces.append(current)
    return pieces


def basic_tokenize(text: str, lowercase: bool = True) -> list[str]:
    """Steps 1-4: the words WordPiece will split."""
    text = clean_text(text)
    if lowercase:
        text = lower_each(strip_accents(text))
    words = []
    for word in split_whitespace(text):
        words.extend(split_punctuation(word))
    return words


def wordpiece(word: str, vocab: dict[str, int], unk: str = "[UNK]") -> list[str]:
    """Step 5: greedy longest-match-first pieces of one word, or [unk]."""
    if len(word) > MAX_WORD_CHARS:
        return [unk]
    pieces = []
    start = 0
    while start < len(word):
        # the longest piece starting here that the vocabulary holds
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else CONTINUATION + word[start:end]
            if piece in vocab:
                break
            end -= 1
        if end == start:
            return [unk]                                   # nothing matches: the word is unknown
        pieces.append(piece)
        start = end
    return pieces


class WordPieceTokenizer:
    """`WordPieceTokenizer.from_folder(path)` (or from vocab.txt), then encode / decode."""

    kind = "wordpiece"

    def __init__(self, tokens: list[str], lowercase: bool = True):
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise TypeError("tokens: expected a list of str (line n of vocab.txt is id n)")
        check_flag("lowercase", lowercase)
        self.tokens = tokens
        self.vocab = {}
        for i, t in enumerate(tokens):
            self.vocab.setdefault(t, i)                    # the first line wins a duplicate
        for special in ("[UNK]", "[CLS]", "[SEP]"):
            if special not in self.vocab:
                raise ValueError(f"vocab.txt: expected the token {special}, it is missing")
        self.lowercase = lowercase
        self.special_tokens = [t for t in SPECIAL_TOKENS if t in self.vocab]
        self.special_ids = {self.vocab[t] for t in self.special_tokens}

    @classmethod
    def from_file(cls, vocab_file: str, lowercase: bool = True) -> WordPieceTokenizer:
        if not os.path.isfile(vocab_file):
            raise FileNotFoundError(f"vocab.txt: expected a file at {vocab_file}, found none")
        return cls(read_utf8_lines(vocab_file), lowercase)

    @classmethod
    def from_folder(cls, folder: str, lowercase: bool = True) -> WordPieceTokenizer:
        """Read `vocab.txt` from a BERT folder (lowercase=False for a cased model)."""
        return cls.from_file(os.path.join(folder, "vocab.txt"), lowercase)

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def tokenize(self, text: str) -> list[str]:
        """The WordPiece tokens of `text` (no [CLS]/[SEP]). Text UTF-8 cannot write (lone surrogates,
        bytes that were not UTF-8 kept by surrogateescape) is refused: BERT's text cleaning drops
        such characters as control characters, so a word of them vanished from the input silently."""
        check_encodable(text)
        tokens = []
        for chunk, is_special in split_specials(text, self.special_tokens):
            if is_special:
                tokens.append(chunk)
                continue
            for word in basic_tokenize(chunk, self.lowercase):
                tokens.extend(wordpiece(word, self.vocab))
        return tokens

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """Token ids of `text`, by default as BERT reads it: [CLS] tokens [SEP]."""
        check_flag("add_special_tokens", add_special_tokens)
        ids = [self.vocab[t] for t in self.tokenize(text)]
        if add_special_tokens:
            ids = [self.vocab["[CLS]"]] + ids + [self.vocab["[SEP]"]]
        return ids

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        """Tokens joined by spaces, "##" pieces glued on, then DECODE_CLEANUP on each token."""
        check_flag("skip_special_tokens", skip_special_tokens)
        parts = []
        for i in token_ids(ids, len(self.tokens)):
            if skip_special_tokens and i in self.special_ids:
                continue
            token = self.tokens[i]
            if parts and token.startswith(CONTINUATION):
                token = token[len(CONTINUATION):]          # glued to the piece before
            elif parts:
                token = " " + token
            for old, new in DECODE_CLEANUP:
                token = token.replace(old, new)
            parts.append(token)
        return "".join(parts)

    def to_dict(self) -> dict:
        """A JSON-able description (to save inside a checkpoint); from_dict reads it back."""
        return {"type": self.kind, "tokens": self.tokens, "lowercase": self.lowercase}

    @classmethod
    def from_dict(cls, d: dict) -> WordPieceTokenizer:
        if not isinstance(d, dict) or d.get("type") != cls.kind or not isinstance(d.get("tokens"), list):
            raise ValueError(f"tokenizer dict: expected {{'type': 'wordpiece', 'tokens': [...]}}, "
                             f"got {str(d)[:80]!r}")
        lowercase = d.get("lowercase", True)
        if not all(isinstance(t, str) for t in d["tokens"]) or not isinstance(lowercase, bool):
            raise ValueError(f"tokenizer dict: expected {{'type': 'wordpiece', 'tokens': [str, ...], "
                             f"'lowercase': true or false}}, got {str(d)[:80]!r}")
        return cls(d["tokens"], lowercase)

    def __repr__(self) -> str:
        return f"WordPieceTokenizer(vocab_size={self.vocab_size}, lowercase={self.lowercase})"
