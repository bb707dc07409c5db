"""Shared helpers of the torchformer tests: tolerances, a comparison that names the worst entry,
small configs, random inputs.

Tolerances are `atol + rtol * |ref|` with rtol = FACTOR x the floors DESIGN.md records for
"twin vs torch.nn layers, d=16" (float64: outputs 1e-15, gradients 5e-15; float32: 1e-6 / 3e-6) and
atol = rtol * max(1, max|ref|): rounding errors of a sum scale with its summands, not with the entry
(a small gradient entry of a tensor whose entries reach 70 carries errors of 70 * eps).
FACTOR = 20 covers the stacks of two layers and the model-level sums used here (measured worst cases
stay below a fifth of these bounds); it is far below anything a wrong formula would produce (>1e-3).
"""
from __future__ import annotations

import numpy as np
import torch

from npformer.models.config import TransformerConfig

FACTOR = 20
FLOORS = {"float64": {"output": 1e-15, "grad": 5e-15}, "float32": {"output": 1e-6, "grad": 3e-6}}


def tol(dtype: str, kind: str) -> float:
    return FACTOR * FLOORS[dtype][kind]


def to_np(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def assert_close(name: str, got, ref, dtype: str = "float64", kind: str = "output",
                 scale: float = 1.0, ref_scale: float | None = None) -> None:
    """|got - ref| <= t * max(1, max|ref|) + t * |ref| elementwise, t = scale * tol(dtype, kind);
    no NaN anywhere. `ref_scale` replaces max|ref| for a tensor compared as part of a larger check
    (the key-projection bias gradient is 0 in theory: its rounding noise follows the other grads)."""
    g, r = to_np(got).astype(np.float64), to_np(ref).astype(np.float64)
    assert g.shape == r.shape, f"{name}: shape {g.shape} != reference {r.shape}"
    assert np.isfinite(g).all(), f"{name}: {int((~np.isfinite(g)).sum())} non-finite entries"
    assert np.isfinite(r).all(), f"{name}: reference has non-finite entries"
    t = scale * tol(dtype, kind)
    err = np.abs(g - r)
    big = float(np.abs(r).max(initial=0.0)) if ref_scale is None else max(
        ref_scale, float(np.abs(r).max(initial=0.0)))
    bound = t * max(1.0, big) + t * np.abs(r)
    if (err > bound).any():
        ratio = err / bound
        i = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        raise AssertionError(f"{name}: worst index {i}: got {g[i]!r}, ref {r[i]!r}, abs err "
                             f"{err[i]:.3e}, rel err {err[i] / max(abs(r[i]), 1e-300):.3e}, "
                             f"{ratio[i]:.1f}x the tolerance ({t:.1e} abs + rel, {dtype} {kind})")


def small_config(**changes) -> TransformerConfig:
    base = dict(d_model=16, num_heads=4, d_ff=24, num_encoder_layers=2, num_decoder_layers=2,
                max_len=32, vocab_size=13, pad_id=0, dropout=0.0, dtype="float64")
    base.update(changes)
    return TransformerConfig(**base)


def randn(gen: torch.Generator, *shape, dtype=torch.float64, requires_grad=False):
    x = torch.randn(*shape, generator=gen, dtype=dtype)
    return x.requires_grad_(requires_grad)


def perturb(module: torch.nn.Module, gen: torch.Generator, std: float = 0.3) -> None:
    """Make every parameter generic (LayerNorm ones/zeros and zero biases hide bugs)."""
    with torch.no_grad():
        for p in module.parameters():
            p.add_(torch.randn(p.shape, generator=gen, dtype=torch.float64).to(p.dtype) * std)


def assert_grads_close(ours: dict, ref: dict, dtype: str = "float64", prefix: str = "") -> None:
    """Parameter gradients by name; the absolute part scales with the largest gradient entry of the
    whole set (as npformer's gradcheck judges an exactly-zero gradient against the check's scale)."""
    assert set(ours) == set(ref), sorted(set(ours) ^ set(ref))
    big = max((float(np.abs(to_np(v)).max(initial=0.0)) for v in ref.values()), default=0.0)
    for n in ours:
        assert_close(f"{prefix}{n}.grad", ours[n], ref[n], dtype, "grad", ref_scale=big)
