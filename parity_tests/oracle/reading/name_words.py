"""Names read by meaning: a hyperparameter or a forward argument named in words no alias list in
signatures.py holds (`feedforward_dimension`, `n_attention_heads`, `tgt_pad_mask`), read word by word
(a name split at its underscores, and at its camelCase humps: `numberOfHeads` is number_of_heads,
`inputMask` input_mask, `modelEmbeddingSize` model_embedding_size)."""
from __future__ import annotations

import re

_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake(name: str) -> str:
    """`name` lower-cased, with an underscore at each camelCase hump (`dModel` -> d_model,
    `numberOfHeads` -> number_of_heads); snake_case and ALLCAPS names are only lower-cased."""
    return _HUMP.sub("_", name).lower()

HEAD_WIDTH_NAMES = ("d_k", "dk", "d_head", "head_dim", "head_size", "dim_head", "d_key",
                    "size_per_head", "k_dim", "kdim", "dim_per_head")


def meaning_of(name: str) -> str | None:
    """What a required forward argument no source matched is, by its name (bind's `meanings`)."""
    n = snake(name)
    if "drop" in n:
        return "dropout"
    if n in ("cache", "kv_cache", "past", "layer_past", "past_key_value", "past_key_values",
             "layer_cache", "memory_cache", "incremental_state"):
        return "cache"
    if n in HEAD_WIDTH_NAMES:
        return "head_width"
    return mask_part(n)


PAD_WORDS = ("pad", "padding", "key_padding", "keypad")
CAUSAL_WORDS = ("autoregressive", "causal", "subsequent", "future", "look_ahead", "lookahead",
                "no_peak", "nopeak", "tril", "triangular", "ar")
MEMORY_WORDS = ("memory", "mem", "src", "source", "enc", "encoder", "cross", "context")


def mask_part(n: str) -> str | None:
    """One part of a mask a layer takes in pieces (`tgt_pad_mask`, `tgt_autoregressive_mask`,
    `memory_pad_mask`): `padding_mask:self`, `padding_mask:memory` or `causal_mask:self`."""
    words = [w for w in n.split("_") if w]
    if "mask" not in words:
        return None
    joined = {a + "_" + b for a, b in zip(words, words[1:])} | set(words)
    memory = any(w in MEMORY_WORDS for w in words)
    if any(w in joined for w in CAUSAL_WORDS) and not memory:
        return "causal_mask:self"
    if any(w in joined for w in PAD_WORDS):
        return "padding_mask:" + ("memory" if memory else "self")
    return None


MODEL_WIDTH_WORDS = ("dim", "dimension", "dims", "size", "width", "d", "features", "dimensionality",
                     "columns", "cols")
"""`columns`: a width as the columns of the matrix that makes it (in_columns, intermediate_columns)."""


MODEL_WORDS = ("model", "embedding", "embed", "emb", "embd", "input", "in")
"""Words that, beside a width word, name the model width: model_dimension, embedding_dimension,
input_dimension, embd_size (nanoGPT's `n_embd` spelling), in_columns (the width a block is handed;
its output width is arg_meaning's)."""


def names_d_model(name: str) -> bool:
    """A name holding a model word and a width word (model_dimension, embedding_dimension,
    input_dimension), or the word `dimension` alone: d_model, as an alias would (a feed-forward,
    whose first size is d_ff, would otherwise get d_ff there by position, and the next argument
    d_model)."""
    words = [w for w in snake(name).split("_") if w]
    if words in (["dimension"], ["dimensionality"]):
        return True
    return any(w in MODEL_WORDS for w in words) and any(w in MODEL_WIDTH_WORDS for w in words) \
        and not any(w in COUNT_WORDS or w in FF_WORDS for w in words)


LENGTH_WORDS = ("len", "length")
LENGTH_KINDS = ("max", "seq", "sequence", "sentence", "context", "position", "positions")


def names_max_len(name: str) -> bool:
    """A length in words no alias lists (length_sentence_max, max_sentence_length): a length word
    with a word saying which length."""
    words = [w for w in snake(name).split("_") if w]
    return any(w in LENGTH_WORDS for w in words) and any(w in LENGTH_KINDS for w in words)


def names_hyper(hyper: str, name: str) -> bool:
    """Whether `name` names `hyper` in words no alias lists (the word readers below)."""
    return {"d_model": names_d_model, "num_heads": names_num_heads, "d_ff": names_d_ff,
            "max_len": names_max_len, "num_layers": lambda n: names_layer_count(n) == "",
            "num_encoder_layers": lambda n: names_layer_count(n) == "encoder",
            "num_decoder_layers": lambda n: names_layer_count(n) == "decoder",
            }.get(hyper, lambda _n: False)(name)


COUNT_WORDS = ("n", "num", "number", "nb", "count", "no")
KV_WORDS = ("kv", "key", "keys", "value", "values")


def names_num_heads(name: str) -> bool:
    """A name counting heads in words no alias lists (n_attention_heads, num_attn_heads,
    number_of_heads, attn_heads): the word `heads` with a count word, or ending the name, and no
    width word (heads_dim)."""
    words = [w for w in snake(name).split("_") if w]
    return "heads" in words and (any(w in COUNT_WORDS for w in words) or words[-1] == "heads") and \
        not any(w in MODEL_WIDTH_WORDS for w in words) and \
        not any(w in KV_WORDS for w in words)       # kv_heads: grouped-query's key/value heads


FF_WORDS = ("feedforward", "ff", "ffn", "fc", "mlp", "inner", "intermediate", "expansion", "conv",
            "pointwise", "positionwise")
"""`conv_hidden_dim`: the feed-forward written as two kernel-size-1 convolutions, as some code
names it."""


def names_d_ff(name: str) -> bool:
    """A feed-forward width in words no alias lists (feedforward_dimension, mlp_width,
    feed_forward_size, feed_forward_hidden, mlp_num_hiddens): a feed-forward word (feed_forward
    joined) with a width word or `hidden` (`hiddens`, its units counted)."""
    words = [w for w in snake(name).split("_") if w]
    words += [a + b for a, b in zip(words, words[1:])]
    return any(w in FF_WORDS for w in words) and \
        any(w in MODEL_WIDTH_WORDS + ("hidden", "hiddens") for w in words)


LAYER_WORDS = ("layers", "layer", "blocks", "block")
STACK_WORDS = {"enc": "encoder", "encoder": "encoder", "dec": "decoder", "decoder": "decoder"}


def names_layer_count(name: str) -> str | None:
    """A layer count in words no alias lists (num_layers_enc, n_dec_blocks, layer_num): a count
    word and a layer word, at most one stack word, nothing else. "encoder" / "decoder" for the
    stack named, "" for none; None when the name is not read so."""
    words = [w for w in snake(name).split("_") if w and w != "of"]
    stacks = {STACK_WORDS[w] for w in words if w in STACK_WORDS}
    if not (any(w in COUNT_WORDS for w in words) and any(w in LAYER_WORDS for w in words)) or \
            len(stacks) > 1 or any(w not in COUNT_WORDS + LAYER_WORDS and w not in STACK_WORDS
                                   for w in words):
        return None
    return stacks.pop() if stacks else ""


SECOND_MEANINGS = {"hidden": ("d_model",)}
"""Names an alias list gives one size that mean another where that one is named otherwise: a bare
`hidden` is the feed-forward width (its alias), but beside `feed_forward_hidden` it is the model
width (BERT's `TransformerBlock(hidden, attn_heads, feed_forward_hidden, dropout)`)."""


def second_meanings(name: str) -> tuple[str, ...]:
    """What `name` means when its alias's size is taken by a better-named argument."""
    return SECOND_MEANINGS.get(snake(name), ())
