"""torchformer: npformer's PyTorch twin.

Same files, class names, constructor arguments and parameter names as npformer, so `state_dict()` keys
are identical and moving weights is a plain copy (`torchformer.models.bridge`). Gradients come from autograd.
Runs on CPU and CUDA, float32/float64, and under bf16/fp16 autocast on GPU.
"""
try:
    import torch as _torch  # noqa: F401
except ImportError as _e:
    raise ImportError("torchformer needs PyTorch, which is not installed; the CPU-only build: pip "
                      "install torch --index-url https://download.pytorch.org/whl/cpu (a plain pip "
                      "install torch pulls CUDA packages on Linux; pytorch.org for a CUDA build)") from _e

from npformer.checks.attention_maps import attention_weights
from npformer.io.checkpoint import CheckpointError
from npformer.models.config import TransformerConfig
from torchformer import guards  # noqa: F401  (importing registers the input checks)
from torchformer.checks.dropout_masks import collect_dropout_masks, replay_dropout_masks, set_record_masks
from torchformer.decoding.beam import beam_search
from torchformer.decoding.generate import greedy_decode
from torchformer.guards.functional import causal_mask, combine_masks, padding_mask, scaled_dot_product_attention

# the workflow API (the same names as npformer's)
from torchformer.io.checkpoint import load_checkpoint, load_model, restore, save_checkpoint
from torchformer.layers.activations import Activation
from torchformer.layers.attention import MultiHeadAttention, set_need_weights
from torchformer.layers.dropout import Dropout
from torchformer.layers.embedding import Embedding
from torchformer.layers.feedforward import PositionwiseFeedForward
from torchformer.layers.layernorm import LayerNorm
from torchformer.layers.linear import Linear
from torchformer.layers.loss import CrossEntropyLoss
from torchformer.layers.positional import (
    LearnedPositionalEncoding,
    SinusoidalPositionalEncoding,
    make_positional,
    sinusoidal_table,
)
from torchformer.models.bert import BertForMaskedLM, BertForSequenceClassification, BertModel
from torchformer.models.bridge import copy_grads_to_numpy, grads_by_name, to_numpy, to_torch
from torchformer.models.causal_lm import CausalLM
from torchformer.models.classifier import EncoderClassifier
from torchformer.models.decoder import Decoder, DecoderLayer
from torchformer.models.encoder import Encoder, EncoderLayer
from torchformer.models.transformer import Transformer
from torchformer.optim import SGD, Adam, AdamW, WarmupSchedule, clip_grad_norm, warmup_lr
from torchformer.training.resume import TrainState, load_training_state, save_training_state

__version__ = "0.1.0"

__all__ = [
    "TransformerConfig", "Linear", "Embedding", "SinusoidalPositionalEncoding",
    "LearnedPositionalEncoding", "make_positional", "sinusoidal_table",
    "Dropout", "collect_dropout_masks", "replay_dropout_masks", "set_record_masks", "Activation", "LayerNorm",
    "MultiHeadAttention", "scaled_dot_product_attention", "set_need_weights",
    "PositionwiseFeedForward", "Encoder", "EncoderLayer", "Decoder", "DecoderLayer",
    "Transformer", "EncoderClassifier", "CausalLM", "CrossEntropyLoss",
    "padding_mask", "causal_mask", "combine_masks",
    "SGD", "Adam", "AdamW", "WarmupSchedule", "warmup_lr", "clip_grad_norm",
    "to_torch", "to_numpy", "grads_by_name", "copy_grads_to_numpy",
    "BertModel", "BertForMaskedLM", "BertForSequenceClassification",
    "save_checkpoint", "load_checkpoint", "load_model", "restore", "CheckpointError",
    "TrainState", "save_training_state", "load_training_state",
    "greedy_decode", "beam_search", "attention_weights",
]
