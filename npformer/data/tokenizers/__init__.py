"""Tokenizers: text to token ids and back, in plain Python (stdlib only).

    CharTokenizer       one token per character of a corpus                       char.py
    BPETokenizer        byte-level BPE trained on a corpus by this package        bpe.py
    GPT2Tokenizer       GPT-2's byte-level BPE from vocab.json + merges.txt       gpt2_bpe.py
    WordPieceTokenizer  BERT's WordPiece from vocab.txt                           wordpiece.py

Each has encode(text) -> list of ids, decode(ids) -> text, vocab_size, and to_dict() -> a JSON-able
dict (saved inside a checkpoint, so a model always decodes with its own tokenizer);
tokenizer_from_dict(d) builds the tokenizer back from it.

Ids of the two that read pretrained files equal transformers' GPT2TokenizerFast and BertTokenizerFast
(tests/npformer/data/tokenizers). Character classes come from Python's `unicodedata`, so they can differ
from `tokenizers`' own tables only on characters Unicode versions disagree on: GPT-2's pattern
there knows a newer Unicode (code points unassigned in Python's database), BERT's normalizer an
older one (punctuation, format and combining characters assigned or recategorised since 8.0).
"""
from __future__ import annotations

from .bpe import BPETokenizer
from .char import CharTokenizer
from .gpt2_bpe import GPT2Tokenizer
from .pretokenize import gpt2_pieces
from .wordpiece import WordPieceTokenizer

__all__ = [
    "TOKENIZERS",
    "BPETokenizer",
    "CharTokenizer",
    "GPT2Tokenizer",
    "WordPieceTokenizer",
    "gpt2_pieces",
    "tokenizer_from_dict",
]

TOKENIZERS = {cls.kind: cls for cls in (CharTokenizer, BPETokenizer, GPT2Tokenizer, WordPieceTokenizer)}


def tokenizer_from_dict(d: dict):
    """The tokenizer a `to_dict()` described (its "type" picks the class)."""
    kind = d.get("type") if isinstance(d, dict) else None
    if not isinstance(kind, str) or kind not in TOKENIZERS:          # a list is unhashable
        raise ValueError(f"tokenizer dict: expected a dict whose 'type' is one of {sorted(TOKENIZERS)}, "
                         f"got {str(d)[:80]!r}")
    return TOKENIZERS[kind].from_dict(d)
