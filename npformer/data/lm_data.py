"""A synthetic language-modelling corpus whose result is checked exactly: addition lines.

Task "lm" (for `CausalLM`, GPT-style next-token prediction). Every line is one sum of two operands
a, b in [0, max_number), written in decimal without leading zeros:

    "12+7=19"      ids: BOS 1 2 + 7 = 1 9 EOS

Vocabulary: PAD=0, BOS=1, EOS=2, then the 12 symbols "0123456789+=" (ids 3..14).

Training (teacher forcing, every next token, like a GPT on a text corpus):

    ids      (B, T)  BOS + line            the model's input
    targets  (B, T)  line + EOS            ids shifted left by one; PAD after EOS (ignored by the loss)

The operands are uniform, so the loss on their digits cannot go below log(10) per digit; only the
answer ("19" + EOS) is determined by what came before. Evaluation therefore scores the answer:

    token accuracy      teacher-forced argmax on the answer tokens (digits of a+b, then EOS)
    sequence accuracy   exact match: greedy completion of the prompt BOS "12+7=" is "19" EOS

Held-out split: the (a, b) pairs are partitioned once by a seeded permutation; `heldout_fraction` of
them belong to evaluation only. Training lines never hold a held-out pair (b+a may be in training:
commutativity is part of what the model may learn), so exact-match accuracy on held-out prompts is
generalisation, not recall.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, NamedTuple, Sequence

import numpy as np

from npformer.data.vocab import BOS, EOS, NUM_SPECIAL, PAD, SPECIALS, Vocab
from npformer.guards.rules import check_examples_fit_memory, check_generator, check_texts, is_real

__all__ = ["LM_TASKS", "MAX_NUMBER", "CharVocab", "ArithmeticTask", "LMExamples", "LMBatch", "TextLMBatch",
           "collate_lm", "line_tokens"]

LM_TASKS = ("lm", "mlm")             # "mlm": npformer.data.mlm_data
# the held-out partition stores every (a, b) pair (a permutation of int64 and a bool table): 10**4
# operands make 10**8 pairs, 0.9 GB, built in seconds; 10**12 asked for 10**24 pairs
MAX_NUMBER = 10_000
ARITHMETIC_SYMBOLS = "0123456789+="
_DIGIT0 = NUM_SPECIAL                                   # id of "0"; digit d has id 3 + d
_PLUS, _EQUALS = NUM_SPECIAL + 10, NUM_SPECIAL + 11


class CharVocab(Vocab):
    """PAD, BOS, EOS then the given single-character symbols (encode/decode as in Vocab)."""

    def __init__(self, symbols: str):
        if not isinstance(symbols, str) or not symbols or len(set(symbols)) != len(symbols) \
                or any(c.isspace() for c in symbols):
            raise ValueError(f"symbols: expected distinct non-space characters, got {symbols!r}")
        self.num_symbols = len(symbols)
        self.single_char = True
        self.tokens = list(SPECIALS) + list(symbols)
        self.index = {t: i for i, t in enumerate(self.tokens)}

    def __repr__(self) -> str:
        return f"CharVocab({''.join(self.symbols)!r}, size={self.size})"


class LMExamples(NamedTuple):
    """Raw addition problems: operands a (N,), b (N,) int64."""
    a: np.ndarray
    b: np.ndarray

    def __len__(self) -> int:
        return int(self.a.shape[0])

    def collate(self) -> "LMBatch":
        return collate_lm(self)

    def take(self, idx: np.ndarray) -> "LMExamples":
        return LMExamples(self.a[idx], self.b[idx])


class LMBatch(NamedTuple):
    """ids (B, T) BOS + line; targets (B, T) line + EOS (PAD-padded); prompt_lengths (B,): tokens of
    BOS + "a+b=" (the greedy prompt); lengths (B,): non-PAD tokens of ids. All int64.

    `ignore_id` (a class attribute, not a field): the target id that is padding, left out of the
    loss and the counts; None where every target is a real token (TextLMBatch)."""
    ids: np.ndarray
    targets: np.ndarray
    prompt_lengths: np.ndarray
    lengths: np.ndarray

    ignore_id = PAD

    @property
    def loss_ignore_index(self) -> int:
        """The CrossEntropyLoss ignore_index for these targets (-100, no id, when none is padding)."""
        return -100 if self.ignore_id is None else self.ignore_id

    @property
    def target_mask(self) -> np.ndarray:
        """(B, T) bool: the targets the loss counts."""
        if self.ignore_id is None:
            return np.ones(self.targets.shape, dtype=bool)
        return self.targets != self.ignore_id

    @property
    def num_tokens(self) -> int:
        """Target tokens the loss counts (entries of targets other than ignore_id)."""
        if self.ignore_id is None:
            return int(self.targets.size)
        return int((self.targets != self.ignore_id).sum())

    @property
    def answer_mask(self) -> np.ndarray:
        """(B, T) bool: targets that are the answer (digits of a+b and EOS)."""
        pos = np.arange(self.targets.shape[1])[None, :]                # (1, T)
        return (pos >= self.prompt_lengths[:, None] - 1) & self.target_mask


class TextLMBatch(LMBatch):
    """An LMBatch of text windows: no padding, every target a token of the text (id 0 is a real
    token in a pretrained vocabulary: GPT-2's "!")."""
    __slots__ = ()
    ignore_id = None


def _num_digits(n: np.ndarray) -> np.ndarray:
    """(N,) decimal digits of non-negative ints (0 has one digit)."""
    d = np.ones(n.shape, dtype=np.int64)                                # (N,)
    m = n // 10
    while (m > 0).any():
        d += m > 0
        m = m // 10
    return d


def _digit_tokens(n: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(N, width) digit ids of n, most significant first, left-aligned, PAD after; and (N,) lengths."""
    nd = _num_digits(n)                                                 # (N,)
    j = np.arange(width)[None, :]                                       # (1, W)
    power = np.maximum(nd[:, None] - 1 - j, 0)                          # (N, W) 10^power per column
    digit = (n[:, None] // 10 ** power) % 10                            # (N, W)
    return np.where(j < nd[:, None], _DIGIT0 + digit, PAD), nd


def _concat(segments: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Join left-aligned segments [(tokens (N, W_i), lengths (N,))] row by row: (N, sum W_i), (N,)."""
    n = segments[0][0].shape[0]
    width = sum(t.shape[1] for t, _ in segments)
    out = np.full((n, width), PAD, dtype=np.int64)                      # (N, W)
    rows = np.arange(n)[:, None]                                        # (N, 1)
    offset = np.zeros(n, dtype=np.int64)                                # (N,) where the next starts
    for tok, ln in segments:                                            # a handful of segments
        j = np.arange(tok.shape[1])[None, :]                            # (1, W_i)
        keep = j < ln[:, None]                                          # (N, W_i)
        cols = np.where(keep, offset[:, None] + j, width - 1)           # (N, W_i)
        r = np.broadcast_to(rows, cols.shape)
        out[r[keep], cols[keep]] = tok[keep]
        offset = offset + ln
    return out, offset


def _const(n: int, token: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full((n, 1), token, dtype=np.int64), np.ones(n, dtype=np.int64)


def collate_lm(ex: LMExamples) -> LMBatch:
    """Rows BOS a + b = c EOS of raw problems, split into ids / targets (vectorised); data.collate
    calls this for LMExamples."""
    if len(ex) == 0:
        raise ValueError("examples: expected at least one example, got 0")
    n = len(ex)
    w = int(_num_digits(np.maximum(ex.a, ex.b)).max())                  # widest operand
    s = ex.a + ex.b                                                     # (N,) answers
    prompt, plen = _concat([_const(n, BOS), _digit_tokens(ex.a, w), _const(n, _PLUS),
                            _digit_tokens(ex.b, w), _const(n, _EQUALS)])  # (N, P), (N,)
    row, rlen = _concat([(prompt, plen), _digit_tokens(s, int(_num_digits(s).max())),
                         _const(n, EOS)])                               # (N, W), (N,)
    row = row[:, : int(rlen.max())]                                     # trim to the longest row
    ids = np.where(np.arange(row.shape[1])[None, :] < (rlen - 1)[:, None], row, PAD)[:, :-1]
    targets = row[:, 1:]                                                # (N, W - 1)
    return LMBatch(ids.astype(np.int64), targets.astype(np.int64), plen, rlen - 1)


def _check_int(name: str, v, lo: int, hi: int | None = None) -> int:
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < lo or \
            (hi is not None and v > hi):
        what = f"an int >= {lo}" if hi is None else f"an int in {lo}..{hi}"
        raise ValueError(f"{name}: expected {what}, got {v!r}")
    return int(v)


def line_tokens(max_number: int) -> int:
    """Tokens of the longest row BOS a + b = c EOS for operands below `max_number`."""
    w = len(str(max_number - 1))
    return 1 + w + 1 + w + 1 + len(str(2 * (max_number - 1))) + 1


@dataclass(frozen=True)
class ArithmeticTask:
    """Addition lines "a+b=c" with a, b in [0, max_number) for a CausalLM (see the module docstring).

    max_number        operands are 0 .. max_number - 1
    seed              fixes the held-out partition of the (a, b) pairs
    heldout_fraction  share of the pairs reserved for evaluation
    """

    name: str = "lm"
    max_number: int = 100
    seed: int = 0
    heldout_fraction: float = 0.1

    def __post_init__(self) -> None:
        if self.name not in LM_TASKS:
            raise ValueError(f"task: expected one of {LM_TASKS}, got {self.name!r}")
        object.__setattr__(self, "max_number", _check_int("max_number", self.max_number, 2,
                                                          MAX_NUMBER))
        object.__setattr__(self, "seed", _check_int("seed", self.seed, 0))
        f = self.heldout_fraction
        if not is_real(f) or not 0.0 < f < 1.0:
            raise ValueError(f"heldout_fraction: expected a float in (0, 1), got {f!r}")
        f = float(f)
        object.__setattr__(self, "heldout_fraction", f)
        pairs = self.max_number ** 2
        k = int(round(f * pairs))
        if not 1 <= k < pairs:
            raise ValueError(f"heldout_fraction: {f} of the {pairs} pairs leaves one side empty")
        order = np.random.default_rng([self.seed, 0xA0D]).permutation(pairs)   # (pairs,)
        held = np.zeros(pairs, dtype=bool)
        held[order[:k]] = True
        object.__setattr__(self, "_heldout", held.reshape(self.max_number, self.max_number))
        object.__setattr__(self, "_heldout_order", order[:k])

    # -- description (the same surface as data.Task where the CLI and the loops read it) ----------
    is_lm = True
    is_classification = False
    memorise = False
    num_classes = 2
    metric_names = ("answer-token accuracy", "exact-sequence accuracy (greedy completion)")

    @property
    def vocab(self) -> CharVocab:
        return CharVocab(ARITHMETIC_SYMBOLS)

    @property
    def vocab_size(self) -> int:
        return NUM_SPECIAL + len(ARITHMETIC_SYMBOLS)

    @property
    def num_symbols(self) -> int:
        return len(ARITHMETIC_SYMBOLS)

    @property
    def answer_digits(self) -> int:
        return len(str(2 * (self.max_number - 1)))

    @property
    def max_len(self) -> int:
        """Longest row (BOS + line + EOS) in tokens."""
        return line_tokens(self.max_number)

    @property
    def max_src_tokens(self) -> int:
        return self.max_len

    @property
    def max_tgt_tokens(self) -> int:
        return self.max_len

    def describe(self) -> str:
        return (f"task=lm (addition lines a+b=c, a, b in 0..{self.max_number - 1}, e.g. 12+7=19) "
                f"vocab_size={self.vocab_size}")

    def metadata(self) -> dict:
        """What a checkpoint stores to rebuild the task (make_any_task(**metadata))."""
        return dict(name=self.name, max_number=self.max_number, seed=self.seed,
                    heldout_fraction=self.heldout_fraction)

    # -- examples ----------------------------------------------------------------------------------
    def is_heldout(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """(N,) bool: which (a, b) pairs belong to the evaluation split."""
        return self._heldout[np.asarray(a), np.asarray(b)]

    def sample(self, rng: np.random.Generator, n: int, split: str = "train") -> LMExamples:
        """`n` random problems from one side of the partition (rejection, vectorised)."""
        n = _check_int("n", n, 1)
        check_generator(rng)
        if split not in ("train", "heldout"):
            raise ValueError(f"split: expected 'train' or 'heldout', got {split!r}")
        check_examples_fit_memory("n", n, 16, "its two operands a and b (int64)")
        want = split == "heldout"
        a = rng.integers(0, self.max_number, size=n)                    # (n,)
        b = rng.integers(0, self.max_number, size=n)                    # (n,)
        for _ in range(1000):
            bad = self.is_heldout(a, b) != want                         # (n,)
            if not bad.any():
                return LMExamples(a.astype(np.int64), b.astype(np.int64))
            a[bad] = rng.integers(0, self.max_number, size=int(bad.sum()))
            b[bad] = rng.integers(0, self.max_number, size=int(bad.sum()))
        raise ValueError(f"task lm: could not draw {split} pairs")      # pragma: no cover

    def heldout(self, n: int, seed: int | None = None) -> LMExamples:
        """A fixed evaluation set: the first `n` held-out pairs in a seeded order (all of them when
        n is larger than the held-out side)."""
        n = _check_int("n", n, 1)
        order = self._heldout_order
        if seed is not None:
            order = np.random.default_rng([seed, 0xE7A1]).permutation(order)
        pick = order[:n]                                                # (n',) flat pair indices
        return LMExamples((pick // self.max_number).astype(np.int64),
                          (pick % self.max_number).astype(np.int64))

    # -- batches -----------------------------------------------------------------------------------
    def collate(self, ex: LMExamples) -> LMBatch:
        """Rows BOS a + b = c EOS, split into ids / targets (see collate_lm)."""
        return collate_lm(ex)

    def prompts(self, ex: LMExamples) -> tuple[np.ndarray, np.ndarray]:
        """Greedy prompts BOS "a+b=" right-padded (N, P) and the expected answers + EOS (N, A)."""
        batch = self.collate(ex)
        P = int(batch.prompt_lengths.max())
        pos = np.arange(P)[None, :]                                     # (1, P)
        prompts = np.where(pos < batch.prompt_lengths[:, None], batch.ids[:, :P], PAD)  # (N, P)
        answer, _ = _concat([_digit_tokens(ex.a + ex.b, self.answer_digits), _const(len(ex), EOS)])
        return prompts.astype(np.int64), answer

    def batch_iterator(self, batch_size: int, seed: int = 0,
                       split: str = "train") -> Iterator[LMBatch]:
        """An endless stream of training batches; the same seed gives the same stream."""
        batch_size = _check_int("batch_size", batch_size, 1)
        rng = np.random.default_rng([seed, 0xBA7C])
        while True:
            yield self.collate(self.sample(rng, batch_size, split=split))

    def iterate(self, ex: LMExamples, batch_size: int) -> Iterator[tuple[LMExamples, LMBatch]]:
        """(examples, batch) over a fixed set, in order (evaluation)."""
        batch_size = _check_int("batch_size", batch_size, 1)
        for start in range(0, len(ex), batch_size):
            part = ex.take(np.arange(start, min(start + batch_size, len(ex))))
            yield part, self.collate(part)

    def examples_from_text(self, texts: Sequence[str]) -> LMExamples:
        """Problems from prompts such as "12+7=" (or "12+7"); a clear error for anything else."""
        texts = check_texts(texts)
        a, b = [], []
        for t in texts:
            m = re.fullmatch(r"\s*(\d+)\s*\+\s*(\d+)\s*=?\s*", t) if isinstance(t, str) else None
            if m is None:
                raise ValueError(f"input {t!r}: expected a prompt like '12+7=' (two numbers "
                                 f"joined by +)")
            x, y = int(m.group(1)), int(m.group(2))
            if not (x < self.max_number and y < self.max_number):
                raise ValueError(f"input {t!r}: operands must be in 0..{self.max_number - 1} "
                                 f"(the task's --max-number {self.max_number})")
            a.append(x)
            b.append(y)
        return LMExamples(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
