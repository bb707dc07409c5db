"""GPT-2's tokenizer: byte-level BPE read from a folder's `vocab.json` and `merges.txt`.

    vocab.json    {"token": id, ...}     tokens written with the byte table below
    merges.txt    "#version: 0.2" (optional), then one merge per line, "first second", by rank

Encoding text:
    1. split it into pieces with GPT-2's pattern (pretokenize.py); merges never cross pieces
    2. write each piece's UTF-8 bytes as printable characters with the byte table
    3. merge the adjacent pair with the lowest rank (the earliest line of merges.txt), everywhere
       in the piece; repeat while any adjacent pair is a merge
    4. look each resulting token up in vocab.json
Decoding: the tokens' strings, joined, read back through the byte table, as UTF-8.

The byte table (GPT-2's bytes_to_unicode): the 188 bytes that are printable Latin-1 characters
("!".."~", "\xa1".."\xac", "\xae".."\xff") stand for themselves; the other 68 (controls, space,
DEL, NBSP, soft hyphen) take the characters U+0100, U+0101, ... in byte order. So a space, byte
32, is written "\u0120" ("Ġ"), and "Ġhello" is the token for " hello".

Special tokens (by default "<|endoftext|>", when vocab.json holds it) are found in the text first,
as transformers does: "a<|endoftext|>b" is "a", the special token's id, "b". decode writes them
out, or skips them with skip_special_tokens=True.
"""
from __future__ import annotations

import json
import os
from itertools import pairwise

from .files import read_utf8, read_utf8_lines
from .ids import token_ids
from .pretokenize import gpt2_pieces, split_specials
from .text_input import as_int, check_encodable, check_flag

__all__ = ["GPT2Tokenizer", "bytes_to_unicode"]


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table from each byte value to the printable character that stands for it."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1))
                 + list(range(ord("\xae"), ord("\xff") + 1)))
    table = {b: chr(b) for b in printable}
    next_char = 256
    for b in range(256):
        if b not in table:
            table[b] = chr(next_char)
            next_char += 1
    return table


def merge_pair(tokens: list[str], pair: tuple[str, str]) -> list[str]:
    """tokens with every occurrence of `pair` joined into one token, scanning left to right."""
    out = []
    i = 0
    while i < len(tokens):
        if i + 1 < len(tokens) and (tokens[i], tokens[i + 1]) == pair:
            out.append(tokens[i] + tokens[i + 1])
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out


def read_vocab(path: str) -> dict[str, int]:
    if not os.path.isfile(path):
        raise FileNotFoundError(f"vocab.json: expected a file at {path}, found none")
    text = read_utf8(path)
    try:
        vocab = json.loads(text)
    except ValueError as e:             # not JSON, or a number of more than 4300 digits
        raise ValueError(f"{path}: expected a JSON object of token -> id, got invalid JSON "
                         f"({e})") from None
    except RecursionError:
        raise ValueError(f"{path}: expected a JSON object of token -> id, got JSON nested too "
                         f"deeply to read") from None
    if not isinstance(vocab, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in vocab.items()):
        raise ValueError(f"{path}: expected a JSON object of token string -> non-negative int id")
    return vocab


def read_merges(path: str) -> list[tuple[str, str]]:
    if not os.path.isfile(path):
        raise FileNotFoundError(f"merges.txt: expected a file at {path}, found none")
    merges = []
    for n, line in enumerate(read_utf8_lines(path), start=1):
        if (n == 1 and line.startswith("#version")) or not line:
            continue                                        # the header line, blank lines
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise ValueError(f"{path}, line {n}: expected two tokens separated by one space, "
                             f"got {line[:80]!r}")
        merges.append((parts[0], parts[1]))
    return merges


class GPT2Tokenizer:
    """`GPT2Tokenizer.from_folder(path)` (or from the two files), then encode / decode."""

    kind = "gpt2_bpe"
    CACHE_SIZE = 1 << 16                                    # pieces whose ids are kept (bounded)

    def __init__(self, vocab: dict[str, int], merges: list[tuple[str, str]],
                 special_tokens=("<|endoftext|>",)):
        self.vocab = dict(vocab)
        self.special_tokens = [t for t in special_tokens if t in self.vocab]
        self.merges = [tuple(m) for m in merges]
        self.ranks = {}                                     # merge -> rank (its line, from 0)
        for r, pair in enumerate(self.merges):
            self.ranks.setdefault(pair, r)                  # the first line wins a duplicate
        for pair in self.merges:
            if len(pair) != 2 or not all(isinstance(t, str) and t for t in pair):
                raise ValueError(f"merges: expected pairs of two non-empty token strings, got {pair!r}")
            for token in (pair[0], pair[1], pair[0] + pair[1]):
                if token not in self.vocab:
                    raise ValueError(f"merges: expected every token of merge {pair} in the vocab, "
                                     f"{token!r} is not")
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        self.byte_encoder = bytes_to_unicode()
        self.byte_decoder = {c: b for b, c in self.byte_encoder.items()}
        self.cache: dict[str, list[int]] = {}

    @classmethod
    def from_files(cls, vocab_file: str, merges_file: str) -> GPT2Tokenizer:
        vocab, merges = read_vocab(vocab_file), read_merges(merges_file)
        try:
            return cls(vocab, merges)
        except ValueError as e:         # a merge of tokens the vocabulary lacks: name both files
            raise ValueError(f"{merges_file} (with {vocab_file}): {e}") from None

    @classmethod
    def from_folder(cls, folder: str) -> GPT2Tokenizer:
        """Read `vocab.json` and `merges.txt` from a GPT-2 folder."""
        return cls.from_files(os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt"))

    @property
    def vocab_size(self) -> int:
        return max(self.id_to_token) + 1 if self.id_to_token else 0

    def bpe(self, piece: str) -> list[str]:
        """The tokens of one piece: its bytes as table characters, merged by rank."""
        tokens = [self.byte_encoder[b] for b in piece.encode("utf-8")]
        while len(tokens) > 1:
            pair = min(pairwise(tokens), key=lambda p: self.ranks.get(p, float("inf")))
            if pair not in self.ranks:
                break
            tokens = merge_pair(tokens, pair)
        return tokens

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`."""
        check_encodable(text)
        ids = []
        for chunk, is_special in split_specials(text, self.special_tokens):
            if is_special:
                ids.append(self.vocab[chunk])
            else:
                ids.extend(self.encode_ordinary(chunk))
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of text that holds no special token (steps 1-4)."""
        ids = []
        for piece in gpt2_pieces(text):
            if piece not in self.cache:
                tokens = self.bpe(piece)
                missing = [t for t in tokens if t not in self.vocab]
                if missing:
                    raise ValueError(f"vocab: expected token {missing[0]!r} (from {piece!r}) in "
                                     f"vocab.json; every single byte's token must be there")
                if len(self.cache) >= self.CACHE_SIZE:     # bounded: a long stream of new pieces
                    self.cache.clear()                     # never grows it without limit
                self.cache[piece] = [self.vocab[t] for t in tokens]
            ids.extend(self.cache[piece])
        return ids

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        """Text of token ids (bytes that are not valid UTF-8 become U+FFFD, as GPT-2 does)."""
        check_flag("skip_special_tokens", skip_special_tokens)
        data = bytearray()
        for i in token_ids(ids):
            token = self.id_to_token.get(i)
            if token is None:
                raise ValueError(f"ids: expected ids present in vocab.json, got {i}")
            if skip_special_tokens and token in self.special_tokens:
                continue
            for ch in token:
                if ch in self.byte_decoder:
                    data.append(self.byte_decoder[ch])
                else:                                       # an added token's plain character
                    data.extend(ch.encode("utf-8"))
        return data.decode("utf-8", errors="replace")

    def to_dict(self) -> dict:
        """A JSON-able description (to save inside a checkpoint); from_dict reads it back."""
        return {"type": self.kind, "vocab": self.vocab, "merges": [list(m) for m in self.merges],
                "special_tokens": self.special_tokens}

    @classmethod
    def from_dict(cls, d: dict) -> GPT2Tokenizer:
        if (not isinstance(d, dict) or d.get("type") != cls.kind or not isinstance(d.get("vocab"), dict)
                or not isinstance(d.get("merges"), list)):
            raise ValueError(f"tokenizer dict: expected {{'type': 'gpt2_bpe', 'vocab': {{...}}, "
                             f"'merges': [[a, b], ...]}}, got {str(d)[:80]!r}")
        vocab, merges, specials = d["vocab"], d["merges"], d.get("special_tokens", ())
        if not all(isinstance(k, str) and as_int(v) is not None and v >= 0 for k, v in vocab.items()):
            raise ValueError("tokenizer dict: vocab: expected token string -> non-negative int id")
        if not all(isinstance(m, (list, tuple)) for m in merges):
            raise ValueError("tokenizer dict: merges: expected pairs of token strings")
        if not isinstance(specials, (list, tuple)) or not all(isinstance(t, str) for t in specials):
            raise ValueError(f"tokenizer dict: special_tokens: expected a list of strings, got "
                             f"{str(specials)[:80]!r}")
        return cls(vocab, [tuple(m) for m in merges], specials)

    def __repr__(self) -> str:
        return f"GPT2Tokenizer(vocab_size={self.vocab_size}, merges={len(self.merges)})"
