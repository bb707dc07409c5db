"""Recogniser: required constructor arguments whose name says which quantity they are, although no
hyperparameter alias names them:

    output width   d_out, out_dim, output_dim, out_size, out_features, n_output, output_dimension
                   (`out` or `output` with a width word), mlp_num_outputs (a count of outputs
                   ending the name), layer_d_out (a listed name after a prefix), ... = d_model
                   (`FeedForward(n_input, n_hidden, n_output)`: the block's output is d_model wide)
                   (`MultiHeadAttention(d_in, d_out, ...)`: the component maps d_model to d_model)
    length         context_length, block_size, n_timesteps, max_len, ... = the drawn max_len, else a
                   length covering every drawn sequence (a causal-mask buffer sized by it)
    dtype          dtype, data_type, dtype_ = the dtype the examples are drawn in (never eps)
    device         device = "cpu" (NumPy code too; torch code gets it from `derived`)

Only REQUIRED arguments reach it (an optional one keeps the candidate's default); each value is a
note in the report.
"""
from __future__ import annotations

from .base import MISSING

OUT_WIDTH = ("d_out", "out_dim", "output_dim", "out_size", "out_features", "dim_out", "n_out",
             "d_output", "output_size", "out_channels", "outdim", "dout", "n_output", "n_outputs",
             "num_outputs", "num_output", "output_units")
LENGTH = ("context_length", "block_size", "n_timesteps", "timesteps", "num_timesteps", "n_ctx",
          "max_len", "max_length", "max_seq_len", "max_seq_length", "seq_len", "seq_length",
          "sequence_length", "max_sequence_length", "ctx_len", "context_len", "context_size",
          "max_positions", "num_positions", "n_positions", "max_position_embeddings",
          "expected_max_sequence_length", "window", "window_size")
DTYPE = ("dtype", "data_type", "dtype_", "datatype", "float_type", "np_dtype", "precision_dtype")
DEVICE = ("device", "dev")

LONGEST = 512
"""A length covering every sequence the components draw (their T stays far below it)."""


def _dtype(framework: str, name: str):
    if framework == "torch":
        import torch
        return getattr(torch, name)
    import numpy as np
    return np.dtype(name).type


OUT_WORDS = ("out", "output", "outputs")


def _names_out_width(name: str) -> bool:
    """An output width in words (output_dimension, out_size_): `out`/`output` with a width word;
    or a count of outputs ending the name after a prefix (mlp_num_outputs, proj_n_out: the
    outputs counted are units), or a listed name after a prefix (layer_d_out). A name going on
    after its outputs (num_output_heads, n_output_classes) counts something else."""
    from ..name_words import COUNT_WORDS, MODEL_WIDTH_WORDS
    words = [w for w in name.split("_") if w]
    if any(w in ("out", "output") for w in words) and any(w in MODEL_WIDTH_WORDS for w in words):
        return True
    if len(words) >= 2 and words[-1] in OUT_WORDS and words[-2] in COUNT_WORDS:
        return True
    return any("_".join(words[i:]) in OUT_WIDTH for i in range(1, len(words)))


def value(ctx, param, values: dict):
    """A value for a required constructor argument, or MISSING."""
    name = param.name.lower()
    if (name in OUT_WIDTH or _names_out_width(name)) and "d_model" in values:
        v = int(values["d_model"])
        ctx.note(f"constructor argument {param.name!r}: passed d_model {v} (an output width: the "
                 f"component maps d_model to d_model)")
        return v
    if name in LENGTH:
        v = int(values.get("max_len", LONGEST))
        ctx.note(f"constructor argument {param.name!r}: passed {v} (a length; the drawn "
                 f"sequences are shorter)")
        return v
    if name in DTYPE:
        dtype = getattr(ctx, "dtype", "float64")
        ctx.note(f"constructor argument {param.name!r}: passed {dtype} (the examples' dtype)")
        return _dtype(ctx.framework, dtype)
    if name in DEVICE:
        ctx.note(f"constructor argument {param.name!r}: passed 'cpu'")
        return "cpu"
    return MISSING
