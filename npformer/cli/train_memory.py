"""`npformer train`'s early memory check: sizes whose arrays cannot fit in the memory this process can
still allocate are refused in one line before the model is built, the task drawn or workers launched.

What it counts, all lower bounds (counted with Python ints, so a size of 10**18 is refused, not
overflowed), in the run's dtype unless said otherwise; T is the task's longest row (--max-len, the
addition lines of --max-number for --task lm, 2 --max-len + 3 for --task mlm, --context for --data):

- the attention weights of one training batch, (batch, heads, T, T), for EVERY attention sublayer
  (each keeps its weights for the backward pass: an encoder layer has one, a decoder layer of an
  encoder-decoder two, self and cross, a language model's layer one);
- the logits of one training batch, (batch, T, vocabulary), unless the task classifies (the
  vocabulary as far as the options say before any text is read: the synthetic tasks' symbols and 3
  special tokens, --vocab-size of a BPE tokenizer; 0 when only the text decides it);
- the weights (each attention sublayer's 4 d_model^2, each layer's feed-forward 2 d_model d_ff, one
  vocabulary x d_model table) with their gradients and Adam's two moments: 4 copies;
- the positional table, (T, d_model);
- the held-out set's token ids, source and target, int64: drawn before training starts and kept.

All of these are alive at once during a training step, so their SUM is compared (after each alone,
whose message names the one option that makes it too big). The bound is what this process can still
allocate (npformer.guards.rules.available_memory: the least of the machine's memory, the kernel's
available memory plus free swap, and a container's cgroup headroom), not the machine's total, which
other processes share. Activations other than these (the feed-forward's hidden layer, LayerNorm's
statistics, dropout masks, temporary copies) are not counted: a run that passes may still not fit,
and its MemoryError is reported in one line by npformer.cli.main; a run that fits is never refused.
"""
from __future__ import annotations

from npformer.guards.rules import available_memory, format_bytes

__all__ = ["check_fits_memory", "training_memory_parts"]

CLASSIFY_TASKS = ("majority", "classify")


def _tokens_per_row(args) -> tuple[int, str]:
    """(the longest row a training batch holds, in tokens; the options that set it)."""
    task = getattr(args, "task", None)
    if getattr(args, "data", None):                      # your own text: --context tokens
        from npformer.data.text_lm import DEFAULT_CONTEXT
        n = getattr(args, "context", None) or DEFAULT_CONTEXT
        return int(n), f"--context {n}"
    if task == "lm":                                     # BOS a + b = c EOS
        from npformer.data.lm_data import line_tokens
        n = getattr(args, "max_number", None) or 100
        return line_tokens(n), f"--max-number {n}"
    if task == "mlm":                                    # BOS + 2 * max_len + 1 symbols + EOS
        return 2 * int(args.max_len) + 3, f"--max-len {args.max_len}"
    return int(args.max_len), f"--max-len {args.max_len}"


def _vocabulary(args) -> int:
    """The least vocabulary the options give before any text is read (0: the text decides it)."""
    if getattr(args, "data", None):
        if getattr(args, "tokenizer", None) == "bpe":
            from npformer.data.text_lm import DEFAULT_BPE_VOCAB
            return int(getattr(args, "vocab_size", None) or DEFAULT_BPE_VOCAB)
        return 0
    if getattr(args, "task", None) == "lm":
        return 0
    return int(getattr(args, "num_symbols", None) or 0) + 3      # PAD, BOS, EOS


def _layers(args) -> tuple[int, int, str]:
    """(attention sublayers, feed-forward blocks, the options that set them) of the task's model."""
    task = getattr(args, "task", None)
    enc = getattr(args, "encoder_layers", None) or args.layers
    dec = getattr(args, "decoder_layers", None) or args.layers
    if task in CLASSIFY_TASKS or task == "mlm":                   # an encoder
        return enc, enc, f"--layers {enc}" if enc == args.layers else f"--encoder-layers {enc}"
    if task == "lm":                                              # a decoder-only language model
        return dec, dec, f"--layers {dec}" if dec == args.layers else f"--decoder-layers {dec}"
    named = f"--layers {enc}" if enc == dec == args.layers else \
        f"--encoder-layers {enc}, --decoder-layers {dec}"
    return enc + 2 * dec, enc + dec, named


def training_memory_parts(args) -> list[tuple[str, str, int]]:
    """(the options that size it, what it is, its bytes) for each array a training run holds at once,
    as the module docstring counts them."""
    item = 8 if getattr(args, "dtype", "float32") == "float64" else 4
    T, sized_by = _tokens_per_row(args)
    B, H, d, d_ff = int(args.batch_size), int(args.heads), int(args.d_model), int(args.d_ff)
    attn, ffn, layers = _layers(args)
    V = _vocabulary(args)
    eval_size = getattr(args, "eval_size", None) or 0
    shape = f"--batch-size {B}, --heads {H}, --d-model {d}"
    parts = [(f"{sized_by} with {shape}, {layers}",
              f"the attention weights (batch, heads, T, T) of {attn} attention sublayer(s), kept for "
              f"the backward pass", attn * B * H * T * T * item),
             (f"{sized_by} with {shape}", "the positional table (max_len, d_model)", T * d * item),
             (f"{layers} with --d-model {d}, --d-ff {d_ff}",
              "the weights (4 d_model^2 per attention sublayer, 2 d_model d_ff per layer, one "
              "vocabulary x d_model table) with their gradients and Adam's two moments",
              4 * (attn * 4 * d * d + ffn * 2 * d * d_ff + V * d) * item),
             (f"--eval-size {eval_size} with {sized_by}", "the held-out set's token ids (source and "
              "target, int64)", 2 * eval_size * T * 8)]
    if getattr(args, "task", None) not in CLASSIFY_TASKS and V:
        parts.insert(1, (f"{sized_by} with --batch-size {B} and a vocabulary of {V}",
                         "the logits (batch, T, vocabulary)", B * T * V * item))
    return parts


def check_fits_memory(args) -> None:
    """`train` sizes that cannot exist in the memory this process can allocate, refused before the
    model is built (unchecked, `--max-len 100000000` would spend minutes on a 13 GB positional table
    and then fail, `--layers 100000` and `--eval-size 1000000000` run until killed): each array alone, then
    all of them together (the module docstring says what is counted)."""
    mem = available_memory()
    if not mem:
        return
    parts = training_memory_parts(args)
    for options, what, nbytes in parts:
        if nbytes > mem:
            raise ValueError(f"{options}: {what} alone needs {format_bytes(nbytes)}, more than the "
                             f"{format_bytes(mem)} this machine has available")
    total = sum(n for _, _, n in parts)
    if total > mem:
        options, _, _ = max(parts, key=lambda p: p[2])
        listed = "; ".join(f"{what} {format_bytes(n)}" for _, what, n in parts if n)
        raise ValueError(f"{options}: a training step holds at least {format_bytes(total)} at once "
                         f"({listed}), more than the {format_bytes(mem)} this machine has available")
