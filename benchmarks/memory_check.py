"""The memory a run's configurations need, checked before anything is measured.

A configuration whose training step cannot fit in the memory this process can still allocate
(`--configs base --batch-size 100000`) would start, spend minutes building inputs and timing the
first backends, and end in a MemoryError or the kernel's OOM kill. `check_configs_fit` refuses
it up front in one line naming the configuration and the figures; `--ignore-memory-check` goes on
anyway (the estimate is a lower bound, counted with Python ints, never more than a step holds).

Counted per configuration, for the CPU backends asked for (a GPU backend holds its arrays on the
device, whose own allocator reports what does not fit; a CUDA-only configuration is skipped), in
the widest dtype among them, as npformer.cli.train_memory counts `npformer train`'s step:

- the attention weights of one batch kept for the backward pass, (batch, heads, Tq, Tk), for every
  attention sublayer (an encoder-decoder's encoder self-attention, decoder self- and
  cross-attention; a causal LM's self-attention);
- the logits of one batch, (batch, T, vocabulary);
- the feed-forward's hidden activations of one batch, (batch, T, d_ff), in every layer;
- the weights with their gradients and Adam's two moments: 4 copies.

The bound is npformer.guards.rules.available_memory (the least of the machine's memory, the
kernel's available memory plus free swap and a container's headroom).
"""
from __future__ import annotations

from npformer.guards.rules import available_memory, format_bytes

FLAG = "--ignore-memory-check"


def training_step_parts(bc, itemsize: int) -> list[tuple[str, int]]:
    """(what, bytes) of each array a training step of BenchConfig `bc` holds at once."""
    f = bc.model_fields
    B, H, d, d_ff, V = bc.batch, f["num_heads"], f["d_model"], f["d_ff"], f["vocab_size"]
    T = bc.tgt_len
    if bc.model == "seq2seq":
        S, enc, dec = bc.src_len, f.get("num_encoder_layers", 6), f.get("num_decoder_layers", 6)
        scores = enc * S * S + dec * (T * T + T * S)            # per row and head
        sublayers, layers, ffn_rows = enc + 2 * dec, enc + dec, enc * S + dec * T
    else:
        dec = f.get("num_decoder_layers", 6)
        scores, sublayers, layers, ffn_rows = dec * T * T, dec, dec, dec * T
    weights = sublayers * 4 * d * d + layers * 2 * d * d_ff + V * d
    return [(f"attention weights {format_bytes(B * H * scores * itemsize)}", B * H * scores * itemsize),
            (f"logits {format_bytes(B * T * V * itemsize)}", B * T * V * itemsize),
            (f"feed-forward activations {format_bytes(B * ffn_rows * d_ff * itemsize)}",
             B * ffn_rows * d_ff * itemsize),
            (f"weights, gradients and Adam's moments {format_bytes(4 * weights * itemsize)}",
             4 * weights * itemsize)]


def check_configs_fit(configs, backends) -> None:
    """Raise ValueError (one line) for the first configuration whose training step cannot fit in
    this process's available memory on the CPU backends among `backends` (Backend objects)."""
    cpu = [b for b in backends if not b.cuda]
    mem = available_memory()
    if not cpu or not mem:
        return
    itemsize = max(8 if b.dtype == "float64" else 4 for b in cpu)
    for bc in configs:
        if bc.cuda_only:                                # never run on the CPU backends
            continue
        parts = training_step_parts(bc, itemsize)
        need = sum(n for _, n in parts)
        if need > mem:
            raise ValueError(
                f"--configs {bc.name} (batch {bc.batch}, length {bc.tgt_len}): a training step "
                f"holds at least {format_bytes(need)} ({'; '.join(w for w, _ in parts)}, "
                f"{'float64' if itemsize == 8 else 'float32'}), more than the {format_bytes(mem)} "
                f"this machine has available; a smaller --batch-size or --seq-len may fit, or pass "
                f"{FLAG} to run it anyway")
