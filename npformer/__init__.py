"""npformer: the Transformer of "Attention Is All You Need", forward and backward by hand in NumPy.

Every component is a pair of plain functions `x_forward(...) -> (out, cache)` and
`x_backward(dout, cache) -> grads`, wrapped by a small torch-like Module. numpy is the only dependency:
importing npformer never imports torch, hypothesis or matplotlib.

Suggested reading order: linear -> activations -> softmax -> layernorm -> embedding -> positional ->
dropout -> attention -> feedforward -> encoder -> decoder -> transformer -> loss -> optim;
then the families: classifier, causal_lm (GPT-style), bert (BERT-style), and hub (Hugging Face weights).
"""
import npformer.guards  # noqa: F401  (registers the input checks of every layer and model)
from npformer.checks.attention_maps import attention_weights
from npformer.checks.dropout_masks import collect_dropout_masks, replay_dropout_masks
from npformer.checks.gradcheck import GradcheckReport, check_pair, gradcheck, numerical_gradient, rel_error
from npformer.decoding.beam import beam_search
from npformer.decoding.generate import greedy_decode

# the checked public names of the functional pairs and masks that refuse arguments (npformer.guards)
from npformer.guards.functional import (
                                 causal_mask,
                                 combine_masks,
                                 cross_entropy_forward,
                                 dropout_forward,
                                 padding_mask,
                                 sdpa_backward,
                                 sdpa_forward,
                                 sinusoidal_table,
)
from npformer.guards.functional_layers import (
                                 cross_entropy_backward,
                                 dropout_backward,
                                 embedding_backward,
                                 embedding_forward,
                                 gelu_backward,
                                 gelu_forward,
                                 gelu_tanh_backward,
                                 gelu_tanh_forward,
                                 layernorm_backward,
                                 layernorm_forward,
                                 linear_backward,
                                 linear_forward,
                                 log_softmax_backward,
                                 log_softmax_forward,
                                 relu_backward,
                                 relu_forward,
                                 softmax_backward,
                                 softmax_forward,
                                 tanh_backward,
                                 tanh_forward,
)

# the workflow API: save / load models and training states, decode, look at attention
from npformer.io.checkpoint import CheckpointError, load_checkpoint, load_model, restore, save_checkpoint
from npformer.layers.activations import Activation
from npformer.layers.attention import MultiHeadAttention
from npformer.layers.dropout import Dropout
from npformer.layers.embedding import Embedding
from npformer.layers.feedforward import PositionwiseFeedForward
from npformer.layers.layernorm import LayerNorm
from npformer.layers.linear import Linear
from npformer.layers.loss import CrossEntropyLoss
from npformer.layers.module import Module, ModuleList, Parameter
from npformer.layers.positional import (
                                 LearnedPositionalEncoding,
                                 SinusoidalPositionalEncoding,
                                 make_positional,
)
from npformer.models.bert import BertForMaskedLM, BertForSequenceClassification, BertModel
from npformer.models.causal_lm import CausalLM
from npformer.models.classifier import EncoderClassifier
from npformer.models.config import TransformerConfig, bert_config, gpt2_config
from npformer.models.decoder import Decoder, DecoderLayer
from npformer.models.encoder import Encoder, EncoderLayer
from npformer.models.transformer import Transformer
from npformer.optim import SGD, Adam, AdamW, WarmupSchedule, clip_grad_norm, warmup_lr
from npformer.training.resume import TrainState, load_training_state, save_training_state

__version__ = "0.1.0"

__all__ = [
    "TransformerConfig", "Module", "ModuleList", "Parameter",
    "Linear", "linear_forward", "linear_backward",
    "Embedding", "embedding_forward", "embedding_backward",
    "SinusoidalPositionalEncoding", "LearnedPositionalEncoding", "make_positional",
    "sinusoidal_table",
    "Dropout", "dropout_forward", "dropout_backward", "collect_dropout_masks",
    "replay_dropout_masks",
    "Activation", "relu_forward", "relu_backward", "gelu_forward", "gelu_backward",
    "gelu_tanh_forward", "gelu_tanh_backward",
    "LayerNorm", "layernorm_forward", "layernorm_backward",
    "softmax_forward", "softmax_backward", "log_softmax_forward", "log_softmax_backward",
    "MultiHeadAttention", "sdpa_forward", "sdpa_backward",
    "PositionwiseFeedForward", "Encoder", "EncoderLayer", "Decoder", "DecoderLayer",
    "Transformer", "EncoderClassifier", "CausalLM",
    "CrossEntropyLoss", "cross_entropy_forward", "cross_entropy_backward",
    "padding_mask", "causal_mask", "combine_masks",
    "SGD", "Adam", "AdamW", "WarmupSchedule", "warmup_lr", "clip_grad_norm",
    "gradcheck", "check_pair", "numerical_gradient", "rel_error", "GradcheckReport",
    "BertModel", "BertForMaskedLM", "BertForSequenceClassification", "tanh_forward",
    "tanh_backward", "bert_config", "gpt2_config",
    "save_checkpoint", "load_checkpoint", "load_model", "restore", "CheckpointError",
    "TrainState", "save_training_state", "load_training_state",
    "greedy_decode", "beam_search", "attention_weights",
]
