"""The components the oracle can check: what to draw, how the reference computes it, what to compare.

Every component turns a drawn *example* (a small JSON-able dict: sizes, hyperparameters, the masks
as 0/1 lists, one integer `seed`) into a `Case` (arrays: inputs, keep-masks, parameters, upstream
gradient), and computes the reference quantities with npformer in float64:

    output                        the forward result
    attention_weights             per-head softmax probabilities (sdpa, mha)
    grad_input:NAME               gradient of each float input (upstream gradient: random normal)
    grad_param:NAME               gradient of each parameter, by npformer's state_dict name

in that order (the dependency order in which they are compared). The example alone determines every
array, so `--replay EXAMPLE` reproduces a case exactly.

Components: sdpa, mha, positional, ffn, layernorm, encoder_layer, decoder_layer, model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st

from parity_tests.harness import strategies as hs

# npformer is the reference; importing it never imports torch
from npformer.attention import MultiHeadAttention, sdpa_backward, sdpa_forward
from npformer.config import ACTIVATIONS, TransformerConfig
from npformer.decoder import DecoderLayer
from npformer.encoder import EncoderLayer
from npformer.feedforward import PositionwiseFeedForward
from npformer.layernorm import LayerNorm
from npformer.positional import SinusoidalPositionalEncoding
from npformer.transformer import Transformer

REF = np.float64  # the reference always computes in float64 from the candidate-precision values

# The hidden search's ranges (each bound is a --set KEY=VALUE of the components that take it; sizes
# are drawn uniformly-ish by Hypothesis, which also tries the ends and shrinks failures towards 1):
SEARCH = {
    "max_batch": 4,       # batch 1..4
    "max_len": 16,        # sequence lengths (queries, keys, positions) 1..16
    "max_heads": 8,       # heads 1..8
    "max_d_head": 16,     # head width 1..16 (sdpa: q/k and v widths separately)
    "max_d_model": 64,    # d_model 1..64 (multi-head: num_heads * head width, capped at 64)
    "max_d_ff": 64,       # feed-forward width 1..64
    "max_seq_model": 8,   # whole models: source / target lengths 1..8
    "max_vocab": 16,      # whole models: vocabularies 3..16
}


# ------------------------------------------------------------------------------------------------
# data types
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class InputSpec:
    name: str
    aliases: tuple[str, ...]
    kind: str = "float"          # float (gets a gradient) | ids (integer tokens)


@dataclass(frozen=True)
class MaskSpec:
    name: str
    aliases: tuple[str, ...]
    kinds: tuple[str, ...]       # mask kinds drawn for it (strategies.MASK_KINDS)
    q: str                       # example key of the query length
    k: str                       # example key of the key length


@dataclass(frozen=True)
class Quantity:
    key: str                     # output | attention_weights | grad_input:x | grad_param:name
    kind: str                    # harness quantity (tolerances): output | attention_weights | ...
    label: str                   # for people

    @property
    def group(self) -> str:
        return {"output": "output", "attention_weights": "attention weights",
                "input_grad": "input gradients", "param_grad": "parameter gradients"}[self.kind]


@dataclass
class Case:
    """Everything one example needs, as float64 arrays holding candidate-precision values."""

    component: str
    example: dict
    hyper: dict
    inputs: dict[str, np.ndarray]            # float inputs (REF) or int64 ids
    masks: dict[str, np.ndarray | None]      # bool keep-masks, full shape (see Component.mask_shape)
    params: dict[str, np.ndarray]            # reference name -> value
    dout: np.ndarray                         # upstream gradient of the output
    out_shape: tuple
    weights_shape: tuple | None = None
    row_keep: np.ndarray | None = None       # (B, T) positions of the output compared (models)
    absent: set = field(default_factory=set)  # parameters the candidate does not have
    self_attention: bool = False             # mha called as forward(x, mask)
    settings: dict = field(default_factory=dict)  # --set values the reference needs (models)


def quantity_label(key: str) -> str:
    if key == "output":
        return "output"
    if key == "attention_weights":
        return "attention weights"
    kind, name = key.split(":", 1)
    return f"gradient of input {name!r}" if kind == "grad_input" else f"gradient of parameter {name!r}"


def quantity_kind(key: str) -> str:
    if key in ("output", "attention_weights"):
        return key
    return "input_grad" if key.startswith("grad_input:") else "param_grad"


# ------------------------------------------------------------------------------------------------
# drawing helpers
# ------------------------------------------------------------------------------------------------
def _choice(fixed: dict, key: str, strategy):
    """st.just(fixed value) when the user fixed it with --set, else the strategy."""
    return st.just(fixed[key]) if key in fixed else strategy


@st.composite
def _mask(draw, kinds, B, H, Tq, Tk, strict):
    """A keep-mask drawn by the harness strategy, stored in the example as a 0/1 nested list."""
    mc = draw(hs.attention_masks(B, H, Tq, Tk, kinds=kinds, allow_fully_masked=strict))
    if mc.keep is None:
        return {"kind": "none", "keep": None}
    keep = np.broadcast_to(mc.keep, np.broadcast_shapes(mc.keep.shape, (1, 1, Tq, Tk)))
    per_head = keep.ndim == 4 and keep.shape[1] > 1
    full = np.broadcast_to(keep, (B, H if per_head else 1, Tq, Tk))
    return {"kind": mc.kind, "keep": full.astype(int).tolist()}


def mask_array(spec: dict | None) -> np.ndarray | None:
    if not spec or spec.get("keep") is None:
        return None
    return np.asarray(spec["keep"], dtype=bool)


def _cast(a: np.ndarray, dtype: str) -> np.ndarray:
    """Round to the candidate's precision, hold in float64 for the reference."""
    return np.asarray(a, dtype=np.float64).astype(dtype).astype(REF)


def draw_params(rng: np.random.Generator, shapes: dict[str, tuple], dtype: str) -> dict[str, np.ndarray]:
    """Parameter values that make bugs visible: nonzero biases, norm gains away from 1."""
    out = {}
    for name, shape in shapes.items():
        leaf = name.rsplit(".", 1)[-1]
        owner = name.rsplit(".", 1)[0] if "." in name else ""
        is_norm = "norm" in owner.rsplit(".", 1)[-1] or owner == ""
        if len(shape) == 1 and leaf == "bias":
            v = 0.5 * rng.standard_normal(shape)
        elif len(shape) == 1 and is_norm:
            v = 1.0 + 0.5 * rng.standard_normal(shape)
        elif len(shape) == 1:
            v = rng.standard_normal(shape)
        elif "embed" in owner:
            v = rng.standard_normal(shape) * shape[1] ** -0.5
        else:
            v = rng.standard_normal(shape) / math.sqrt(shape[1])
        out[name] = _cast(v, dtype)
    return out


def neutral_value(name: str, shape: tuple) -> np.ndarray:
    """What a parameter the candidate does not have is held at: 1 for norm gains, else 0."""
    leaf = name.rsplit(".", 1)[-1]
    return np.ones(shape, REF) if (leaf == "weight" and len(shape) == 1) else np.zeros(shape, REF)


def _state_shapes(module) -> dict[str, tuple]:
    return {n: tuple(p.data.shape) for n, p in module.named_parameters()}


def _load(module, params: dict[str, np.ndarray]) -> None:
    module.load_state_dict({k: v for k, v in params.items()}, strict=False)
    module.zero_grad()
    module.eval()


def _param_grads(module) -> dict[str, np.ndarray]:
    return {f"grad_param:{n}": p.grad.copy() for n, p in module.named_parameters()}


# ------------------------------------------------------------------------------------------------
# the component base
# ------------------------------------------------------------------------------------------------
class Component:
    """One checkable component. Subclasses define the drawing and the reference computation."""

    name = ""
    title = ""
    inputs: tuple[InputSpec, ...] = ()
    masks: tuple[MaskSpec, ...] = ()
    hypers: tuple[str, ...] = ()         # constructor hyperparameters, in alias-priority order
    tree: str | None = None              # naming tree of its parameters (naming.TREES / LEAVES)
    returns_weights = False              # may return attention weights
    settable: dict[str, Callable] = {}   # --set KEY=VALUE: key -> parser

    # -- drawing ----------------------------------------------------------------------------------
    def strategy(self, fixed: dict, strict: bool, caps: dict) -> st.SearchStrategy:
        raise NotImplementedError

    def build(self, example: dict, dtype: str, caps: dict) -> Case:
        raise NotImplementedError

    def reference(self, case: Case) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def quantities(self, case: Case) -> list[Quantity]:
        keys = ["output"]
        if self.returns_weights:
            keys.append("attention_weights")
        keys += [f"grad_input:{n}" for n, a in case.inputs.items() if a.dtype == REF]
        keys += [f"grad_param:{n}" for n in case.params]
        return [Quantity(k, quantity_kind(k), quantity_label(k)) for k in keys]

    def param_shapes(self, hyper: dict) -> dict[str, tuple]:
        return {}

    def constructor_values(self, hyper: dict) -> dict[str, Any]:
        """Hyperparameter values a candidate's constructor may ask for (names: naming.HYPER_ALIASES)."""
        return {k: hyper[k] for k in self.hypers if k in hyper}

    @staticmethod
    def _upstream(rng, shape, dtype):
        return _cast(rng.standard_normal(shape), dtype)


def _int(v) -> int:
    return int(v)


def _float(v) -> float:
    return float(v)


def _bool(v) -> bool:
    if isinstance(v, bool):
        return v
    s = str(v).lower()
    if s in ("1", "true", "yes", "on"):
        return True
    if s in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected a boolean (true/false), got {v!r}")


def _activation(v) -> str:
    if v not in ACTIVATIONS:
        raise ValueError(f"expected one of {ACTIVATIONS}, got {v!r}")
    return v


ATTN_MASK_KINDS = ("none", "padding", "causal", "causal_padding", "random_2d")

Q_ALIASES = ("q", "query", "Q", "queries", "x_q", "xq", "q_in", "query_input", "q_input")
K_ALIASES = ("k", "key", "K", "keys", "x_k", "xk", "k_in", "key_input", "k_input")
V_ALIASES = ("v", "value", "V", "values", "x_v", "xv", "v_in", "value_input", "v_input")
X_ALIASES = ("x", "input", "inputs", "X", "h", "hidden_states", "hidden", "src", "tensor", "inp",
             "embeddings", "emb", "features", "seq", "z", "data", "input_tensor", "x_in")
MASK_ALIASES = ("mask", "attn_mask", "attention_mask", "m", "msk", "keep_mask", "src_mask",
                "self_mask", "padding_mask", "key_mask", "bias_mask")


# ------------------------------------------------------------------------------------------------
# sdpa
# ------------------------------------------------------------------------------------------------
class SDPA(Component):
    name = "sdpa"
    title = "scaled dot-product attention (function)"
    inputs = (InputSpec("q", Q_ALIASES), InputSpec("k", K_ALIASES), InputSpec("v", V_ALIASES))
    masks = (MaskSpec("mask", MASK_ALIASES, hs.MASK_KINDS, "Tq", "Tk"),)
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
            kinds = caps.get("mask_kinds", {}).get("mask", self.masks[0].kinds)
            mask = d(_mask(kinds, B, H, Tq, Tk, strict))
            return {"B": B, "H": H, "Tq": Tq, "Tk": Tk, "dk": dk, "dv": dv, "mask": mask,
                    "seed": d(hs.seeds())}
        return draw()

    def build(self, ex, dtype, caps):
        rng = np.random.default_rng(ex["seed"])
        B, H, Tq, Tk, dk, dv = (ex[k] for k in ("B", "H", "Tq", "Tk", "dk", "dv"))
        q = _cast(rng.standard_normal((B, H, Tq, dk)), dtype)
        k = _cast(rng.standard_normal((B, H, Tk, dk)), dtype)
        v = _cast(rng.standard_normal((B, H, Tk, dv)), dtype)
        dout = self._upstream(rng, (B, H, Tq, dv), dtype)
        return Case(self.name, ex, {}, {"q": q, "k": k, "v": v}, {"mask": mask_array(ex["mask"])},
                    {}, dout, (B, H, Tq, dv), (B, H, Tq, Tk))

    def reference(self, case):
        i = case.inputs
        (out, w), cache = sdpa_forward(i["q"], i["k"], i["v"], case.masks["mask"])
        dq, dk, dv = sdpa_backward(case.dout, cache)
        return {"output": out, "attention_weights": w, "grad_input:q": dq, "grad_input:k": dk,
                "grad_input:v": dv}


# ------------------------------------------------------------------------------------------------
# multi-head attention
# ------------------------------------------------------------------------------------------------
def _heads(d, fixed, even: bool = False):
    if "d_model" in fixed and "num_heads" in fixed:
        return fixed["d_model"], fixed["num_heads"]
    if "num_heads" in fixed:
        h = fixed["num_heads"]
        return h * d(st.integers(1, max(1, SEARCH["max_d_model"] // h))), h
    if "d_model" in fixed:
        D = fixed["d_model"]
        divisors = [h for h in range(1, min(D, SEARCH["max_heads"]) + 1) if D % h == 0]
        return D, d(st.sampled_from(divisors))
    D, h = d(hs.heads_and_width(max_heads=SEARCH["max_heads"], max_d_head=SEARCH["max_d_head"],
                                even=even))
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
            Tk = Tq if caps.get("self_attention") else d(st.integers(1, fixed.get("max_len", SEARCH["max_len"])))
            kinds = caps.get("mask_kinds", {}).get("mask", self.masks[0].kinds)
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
        if caps.get("self_attention"):
            inputs = {"x": _cast(rng.standard_normal((B, Tq, D)), dtype)}
        else:
            inputs = {"query": _cast(rng.standard_normal((B, Tq, D)), dtype),
                      "key": _cast(rng.standard_normal((B, Tk, D)), dtype),
                      "value": _cast(rng.standard_normal((B, Tk, D)), dtype)}
        params = draw_params(rng, self.param_shapes(hyper), dtype)
        dout = self._upstream(rng, (B, Tq, D), dtype)
        return Case(self.name, ex, hyper, inputs, {"mask": mask_array(ex["mask"])}, params, dout,
                    (B, Tq, D), (B, H, Tq, Tk), self_attention=bool(caps.get("self_attention")))

    def reference(self, case):
        m = MultiHeadAttention(case.hyper["d_model"], case.hyper["num_heads"], dtype="float64")
        _load(m, case.params)
        i = case.inputs
        if case.self_attention:
            x = i["x"]
            out = m.forward(x, x, x, case.masks["mask"])
            dq, dk, dv = m.backward(case.dout)
            grads = {"grad_input:x": dq + dk + dv}
        else:
            out = m.forward(i["query"], i["key"], i["value"], case.masks["mask"])
            dq, dk, dv = m.backward(case.dout)
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
            return {"B": d(st.integers(1, fixed.get("max_batch", SEARCH["max_batch"]))),
                    "T": d(st.integers(1, fixed.get("max_len", SEARCH["max_len"]))),
                    "d_model": d(_choice(fixed, "d_model", st.integers(1, SEARCH["max_d_model"]))),
                    "d_ff": d(_choice(fixed, "d_ff", st.integers(1, SEARCH["max_d_ff"]))),
                    "activation": fixed.get("activation", "relu"), "seed": d(hs.seeds())}
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
                    "d_model": d(_choice(fixed, "d_model", st.integers(1, SEARCH["max_d_model"]))),
                    "eps": fixed.get("eps", 1e-5),
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

    def reference(self, case):
        m = LayerNorm(case.hyper["d_model"], case.hyper["eps"], "float64")
        _load(m, case.params)
        out = m.forward(case.inputs["x"])
        return {"output": out, "grad_input:x": m.backward(case.dout), **_param_grads(m)}


# ------------------------------------------------------------------------------------------------
# encoder and decoder layers
# ------------------------------------------------------------------------------------------------
LAYER_SETTABLE = {"d_model": _int, "num_heads": _int, "d_ff": _int, "activation": _activation,
                  "eps": _float, "norm_first": _bool, "max_batch": _int, "max_len": _int}


def _layer_hyper(d, fixed) -> dict:
    D, H = _heads(d, fixed)
    return {"d_model": D, "num_heads": H,
            "d_ff": d(_choice(fixed, "d_ff", st.integers(1, SEARCH["max_d_ff"]))),
            "activation": fixed.get("activation", "relu"), "eps": fixed.get("eps", 1e-5),
            "norm_first": fixed.get("norm_first", False)}


def layer_config(hyper: dict, **extra) -> TransformerConfig:
    return TransformerConfig(d_model=hyper["d_model"], num_heads=hyper["num_heads"],
                             d_ff=hyper["d_ff"], activation=hyper["activation"],
                             layer_norm_eps=hyper["eps"], norm_first=hyper["norm_first"],
                             dropout=0.0, dtype="float64", **extra)


class EncoderLayerComponent(Component):
    name = "encoder_layer"
    title = "Transformer encoder layer (module)"
    inputs = (InputSpec("x", X_ALIASES + ("enc_input", "src_emb", "encoder_input")),)
    masks = (MaskSpec("mask", MASK_ALIASES + ("enc_mask", "src_key_mask", "slf_attn_mask",
                                               "enc_self_attn_mask", "self_attn_mask"),
                      ("none", "padding", "causal", "causal_padding", "random_2d"), "T", "T"),)
    hypers = ("d_model", "num_heads", "d_ff", "eps", "activation", "norm_first")
    tree = "encoder_layer"
    settable = LAYER_SETTABLE

    def strategy(self, fixed, strict, caps):
        @st.composite
        def draw(d):
            hyper = _layer_hyper(d, fixed)
            B = d(st.integers(1, fixed.get("max_batch", SEARCH["max_batch"])))
            T = d(st.integers(1, fixed.get("max_len", SEARCH["max_len"])))
            kinds = caps.get("mask_kinds", {}).get("mask", self.masks[0].kinds)
            mask = d(_mask(kinds, B, hyper["num_heads"], T, T, strict))
            return {"B": B, "T": T, **hyper, "mask": mask, "seed": d(hs.seeds())}
        return draw()

    def hyper_of(self, ex):
        return {k: ex[k] for k in ("d_model", "num_heads", "d_ff", "activation", "eps", "norm_first")}

    def param_shapes(self, hyper):
        return _state_shapes(EncoderLayer(layer_config(hyper)))

    def build(self, ex, dtype, caps):
        rng = np.random.default_rng(ex["seed"])
        hyper = self.hyper_of(ex)
        B, T, D = ex["B"], ex["T"], ex["d_model"]
        x = _cast(rng.standard_normal((B, T, D)), dtype)
        params = draw_params(rng, self.param_shapes(hyper), dtype)
        return Case(self.name, ex, hyper, {"x": x}, {"mask": mask_array(ex["mask"])}, params,
                    self._upstream(rng, (B, T, D), dtype), (B, T, D))

    def reference(self, case):
        m = EncoderLayer(layer_config(case.hyper))
        _load(m, case.params)
        out = m.forward(case.inputs["x"], case.masks["mask"])
        return {"output": out, "grad_input:x": m.backward(case.dout), **_param_grads(m)}


class DecoderLayerComponent(EncoderLayerComponent):
    name = "decoder_layer"
    title = "Transformer decoder layer with cross-attention (module)"
    inputs = (InputSpec("x", ("x", "tgt", "trg", "dec_input", "y", "target", "input", "inputs",
                              "dec_inp", "tgt_emb", "decoder_input", "h", "X", "hidden_states")),
              InputSpec("memory", ("memory", "enc_output", "enc_out", "encoder_output",
                                   "encoder_out", "enc", "src", "context", "memory_bank", "m",
                                   "e_outputs", "enc_outputs", "encoder_outputs", "mem",
                                   "enc_hidden", "encoder_hidden_states", "src_enc",
                                   "enc_output_", "encoded", "source", "cross")))
    masks = (MaskSpec("self_mask", ("self_mask", "tgt_mask", "trg_mask", "look_ahead_mask",
                                    "causal_mask", "dec_mask", "self_attn_mask", "tgt_attn_mask",
                                    "slf_attn_mask", "dec_self_attn_mask", "mask", "attn_mask",
                                    "target_mask", "lookahead_mask", "no_peak_mask"),
                      ("none", "causal", "causal_padding", "padding"), "T", "T"),
             MaskSpec("memory_mask", ("memory_mask", "src_mask", "cross_mask", "enc_mask",
                                      "padding_mask", "src_attn_mask", "enc_dec_mask",
                                      "dec_enc_attn_mask", "cross_attn_mask", "source_mask",
                                      "enc_dec_attn_mask", "mem_mask", "context_mask",
                                      "memory_attn_mask", "src_padding_mask"),
                      ("none", "padding", "random_2d"), "T", "S"))
    tree = "decoder_layer"

    def strategy(self, fixed, strict, caps):
        @st.composite
        def draw(d):
            hyper = _layer_hyper(d, fixed)
            B = d(st.integers(1, fixed.get("max_batch", SEARCH["max_batch"])))
            T = d(st.integers(1, fixed.get("max_len", SEARCH["max_len"])))
            S = d(st.integers(1, fixed.get("max_len", SEARCH["max_len"])))
            kinds = caps.get("mask_kinds", {})
            H = hyper["num_heads"]
            sm = d(_mask(kinds.get("self_mask", self.masks[0].kinds), B, H, T, T, strict))
            mm = d(_mask(kinds.get("memory_mask", self.masks[1].kinds), B, H, T, S, strict))
            return {"B": B, "T": T, "S": S, **hyper, "self_mask": sm, "memory_mask": mm,
                    "seed": d(hs.seeds())}
        return draw()

    def param_shapes(self, hyper):
        return _state_shapes(DecoderLayer(layer_config(hyper), cross_attention=True))

    def build(self, ex, dtype, caps):
        rng = np.random.default_rng(ex["seed"])
        hyper = self.hyper_of(ex)
        B, T, S, D = ex["B"], ex["T"], ex["S"], ex["d_model"]
        x = _cast(rng.standard_normal((B, T, D)), dtype)
        mem = _cast(rng.standard_normal((B, S, D)), dtype)
        params = draw_params(rng, self.param_shapes(hyper), dtype)
        masks = {"self_mask": mask_array(ex["self_mask"]), "memory_mask": mask_array(ex["memory_mask"])}
        return Case(self.name, ex, hyper, {"x": x, "memory": mem}, masks, params,
                    self._upstream(rng, (B, T, D), dtype), (B, T, D))

    def reference(self, case):
        m = DecoderLayer(layer_config(case.hyper), cross_attention=True)
        _load(m, case.params)
        out = m.forward(case.inputs["x"], case.inputs["memory"], case.masks["self_mask"],
                        case.masks["memory_mask"])
        dx, dmem = m.backward(case.dout)
        return {"output": out, "grad_input:x": dx, "grad_input:memory": dmem, **_param_grads(m)}


# ------------------------------------------------------------------------------------------------
# whole encoder-decoder model
# ------------------------------------------------------------------------------------------------
class Model(Component):
    name = "model"
    title = "encoder-decoder Transformer (src ids, tgt ids -> logits)"
    inputs = (InputSpec("src", ("src", "source", "src_ids", "input_ids", "enc_input", "x",
                                "src_seq", "src_tokens", "encoder_input", "src_input", "inputs",
                                "src_sentence", "enc_inputs"), kind="ids"),
              InputSpec("tgt", ("tgt", "target", "trg", "tgt_ids", "dec_input", "y", "tgt_seq",
                                "decoder_input", "tgt_tokens", "trg_seq", "tgt_input",
                                "decoder_input_ids", "trg_input", "dec_inputs", "outputs"),
                        kind="ids"))
    masks = (MaskSpec("src_mask", ("src_mask", "source_mask", "enc_mask", "src_padding_mask",
                                   "encoder_mask", "src_attn_mask", "memory_mask"),
                      ("padding",), "S", "S"),
             MaskSpec("tgt_mask", ("tgt_mask", "trg_mask", "target_mask", "dec_mask",
                                   "look_ahead_mask", "tgt_attn_mask", "decoder_mask"),
                      ("causal_padding",), "T", "T"))
    hypers = ("src_vocab", "tgt_vocab", "d_model", "num_heads", "d_ff", "num_encoder_layers",
              "num_decoder_layers", "num_layers", "max_len", "pad_id", "eps", "activation",
              "norm_first", "vocab_size")
    tree = "model"
    settable = {"d_model": _int, "num_heads": _int, "d_ff": _int, "num_layers": _int,
                "num_encoder_layers": _int, "num_decoder_layers": _int, "src_vocab": _int,
                "tgt_vocab": _int, "max_len": _int, "pad_id": _int, "eps": _float,
                "activation": _activation, "norm_first": _bool, "final_norm": _bool,
                "scale_embeddings": _bool, "tie_embeddings": _bool, "output_bias": _bool,
                "max_batch": _int, "max_seq": _int}

    def strategy(self, fixed, strict, caps):
        @st.composite
        def draw(d):
            D, H = _heads(d, fixed, even=True)   # sinusoidal positions: the paper's even d_model
            n = fixed.get("num_layers")
            ne = fixed.get("num_encoder_layers", n) or d(st.integers(1, 2))
            nd = fixed.get("num_decoder_layers", n) or d(st.integers(1, 2))
            if n is None and "num_encoder_layers" not in fixed and "num_decoder_layers" not in fixed \
                    and caps.get("one_layer_count"):
                nd = ne
            sv = d(_choice(fixed, "src_vocab", st.integers(3, SEARCH["max_vocab"])))
            tv = sv if caps.get("one_vocab") else d(_choice(fixed, "tgt_vocab", st.integers(3, SEARCH["max_vocab"])))
            B = d(st.integers(1, fixed.get("max_batch", SEARCH["max_batch"])))
            S = d(st.integers(1, fixed.get("max_seq", SEARCH["max_seq_model"])))
            T = d(st.integers(1, fixed.get("max_seq", SEARCH["max_seq_model"])))
            src_len = [d(st.integers(1, S)) for _ in range(B)]
            tgt_len = [d(st.integers(1, T)) for _ in range(B)]
            return {"B": B, "S": S, "T": T, "d_model": D, "num_heads": H,
                    "d_ff": d(_choice(fixed, "d_ff", st.integers(1, SEARCH["max_d_ff"]))),
                    "num_encoder_layers": ne, "num_decoder_layers": nd,
                    "src_vocab": sv, "tgt_vocab": tv, "src_len": src_len, "tgt_len": tgt_len,
                    "seed": d(hs.seeds())}
        return draw()

    def config(self, ex, fixed) -> TransformerConfig:
        return TransformerConfig(
            d_model=ex["d_model"], num_heads=ex["num_heads"], d_ff=ex["d_ff"],
            num_encoder_layers=ex["num_encoder_layers"], num_decoder_layers=ex["num_decoder_layers"],
            vocab_size=max(ex["src_vocab"], ex["tgt_vocab"]), src_vocab_size=ex["src_vocab"],
            tgt_vocab_size=ex["tgt_vocab"], max_len=fixed.get("max_len", 64),
            pad_id=fixed.get("pad_id", 0), activation=fixed.get("activation", "relu"),
            norm_first=fixed.get("norm_first", False), final_norm=fixed.get("final_norm", False),
            layer_norm_eps=fixed.get("eps", 1e-5), scale_embeddings=fixed.get("scale_embeddings", True),
            tie_embeddings=fixed.get("tie_embeddings", False),
            output_bias=fixed.get("output_bias", True), dropout=0.0, dtype="float64")

    def hyper_from(self, cfg: TransformerConfig) -> dict:
        return {"src_vocab": cfg.src_vocab, "tgt_vocab": cfg.tgt_vocab, "vocab_size": cfg.src_vocab,
                "d_model": cfg.d_model, "num_heads": cfg.num_heads, "d_ff": cfg.d_ff,
                "num_encoder_layers": cfg.num_encoder_layers,
                "num_decoder_layers": cfg.num_decoder_layers,
                "num_layers": cfg.num_encoder_layers, "max_len": cfg.max_len, "pad_id": cfg.pad_id,
                "eps": cfg.layer_norm_eps, "activation": cfg.activation, "norm_first": cfg.norm_first,
                "final_norm": cfg.final_norm, "scale_embeddings": cfg.scale_embeddings}

    def build(self, ex, dtype, caps):
        fixed = caps.get("fixed", {})
        cfg = self.config(ex, fixed)
        hyper = self.hyper_from(cfg)
        rng = np.random.default_rng(ex["seed"])
        B, S, T = ex["B"], ex["S"], ex["T"]
        pad = cfg.pad_id
        src_keep = np.arange(S)[None, :] < np.asarray(ex["src_len"])[:, None]      # (B, S)
        tgt_keep = np.arange(T)[None, :] < np.asarray(ex["tgt_len"])[:, None]      # (B, T)
        src = hs.token_ids(rng, src_keep, cfg.src_vocab, pad)
        tgt = hs.token_ids(rng, tgt_keep, cfg.tgt_vocab, pad)
        ref_model = Transformer(cfg)
        params = draw_params(rng, _state_shapes(ref_model), dtype)
        if pad is not None:  # as torch.nn.Embedding(padding_idx=...): the padding row starts at 0
            for k in ("src_embed.weight", "tgt_embed.weight"):
                if k in params:
                    params[k][pad] = 0.0
        dout = self._upstream(rng, (B, T, cfg.tgt_vocab), dtype)
        dout = dout * tgt_keep[:, :, None]          # padded target positions carry no loss
        masks = {"src_mask": src_keep[:, None, None, :],                          # (B,1,1,S)
                 "tgt_mask": tgt_keep[:, None, None, :] & np.tril(np.ones((T, T), bool))[None, None]}
        return Case(self.name, ex, hyper, {"src": src, "tgt": tgt}, masks, params, dout,
                    (B, T, cfg.tgt_vocab), row_keep=tgt_keep, settings=dict(fixed))

    def reference(self, case):
        cfg = self.config(case.example, case.settings)
        m = Transformer(cfg)
        _load(m, case.params)
        out = m.forward(case.inputs["src"], case.inputs["tgt"])
        m.backward(case.dout)
        return {"output": out, **_param_grads(m)}


COMPONENTS: dict[str, Component] = {c.name: c for c in (
    SDPA(), MHA(), Positional(), FFN(), LayerNormComponent(), EncoderLayerComponent(),
    DecoderLayerComponent(), Model())}


def get(name: str) -> Component:
    if name not in COMPONENTS:
        raise KeyError(f"component: expected one of {', '.join(COMPONENTS)}, got {name!r}")
    return COMPONENTS[name]
