"""Attention weights from either twin: one call, plain NumPy arrays out.

    attention_weights(model, *inputs, **kwargs) -> {module name: (B, H, Tq, Tk) float array}

Runs `model(*inputs, **kwargs)` once in eval mode (no dropout; torch: no autograd graph, and every
MultiHeadAttention switched to its explicit path so it keeps its weights) and returns the per-head
attention probabilities of every MultiHeadAttention, keyed by dotted module name, e.g.
"encoder.layers.0.self_attn", "decoder.layers.1.cross_attn". The model's training mode (and, in
torchformer, each attention's need_weights flag) is restored afterwards.
"""
from __future__ import annotations

import numpy as np

__all__ = ["attention_weights", "collect_attention"]

# torch wrappers (torch.compile, DDP, DataParallel) -> the attribute holding the model they wrap
WRAPPERS = {"OptimizedModule": "_orig_mod", "DistributedDataParallel": "module",
            "DataParallel": "module"}


def collect_attention(model) -> dict[str, np.ndarray]:
    """Every MultiHeadAttention's `attn_weights` from the model's last forward, by dotted name (a copy).

    Works for npformer models (and torchformer ones run with need_weights=True): a module counts when
    it has an `attn_weights` attribute that is not None.
    """
    out: dict[str, np.ndarray] = {}
    for name, m in model.named_modules():
        w = getattr(m, "attn_weights", None)
        if w is None or not hasattr(m, "q_proj"):
            continue
        if hasattr(w, "detach"):                                   # a torch tensor
            w = w.detach().cpu().numpy()
        out[name] = np.array(w)                                    # (B, H, Tq, Tk), a copy
    return out


def attention_weights(model, *inputs, **kwargs) -> dict[str, np.ndarray]:
    """Every MultiHeadAttention's per-head weights for one eval-mode forward of `model` (see above)."""
    from npformer.layers.module import Module
    was_training = bool(getattr(model, "training", False))
    if isinstance(model, Module):
        model.eval()
        try:
            model(*inputs, **kwargs)
        finally:
            model.train(was_training)
        return collect_attention(model)
    try:
        import torch
    except ImportError:  # pragma: no cover - a non-npformer model without torch
        raise TypeError(f"model: expected an npformer or torchformer model, got "
                        f"{type(model).__name__}") from None
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected an npformer or torchformer model, got "
                        f"{type(model).__name__}")
    while type(model).__name__ in WRAPPERS:        # the model inside: names without the prefix
        model = getattr(model, WRAPPERS[type(model).__name__])
    attns = [m for m in model.modules() if hasattr(m, "need_weights") and hasattr(m, "q_proj")]
    flags = [m.need_weights for m in attns]
    model.eval()
    try:
        for m in attns:
            m.need_weights = True
        with torch.no_grad():
            model(*inputs, **kwargs)
        return collect_attention(model)
    finally:
        for m, f in zip(attns, flags):
            m.need_weights = f
        model.train(was_training)
