"""Components: scaled dot-product attention, multi-head attention, positional encoding,
position-wise feed-forward, layer norm (registered in components.py)."""
from __future__ import annotations

import numpy as np

from parity_tests.harness.conditioning import layernorm_grad_kappa, layernorm_kappa

from .base import (
    ATTN_MASK_KINDS,
    K_ALIASES,
    MASK_ALIASES,
    MASK_KINDS,
    Q_ALIASES,
    SEARCH,
    V_ALIASES,
    X_ALIASES,  # noqa: F401
    Case,
    Component,
    InputSpec,
    LayerNorm,
    MaskSpec,
    MultiHeadAttention,
    PositionwiseFeedForward,
    SinusoidalPositionalEncoding,
    _activation,
    _cast,
    _choice,
    _float,
    _int,
    _load,
    _mask,
    _own_eps,
    _param_grads,
    draw_params,
    hs,
    mask_array,
    sdpa_backward,
    sdpa_forward,
    st,
)


# ------------------------------------------------------------------------------------------------
# sdpa
# ------------------------------------------------------------------------------------------------
class SDPA(Component):
    name = "sdpa"
    title = "scaled dot-product attention (function)"
    inputs = (InputSpec("q", Q_ALIASES), InputSpec("k", K_ALIASES), InputSpec("v", V_ALIASES))
    masks = (MaskSpec("mask", MASK_ALIASES, MASK_KINDS, "Tq", "Tk"),)
    returns_weights = True
    settable = {"max_batch": _int, "max_len": _int, "max_heads": _int, "max_d_head": _int}

    def strategy(self, fixed, strict, caps):
        @st.composite
        def draw(d):
            B = d(st.integers(1, fixed.get("max_batch", SEARCH["max_batch"])))
            H = d(st.integers(1, fixed.get("max_heads", SEARCH["max_heads"])))
            Tq = d(st.integers(1, fixed.get("max_len", SEARCH["max_len"])))
            Tk = d(st.integers(1, fixed.get("max_len", SEARCH["max_len"])))
            dk = d(st.integers(1, fixed.get("max_d_head", SEARCH["max_d_head"])))
            dv = d(st.integers(1, fixed.get("max_d_head", SEARCH["max_d_head"])))
            kinds = caps.mask_kinds.get("mask", self.masks[0].kinds)
            mask = d(_mask(kinds, B, H, Tq, Tk, strict))
            return {"B": B, "H": H, "Tq": Tq, "Tk": Tk, "dk": dk, "dv": dv, "mask": mask,
                    "seed": d(hs.seeds())}
        return draw()

    def build(self, ex, dtype, caps):
        rng = np.random.default_rng(ex["seed"])
        B, H, Tq, Tk, dk, dv = (ex[k] for k in ("B", "H", "Tq", "Tk", "dk", "dv"))
        scale = float(ex.get("scale", 1.0))        # structural.py: large scores on purpose
        q = _cast(scale * rng.standard_normal((B, H, Tq, dk)), dtype)
        k = _cast(scale * rng.standard_normal((B, H, Tk, dk)), dtype)
        v = _cast(rng.standard_normal((B, H, Tk, dv)), dtype)
        dout = self._upstream(rng, (B, H, Tq, dv), dtype)
        return Case(self.name, ex, {}, {"q": q, "k": k, "v": v}, {"mask": mask_array(ex["mask"])},
                    {}, dout, (B, H, Tq, dv), (B, H, Tq, Tk))

    def conditioning(self, case, key, ref):
        """Scores of size S are rounded to u * S, and the softmax turns that into a relative
        change of u * S in its weights: right code that rounds its scores otherwise (a
        log-sum-exp softmax, q scaled before the product) differs from the reference by that much,
        and its gradients again where they cancel. S is large only in structural.LARGE_SCORES
        (|q|, |k| ~ 30, there for the overflow a missing max subtraction shows, which no tolerance
        hides); a bug's difference (a scale, a mask, an axis) is of size 1."""
        q, k = case.inputs["q"], case.inputs["k"]
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])         # (B, H, Tq, Tk)
        return max(1.0, float(np.abs(scores).max(initial=0.0)))

    def reference(self, case):
        i = case.inputs
        (out, w), cache = sdpa_forward(i["q"], i["k"], i["v"], case.masks["mask"])
        dq, dk, dv = sdpa_backward(case.dout, cache)
        return {"output": out, "attention_weights": w, "grad_input:q": dq, "grad_input:k": dk,
                "grad_input:v": dv}


# ------------------------------------------------------------------------------------------------
# multi-head attention
# ------------------------------------------------------------------------------------------------
def _heads(d, fixed, even: bool = False, min_width: int = 1):
    """(d_model, num_heads) for one example; d_model >= min_width unless --set fixes it (layers
    that hold a LayerNorm ask for hs.MIN_D_MODEL: over 1-3 features a LayerNorm is degenerate and
    a comparison there measures rounding amplified by 1/sqrt(eps), not correctness)."""
    if "d_model" in fixed and "num_heads" in fixed:
        return fixed["d_model"], fixed["num_heads"]
    if "num_heads" in fixed:
        h = fixed["num_heads"]
        top = max(1, SEARCH["max_d_model"] // h)
        return h * d(st.integers(min(top, max(1, -(-min_width // h))), top)), h
    if "d_model" in fixed:
        D = fixed["d_model"]
        divisors = [h for h in range(1, min(D, SEARCH["max_heads"]) + 1) if D % h == 0]
        return D, d(st.sampled_from(divisors))
    D, h = d(hs.heads_and_width(max_heads=SEARCH["max_heads"], max_d_head=SEARCH["max_d_head"],
                                even=even, min_width=min_width))
    if D > SEARCH["max_d_model"]:                      # keep d_model <= 64: narrower heads
        dk = SEARCH["max_d_model"] // h
        dk -= 1 if even and (h * dk) % 2 else 0
        D = h * dk
    return D, h


class MHA(Component):
    name = "mha"
    title = "multi-head attention (module)"
    inputs = (InputSpec("query", Q_ALIASES), InputSpec("key", K_ALIASES),
              InputSpec("value", V_ALIASES))
    masks = (MaskSpec("mask", MASK_ALIASES, ATTN_MASK_KINDS, "Tq", "Tk"),)
    hypers = ("d_model", "num_heads")
    tree = "mha"
    returns_weights = True
    settable = {"d_model": _int, "num_heads": _int, "max_batch": _int, "max_len": _int}

    def strategy(self, fixed, strict, caps):
        @st.composite
        def draw(d):
            D, H = _heads(d, fixed)
            B = d(st.integers(1, fixed.get("max_batch", SEARCH["max_batch"])))
            Tq = d(st.integers(1, fixed.get("max_len", SEARCH["max_len"])))
            Tk = Tq if caps.self_attention else \
                d(st.integers(1, fixed.get("max_len", SEARCH["max_len"])))
            kinds = caps.mask_kinds.get("mask", self.masks[0].kinds)
            mask = d(_mask(kinds, B, H, Tq, Tk, strict))
            return {"B": B, "Tq": Tq, "Tk": Tk, "d_model": D, "num_heads": H, "mask": mask,
                    "seed": d(hs.seeds())}
        return draw()

    def param_shapes(self, hyper):
        D = hyper["d_model"]
        return {f"{p}.{leaf}": ((D, D) if leaf == "weight" else (D,))
                for p in ("q_proj", "k_proj", "v_proj", "out_proj") for leaf in ("weight", "bias")}

    def build(self, ex, dtype, caps):
        rng = np.random.default_rng(ex["seed"])
        B, Tq, Tk, D, H = (ex[k] for k in ("B", "Tq", "Tk", "d_model", "num_heads"))
        hyper = {"d_model": D, "num_heads": H}
        if caps.self_attention:
            inputs = {"x": _cast(rng.standard_normal((B, Tq, D)), dtype)}
        elif caps.shared_kv:                       # forward(q, kv): one tensor for key and value
            inputs = {"query": _cast(rng.standard_normal((B, Tq, D)), dtype),
                      "key_value": _cast(rng.standard_normal((B, Tk, D)), dtype)}
        else:
            inputs = {"query": _cast(rng.standard_normal((B, Tq, D)), dtype),
                      "key": _cast(rng.standard_normal((B, Tk, D)), dtype),
                      "value": _cast(rng.standard_normal((B, Tk, D)), dtype)}
        params = draw_params(rng, self.param_shapes(hyper), dtype)
        dout = self._upstream(rng, (B, Tq, D), dtype)
        return Case(self.name, ex, hyper, inputs, {"mask": mask_array(ex["mask"])}, params, dout,
                    (B, Tq, D), (B, H, Tq, Tk), self_attention=bool(caps.self_attention))

    def forward_module(self, case):
        """(the reference module, after its forward on `case`, its output)."""
        m = MultiHeadAttention(case.hyper["d_model"], case.hyper["num_heads"], dtype="float64")
        _load(m, case.params)
        i = case.inputs
        q, k, v = (i["x"],) * 3 if case.self_attention else \
            (i["query"], i["key_value"], i["key_value"]) if "key_value" in i else \
            (i["query"], i["key"], i["value"])
        return m, m.forward(q, k, v, case.masks["mask"])

    def reference(self, case):
        m, out = self.forward_module(case)
        i = case.inputs
        dq, dk, dv = m.backward(case.dout)
        if case.self_attention:
            grads = {"grad_input:x": dq + dk + dv}
        elif "key_value" in i:
            grads = {"grad_input:query": dq, "grad_input:key_value": dk + dv}
        else:
            grads = {"grad_input:query": dq, "grad_input:key": dk, "grad_input:value": dv}
        return {"output": out, "attention_weights": m.attn_weights.copy(), **grads,
                **_param_grads(m)}


# ------------------------------------------------------------------------------------------------
# positional encoding
# ------------------------------------------------------------------------------------------------
class Positional(Component):
    name = "positional"
    title = "sinusoidal positional encoding (module or table function)"
    inputs = (InputSpec("x", X_ALIASES),)
    hypers = ("d_model", "max_len")
    settable = {"d_model": _int, "max_len": _int, "max_batch": _int, "max_seq": _int}

    def strategy(self, fixed, strict, caps):
        @st.composite
        def draw(d):
            D = fixed["d_model"] if "d_model" in fixed else 2 * d(st.integers(1, SEARCH["max_d_model"] // 2))
            max_len = fixed.get("max_len", 64)
            T = d(st.integers(1, min(max_len, fixed.get("max_seq", SEARCH["max_len"]))))
            return {"B": d(st.integers(1, fixed.get("max_batch", SEARCH["max_batch"]))), "T": T, "d_model": D,
                    "max_len": max_len, "seed": d(hs.seeds())}
        return draw()

    def build(self, ex, dtype, caps):
        rng = np.random.default_rng(ex["seed"])
        B, T, D = ex["B"], ex["T"], ex["d_model"]
        x = _cast(rng.standard_normal((B, T, D)), dtype)
        return Case(self.name, ex, {"d_model": D, "max_len": ex["max_len"]}, {"x": x}, {}, {},
                    self._upstream(rng, (B, T, D), dtype), (B, T, D))

    def reference(self, case):
        m = SinusoidalPositionalEncoding(case.hyper["d_model"], case.hyper["max_len"], "float64")
        out = m.forward(case.inputs["x"])
        return {"output": out, "grad_input:x": m.backward(case.dout)}


# ------------------------------------------------------------------------------------------------
# feed-forward
# ------------------------------------------------------------------------------------------------
class FFN(Component):
    name = "ffn"
    title = "position-wise feed-forward network (module)"
    inputs = (InputSpec("x", X_ALIASES),)
    hypers = ("d_ff", "d_model", "activation")
    tree = "ffn"
    settable = {"d_model": _int, "d_ff": _int, "activation": _activation, "max_batch": _int,
                "max_len": _int}

    def strategy(self, fixed, strict, caps):
        @st.composite
        def draw(d):
            ex = {"B": d(st.integers(1, fixed.get("max_batch", SEARCH["max_batch"]))),
                  "T": d(st.integers(1, fixed.get("max_len", SEARCH["max_len"]))),
                  "d_model": d(_choice(fixed, "d_model", st.integers(1, SEARCH["max_d_model"]))),
                  "d_ff": d(_choice(fixed, "d_ff", st.integers(1, SEARCH["max_d_ff"]))),
                  "activation": fixed.get("activation", "relu"), "seed": d(hs.seeds())}
            if caps.d_ff_ratio and "d_ff" not in fixed:   # width fixed by the candidate
                ex["d_ff"] = caps.d_ff_ratio * ex["d_model"]
            return ex
        return draw()

    def param_shapes(self, hyper):
        D, F = hyper["d_model"], hyper["d_ff"]
        return {"linear1.weight": (F, D), "linear1.bias": (F,), "linear2.weight": (D, F),
                "linear2.bias": (D,)}

    def build(self, ex, dtype, caps):
        rng = np.random.default_rng(ex["seed"])
        B, T, D = ex["B"], ex["T"], ex["d_model"]
        hyper = {"d_model": D, "d_ff": ex["d_ff"], "activation": ex["activation"]}
        x = _cast(rng.standard_normal((B, T, D)), dtype)
        params = draw_params(rng, self.param_shapes(hyper), dtype)
        return Case(self.name, ex, hyper, {"x": x}, {}, params,
                    self._upstream(rng, (B, T, D), dtype), (B, T, D))

    def reference(self, case):
        h = case.hyper
        m = PositionwiseFeedForward(h["d_model"], h["d_ff"], h["activation"], dtype="float64")
        _load(m, case.params)
        out = m.forward(case.inputs["x"])
        return {"output": out, "grad_input:x": m.backward(case.dout), **_param_grads(m)}


# ------------------------------------------------------------------------------------------------
# layer norm
# ------------------------------------------------------------------------------------------------
class LayerNormComponent(Component):
    name = "layernorm"
    title = "layer normalization (module)"
    inputs = (InputSpec("x", X_ALIASES),)
    hypers = ("d_model", "eps")
    tree = "norm"
    settable = {"d_model": _int, "eps": _float, "max_batch": _int, "max_len": _int}

    def strategy(self, fixed, strict, caps):
        @st.composite
        def draw(d):
            return {"B": d(st.integers(1, fixed.get("max_batch", SEARCH["max_batch"]))),
                    "T": d(st.integers(1, fixed.get("max_len", SEARCH["max_len"]))),
                    # from hs.MIN_D_MODEL: over 1-3 features a LayerNorm is degenerate
                    "d_model": d(_choice(fixed, "d_model",
                                         st.integers(hs.MIN_D_MODEL, SEARCH["max_d_model"]))),
                    "eps": fixed.get("eps", _own_eps(caps)),
                    # the spread of x: small spreads make eps matter, large ones the rest
                    "scale": d(st.sampled_from((1.0, 0.01, 10.0))),
                    "seed": d(hs.seeds())}
        return draw()

    def param_shapes(self, hyper):
        D = hyper["d_model"]
        return {"weight": (D,), "bias": (D,)}

    def build(self, ex, dtype, caps):
        rng = np.random.default_rng(ex["seed"])
        B, T, D = ex["B"], ex["T"], ex["d_model"]
        hyper = {"d_model": D, "eps": ex["eps"]}
        x = ex["scale"] * rng.standard_normal((B, T, D)) + rng.standard_normal((B, T, 1))
        params = draw_params(rng, self.param_shapes(hyper), dtype)
        return Case(self.name, ex, hyper, {"x": _cast(x, dtype)}, {}, params,
                    self._upstream(rng, (B, T, D), dtype), (B, T, D))

    def conditioning(self, case, key, ref):
        """LayerNorm divides by the row's spread: rows of tiny spread (the draw's scale 0.01,
        d_model 4) amplify float rounding in both the reference and a correct candidate by
        max|x| / std, and the input gradient's again where it cancels (harness/conditioning.py,
        as the parity suite's own LayerNorm tests scale theirs)."""
        x, eps = case.inputs["x"], case.hyper["eps"]
        if key == "grad_input:x":
            dy_gamma = case.dout * case.params["weight"]
            return layernorm_grad_kappa(x, eps, dy_gamma, float(np.abs(ref).max(initial=0.0)))
        return layernorm_kappa(x, eps)

    def reference(self, case):
        m = LayerNorm(case.hyper["d_model"], case.hyper["eps"], "float64")
        _load(m, case.params)
        out = m.forward(case.inputs["x"])
        return {"output": out, "grad_input:x": m.backward(case.dout), **_param_grads(m)}


