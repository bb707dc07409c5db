"""Weights as frameworks initialise them, on some of a check's examples.

The components draw every weight one way (components/base.draw_params): matrices N(0, 1/fan_in),
biases N(0, 0.25), norm gains 1 + N(0, 0.25), chosen to make bugs visible. No framework starts a
layer so: `nn.Linear` draws its weight and bias uniformly within +-1/sqrt(fan_in), `nn.LayerNorm`
starts at gain 1 and shift 0, many tutorials zero their biases. Code could tell the oracle's
weights from a freshly built layer's (a weight or bias outside +-1/sqrt(fan_in): the oracle;
every norm gain exactly 1: a layer at its start) and be right only on the oracle's
(`oracle_hostile/init_tells.py` matched, wrong from its build through its first training steps).
So each example's weights keep their draw on about half the examples, and on the rest are restyled
(`restyled`, from a generator seeded by the weights' own bytes: unpredictable in a search, the
same in a replay):

    init       every matrix and its bias uniform within +-1/sqrt(fan_in) (nn.Linear's default),
               norm gains 1 and shifts 0 (nn.LayerNorm's)
    zero_bias  the drawn matrices, every bias and norm shift 0, norm gains 1 (`nn.init.zeros_`)

Embedding tables keep their draw (N(0, 1/d): already an initialiser's), and arrays equal before
stay equal (a tied table). The large-score case's tuned weights are not restyled (runner.py).
Correct code is unaffected: the reference takes the same weights.
"""
from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from ..components import REF, Case

STYLES = ("drawn", "drawn", "init", "zero_bias")


def _key(a: np.ndarray) -> bytes:
    return a.dtype.str.encode() + str(a.shape).encode() + np.ascontiguousarray(a).tobytes()


def style_of(case: Case) -> tuple[str, np.random.Generator]:
    """The style this example's weights take, and the generator that draws them, both from the
    bytes of the drawn weights."""
    h = hashlib.blake2b(b"weights", digest_size=16)
    for name, a in case.params.items():
        if isinstance(a, np.ndarray):
            h.update(name.encode() + _key(a))
    seed = int.from_bytes(h.digest(), "little")
    return STYLES[seed % len(STYLES)], np.random.default_rng(seed >> 8)


def _role(name: str) -> str:
    """'embed', 'gain', 'shift', 'bias' (a projection's), 'matrix' or 'other', as draw_params
    tells them apart by name."""
    leaf = name.rsplit(".", 1)[-1]
    owner = name.rsplit(".", 1)[0] if "." in name else ""
    if "embed" in owner:
        return "embed"
    is_norm = "norm" in owner.rsplit(".", 1)[-1] or owner == ""
    if leaf == "bias":
        return "shift" if is_norm else "bias"
    if is_norm and leaf in ("weight", "gain", "gamma"):
        return "gain"
    return "matrix" if leaf == "weight" else "other"


def restyled(case: Case, dtype: str) -> Case:
    """The example with its weights in the style `style_of` picks (the same example when 'drawn')."""
    style, rng = style_of(case)
    if style == "drawn":
        return case
    params, made = dict(case.params), {}
    roles = {n: _role(n) for n in params}
    for n, a in params.items():                 # kept as drawn: an array tied to them stays so
        if not isinstance(a, np.ndarray) or a.dtype != REF or roles[n] in ("embed", "other"):
            made[_key(a) if isinstance(a, np.ndarray) else n] = a
    for n, a in params.items():
        if not isinstance(a, np.ndarray) or a.dtype != REF or roles[n] in ("embed", "other"):
            continue
        key = _key(a)
        if key not in made:
            made[key] = _new(roles[n], n, a, params, style, rng, dtype)
        params[n] = made[key]
    return dataclasses.replace(case, params=params)


def _new(role: str, name: str, a: np.ndarray, params: dict, style: str,
         rng: np.random.Generator, dtype: str) -> np.ndarray:
    if role == "gain":
        return np.ones_like(a)
    if role == "shift" or (role == "bias" and style == "zero_bias"):
        return np.zeros_like(a)
    if style == "zero_bias" or a.ndim not in (1, 2):
        return a
    weight = params.get(name.rsplit(".", 1)[0] + ".weight") if role == "bias" else a
    fan_in = weight.shape[1] if isinstance(weight, np.ndarray) and weight.ndim == 2 else a.shape[-1]
    bound = 1.0 / np.sqrt(max(int(fan_in), 1))
    return rng.uniform(-bound, bound, a.shape).astype(dtype).astype(REF)
