"""Imports the reference under a computed name (the static scan cannot see it; the audit hook does)."""
import importlib

MOD = "np" + "former.attention"


def attention(Q, K, V, mask=None):
    ref = importlib.import_module(MOD)
    (out, w), _ = ref.sdpa_forward(Q, K, V, mask)
    return out, w
