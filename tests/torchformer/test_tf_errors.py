"""Bad inputs to torchformer give clear errors naming the argument, expected vs got; masks helpers."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.torchformer.helpers import small_config
from torchformer import causal_mask, combine_masks, padding_mask
from torchformer.guards.validation import broadcasts_to
from torchformer.layers.activations import Activation
from torchformer.layers.attention import MultiHeadAttention
from torchformer.layers.embedding import Embedding
from torchformer.layers.layernorm import LayerNorm
from torchformer.layers.linear import Linear
from torchformer.layers.positional import SinusoidalPositionalEncoding
from torchformer.models.causal_lm import CausalLM
from torchformer.models.classifier import EncoderClassifier
from torchformer.models.decoder import DecoderLayer
from torchformer.models.encoder import EncoderLayer
from torchformer.models.transformer import Transformer

C = small_config()
X = torch.zeros(2, 3, 16, dtype=torch.float64)


def cases():
    ids = torch.tensor([[1, 2, 3]])
    return [
        ("ids out of range", lambda: CausalLM(C)(torch.tensor([[1, 13]])), ValueError,
         r"ids: expected token ids in \[0, 13\), got values in \[1, 13\]"),
        ("negative ids", lambda: Transformer(C)(torch.tensor([[-1]]), ids), ValueError,
         r"src: expected token ids in \[0, 13\)"),
        ("float ids", lambda: EncoderClassifier(C)(torch.ones(1, 3)), TypeError,
         "src: expected integer token ids"),
        ("ids rank", lambda: CausalLM(C)(torch.tensor([1, 2])), ValueError,
         r"ids: expected 2 dimensions \(batch, seq\)"),
        ("empty ids", lambda: CausalLM(C)(torch.zeros(1, 0, dtype=torch.long)), ValueError,
         "non-empty"),
        ("too long", lambda: CausalLM(C)(torch.ones(1, 33, dtype=torch.long)), ValueError,
         "max_len=32"),
        ("batch mismatch", lambda: Transformer(C)(ids, torch.ones(2, 3, dtype=torch.long)),
         ValueError, "tgt: expected batch size 1"),
        ("mask shape", lambda: CausalLM(C)(ids, mask=torch.ones(1, 1, 3, 4, dtype=torch.bool)),
         ValueError, r"mask: expected a shape broadcastable to \(1, 4, 3, 3\)"),
        ("float mask", lambda: EncoderLayer(C)(X, torch.ones(2, 1, 1, 3)), TypeError,
         "mask: expected a bool keep-mask"),
        ("int mask values", lambda: EncoderLayer(C)(X, torch.full((2, 1, 1, 3), 2)), ValueError,
         "mask: expected 0/1 integer values"),
        ("dtype mismatch", lambda: EncoderLayer(C)(X.float()), TypeError,
         "x: expected dtype torch.float64"),
        ("width", lambda: EncoderLayer(C)(X[..., :8]), ValueError, r"x: expected shape \(\*, \*, 16\)"),
        ("numpy input", lambda: Linear(4, 2)(np.zeros((1, 4), np.float32)), TypeError,
         "x: expected a torch.Tensor"),
        ("memory missing", lambda: DecoderLayer(C)(X), ValueError, "memory: DecoderLayer with "
         "cross_attention=True needs"),
        ("memory given", lambda: DecoderLayer(C, cross_attention=False)(X, X), ValueError,
         "memory: DecoderLayer with cross_attention=False takes no memory"),
        ("heads", lambda: MultiHeadAttention(10, 3), ValueError,
         "d_model: expected a multiple of num_heads=3"),
        ("activation", lambda: Activation("swish"), ValueError, "Activation: name: expected one of"),
        ("config type", lambda: Transformer({"d_model": 8}), TypeError,
         "config: expected a TransformerConfig"),
        ("seed", lambda: CausalLM(C, seed=-1), ValueError, "seed: expected a non-negative int"),
        ("dtype", lambda: Linear(2, 2, dtype="int32"), ValueError, "dtype: expected one of"),
        ("padding_idx", lambda: Embedding(4, 2, padding_idx=4), ValueError, "padding_idx"),
        ("eps", lambda: LayerNorm(4, eps=0.0), ValueError, "eps: expected a positive finite float"),
        ("positions of a 1-d x", lambda: SinusoidalPositionalEncoding(16, 4)(torch.zeros(3)),
         ValueError, "x: expected 3 dimensions"),
        ("positions of a list", lambda: SinusoidalPositionalEncoding(16, 4)([1.0, 2.0]), TypeError,
         "x: expected a torch.Tensor"),
        ("offset", lambda: SinusoidalPositionalEncoding(16, 4, "float64")(X, offset=2), ValueError,
         "max_len=4"),
        ("kv shape", lambda: MultiHeadAttention(16, 4, dtype="float64")(X, X[:1], X[:1]),
         ValueError, r"key: expected shape \(2, Tk, 16\)"),
        ("rng type", lambda: Linear(2, 2, rng=3), TypeError, "rng: expected a torch.Generator"),
    ]


@pytest.mark.parametrize("label,call,exc,match", cases(), ids=[c[0] for c in cases()])
def test_bad_inputs_raise_clear_errors(label, call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_load_state_dict_rejects_bad_keys_without_partial_load():
    m = CausalLM(C)
    before = {k: v.clone() for k, v in m.state_dict().items()}
    state = {k: torch.zeros_like(v) for k, v in before.items()}
    state.pop("output_proj.bias")
    with pytest.raises(ValueError, match=r"missing keys \['output_proj.bias'\] \(nothing was"):
        m.load_state_dict(state)
    state["output_proj.bias"] = np.zeros(5)
    with pytest.raises(ValueError, match=r"output_proj.bias: expected shape \(13,\), got \(5,\)"):
        m.load_state_dict(state)
    from torchformer.models.bridge import copy_weights
    with pytest.raises(ValueError, match="nothing was copied"):
        copy_weights(EncoderClassifier(C), m)
    assert all(torch.equal(v, before[k]) for k, v in m.state_dict().items())


def test_mask_helpers():
    ids = torch.tensor([[5, 0, 3], [0, 0, 1]])
    pm = padding_mask(ids, 0)
    assert pm.shape == (2, 1, 1, 3) and pm.dtype == torch.bool
    assert pm[:, 0, 0].tolist() == [[True, False, True], [False, False, True]]
    assert padding_mask(ids, None) is None
    assert padding_mask(np.array([[1, 2]]), 2)[0, 0, 0].tolist() == [True, False]
    cm = causal_mask(2, 4)                                     # bottom-right aligned
    assert cm[0, 0].tolist() == [[True, True, True, False], [True, True, True, True]]
    assert causal_mask(3)[0, 0].tolist() == [[True, False, False], [True, True, False],
                                              [True, True, True]]
    assert causal_mask(3, 1)[0, 0, :, 0].tolist() == [False, False, True]
    both = combine_masks(None, pm, causal_mask(3), None)
    assert both.shape == (2, 1, 3, 3)
    assert torch.equal(both, pm & causal_mask(3))
    assert combine_masks(None, None) is None
    assert combine_masks(np.array([[1, 0]])).tolist() == [[True, False]]
    with pytest.raises(ValueError, match="broadcast together"):
        combine_masks(torch.ones(2, 3, dtype=torch.bool), torch.ones(4, dtype=torch.bool))
    with pytest.raises(ValueError, match="q_len: expected a non-negative int"):
        causal_mask(-1)


def test_models_load_numpy_state_dicts():
    a, b = CausalLM(C, seed=1), CausalLM(C, seed=2)
    b.load_state_dict({k: v.numpy() for k, v in a.state_dict().items()})
    assert all(torch.equal(v, a.state_dict()[k]) for k, v in b.state_dict().items())


@pytest.mark.parametrize("shape,target", [
    ((8, 1, 1, 64), (8, 8, 64, 64)), ((1, 1, 64, 64), (8, 8, 64, 64)), ((64,), (2, 3, 5, 64)),
    ((), (2, 3)), ((2, 64), (8, 8, 64, 64)), ((8, 2, 1, 64), (8, 8, 64, 64)),
    ((1, 8, 8, 64, 64), (8, 8, 64, 64)), ((0,), (0,)), ((1,), (0,)), ((0,), (1,)), ((3,), (1,)),
])
def test_broadcasts_to_agrees_with_torch(shape, target):
    """The mask checks' fast broadcast test gives torch.broadcast_shapes' verdict."""
    try:
        ref = tuple(torch.broadcast_shapes(shape, target)) == target
    except RuntimeError:
        ref = False
    assert broadcasts_to(shape, target) is ref
