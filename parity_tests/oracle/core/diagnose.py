"""Diagnosis: when a candidate's output differs, which classic mistake would explain it.

The failing example is recomputed with the reference changed in one known way at a time (scores
scaled by sqrt(d_model) or not at all, the mask ignored or its convention flipped, softmax over the
wrong axis, unbiased variance, eps outside the square root, another activation, pre- vs post-norm;
for a whole model also its embeddings scaled by sqrt(d_model) or not, and final norms or none);
when the candidate's output equals one of these to tolerance, while the reference itself differs
from it, the report says `likely cause: ...`. An output within TINY of the reference (relative to
its scale) that none of them explains, in a float64 check, is named a near miss: a small constant
of the code's own (`+ 1e-12` in a softmax's denominator) or a float32 step. A hint only: the
verdict stays MISMATCH, and correct code is never given one (a variant is named only when the
reference output is not the candidate's; the near miss only on an output the judge found over its
tolerance).

Runs in the parent, on the validated float64 arrays the judge compared; nothing here calls anything
the submission made.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np

ATTENTION_PREFIXES = {"mha": ("",), "encoder_layer": ("self_attn.",),
                      "decoder_layer": ("self_attn.", "cross_attn.")}


def _scaled_queries(case, factor_of: Callable[[int, int], float]):
    """A case whose query projections (weight and bias) are multiplied by factor(d_k, d_model):
    the reference's scores are then scaled as the mistake scales them."""
    D, H = case.hyper["d_model"], case.hyper.get("num_heads", 1)
    f = factor_of(D // max(H, 1), D)
    params = dict(case.params)
    for pre in ATTENTION_PREFIXES[case.component]:
        for leaf in ("weight", "bias"):
            k = f"{pre}q_proj.{leaf}"
            if k in params:
                params[k] = params[k] * f
    return replace(case, params=params)


def _sdpa_scaled(case, factor_of):
    dk = case.inputs["q"].shape[-1]
    return replace(case, inputs=dict(case.inputs, q=case.inputs["q"] * factor_of(dk, dk)))


def _masks(case, how: str):
    masks = {}
    for n, keep in case.masks.items():
        if keep is None or how == "ignored":
            masks[n] = None
        else:
            flipped = ~keep
            if not flipped.any(axis=-1).all():
                return None                     # a fully hidden row: no finite variant
            masks[n] = flipped
    if all(v is None for v in case.masks.values()):
        return None
    return replace(case, masks=masks)


def flip_untried(case) -> bool:
    """Whether this example's masks could not be tried flipped (see `_masks`): flipped, a row
    would hide every key, so no finite variant says whether the candidate reads 1 as 'hidden'."""
    masks = [m for m in (getattr(case, "masks", None) or {}).values() if m is not None]
    return case.component in ATTENTION_PREFIXES or case.component == "sdpa" \
        if masks and _masks(case, "flipped") is None else False


def _hyper(case, **change):
    if any(case.hyper.get(k) == v for k, v in change.items()):
        return None
    return replace(case, hyper=dict(case.hyper, **change))


def _attention_variants(case):
    sc = _sdpa_scaled if case.component == "sdpa" else _scaled_queries
    out = []
    if case.component != "sdpa":
        out.append(("scores scaled by sqrt(d_model) instead of sqrt(d_k) (the head width)",
                    lambda: _scaled_queries(case, lambda dk, d: math.sqrt(dk / d))
                    if case.hyper.get("num_heads", 1) > 1 else None))
    out += [("scores not scaled by 1/sqrt(d_k)", lambda: sc(case, lambda dk, d: math.sqrt(dk))),
            ("scores divided by d_k instead of sqrt(d_k)",
             lambda: sc(case, lambda dk, d: 1 / math.sqrt(dk)) if dk_of(case) > 1 else None),
            (("the mask ignored (code that adds its mask to the scores gets nothing from a 0/1 "
              "boolean mask: try --mask-convention additive --mask-dtype float)"),
             lambda: _masks(case, "ignored")),
            ("the mask convention flipped (1 read as 'hidden'; try --mask-convention drop)",
             lambda: _masks(case, "flipped"))]
    return out


def dk_of(case) -> int:
    if case.component == "sdpa":
        return int(case.inputs["q"].shape[-1])
    return int(case.hyper["d_model"]) // max(int(case.hyper.get("num_heads", 1)), 1)


def _layer_variants(case, probed: bool = False):
    """Another activation, the other norm placement, and the two together (GPT-style blocks are
    pre-norm with GELU). `probed`: the norm placement was decided by the norm-order probe
    (recognise/norm_order found the layer pre-norm), so the other placement is never offered as a
    setting to change: the hint says the layer's placement changed with its weights."""
    act = case.hyper.get("activation")
    single = []
    if act == "relu":
        single += [("GELU (exact, erf) instead of ReLU", "--set activation=gelu",
                    {"activation": "gelu"}),
                   ("GELU (tanh approximation) instead of ReLU", "--set activation=gelu_tanh",
                    {"activation": "gelu_tanh"})]
    if "norm_first" in case.hyper and probed:
        single.append(("post-norm, although with every norm's gain 0 it behaved as pre-norm (the "
                       "norm-order probe, which chose the pre-norm reference): its norm placement "
                       "changes with its weights; review the code", "",
                       {"norm_first": not case.hyper["norm_first"]}))
    elif "norm_first" in case.hyper:
        first = bool(case.hyper["norm_first"])
        single.append(((f"{'post' if first else 'pre'}-norm instead of "
                        f"{'pre' if first else 'post'}-norm"), f"--set norm_first={'false' if first else 'true'}",
                       {"norm_first": not first}))
    combos = list(single)
    for a in range(len(single)):
        for b in range(a + 1, len(single)):
            if not set(single[a][2]) & set(single[b][2]):
                combos.append((f"{single[a][0]} and {single[b][0]}",
                               f"{single[a][1]} {single[b][1]}",
                               dict(single[a][2], **single[b][2])))
    return [(f"{label} ({opt.strip()})" if opt.strip() else label, (lambda ch=ch: _hyper(case, **ch)))
            for label, opt, ch in combos]


# -- direct formulas (components small enough to write out) --------------------------------------
def _layernorm(x, g, b, eps, ddof=0, eps_outside=False):
    mu = x.mean(-1, keepdims=True)
    with np.errstate(all="ignore"):         # d_model = 1 with ddof 1: NaN, as such code gives
        var = ((x - mu) ** 2).sum(-1, keepdims=True) / (x.shape[-1] - ddof)
        den = np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps)
        return g * (x - mu) / den + b


def _layernorm_variants(case):
    x, p, eps = case.inputs["x"], case.params, case.hyper["eps"]

    def ln(**kw):
        return lambda: _layernorm(x, p["weight"], p["bias"], eps, **kw)
    return [("unbiased variance (divides by d_model - 1)", ln(ddof=1)),
            ("eps added outside the square root (std + eps)", ln(eps_outside=True)),
            ("unbiased std with eps outside the square root (x - mean) / (std + eps)",
             ln(ddof=1, eps_outside=True)),
            ("eps left out", lambda: _layernorm(x, p["weight"], p["bias"], 0.0))]


def _softmax(s, axis):
    s = s - s.max(axis=axis, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=axis, keepdims=True)


def _sdpa_wrong_axis(case):
    q, k, v, keep = case.inputs["q"], case.inputs["k"], case.inputs["v"], case.masks.get("mask")
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if keep is not None:
        s = np.where(keep, s, -1e30)
    if s.shape[-2] < 2:
        return None
    return _softmax(s, -2) @ v


def _ffn_linear(case):
    p, x = case.params, case.inputs["x"]
    h = x @ p["linear1.weight"].T + p["linear1.bias"]
    return h @ p["linear2.weight"].T + p["linear2.bias"]


def _model_variants(case):
    """A whole model's switches flipped one at a time: the embedding scale, final norms after each
    stack, the norm placement (each named with the --set that asks for it)."""
    s = dict(getattr(case, "settings", None) or {})
    out = []
    for key, default, yes, no in (
            ("scale_embeddings", True, "embeddings multiplied by sqrt(d_model)",
             "embeddings not multiplied by sqrt(d_model)"),
            ("final_norm", False, "a final LayerNorm after each stack", "no final LayerNorm after the stacks"),
            ("norm_first", False, "pre-norm layers", "post-norm layers")):
        now = bool(s.get(key, default))
        label = f"{no if now else yes} (--set {key}={str(not now).lower()})"
        out.append((label, lambda key=key, now=now: replace(case, settings=dict(s, **{key: not now}))))
    return out


VARIANTS = {
    "sdpa": lambda c: _attention_variants(c) + [
        ("softmax over the queries axis instead of the keys axis", lambda: _sdpa_wrong_axis(c))],
    "mha": _attention_variants,
    "ffn": lambda c: _layer_variants(c) + [
        ("no activation between the two linear layers", lambda: _ffn_linear(c))],
    "encoder_layer": lambda c, probed=False: _attention_variants(c) + _layer_variants(c, probed),
    "decoder_layer": lambda c, probed=False: _attention_variants(c) + _layer_variants(c, probed),
    "layernorm": _layernorm_variants,
    "model": _model_variants,
}


def likely_causes(comp, case, got: np.ndarray | None, dtype: str = "float64",
                  probed_norm: bool = False, over: bool = False) -> list[str]:
    """Names of the catalogued mistakes whose reference output equals `got` to tolerance (the
    correct reference's output does not). Empty when none fits or nothing can be said.
    `probed_norm`: the norm-order probe chose this layer's placement (never hinted as a setting).
    `over`: the judge found `got` itself (the main run's output) over its tolerance, so an output
    within TINY of the reference's that no mistake explains is named a near miss (without it, as
    for a difference found in another mode only, such an output names nothing)."""
    if got is None or case is None or comp.name not in VARIANTS:
        return []
    got = np.asarray(got, dtype=np.float64)
    try:
        ref = np.asarray(comp.reference(case)["output"], dtype=np.float64)
    except Exception:  # noqa: BLE001 - the judge already reported what it could
        return []
    if ref.shape != got.shape:
        return []
    rel = 1e-9 if dtype == "float64" else 1e-4

    def close(a, b):
        scale = max(1.0, float(np.abs(b).max()) if b.size else 1.0)
        return bool(np.all(np.isfinite(a)) and np.abs(a - b).max() <= rel * scale)

    if np.all(np.isfinite(got)) and close(got, ref):
        return [tiny_difference(got, ref)] if over and dtype == "float64" else []
    found = []
    variants = VARIANTS[comp.name](case, probed_norm) if probed_norm and comp.name in (
        "encoder_layer", "decoder_layer") else VARIANTS[comp.name](case)
    for name, make in variants:
        try:
            v = make()
            if v is None:
                continue
            if not isinstance(v, np.ndarray):
                v = comp.reference(v)["output"]
            v = np.asarray(v, dtype=np.float64)
        except Exception:  # noqa: BLE001 - a variant the reference cannot compute here
            continue
        if v.shape != got.shape or close(v, ref):
            continue                            # indistinguishable from the reference here
        if close(got, v) or (not np.all(np.isfinite(v)) and np.array_equal(
                np.isfinite(v), np.isfinite(got)) and close(np.nan_to_num(got), np.nan_to_num(v))):
            found.append(name)
    if over and not found and dtype == "float64" and np.all(np.isfinite(got)) and \
            np.abs(got - ref).max() <= TINY * max(1.0, float(np.abs(ref).max())):
        found.append(tiny_difference(got, ref))
    return found


TINY = 1e-6     # a float64 output this close to the reference (relative to its scale) is a near miss


def tiny_difference(got: np.ndarray, ref: np.ndarray) -> str:
    """The hint for an output over the float64 tolerance but within TINY of the reference: the
    paper's computation with a small constant of its own, or a step rounded to float32."""
    worst = float(np.abs(got - ref).max()) / max(1.0, float(np.abs(ref).max()))
    return (f"a small constant added somewhere (a softmax denominator `+ 1e-12`, an epsilon the paper "
            f"does not have) or a step computed in float32: it differs by at most {worst:.1g} of "
            f"the output's scale, more than float64 rounding explains")
