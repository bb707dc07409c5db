"""Translation on a user's parallel text: TranslateTask and build_translate_task (see
npformer.data.text_tasks for the split, the tokenizers and the batches)."""
from __future__ import annotations

import numpy as np

from npformer.data.text_files import TextFileError
from npformer.data.text_lm import DEFAULT_CONTEXT, DEFAULT_VAL_FRACTION, TextVocab, unwritten_byte_ids
from npformer.data.text_rows import read_pairs
from npformer.data.text_tasks import RowsTask, TextExamples, pad_rows, split_rows, train_tokenizer
from npformer.data.tokenizers import tokenizer_from_dict
from npformer.data.tokenizers.char import UNK
from npformer.data.vocab import BOS, PAD
from npformer.guards.rules import check_texts

__all__ = ["TranslateTask", "build_translate_task"]


class TranslateTask(RowsTask):
    """Source text -> target text for an encoder-decoder Transformer (see the module docstring).
    `target_tokenizer` None: one vocabulary for both sides (shared embeddings)."""

    name = "translate"
    reader = staticmethod(read_pairs)
    is_classification = False
    num_classes = 2
    metric_names = ("token accuracy", "exact-match")

    def __init__(self, data, tokenizer, target_tokenizer=None, **kw):
        super().__init__(data, tokenizer, **kw)
        t = target_tokenizer
        self.target_tokenizer = tokenizer_from_dict(t) if isinstance(t, dict) else t

    @property
    def shared_vocab(self) -> bool:
        return self.target_tokenizer is None

    @property
    def target_vocab(self) -> TextVocab:
        return TextVocab(self.target_tokenizer or self.tokenizer)

    @property
    def suppress_ids(self) -> list[int]:
        """Target ids a translation never generates: PAD, BOS (and the char tokenizer's UNK; the
        BPE tokenizer's ids of bytes no text holds, npformer.data.text_lm.unwritten_byte_ids)."""
        kind = (self.target_tokenizer or self.tokenizer).kind
        return [PAD, BOS] + ([UNK] if kind == "char" else unwritten_byte_ids() if kind == "bpe" else [])

    def config_fields(self) -> dict:
        """TransformerConfig fields beyond vocab_size (npformer.training.train.model_config_for)."""
        tgt = (self.target_tokenizer or self.tokenizer).vocab_size
        return dict(src_vocab_size=self.vocab_size, tgt_vocab_size=tgt,
                    share_embeddings=self.shared_vocab)

    def _encode(self, rows) -> TextExamples:
        tgt_tok = self.target_tokenizer or self.tokenizer
        src = [self.tokenizer.encode(a) for _, a, _ in rows]
        tgt = [tgt_tok.encode(b) for _, _, b in rows]
        limit = self.context - 1                                  # + EOS (src, tgt_out) or BOS
        self._fits = np.asarray([len(s) <= limit and len(t) <= limit for s, t in zip(src, tgt)])
        (s, sl), (t, tl) = pad_rows(src), pad_rows(tgt)
        return TextExamples(s, sl, t, tl, None, np.arange(len(rows)))

    def examples_from_text(self, texts: list[str]) -> TextExamples:
        """Examples of user sources (plots, generate) with empty targets; a source longer than
        the context raises ValueError naming it."""
        texts = check_texts(texts)
        ids = [self.tokenizer.encode(t) for t in texts]
        for t, r in zip(texts, ids):
            if not 1 <= len(r) <= self.context - 1:
                raise ValueError(f"input {t[:40]!r}: {len(r)} {self.tokenizer.kind} tokens; the "
                                 f"model reads 1 to {self.context - 1} (its --context, with EOS)")
        s, sl = pad_rows(ids)
        empty = np.zeros((len(ids), 1), np.int32)
        return TextExamples(s, sl, empty, np.zeros(len(ids), np.int64), None, np.arange(len(ids)))

    def texts(self, ex: TextExamples) -> list[tuple[str, str]]:
        """(source, target) strings of `ex`'s rows, as the file has them."""
        rows = self.rows().rows
        return [(rows[i][1], rows[i][2]) for i in ex.index]

    def describe(self) -> str:
        left = np.flatnonzero(~self._fits_all())
        out = (f"  {left.size:,} pairs with a side over {self.context - 1} tokens left out (first "
               f"at line {self.line_of(left[0])}; --context sets the limit)") if left.size else ""
        vocab = (f"one shared {self.tokenizer.kind} vocabulary of {self.vocab_size}"
                 if self.shared_vocab else
                 f"{self.tokenizer.kind} vocabularies: source {self.vocab_size}, target "
                 f"{self.target_tokenizer.vocab_size}")
        tr, va = self.sets()
        seen = {a for a, _ in self.texts(tr)}
        again = sum(a in seen for a, _ in self.texts(va))
        dup = (f"  {again:,} held-out sources also occur in the training rows (the file repeats "
               f"them; the held-out scores count them)") if again else ""
        return (f"task=translate on {self._where()}: {self._sizes_text('pairs')}; {vocab}; "
                f"context {self.context}" + "".join(f"\n{n}" for n in (out, dup) if n))

    def _fits_all(self) -> np.ndarray:
        self.sets()
        return self._fits

    def metadata(self) -> dict:
        return dict(self._common_metadata(), target_tokenizer=None if self.shared_vocab else
                    self.target_tokenizer.to_dict())


def build_translate_task(paths, tokenizer: str = "char", vocab_size: int | None = None,
                         shared_vocab: bool = False, context: int = DEFAULT_CONTEXT,
                         val_fraction: float = DEFAULT_VAL_FRACTION, seed: int = 0) -> TranslateTask:
    """Read the pairs, split them, train the tokenizer(s) on the training rows; every problem with
    the files is reported here, before a model exists."""
    rows = read_pairs(paths)
    if len(rows) < 2:
        raise TextFileError(" ".join(rows.files), f"{len(rows)} pair; expected at least 2 (one to "
                                                  f"train on, one to hold out)")
    tr, _ = split_rows(len(rows), val_fraction, seed)
    src = [rows.rows[i][1] for i in tr]
    tgt = [rows.rows[i][2] for i in tr]
    if shared_vocab:
        src_tok, tgt_tok = train_tokenizer(tokenizer, src + tgt, vocab_size), None
    else:
        src_tok, tgt_tok = train_tokenizer(tokenizer, src, vocab_size), \
            train_tokenizer(tokenizer, tgt, vocab_size)
    task = TranslateTask(rows.files, src_tok, tgt_tok, context=context, val_fraction=val_fraction,
                         seed=seed, rows=rows)
    task.sets()
    return task
