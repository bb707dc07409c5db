"""The oracle's components, shared part: data types (Case, Quantity, ...), the search ranges
(SEARCH), drawing helpers and the Component base class. The components themselves live in
component_parts.py (sdpa, mha, positional, ffn, layernorm) and component_layers.py (encoder and
decoder layers, whole models); components.py registers them (COMPONENTS, get).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

# npformer is the reference; importing it never imports torch
from npformer.layers.attention import MultiHeadAttention, sdpa_backward, sdpa_forward
from npformer.layers.feedforward import PositionwiseFeedForward
from npformer.layers.layernorm import LayerNorm
from npformer.layers.positional import SinusoidalPositionalEncoding
from npformer.models.config import ACTIVATIONS, TransformerConfig
from npformer.models.decoder import DecoderLayer
from npformer.models.encoder import EncoderLayer
from npformer.models.transformer import Transformer
from parity_tests.harness.tolerances import Tolerance, scaled, tolerance

if TYPE_CHECKING:
    from ..reading.findings import Findings


class _Lazy:
    """A module imported on first attribute access: the worker process (which only reads names
    and shapes from here) never imports hypothesis, which saves it about a second per start."""

    def __init__(self, name: str):
        self._name, self._mod = name, None

    def __getattr__(self, attr: str):
        if self._mod is None:
            import importlib
            self._mod = importlib.import_module(self._name)
        return getattr(self._mod, attr)


st = _Lazy("hypothesis.strategies")
hs = _Lazy("parity_tests.harness.strategies")
MASK_KINDS = ("none", "padding", "causal", "causal_padding", "random", "random_2d")  # = hs.MASK_KINDS

REF = np.float64  # the reference always computes in float64 from the candidate-precision values

# The hidden search's ranges (each bound is a --set KEY=VALUE of the components that take it; sizes
# are drawn uniformly-ish by Hypothesis, which also tries the ends and shrinks failures towards 1):
SEARCH = {
    "max_batch": 4,       # batch 1..4
    "max_len": 16,        # sequence lengths (queries, keys, positions) 1..16
    "max_heads": 8,       # heads 1..8
    "max_d_head": 16,     # head width 1..16 (sdpa: q/k and v widths separately)
    "max_d_model": 64,    # d_model 1..64 (multi-head: num_heads * head width, capped at 64; from
    #                       hs.MIN_D_MODEL = 4 where a LayerNorm is inside: norms, layers, models)
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


def _mask(kinds, B, H, Tq, Tk, strict):
    """A keep-mask drawn by the harness strategy, stored in the example as a 0/1 nested list."""
    return st.composite(_draw_mask)(kinds, B, H, Tq, Tk, strict)


def _draw_mask(draw, kinds, B, H, Tq, Tk, strict):
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
    """What a parameter the candidate does not have is held at: 1 for norm gains, the identity for a
    square projection (an attention with no output projection), else 0."""
    leaf = name.rsplit(".", 1)[-1]
    if leaf == "weight" and len(shape) == 2 and shape[0] == shape[1]:
        return np.eye(shape[0], dtype=REF)
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

def _own_eps(caps: Findings | None) -> float:
    """The norm epsilon the reference uses: the candidate's own where its code fixes one, else 1e-5."""
    return 1e-5 if caps is None or caps.norm_eps is None else caps.norm_eps

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
    def strategy(self, fixed: dict, strict: bool, caps: Findings) -> st.SearchStrategy:
        raise NotImplementedError

    def build(self, example: dict, dtype: str, caps: Findings) -> Case:
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

    def conditioning(self, case: Case, key: str, ref: np.ndarray) -> float:
        """How much these inputs amplify rounding in quantity `key` (>= 1). 1 for every component
        but those whose rounding the inputs can amplify (sdpa's large scores, a LayerNorm on rows
        of tiny spread: parity_tests/harness/conditioning.py), and a case of large attention scores
        (scores.py: the largest |score|, as sdpa's)."""
        if case.example.get("large_scores") and hasattr(self, "forward_module"):
            from . import scores
            return scores.conditioning(self, case)
        return 1.0

    def tolerance(self, case: Case, key: str, ref: np.ndarray, dtype: str, kind: str) -> Tolerance:
        """The tolerance for quantity `key` (of `kind`) on `case`'s inputs: the table's, times
        `conditioning`; every comparison of a check (main run, modes, inference) takes it here."""
        return scaled(tolerance(dtype, kind), self.conditioning(case, key, ref))

    def param_shapes(self, hyper: dict) -> dict[str, tuple]:
        return {}

    def constructor_values(self, hyper: dict) -> dict[str, Any]:
        """Hyperparameter values a candidate's constructor may ask for (names: naming.HYPER_ALIASES)."""
        return {k: hyper[k] for k in self.hypers if k in hyper}

    @staticmethod
    def _upstream(rng, shape, dtype):
        return _cast(rng.standard_normal(shape), dtype)


MAX_SETTING = 4096          # the largest size --set or a spec may fix (a bound, not a target)


def _whole(v, low: int, high: int) -> int:
    """An integer low..high from a command line string or a spec's TOML value (a bool, 2.5 or
    'abc' is refused, never truncated)."""
    try:
        n = v if isinstance(v, int) and not isinstance(v, bool) else int(str(v).strip())
    except ValueError:
        n = None
    if isinstance(v, (bool, float)) or n is None or not low <= n <= high:
        raise ValueError(f"expected an integer {low}..{high}, got {v!r}")
    return n


def _int(v) -> int:
    """A size or a bound (d_model, num_heads, max_len, ...): 1..MAX_SETTING."""
    return _whole(v, 1, MAX_SETTING)


def _index(v) -> int:
    """A token id (pad_id): 0..2**20."""
    return _whole(v, 0, 1 << 20)


def _float(v) -> float:
    """An epsilon: a finite number > 0 and <= 0.1."""
    try:
        x = float(v) if not isinstance(v, bool) else math.nan
    except (TypeError, ValueError):
        x = math.nan
    if not (math.isfinite(x) and 0 < x <= 0.1):
        raise ValueError(f"expected a finite number > 0 and <= 0.1, got {v!r}")
    return x


def parse_settings(comp, values: dict, where: str = "--set") -> dict:
    """`--set KEY=VALUE` values for `comp` (or a spec's `settings` table, `where` naming it), each
    parsed and range-checked by its settable parser and checked together (settings_clash); a
    ValueError names the setting."""
    fixed = {}
    for k, v in values.items():
        if k not in comp.settable:
            raise ValueError(f"{where} {k}: component {comp.name!r} accepts "
                             f"{', '.join(sorted(comp.settable)) or 'no settings'}")
        try:
            fixed[k] = comp.settable[k](v)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where} {k}={v!r}: {exc}") from None
    clash = settings_clash(fixed)
    if clash is not None:
        raise ValueError(f"{where} {clash}")
    return fixed


def settings_clash(fixed: dict) -> str | None:
    """Why sizes fixed together cannot be drawn (num_heads not dividing d_model, pad_id outside a
    vocabulary), or None."""
    d, h = fixed.get("d_model"), fixed.get("num_heads")
    if d is not None and h is not None and d % h:
        return f"num_heads={h}: must divide d_model={d} (each head gets d_model / num_heads)"
    pad = fixed.get("pad_id")
    for vocab in ("src_vocab", "tgt_vocab"):
        if pad is not None and fixed.get(vocab) is not None and pad >= fixed[vocab]:
            return f"pad_id={pad}: must be below {vocab}={fixed[vocab]} (an id of that vocabulary)"
    sv, tv = fixed.get("src_vocab"), fixed.get("tgt_vocab")
    if fixed.get("share_embeddings") and sv is not None and tv is not None and sv != tv:
        return (f"share_embeddings=true: needs src_vocab = tgt_vocab (one table for both), got "
                f"src_vocab={sv}, tgt_vocab={tv}")
    return None


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
                "self_mask", "padding_mask", "key_mask", "bias_mask", "*mask*")
