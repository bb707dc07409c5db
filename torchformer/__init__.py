"""torchformer: npformer's PyTorch twin.

Same files, class names, constructor arguments and parameter names as npformer, so `state_dict()` keys
are identical and moving weights is a plain copy (`torchformer.bridge`). Gradients come from autograd.
Runs on CPU and CUDA, float32/float64, and under bf16/fp16 autocast on GPU.
"""
try:
    import torch as _torch  # noqa: F401
except ImportError as _e:
    raise ImportError("torchformer needs PyTorch, which is not installed: pip install "
                      "npformer[torch] (or follow pytorch.org for a CUDA build)") from _e

from npformer.config import TransformerConfig

from torchformer.linear import Linear
from torchformer.embedding import Embedding
from torchformer.positional import (LearnedPositionalEncoding, SinusoidalPositionalEncoding,
                                    make_positional, sinusoidal_table)
from torchformer.dropout import (Dropout, collect_dropout_masks, replay_dropout_masks,
                                 set_record_masks)
from torchformer.activations import Activation
from torchformer.layernorm import LayerNorm
from torchformer.attention import MultiHeadAttention, scaled_dot_product_attention, set_need_weights
from torchformer.feedforward import PositionwiseFeedForward
from torchformer.encoder import Encoder, EncoderLayer
from torchformer.decoder import Decoder, DecoderLayer
from torchformer.transformer import Transformer
from torchformer.classifier import EncoderClassifier
from torchformer.causal_lm import CausalLM
from torchformer.bert import BertForMaskedLM, BertForSequenceClassification, BertModel
from torchformer.loss import CrossEntropyLoss
from torchformer.masks import causal_mask, combine_masks, padding_mask
from torchformer.optim import SGD, Adam, AdamW, WarmupSchedule, clip_grad_norm, warmup_lr
from torchformer.bridge import copy_grads_to_numpy, grads_by_name, to_numpy, to_torch
# the workflow API (the same names as npformer's)
from torchformer.checkpoint import (load_checkpoint, load_model, load_training_state, restore,
                                    save_checkpoint)
from npformer.checkpoint import CheckpointError
from npformer.resume import TrainState, save_training_state
from torchformer.generate import beam_search, greedy_decode
from npformer.attention_maps import attention_weights

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
