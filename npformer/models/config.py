"""TransformerConfig: the one validated dataclass every model in both twins is built from.

Field names follow the paper and `torch.nn.Transformer` where those have a name for the knob.
The config is frozen: build a changed copy with `config.replace(field=value)`. Every field is checked
when a config is built (npformer.guards.config, apart from the settings, as every input check).
"""
import dataclasses
from dataclasses import dataclass
from typing import Any

ACTIVATIONS = ("relu", "gelu", "gelu_tanh")
POSITIONALS = ("sinusoidal", "learned")
POOLINGS = ("first", "mean")
DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class TransformerConfig:
    """Hyper-parameters of a Transformer, shared by `Transformer`, `EncoderClassifier`, `CausalLM`
    and the BERT models; each field is described beside it."""

    # -- sizes
    d_model: int = 512              # width of every residual stream (the paper's d_model)
    num_heads: int = 8              # attention heads h, dividing d_model: d_k = d_v = d_model / h
    d_ff: int = 2048                # inner width of the position-wise feed-forward network (2048)
    num_encoder_layers: int = 6     # encoder layers N (Transformer, EncoderClassifier)
    num_decoder_layers: int = 6     # decoder layers N (Transformer, CausalLM)
    max_len: int = 512              # longest sequence the positional encoding accepts
    # -- vocabularies
    vocab_size: int = 1000          # shared vocabulary (CausalLM, EncoderClassifier, and
    #                                 Transformer when the two sizes below are None)
    src_vocab_size: int | None = None   # source vocabulary of the Transformer (None: vocab_size)
    tgt_vocab_size: int | None = None   # target vocabulary of the Transformer (None: vocab_size)
    pad_id: int | None = 0          # padding id (None: no padding): the padding masks come from it,
    #                                 its embedding row gets no gradient, the loss ignores it
    num_classes: int = 2            # output classes of EncoderClassifier
    pooling: str = "first"          # EncoderClassifier: "first" token or padding-aware "mean"
    # -- layout
    activation: str = "relu"        # "relu" (paper), "gelu" (exact, erf), "gelu_tanh" (GPT-2's)
    norm_first: bool = False        # False: post-norm LayerNorm(x + Sublayer(x)) (paper); True:
    #                                 pre-norm x + Sublayer(LayerNorm(x)) (GPT-2)
    final_norm: bool = False        # LayerNorm after the last layer of each stack (pre-norm)
    layer_norm_eps: float = 1e-5    # LayerNorm epsilon (biased variance, as torch.nn.LayerNorm)
    positional: str = "sinusoidal"  # "sinusoidal" (paper, fixed) or "learned" (GPT-2)
    scale_embeddings: bool = True   # token embeddings times sqrt(d_model) (paper: yes; GPT-2: no)
    tie_embeddings: bool = False    # output projection shares the (target) token embedding
    share_embeddings: bool = False  # Transformer only: source and target share one embedding matrix
    #                                 (needs equal vocabularies)
    bias: bool = True               # biases in the attention projections and feed-forward linears
    output_bias: bool = True        # bias in the final output projection (vocabulary or classes)
    # -- BERT (npformer.models.bert; the defaults leave every other model unchanged)
    type_vocab_size: int = 0        # segment (token type) embedding rows, added to the token and
    #                                 position embeddings (BERT: 2); 0 = no segment embedding
    embedding_norm: bool = False    # LayerNorm (eps layer_norm_eps) after summing the embeddings
    # -- regularisation
    dropout: float = 0.1            # the paper's P_drop: embeddings+positions, sublayer outputs
    attention_dropout: float = 0.0  # on the attention probabilities
    activation_dropout: float = 0.0  # after the feed-forward activation
    # -- numerics
    dtype: str = "float32"          # "float32", or "float64" (gradient checks, tight parity)

    def __post_init__(self) -> None:
        # dtype given as a numpy dtype, a type or a string becomes its name ("float32" / "float64")
        dt = self.dtype
        name = getattr(dt, "name", None) or getattr(dt, "__name__", None) or str(dt)
        name = {"float": "float64", "double": "float64", "single": "float32"}.get(name, name)
        object.__setattr__(self, "dtype", name)

    # -- derived ----------------------------------------------------------------------------------
    @property
    def d_head(self) -> int:
        """Width of one head, d_k = d_v = d_model / num_heads."""
        return self.d_model // self.num_heads

    @property
    def src_vocab(self) -> int:
        return self.vocab_size if self.src_vocab_size is None else self.src_vocab_size

    @property
    def tgt_vocab(self) -> int:
        return self.vocab_size if self.tgt_vocab_size is None else self.tgt_vocab_size

    # -- copies and serialisation -----------------------------------------------------------------
    def replace(self, **changes: Any) -> "TransformerConfig":
        """A validated copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TransformerConfig":
        """Build from a dict; unknown keys are an error (they usually mean a typo or a newer file)."""
        return cls(**d)


# -- named layouts (fields only: sizes and vocabularies stay the caller's) --------------------------
BERT_LAYOUT = dict(activation="gelu", norm_first=False, final_norm=False, layer_norm_eps=1e-12,
                   positional="learned", scale_embeddings=False, tie_embeddings=True,
                   type_vocab_size=2, embedding_norm=True, num_decoder_layers=0)
GPT2_LAYOUT = dict(activation="gelu_tanh", norm_first=True, final_norm=True, layer_norm_eps=1e-5,
                   positional="learned", scale_embeddings=False, tie_embeddings=True,
                   output_bias=False, num_encoder_layers=0, pad_id=None)


def bert_config(**fields: Any) -> TransformerConfig:
    """A TransformerConfig with BERT's layout (BERT_LAYOUT); keyword arguments override any field.
    bert-base: bert_config(vocab_size=30522, max_len=512, d_model=768, num_heads=12, d_ff=3072,
    num_encoder_layers=12, pad_id=0)."""
    return TransformerConfig(**{**BERT_LAYOUT, **fields})


def gpt2_config(**fields: Any) -> TransformerConfig:
    """A TransformerConfig with GPT-2's layout (GPT2_LAYOUT) for CausalLM; keyword arguments override.
    GPT-2 small: gpt2_config(vocab_size=50257, max_len=1024, d_model=768, num_heads=12, d_ff=3072,
    num_decoder_layers=12)."""
    return TransformerConfig(**{**GPT2_LAYOUT, **fields})
