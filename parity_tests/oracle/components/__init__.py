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

from .base import (
    ATTN_MASK_KINDS,
    K_ALIASES,
    MASK_ALIASES,
    Q_ALIASES,
    REF,
    SEARCH,
    V_ALIASES,  # noqa: F401
    X_ALIASES,
    Case,
    Component,
    InputSpec,
    MaskSpec,
    Quantity,
    _activation,
    _bool,
    _cast,
    _choice,
    _float,
    _int,
    _load,
    _mask,
    _param_grads,
    _state_shapes,
    draw_params,
    mask_array,
    neutral_value,
    quantity_kind,
    quantity_label,
)
from .layers import LAYER_SETTABLE, DecoderLayerComponent, EncoderLayerComponent, Model, layer_config  # noqa: F401
from .names import canonical
from .parts import FFN, MHA, SDPA, LayerNormComponent, Positional  # noqa: F401

COMPONENTS: dict[str, Component] = {c.name: c for c in (
    SDPA(), MHA(), Positional(), FFN(), LayerNormComponent(), EncoderLayerComponent(),
    DecoderLayerComponent(), Model())}


def get(name: str) -> Component:
    """The component `name` stands for: its canonical name or a common spelling (names.py)."""
    return COMPONENTS[canonical(name, tuple(COMPONENTS))]
