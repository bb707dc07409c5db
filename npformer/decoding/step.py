"""The decode step shared by both twins: "logits of the next token after seq[:, :p]".

`Stepper` feeds a growing prefix to the model, either only the new tokens with the per-layer key/value
caches and `offset` (use_cache=True), or the whole prefix again (use_cache=False); a twin's step object
(`NumpyDecodeStep` here, torchformer.decoding.generate.TorchDecodeStep for torch models) runs the model
and says how its arrays come back out. The decode loops (npformer.decoding.generate, beam) keep their
bookkeeping in NumPy.
"""
from __future__ import annotations

import numpy as np

from npformer.fast.last_logits import last_position_only
from npformer.guards.validation import check_ids
from npformer.layers.masks import causal_mask, padding_mask

__all__ = ["log_probs", "new_caches", "reorder_caches", "NumpyDecodeStep", "NUMPY_STEP", "Stepper",
           "is_seq2seq"]


def is_seq2seq(model) -> bool:
    """True for an encoder-decoder (Transformer), False for a CausalLM."""
    return hasattr(model, "encode") and hasattr(model, "decode")


def log_probs(x: np.ndarray) -> np.ndarray:
    """Stable log-softmax over the last axis, (N, V) -> (N, V), same dtype."""
    m = x.max(axis=-1, keepdims=True)                                  # (N, 1)
    z = x - m                                                          # (N, V)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))           # (N, V)


def new_caches(model) -> list:
    """Empty per-layer caches for incremental decoding: [{} for every decoder layer]."""
    return [{} for _ in range(len(model.decoder.layers))]


def reorder_caches(caches, index: np.ndarray) -> None:
    """Re-index every cached array along its batch axis (beam search follows its surviving beams)."""
    def visit(d: dict) -> None:
        for key, v in d.items():
            if isinstance(v, dict):
                visit(v)
            elif isinstance(v, np.ndarray):
                d[key] = v[index]                                      # (N, ...) rows reordered
    for layer in caches:
        visit(layer)


class NumpyDecodeStep:
    """What the decode loops need from a twin, for npformer models (torchformer.decoding.generate has
    TorchDecodeStep with the same methods). The loops keep their bookkeeping (tokens, scores, beams) in
    NumPy; a twin runs its model, and says how its arrays come back out."""

    def ids(self, name: str, x, vocab: int) -> np.ndarray:
        """Checked (B, T) token ids as an int64 NumPy array."""
        return check_ids(name, x, vocab, ndim=2).astype(np.int64)

    def array(self, x) -> np.ndarray:
        return np.asarray(x)

    def device_memory(self, model) -> int | None:
        """The bytes of the memory holding the model's arrays apart from this machine's: None."""
        return None

    def source(self, model, src, repeat: int):
        """(memory, src_mask) of src (B, S) ids, each row repeated `repeat` times (beams)."""
        pad = model.config.pad_id
        src_mask = None if pad is None else padding_mask(src, pad)      # (B, 1, 1, S)
        memory = np.repeat(model.encode(src, src_mask), repeat, axis=0)  # (B*K, S, D)
        if src_mask is not None:
            src_mask = np.repeat(src_mask, repeat, axis=0)              # (B*K, 1, 1, S)
        return memory, src_mask

    def run(self, stepper: "Stepper", ids: np.ndarray, offset: int):
        """Logits (N, T, V) of the model for ids (N, T) at positions offset.. (caches updated), under
        the causal mask (1, 1, T, offset + T); (N, 1, V), the last position's, for a model switched
        to npformer.fast.last_logits (only `last` reads them)."""
        m = stepper.model
        mask = causal_mask(ids.shape[1], offset + ids.shape[1])         # (1, 1, T, offset + T)
        with last_position_only(m):
            if stepper.memory is not None or is_seq2seq(m):
                return m.decode(ids, stepper.memory, stepper.src_mask, mask,
                                caches=stepper.caches, offset=offset)
            if stepper.caches is None:
                return m(ids, mask)
            return m(ids, mask, caches=stepper.caches, offset=offset)

    def last(self, logits):
        """The last position's logits (N, V) and their float64 log-probabilities, as NumPy."""
        last = logits[:, -1]                                            # (N, V)
        return last, log_probs(last.astype(np.float64))

    def reorder(self, caches, index: np.ndarray) -> None:
        reorder_caches(caches, index)

    def output(self, x: np.ndarray, stepper=None):
        """A result array as this twin returns it (NumPy: as it is)."""
        return x


NUMPY_STEP = NumpyDecodeStep()


class Stepper:
    """Feeds a growing (N, p) prefix to the model and returns the next-token logits and float64
    log-probabilities, (N, V) NumPy arrays each; `step` (NumpyDecodeStep or TorchDecodeStep) runs the model."""

    def __init__(self, step, model, use_cache: bool, memory=None, src_mask=None):
        self.step, self.model, self.use_cache = step, model, use_cache
        self.memory, self.src_mask = memory, src_mask                   # (N, S, D), (N, 1, 1, S)
        self.caches = new_caches(model) if use_cache else None
        self.fed = 0                                                    # positions in the caches

    def __call__(self, seq: np.ndarray, p: int):
        if self.use_cache:
            new = seq[:, self.fed:p]                                    # (N, p - fed) unseen tokens
            logits = self.step.run(self, new, self.fed)                # (N, p - fed, V)
            self.fed = p
        else:
            logits = self.step.run(self, seq[:, :p], 0)                # (N, p, V)
        last, logp = self.step.last(logits)                            # (N, V), (N, V) float64
        bad = int(last.size - np.count_nonzero(np.isfinite(last)))
        if bad:                    # argmax would pick a NaN's id, sampling id 0: never decode on
            raise ValueError(f"model: its logits for position {p} hold {bad} NaN/inf values of "
                             f"{last.size}; a weight holds NaN or inf (or overflows): nothing was "
                             f"decoded")
        return last, logp

    def reorder(self, index: np.ndarray) -> None:
        if self.caches is not None:
            self.step.reorder(self.caches, index)

