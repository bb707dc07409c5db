"""A byte-level BPE (byte-pair encoding) tokenizer, trained on your corpus by this file.

Token ids:
    0 PAD, 1 BOS, 2 EOS                  special tokens (never produced by encode, skipped by decode)
    3 .. 258                             the 256 byte values: byte b has id 3 + b
    259, 260, ...                        one per merge, in the order training learned them

Any text is first split into pieces by GPT-2's pattern (pretokenize.py: words with their leading
space, numbers, punctuation runs, whitespace), and a piece longer than MAX_PIECE characters into
runs of MAX_PIECE (bpe_pieces); a merge never crosses two pieces. Without that cap, a text with one
huge piece (a 5 MB line of letters: a minified file, a base64 blob) was one word that every merge
rewrote whole, in training and again in encoding: minutes for a few merges. Every piece starts
as its UTF-8 bytes, so any text encodes, with no unknown token, and decodes back exactly.

Training (learn_merges), on the unique pieces of the corpus with their counts:
    1. count every adjacent pair of ids in every piece, times the piece's count
    2. take the pair with the highest count; a tie goes to the smallest pair (a, b) compared as
       numbers, so the result never depends on dictionary order
    3. give it the next id and replace it in every piece that holds it, left to right
    4. update the pair counts of just those pieces (subtract their old pairs, add their new ones)
    5. repeat until the vocabulary is full or no pair occurs `min_count` times
A heap keeps the counts ordered; an entry whose count has changed since it was pushed is skipped.

Encoding a piece: merge, among its adjacent pairs, the one with the lowest rank (the earliest
learned), everywhere in the piece, and repeat while any pair has a rank. This gives what training
would have made of it, because a merge's new pairs always rank after that merge.
"""
from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from itertools import pairwise

from .ids import token_ids
from .pretokenize import gpt2_pieces
from .text_input import as_int, check_encodable, check_flag

__all__ = [
    "BOS",
    "EOS",
    "NUM_SPECIAL",
    "PAD",
    "BPETokenizer",
    "count_pairs",
    "learn_merges",
    "merge_pair",
]

PAD, BOS, EOS = 0, 1, 2
NUM_SPECIAL = 3
BYTE0 = NUM_SPECIAL                  # id of byte 0
FIRST_MERGE = BYTE0 + 256            # id of the first merged token
PAIR_NOT_MERGED = float("inf")       # rank of a pair that is not a merge
MAX_PIECE = 64                       # characters: no token is longer


def bpe_pieces(text: str):
    """GPT-2's pieces of `text`, each longer than MAX_PIECE characters cut into runs of MAX_PIECE
    (the last one shorter); joined, they give the text back."""
    for piece in gpt2_pieces(text):
        if len(piece) <= MAX_PIECE:
            yield piece
        else:
            yield from (piece[i:i + MAX_PIECE] for i in range(0, len(piece), MAX_PIECE))


def count_pairs(ids: list[int], weight: int, counts: Counter) -> None:
    """Add `weight` to counts[(a, b)] for every adjacent pair (a, b) in ids."""
    for pair in pairwise(ids):
        counts[pair] += weight


def merge_pair(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """ids with every occurrence of `pair` replaced by new_id, scanning left to right."""
    out = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def piece_bytes(piece: str) -> list[int]:
    """The byte ids of one piece of text (its UTF-8 bytes, shifted past the special tokens)."""
    return [BYTE0 + b for b in piece.encode("utf-8")]


def learn_merges(piece_counts: dict[str, int], num_merges: int, min_count: int = 2
                 ) -> tuple[list[tuple[int, int]], list[int]]:
    """The merges learned from pieces and their counts, and the count each merge had when chosen.

    Merge k (0-based) makes token id FIRST_MERGE + k from its pair of ids.
    """
    words = [piece_bytes(p) for p in piece_counts]          # each unique piece as ids
    weights = list(piece_counts.values())                    # how often each piece occurs
    # step 1: pair counts, and which words hold each pair (a superset: entries go stale)
    counts: Counter = Counter()
    where: dict[tuple[int, int], set[int]] = defaultdict(set)
    for w, ids in enumerate(words):
        count_pairs(ids, weights[w], counts)
        for pair in pairwise(ids):
            where[pair].add(w)
    heap = [(-c, pair) for pair, c in counts.items()]
    heapq.heapify(heap)

    merges, merge_counts = [], []
    while len(merges) < num_merges and heap:
        # step 2: the highest count, smallest pair on a tie; skip entries that are out of date
        neg, pair = heapq.heappop(heap)
        if counts.get(pair, 0) != -neg:
            continue
        if -neg < min_count:
            break
        new_id = FIRST_MERGE + len(merges)
        merges.append(pair)
        merge_counts.append(-neg)
        # steps 3-4: rewrite the words that hold the pair, and move their pair counts
        changed: Counter = Counter()
        for w in where.pop(pair):
            merged = merge_pair(words[w], pair, new_id)
            if len(merged) == len(words[w]):
                continue                                    # a stale entry: pair no longer there
            count_pairs(words[w], -weights[w], changed)     # the old pairs go
            count_pairs(merged, weights[w], changed)        # the new pairs come
            for new_pair in pairwise(merged):
                where[new_pair].add(w)
            words[w] = merged
        for p, delta in changed.items():
            if delta == 0:
                continue
            counts[p] += delta
            if counts[p] <= 0:
                del counts[p]
            else:
                heapq.heappush(heap, (-counts[p], p))
        counts.pop(pair, None)
    return merges, merge_counts


def checked_merges(merges, name: str) -> list[tuple[int, int]]:
    """`merges` as a list of (a, b) Python ints, merge k joining ids that exist before it (below
    FIRST_MERGE + k); anything else is an error naming `name` and the merge (a pair of three, or
    an id no token has yet, failed inside the constructor)."""
    if isinstance(merges, (str, bytes, dict)) or not hasattr(merges, "__iter__"):
        raise TypeError(f"{name}: expected a list of (a, b) id pairs, got {type(merges).__name__}")
    out = []
    for k, m in enumerate(merges):
        pair = None if isinstance(m, (str, bytes, dict)) or not hasattr(m, "__len__") or len(m) != 2 \
            else tuple(as_int(x) for x in m)
        if pair is None or not all(x is not None and 0 <= x < FIRST_MERGE + k for x in pair):
            raise ValueError(f"{name}: merge {k}: expected a pair of ids below {FIRST_MERGE + k}, got "
                             f"{m!r}")
        out.append(pair)
    return out


class BPETokenizer:
    """Byte-level BPE: `BPETokenizer.train(text, vocab_size)`, then encode / decode."""

    kind = "bpe"

    def __init__(self, merges: list[tuple[int, int]]):
        self.merges = checked_merges(merges, "merges")
        self.ranks = {pair: r for r, pair in enumerate(self.merges)}
        # the bytes each token stands for: specials none, bytes themselves, merges their two parts
        self.token_bytes = [b""] * NUM_SPECIAL + [bytes([b]) for b in range(256)]
        for a, b in self.merges:
            self.token_bytes.append(self.token_bytes[a] + self.token_bytes[b])
        self.cache: dict[str, list[int]] = {}               # piece -> ids, filled by encode

    @classmethod
    def train(cls, text: str, vocab_size: int, min_count: int = 2) -> BPETokenizer:
        """Learn merges on `text` until the vocabulary has `vocab_size` tokens (fewer when no pair
        occurs `min_count` times any more)."""
        if not isinstance(text, str):
            raise TypeError(f"text: expected str, got {type(text).__name__}")
        if as_int(vocab_size) is None or vocab_size < FIRST_MERGE:
            raise ValueError(f"vocab_size: expected an int >= {FIRST_MERGE} (3 special tokens + 256 "
                             f"bytes), got {vocab_size!r}")
        if as_int(min_count) is None or min_count < 1:
            raise ValueError(f"min_count: expected an int >= 1, got {min_count!r}")
        vocab_size, min_count = as_int(vocab_size), as_int(min_count)
        piece_counts = Counter(bpe_pieces(text))
        merges, _ = learn_merges(piece_counts, vocab_size - FIRST_MERGE, min_count)
        return cls(merges)

    @property
    def vocab_size(self) -> int:
        return len(self.token_bytes)

    def encode_piece(self, piece: str) -> list[int]:
        """The ids of one pre-tokenized piece: merge the lowest-ranked pair until none is left."""
        ids = piece_bytes(piece)
        while len(ids) > 1:
            pair = min(pairwise(ids), key=lambda p: self.ranks.get(p, PAIR_NOT_MERGED))
            if pair not in self.ranks:
                break
            ids = merge_pair(ids, pair, FIRST_MERGE + self.ranks[pair])
        return ids

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Token ids of `text`, optionally with BOS first and EOS last."""
        check_encodable(text)
        check_flag("add_bos", add_bos)
        check_flag("add_eos", add_eos)
        ids = [BOS] if add_bos else []
        for piece in bpe_pieces(text):
            if piece not in self.cache:
                self.cache[piece] = self.encode_piece(piece)
            ids.extend(self.cache[piece])
        if add_eos:
            ids.append(EOS)
        return ids

    def decode(self, ids) -> str:
        """Text of token ids; special tokens are skipped. Bytes that are not valid UTF-8 (ids cut
        inside a character) become U+FFFD, never an error."""
        data = bytearray()
        for i in token_ids(ids, self.vocab_size):
            data += self.token_bytes[i]
        return data.decode("utf-8", errors="replace")

    def to_dict(self) -> dict:
        """A JSON-able description (to save inside a checkpoint); from_dict reads it back."""
        return {"type": self.kind, "merges": [list(m) for m in self.merges]}

    @classmethod
    def from_dict(cls, d: dict) -> BPETokenizer:
        if not isinstance(d, dict) or d.get("type") != cls.kind or not isinstance(d.get("merges"), list):
            raise ValueError(f"tokenizer dict: expected {{'type': 'bpe', 'merges': [[a, b], ...]}}, "
                             f"got {str(d)[:80]!r}")
        return cls(checked_merges(d["merges"], "tokenizer dict"))

    def __repr__(self) -> str:
        return f"BPETokenizer(vocab_size={self.vocab_size})"
