"""Hypothesis strategies for parity: shapes, configs, masks and inputs, small enough to run fast.

Design: Hypothesis draws the *structure* (sizes, config flags, mask kind, padding pattern) and one
integer `seed`; array *values* come from `numpy.random.default_rng(seed)` (drawing thousands of
floats element by element through Hypothesis would be slow and would shrink to all-zero arrays that
hide bugs). A falsifying example is therefore fully described by what Hypothesis prints.

Masks use the project convention: bool keep-masks, True = this query may attend to this key,
broadcastable to (batch, heads, q_len, k_len). They are built here independently of npformer.layers.masks
(that module is itself under test).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from hypothesis import strategies as st

from npformer.models.config import ACTIVATIONS, POOLINGS, POSITIONALS, TransformerConfig

DTYPES = ("float64", "float32")
MASK_KINDS = ("none", "padding", "causal", "causal_padding", "random", "random_2d")

# Default bounds: every example builds in milliseconds; size-1 dims are always reachable.
MAX_BATCH = 3
MAX_LEN = 6
MAX_HEADS = 4
MAX_D_HEAD = 4
MAX_FF = 10
MAX_VOCAB = 9
MAX_LAYERS = 2


# -- scalars ----------------------------------------------------------------------------------------
def seeds() -> st.SearchStrategy[int]:
    """Seed for numpy's default_rng: all array values of an example come from it."""
    return st.integers(0, 2**32 - 1)


def dtypes() -> st.SearchStrategy[str]:
    return st.sampled_from(DTYPES)


def batch_sizes(max_batch: int = MAX_BATCH) -> st.SearchStrategy[int]:
    return st.integers(1, max_batch)


def lengths(max_len: int = MAX_LEN, min_len: int = 1) -> st.SearchStrategy[int]:
    return st.integers(min_len, max_len)


def activations() -> st.SearchStrategy[str]:
    return st.sampled_from(ACTIVATIONS)


def norm_placements() -> st.SearchStrategy[bool]:
    """norm_first: False = post-norm (paper), True = pre-norm."""
    return st.booleans()


def positional_kinds() -> st.SearchStrategy[str]:
    return st.sampled_from(POSITIONALS)


def dropout_probs(enabled: bool = True) -> st.SearchStrategy[float]:
    return st.sampled_from((0.0, 0.1, 0.5)) if enabled else st.just(0.0)


@st.composite
def heads_and_width(draw, max_heads: int = MAX_HEADS, max_d_head: int = MAX_D_HEAD,
                    even: bool = False, min_width: int = 1) -> tuple[int, int]:
    """(d_model, num_heads) with d_model = num_heads * d_head >= min_width (odd widths included
    unless `even`; d_head = 1 stays reachable through num_heads >= min_width)."""
    h = draw(st.integers(1, max_heads))
    lo = min(max_d_head, max(1, -(-min_width // h)))          # smallest d_head reaching min_width
    dk = draw(st.integers(lo, max(lo, max_d_head)))
    if even and (h * dk) % 2:                       # h and dk both odd: make dk even
        dk = dk + 1 if dk < max_d_head else dk - 1
    return h * dk, h


# -- configs ----------------------------------------------------------------------------------------
MODELS = ("layer", "transformer", "classifier", "causal_lm")


MIN_D_MODEL = 4
"""Smallest d_model the layer and model strategies draw. LayerNorm over 1-3 features is degenerate
(1 feature: a constant output whose input gradient is exactly 0, which torch returns as rounding
noise times 1/sqrt(eps), up to 1e3; 2 features: a sign function with the same cancellation), so
below 4 a comparison measures torch's rounding, not correctness. LayerNorm's own tests cover widths
1-5 with a conditioning-scaled tolerance (conditioning.py); attention's cover d_model and d_head 1."""


@st.composite
def configs(draw, model: str = "transformer", dtype: str | None = None, dropout: bool = False,
            max_layers: int = MAX_LAYERS, max_len: int = MAX_LEN, min_d_model: int = MIN_D_MODEL,
            **fixed) -> TransformerConfig:
    """A small valid TransformerConfig for `model` (one of MODELS); keyword args fix fields.

    dropout=True draws the three dropout probabilities from {0, 0.1, 0.5}; otherwise all are 0.
    """
    if model not in MODELS:
        raise ValueError(f"configs: model expected one of {MODELS}, got {model!r}")
    d_model, heads = draw(heads_and_width(even=fixed.pop("even_d_model", False),
                                          min_width=min_d_model))
    kw = dict(
        d_model=d_model, num_heads=heads,
        d_ff=draw(st.integers(1, MAX_FF)),
        num_encoder_layers=draw(st.integers(1, max_layers)),
        num_decoder_layers=draw(st.integers(1, max_layers)),
        max_len=max_len + draw(st.integers(0, 2)),
        activation=draw(activations()),
        norm_first=draw(norm_placements()),
        final_norm=draw(st.booleans()),
        layer_norm_eps=draw(st.sampled_from((1e-5, 1e-6, 1e-3))),
        positional=draw(positional_kinds()),
        scale_embeddings=draw(st.booleans()),
        bias=draw(st.booleans()),
        output_bias=draw(st.booleans()),
        dropout=draw(dropout_probs(dropout)),
        attention_dropout=draw(dropout_probs(dropout)),
        activation_dropout=draw(dropout_probs(dropout)),
        dtype=dtype or draw(dtypes()),
    )
    vocab = draw(st.integers(2, MAX_VOCAB))
    kw["vocab_size"] = vocab
    smallest = vocab
    if model == "transformer":
        share = draw(st.booleans())
        kw["share_embeddings"] = share
        if not share:
            kw["src_vocab_size"] = draw(st.none() | st.integers(2, MAX_VOCAB))
            kw["tgt_vocab_size"] = draw(st.none() | st.integers(2, MAX_VOCAB))
            smallest = min(vocab, kw["src_vocab_size"] or vocab, kw["tgt_vocab_size"] or vocab)
    if model in ("transformer", "causal_lm"):
        kw["tie_embeddings"] = draw(st.booleans())
    if model == "classifier":
        kw["num_classes"] = draw(st.integers(1, 4))
        kw["pooling"] = draw(st.sampled_from(POOLINGS))
    kw["pad_id"] = draw(st.none() | st.integers(0, smallest - 1))
    kw.update(fixed)
    return TransformerConfig(**kw)


# -- masks and padding -----------------------------------------------------------------------------
class Padding(NamedTuple):
    """Which positions of a (batch, T) id matrix are padding: `keep` (B,T) bool, True = real token."""

    pattern: str          # "right", "left" or "scattered"
    keep: np.ndarray      # (B, T) bool


@st.composite
def paddings(draw, batch: int, length: int, allow_empty_rows: bool = False,
             patterns: tuple = ("right", "left", "scattered")) -> Padding:
    """A padding pattern; with allow_empty_rows a whole sequence may be padding (fully masked rows)."""
    pattern = draw(st.sampled_from(patterns))
    lo = 0 if allow_empty_rows else 1
    if pattern == "scattered":
        keep = np.array(draw(st.lists(st.lists(st.booleans(), min_size=length, max_size=length),
                                      min_size=batch, max_size=batch)), dtype=bool).reshape(batch,
                                                                                             length)
        if not allow_empty_rows:
            keep[:, 0] = True
        return Padding(pattern, keep)
    lens = draw(st.lists(st.integers(lo, length), min_size=batch, max_size=batch))
    pos = np.arange(length)[None, :]                      # (1, T)
    n = np.asarray(lens)[:, None]                         # (B, 1)
    keep = pos < n if pattern == "right" else pos >= length - n   # (B, T)
    return Padding(pattern, keep)


def token_ids(rng: np.random.Generator, keep: np.ndarray, vocab: int,
              pad_id: int | None) -> np.ndarray:
    """(B,T) int64 ids: pad_id where keep is False, other ids (never pad_id) where True.

    With pad_id None padding cannot be expressed, so every position gets a random id.
    """
    if pad_id is None:
        return rng.integers(0, vocab, size=keep.shape).astype(np.int64)
    if vocab < 2:
        raise ValueError(f"token_ids: vocab must be >= 2 when pad_id is set, got {vocab}")
    ids = rng.integers(0, vocab - 1, size=keep.shape)     # (B,T) in [0, vocab-1)
    ids = ids + (ids >= pad_id)                           # skip pad_id
    return np.where(keep, ids, pad_id).astype(np.int64)


def causal_keep(q_len: int, k_len: int | None = None) -> np.ndarray:
    """(1,1,Tq,Tk) bool: query i sees key j when j <= i + (Tk - Tq) (bottom-right aligned)."""
    k_len = q_len if k_len is None else k_len
    i = np.arange(q_len)[:, None]
    j = np.arange(k_len)[None, :]
    return (j <= i + (k_len - q_len))[None, None]


def key_padding_keep(keep: np.ndarray) -> np.ndarray:
    """(B,T) keep -> (B,1,1,T) attention keep-mask over keys."""
    return keep[:, None, None, :]


class MaskCase(NamedTuple):
    kind: str                  # one of MASK_KINDS
    keep: np.ndarray | None    # bool keep-mask broadcastable to (B,H,Tq,Tk), or None
    fully_masked_rows: bool    # whether some query row has no key to attend to


@st.composite
def attention_masks(draw, batch: int, heads: int, q_len: int, k_len: int,
                    kinds: tuple = MASK_KINDS, allow_fully_masked: bool = True) -> MaskCase:
    """A keep-mask of a drawn kind and broadcast shape, optionally with fully masked query rows.

    kinds: "none"; "padding" (B,1,1,Tk); "causal" (1,1,Tq,Tk) bottom-right; "causal_padding" both;
    "random" (B,H,Tq,Tk) Bernoulli; "random_2d" (Tq,Tk) shared by batch and heads.
    """
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return MaskCase(kind, None, False)
    rng = np.random.default_rng(draw(seeds()))
    if kind in ("padding", "causal_padding"):
        pad = draw(paddings(batch, k_len, allow_empty_rows=allow_fully_masked))
        keep = key_padding_keep(pad.keep)                                   # (B,1,1,Tk)
        if kind == "causal_padding":
            keep = keep & causal_keep(q_len, k_len)                         # (B,1,Tq,Tk)
    elif kind == "causal":
        keep = causal_keep(q_len, k_len)                                    # (1,1,Tq,Tk)
    elif kind == "random":
        keep = rng.random((batch, heads, q_len, k_len)) < 0.7               # (B,H,Tq,Tk)
    else:
        keep = rng.random((q_len, k_len)) < 0.7                             # (Tq,Tk)
    keep = np.array(keep, dtype=bool)
    if allow_fully_masked and kind.startswith("random") and draw(st.booleans()):
        keep[..., draw(st.integers(0, q_len - 1)), :] = False               # one query row sees nothing
    elif not allow_fully_masked:
        # every query row keeps at least one key: re-open the row's first allowed-by-causality key
        full = np.broadcast_to(keep, np.broadcast_shapes(keep.shape, (1, 1, q_len, k_len))).copy()
        empty = ~full.any(-1)                                                # (...,Tq)
        first = np.clip(np.arange(q_len) + (k_len - q_len), 0, k_len - 1)   # (Tq,) diagonal key
        idx = np.nonzero(empty)
        full[idx + (first[idx[-1]],)] = True
        keep = full
    has_empty = bool((~np.broadcast_to(keep, np.broadcast_shapes(keep.shape, (1, 1, q_len, k_len)))
                      .any(-1)).any())
    return MaskCase(kind, keep, has_empty)


# -- values -------------------------------------------------------------------------------------------
def normal(rng: np.random.Generator, shape, dtype, scale: float = 1.0) -> np.ndarray:
    """N(0, scale^2) array of `dtype` (drawn in float64, then cast: the same seed gives the same
    values, up to rounding, in both dtypes)."""
    return (scale * rng.standard_normal(shape)).astype(dtype)


def random_upstream(shape, dtype, seed: int | np.random.Generator) -> np.ndarray:
    """A random N(0,1) upstream gradient (never ones or a .sum(): they hide transposes and signs)."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return normal(rng, shape, dtype)


class Inputs(NamedTuple):
    """What a whole-model example needs besides the config."""

    seed: int
    src: np.ndarray | None        # (B,S) ids
    tgt: np.ndarray | None        # (B,T) ids
    src_pad: Padding | None
    tgt_pad: Padding | None


@st.composite
def model_inputs(draw, config: TransformerConfig, model: str, max_batch: int = MAX_BATCH,
                 max_len: int | None = None, allow_empty_rows: bool = False) -> Inputs:
    """Token ids for `model` (transformer: src and tgt of different lengths; classifier: src;
    causal_lm: tgt), padded with config.pad_id in a drawn pattern."""
    max_len = min(max_len or config.max_len, config.max_len)
    seed = draw(seeds())
    rng = np.random.default_rng(seed)
    b = draw(batch_sizes(max_batch))
    src = tgt = src_pad = tgt_pad = None
    if model in ("transformer", "classifier"):
        s = draw(lengths(max_len))
        src_pad = draw(paddings(b, s, allow_empty_rows=allow_empty_rows))
        src = token_ids(rng, src_pad.keep, config.src_vocab, config.pad_id)
    if model in ("transformer", "causal_lm"):
        t = draw(lengths(max_len))
        # target padding is right padding (what a batch of decoder inputs looks like)
        tgt_pad = draw(paddings(b, t, allow_empty_rows=False, patterns=("right",)))
        tgt = token_ids(rng, tgt_pad.keep, config.tgt_vocab, config.pad_id)
    return Inputs(seed, src, tgt, src_pad, tgt_pad)


def targets_for(rng: np.random.Generator, shape, num_classes: int, ignore_index: int | None,
                ignore_fraction: float = 0.3) -> np.ndarray:
    """Class targets in [0, num_classes), a fraction set to ignore_index (when given)."""
    t = rng.integers(0, num_classes, size=shape).astype(np.int64)
    if ignore_index is not None:
        t = np.where(rng.random(shape) < ignore_fraction, ignore_index, t)
    return t
