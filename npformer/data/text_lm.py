"""A language-model task on your own text: windows of a token array, for a GPT-style CausalLM.

    task = build_text_task(["book.txt"], tokenizer="char", context=128)     (npformer.data.text_files
                                                                            reads the files)
The corpus is split once, contiguously, by characters: the first 1 - val_fraction of the text is for
training and the rest for validation (the cut moved to the next line start when one is near, so
validation begins with a whole line). Each side is encoded once into an int32 token array; training
batches are windows of context + 1 tokens at uniformly drawn offsets into the training array:

    ids      (B, C)   tokens[s : s + C]            what the model reads
    targets  (B, C)   tokens[s + 1 : s + C + 1]    every next token (no padding, no BOS)

so memory is the two token arrays plus one batch, whatever the number of steps. Validation is every
non-overlapping window of the validation array (offsets 0, C, 2C, ...), whose targets cover it once.

Tokenizers (npformer.data.tokenizers): "char", one token per character of the whole corpus (so validation has
no unknown character); "bpe", a byte-level BPE of `vocab_size` tokens trained on the training side
only. The tokenizer's to_dict() goes into the task's metadata, so a checkpoint always decodes with its
own tokenizer, also without the corpus (npformer generate); the corpus itself is read again only to
train or evaluate (resume checks that its SHA-256 is unchanged).
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np

from npformer.data.lm_data import LMBatch, TextLMBatch
from npformer.data.text_files import Corpus, TextFileError, read_corpus, read_saved
from npformer.data.tokenizers import BPETokenizer, CharTokenizer, tokenizer_from_dict
from npformer.data.tokenizers.bpe import BYTE0 as BPE_BYTE0
from npformer.data.tokenizers.char import NUM_SPECIAL as CHAR_FIRST
from npformer.data.tokenizers.char import UNK as CHAR_UNK
from npformer.guards.rules import check_examples_fit_memory, check_generator, check_texts, is_int, is_real

__all__ = ["TEXT_TOKENIZERS", "TextVocab", "TextWindows", "TextLMTask", "build_text_task",
           "encode_ids", "split_text", "DEFAULT_CONTEXT", "DEFAULT_BPE_VOCAB", "DEFAULT_VAL_FRACTION"]

TEXT_TOKENIZERS = ("char", "bpe")
DEFAULT_CONTEXT = 128
DEFAULT_BPE_VOCAB = 512
DEFAULT_VAL_FRACTION = 0.1
_SPECIAL_NAMES = {0: "<pad>", 1: "<bos>", 2: "<eos>"}


class TextVocab:
    """The surface the commands and plots read (encode, decode, tokens, size) over a tokenizer."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.size = tokenizer.vocab_size

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text)

    def decode(self, ids) -> str:
        return self.tokenizer.decode([int(i) for i in np.asarray(ids).reshape(-1)])

    @property
    def tokens(self) -> list[str]:
        """A label per id (plots): the special's name or the token's text."""
        return [_SPECIAL_NAMES.get(i) or self.tokenizer.decode([i]) for i in range(self.size)]

    def __len__(self) -> int:
        return self.size


class TextWindows(NamedTuple):
    """Windows of `context` + 1 tokens of `source` (an int32 array), starting at `starts` (N,)."""
    source: np.ndarray
    starts: np.ndarray
    context: int

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    def take(self, idx: np.ndarray) -> TextWindows:
        return TextWindows(self.source, self.starts[idx], self.context)

    def collate(self) -> LMBatch:
        """ids (N, C) and targets (N, C): the window and the window shifted left by one."""
        if len(self) == 0:
            raise ValueError("examples: expected at least one window, got 0")
        cols = self.starts[:, None] + np.arange(self.context + 1)[None, :]   # (N, C + 1)
        win = self.source[cols].astype(np.int64)                             # (N, C + 1)
        n = len(self)
        return TextLMBatch(win[:, :-1], win[:, 1:], np.zeros(n, dtype=np.int64),
                           np.full(n, self.context, dtype=np.int64))


def encode_ids(tokenizer, text: str) -> np.ndarray:
    """tokenizer.encode(text) as an int32 array. The character tokenizer's ids come from one table
    lookup over the text's code points (UTF-32), equal to its encode's and without a Python list of
    one int per character (a 38 MB corpus: about a third of the memory, an eighth of the time)."""
    if isinstance(tokenizer, CharTokenizer) and text:
        try:
            codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)       # (T,)
        except UnicodeEncodeError:                      # a lone surrogate: the plain encode below
            codes = None
        if codes is not None:
            known = np.fromiter(map(ord, tokenizer.chars), dtype=np.int64, count=len(tokenizer.chars))
            top = int(max(codes.max(), known.max(initial=0)))
            table = np.full(top + 1, CHAR_UNK, dtype=np.int32)                     # code point -> id
            table[known] = CHAR_FIRST + np.arange(len(known), dtype=np.int32)
            return table[codes]
    return np.asarray(tokenizer.encode(text), dtype=np.int32)


def split_text(text: str, val_fraction: float) -> tuple[str, str]:
    """(training, validation) text: the last `val_fraction` of the characters is validation, the cut
    moved forward to just after a newline when one lies within 1 % of the text (at most 2000
    characters)."""
    cut = len(text) - int(len(text) * val_fraction)
    nl = text.find("\n", cut, min(len(text), cut + max(1, min(2000, len(text) // 100))))
    if 0 <= nl < len(text) - 1:
        cut = nl + 1
    return text[:cut], text[cut:]


# Bytes no corpus text holds: "\r" (line ends become "\n" as the files are read) and the bytes UTF-8
# never uses (0xC0, 0xC1: overlong; 0xF5..0xFF: beyond U+10FFFF). A byte-level BPE model never sees
# their ids in training, so sampling one only prints U+FFFD or a carriage return.
UNWRITTEN_BYTES = bytes([0x0D, 0xC0, 0xC1, *range(0xF5, 0x100)])


def unwritten_byte_ids() -> list[int]:
    """The BPE tokenizer's ids of UNWRITTEN_BYTES (byte b has id 3 + b)."""
    return [BPE_BYTE0 + b for b in UNWRITTEN_BYTES]


def _check(name: str, v, ok: bool, expected: str):
    if not ok:
        raise ValueError(f"{name}: expected {expected}, got {v!r}")


def skipped_files(skipped) -> str:
    """'2 folder files skipped, first notes/b.txt: not UTF-8 (...)': a file in another encoding is
    text the user meant to train on, so the first one left out is named with its reason."""
    path, why = skipped[0]
    more = f"{len(skipped)} folder files skipped, first" if len(skipped) > 1 else "skipped"
    return f"{more} {path}: {why.split(';')[0]}"


class TextLMTask:
    """Next-token prediction on a text corpus (see the module docstring).

    files         the text files, in reading order (what --data named, folders expanded)
    tokenizer     a tokenizer of npformer.data.tokenizers, or its to_dict()
    context       tokens the model reads per window (its max_len)
    sha256        the joined corpus's digest (checked when the corpus is read again)
    val_fraction  share of the characters held out for validation, at the end
    seed          recorded for the run (batches are drawn by the stream's own seed)
    corpus        the Corpus already read (else read on first use)
    """

    name = "lm"
    is_lm = True
    is_text = True
    is_classification = False
    memorise = False
    num_classes = 2
    metric_names = ("next-token accuracy", "")

    def __init__(self, files: Sequence[str], tokenizer, context: int = DEFAULT_CONTEXT,
                 sha256: str | None = None, val_fraction: float = DEFAULT_VAL_FRACTION,
                 seed: int = 0, corpus: Corpus | None = None):
        _check("data", files, isinstance(files, (list, tuple)) and len(files) > 0
               and all(isinstance(f, str) for f in files), "a non-empty list of file paths")
        _check("context", context, is_int(context) and context >= 2, "an int >= 2")
        _check("val_fraction", val_fraction, is_real(val_fraction) and 0.0 < val_fraction < 0.5,
               "a float in (0, 0.5)")
        _check("seed", seed, is_int(seed) and seed >= 0, "an int >= 0")
        context, seed = int(context), int(seed)                  # (a NumPy integer: a Python int)
        self.files = list(files)
        self.tokenizer = tokenizer_from_dict(tokenizer) if isinstance(tokenizer, dict) else tokenizer
        self.context, self.val_fraction, self.seed = context, float(val_fraction), seed
        self.sha256 = sha256 if sha256 is not None else (corpus.sha256 if corpus else None)
        self._corpus = corpus
        self._arrays: tuple | None = None                # (train ids, validation ids, val text)

    # -- sizes -------------------------------------------------------------------------------------
    @property
    def vocab(self) -> TextVocab:
        return TextVocab(self.tokenizer)

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.vocab_size

    @property
    def num_symbols(self) -> int:
        return self.tokenizer.vocab_size - 3

    @property
    def max_len(self) -> int:
        return self.context

    max_src_tokens = max_tgt_tokens = max_len

    @property
    def suppress_ids(self) -> list[int]:
        """Ids no text encodes to, never generated: PAD, BOS, EOS (and the char tokenizer's UNK; the
        BPE tokenizer's ids of bytes no corpus holds, `unwritten_byte_ids`); none for a pretrained
        tokenizer (GPT-2's ids 0..2 are text: "!", '"', "#")."""
        if self.tokenizer.kind not in ("char", "bpe"):
            return []
        if self.tokenizer.kind == "bpe":
            return [0, 1, 2] + unwritten_byte_ids()
        return [0, 1, 2, 3]

    def generation_suppress_ids(self, model_vocab: int) -> list[int]:
        """suppress_ids, and the ids of a model with more rows than the tokenizer has tokens (a
        vocabulary padded in the weights, as GPT-2 folders may be): no text decodes from them."""
        return self.suppress_ids + list(range(self.tokenizer.vocab_size, int(model_vocab)))

    # -- the corpus, read and encoded once -----------------------------------------------------------
    def _where(self) -> str:
        more = f" (+{len(self.files) - 1} more files)" if len(self.files) > 1 else ""
        return f"{self.files[0]}{more}"

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(training token ids, validation token ids), int32; reads the corpus on first use."""
        if self._arrays is None:
            corpus = self._corpus if self._corpus is not None else \
                read_saved(read_corpus, self.files, self.sha256)
            if self.sha256 is not None and corpus.sha256 != self.sha256:
                raise TextFileError(self._where(), "the text has changed since the checkpoint "
                                                   "was written (its SHA-256 differs); training "
                                                   "and evaluation need the same corpus")
            train_text, val_text = split_text(corpus.text, self.val_fraction)
            tr, va = encode_ids(self.tokenizer, train_text), encode_ids(self.tokenizer, val_text)
            need = self.context + 1
            if min(len(tr), len(va)) < need:
                raise TextFileError(self._where(), f"too short for --context {self.context} with a "
                                    f"{self.val_fraction:g} validation split: {len(corpus.text):,} "
                                    f"characters give {len(tr)} training and {len(va)} validation "
                                    f"{self.tokenizer.kind} tokens, each side needs at least "
                                    f"{need} (use a smaller --context or more text)")
            self._corpus = corpus
            self._arrays = (tr, va)
        return self._arrays

    @property
    def corpus(self) -> Corpus:
        self.arrays()
        return self._corpus

    def describe(self) -> str:
        tr, va = self.arrays()
        c = self.corpus
        files = f"{len(c.files)} files" if len(c.files) > 1 else c.files[0]
        skipped = f", {skipped_files(c.skipped)}" if c.skipped else ""
        return (f"task=lm on text: {files} ({len(c.text):,} characters{skipped}); "
                f"{self.tokenizer.kind} tokenizer, vocab_size={self.vocab_size}; "
                f"{len(tr):,} training / {len(va):,} validation tokens; context {self.context}")

    def metadata(self) -> dict:
        """What a checkpoint stores (make_any_task(**metadata) rebuilds the task)."""
        return dict(name=self.name, data=self.files, sha256=self.sha256,
                    tokenizer=self.tokenizer.to_dict(), context=self.context,
                    val_fraction=self.val_fraction, seed=self.seed)

    # -- windows -----------------------------------------------------------------------------------
    def sample(self, rng: np.random.Generator, n: int, split: str = "train") -> TextWindows:
        """`n` windows at uniform offsets of one side."""
        _check("n", n, is_int(n) and n >= 1, "an int >= 1")
        check_generator(rng)
        if split not in ("train", "heldout"):
            raise ValueError(f"split: expected 'train' or 'heldout', got {split!r}")
        check_examples_fit_memory("n", n, 8, "its window start (int64)")
        src = self.arrays()[0 if split == "train" else 1]
        starts = rng.integers(0, len(src) - self.context, size=int(n))   # s + C + 1 <= len
        return TextWindows(src, starts.astype(np.int64), self.context)

    def heldout(self, n: int | None = None, seed: int | None = None) -> TextWindows:
        """The first `n` (all when None or more) non-overlapping windows of the validation side."""
        va = self.arrays()[1]
        starts = np.arange(0, len(va) - self.context, self.context, dtype=np.int64)
        if n is not None:
            starts = starts[: max(int(n), 1)]
        return TextWindows(va, starts, self.context)

    def collate(self, ex: TextWindows) -> LMBatch:
        return ex.collate()

    def examples_from_text(self, texts: Sequence[str]) -> TextWindows:
        """One window per text (`npformer plot --input`): its tokens as the model reads them, padded
        with PAD to the longest; each text must give 1 to `context` tokens."""
        texts = check_texts(texts)
        rows = [self.tokenizer.encode(t) for t in texts]
        for t, r in zip(texts, rows):
            if not 1 <= len(r) <= self.context:
                raise ValueError(f"input {t[:40]!r}: {len(r)} {self.tokenizer.kind} tokens; the "
                                 f"model reads 1 to {self.context} (its --context)")
        width = max(len(r) for r in rows) + 1                   # + 1: the window's last target
        source = np.zeros(len(rows) * width, dtype=np.int32)    # PAD = 0 after each text
        for i, r in enumerate(rows):
            source[i * width: i * width + len(r)] = r
        return TextWindows(source, np.arange(len(rows), dtype=np.int64) * width, width - 1)

    def iterate(self, ex: TextWindows, batch_size: int) -> Iterator[tuple[TextWindows, LMBatch]]:
        """(windows, batch) over a fixed set, in order (evaluation)."""
        for start in range(0, len(ex), batch_size):
            part = ex.take(np.arange(start, min(start + batch_size, len(ex))))
            yield part, part.collate()

    def characters(self, ex: TextWindows) -> int:
        """Characters the targets of `ex` stand for (exact for the contiguous held-out windows; a
        BPE cut inside a character counts its replacement character)."""
        cols = ex.starts[:, None] + 1 + np.arange(self.context)[None, :]        # (N, C)
        return len(self.tokenizer.decode(ex.source[cols].reshape(-1).tolist()))

    def prompt(self, max_tokens: int) -> np.ndarray:
        """(1, P) the first tokens of the validation text (a line start): the samples' prompt."""
        va = self.arrays()[1]
        return va[None, : max(1, min(max_tokens, len(va)))].astype(np.int64)

    def __repr__(self) -> str:
        return (f"TextLMTask({self._where()!r}, {self.tokenizer!r}, context={self.context}, "
                f"val_fraction={self.val_fraction})")


def check_vocab_size(vocab_size) -> int | None:
    """`vocab_size` as None or a Python int (its bounds are checked with the tokenizer, which sets
    them): a string or a float would otherwise reach a comparison and end in `'<' not supported ...`."""
    if vocab_size is not None and (isinstance(vocab_size, bool)
                                   or not isinstance(vocab_size, (int, np.integer))):
        raise TypeError(f"vocab_size: expected None or an int (>= 259, for tokenizer 'bpe'), got "
                        f"{type(vocab_size).__name__} {vocab_size!r}")
    return None if vocab_size is None else int(vocab_size)


def build_text_task(paths, tokenizer: str = "char", vocab_size: int | None = None,
                    context: int = DEFAULT_CONTEXT, val_fraction: float = DEFAULT_VAL_FRACTION,
                    seed: int = 0) -> TextLMTask:
    """Read `paths`, train the tokenizer and return the task (its arrays already built, so every
    problem with the text is reported here, before a model exists)."""
    if tokenizer not in TEXT_TOKENIZERS:
        raise ValueError(f"tokenizer: expected one of {TEXT_TOKENIZERS}, got {tokenizer!r}")
    vocab_size = check_vocab_size(vocab_size)
    corpus = read_corpus(paths)
    if tokenizer == "char":
        if vocab_size is not None:
            raise ValueError(f"--vocab-size {vocab_size}: only for --tokenizer bpe (a character "
                             f"vocabulary has one token per character of the corpus)")
        tok = CharTokenizer.train(corpus.text)
    else:
        train_text, _ = split_text(corpus.text, val_fraction)
        size = DEFAULT_BPE_VOCAB if vocab_size is None else vocab_size
        if size < 259 or math.isinf(size):
            raise ValueError(f"--vocab-size {size}: expected >= 259 for --tokenizer bpe (3 special "
                             f"tokens + 256 bytes, then one token per merge)")
        tok = BPETokenizer.train(train_text, size)
    task = TextLMTask(corpus.files, tok, context=context, val_fraction=val_fraction, seed=seed,
                      corpus=corpus)
    task.arrays()
    return task
