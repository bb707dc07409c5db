"""The benchmarked configurations and workloads.

tiny   smallest path (tests, smoke runs): d_model 32, 2 heads, 1+1 layers.
small  the seeds' size: d_model 128, 4 heads, 4+4 layers, d_ff 512.
base   the paper's base model (Vaswani et al. 2017, Table 3): d_model 512, 8 heads, 6+6 layers,
       d_ff 2048, shared source/target embeddings tied to the output projection, dropout 0.1, at a
       batch and length that fit 2 CPU cores (8 x 64 source and target tokens; vocabulary 4096
       instead of the paper's 37000 BPE so the output layer does not dominate a short sequence).
gpt2s  a GPT-2-small-like CausalLM (768 wide, 12 heads, 12 layers, pre-norm, GELU-tanh, learned
       positions, tied embeddings, 50257 tokens, 8 x 1024): CUDA backends only, for bf16 MFU.
gpt2s-cpu  GPT-2 small exactly (124,439,808 parameters: no output bias, npformer.gpt2_config's
       layout) at a CPU-sized batch, 2 x 64 tokens: NumPy vs torch CPU in the same run. Not in the
       default set (minutes on 2 cores): python -m benchmarks --configs gpt2s-cpu
       --backends np-f32,tf-cpu --workloads forward,train_step.
Every configuration runs the encoder-decoder `Transformer` except gpt2s and gpt2s-cpu (`CausalLM`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

WORKLOADS = ("forward", "fwd_bwd", "train_step", "generate")
WORKLOAD_HELP = {
    "forward": "eval-mode forward to logits, no gradients (inference)",
    "fwd_bwd": "train-mode forward, cross-entropy loss, backward (gradients of every parameter)",
    "train_step": "fwd_bwd + Adam update (lr 1e-4): one full optimisation step",
    "generate": "greedy decoding, tokens per second (batch x new tokens / time)",
}


@dataclass(frozen=True)
class BenchConfig:
    """A model configuration plus the batch it is benchmarked at."""

    name: str
    model: str                     # "seq2seq" (Transformer) or "causal" (CausalLM)
    batch: int
    src_len: int                   # ignored by "causal"
    tgt_len: int
    gen_batch: int                 # generation: sequences decoded together
    gen_tokens: int                # generation: new tokens per sequence
    model_fields: dict[str, Any] = field(default_factory=dict)  # TransformerConfig keyword arguments
    cuda_only: bool = False
    note: str = ""

    def transformer_config(self, dtype: str = "float32", **overrides):
        from npformer.models.config import TransformerConfig

        return TransformerConfig(**{**self.model_fields, "dtype": dtype, **overrides})

    def describe(self) -> str:
        f = self.model_fields
        layers = (f"{f.get('num_encoder_layers', 6)}+{f.get('num_decoder_layers', 6)}"
                  if self.model == "seq2seq" else f"{f.get('num_decoder_layers', 6)}")
        src = f"{self.src_len}->" if self.model == "seq2seq" else ""
        return (f"{self.name}: {self.model} d_model={f.get('d_model')} heads={f.get('num_heads')} "
                f"layers={layers} d_ff={f.get('d_ff')} vocab={f.get('vocab_size')} "
                f"batch={self.batch} len={src}{self.tgt_len} dropout={f.get('dropout', 0.1)}")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "batch": self.batch, "src_len": self.src_len,
                "tgt_len": self.tgt_len, "gen_batch": self.gen_batch, "gen_tokens": self.gen_tokens,
                "model_fields": dict(self.model_fields), "cuda_only": self.cuda_only,
                "description": self.describe(), "note": self.note}


CONFIGS: dict[str, BenchConfig] = {
    "tiny": BenchConfig(
        "tiny", "seq2seq", batch=2, src_len=8, tgt_len=8, gen_batch=2, gen_tokens=8,
        model_fields=dict(d_model=32, num_heads=2, d_ff=64, num_encoder_layers=1,
                          num_decoder_layers=1, vocab_size=64, max_len=64, dropout=0.1)),
    "small": BenchConfig(
        "small", "seq2seq", batch=8, src_len=32, tgt_len=32, gen_batch=4, gen_tokens=16,
        model_fields=dict(d_model=128, num_heads=4, d_ff=512, num_encoder_layers=4,
                          num_decoder_layers=4, vocab_size=1000, max_len=512, dropout=0.1)),
    "main-job": BenchConfig(
        "main-job", "seq2seq", batch=64, src_len=12, tgt_len=12, gen_batch=4, gen_tokens=12,
        model_fields=dict(d_model=64, num_heads=4, d_ff=128, num_encoder_layers=2,
                          num_decoder_layers=2, vocab_size=16, max_len=64, dropout=0.0),
        note="`npformer train`'s default model and batch (reverse task, lengths up to 10 + BOS/EOS)"),
    "mid": BenchConfig(
        "mid", "seq2seq", batch=8, src_len=32, tgt_len=32, gen_batch=4, gen_tokens=16,
        model_fields=dict(d_model=256, num_heads=4, d_ff=1024, num_encoder_layers=4,
                          num_decoder_layers=4, vocab_size=1000, max_len=512, dropout=0.1),
        note="between small and base: where data parallelism starts to pay (scaling)"),
    "small-l64": BenchConfig(
        "small-l64", "seq2seq", batch=16, src_len=64, tgt_len=64, gen_batch=4, gen_tokens=16,
        model_fields=dict(d_model=128, num_heads=4, d_ff=512, num_encoder_layers=4,
                          num_decoder_layers=4, vocab_size=1000, max_len=512, dropout=0.1),
        note="small's model on 4x the tokens per step (scaling: data parallelism's threshold)"),
    "base": BenchConfig(
        "base", "seq2seq", batch=8, src_len=64, tgt_len=64, gen_batch=4, gen_tokens=32,
        model_fields=dict(d_model=512, num_heads=8, d_ff=2048, num_encoder_layers=6,
                          num_decoder_layers=6, vocab_size=4096, max_len=512, dropout=0.1,
                          share_embeddings=True, tie_embeddings=True),
        note="paper base sizes; vocabulary 4096 (paper: 37000 BPE)"),
    "gpt2s": BenchConfig(
        "gpt2s", "causal", batch=8, src_len=0, tgt_len=1024, gen_batch=8, gen_tokens=64,
        model_fields=dict(d_model=768, num_heads=12, d_ff=3072, num_encoder_layers=0,
                          num_decoder_layers=12, vocab_size=50257, max_len=1024, dropout=0.1,
                          activation="gelu_tanh", norm_first=True, final_norm=True,
                          positional="learned", scale_embeddings=False, tie_embeddings=True,
                          pad_id=None),
        cuda_only=True, note="GPT-2-small-like; CUDA backends only (bf16 MFU)"),
    "gpt2s-cpu": BenchConfig(
        "gpt2s-cpu", "causal", batch=2, src_len=0, tgt_len=64, gen_batch=1, gen_tokens=8,
        model_fields=dict(d_model=768, num_heads=12, d_ff=3072, num_encoder_layers=0,
                          num_decoder_layers=12, vocab_size=50257, max_len=1024, dropout=0.1,
                          attention_dropout=0.1, activation="gelu_tanh", norm_first=True,
                          final_norm=True, positional="learned", scale_embeddings=False,
                          tie_embeddings=True, output_bias=False, pad_id=None),
        note="GPT-2 small, 124M parameters, CPU-sized batch 2 x 64"),
}

DEFAULT_CONFIGS = ("tiny", "small", "base", "gpt2s")
QUICK_CONFIGS = ("tiny", "small")


def get_config(name: str) -> BenchConfig:
    if name not in CONFIGS:
        raise ValueError(f"--configs: expected names from {sorted(CONFIGS)}, got {name!r}")
    return CONFIGS[name]


# -- shapes from the command line --------------------------------------------------------------------
OVERRIDE_OPTIONS = {"batch_size": "--batch-size", "seq_len": "--seq-len", "dropout": "--dropout"}


def resolve_config(name: str, batch_size: int | None = None, seq_len: int | None = None,
                   dropout: float | None = None) -> BenchConfig:
    """The configuration `name` at the batch size, sequence length and dropout asked for on the
    command line (None: the configuration's own). `seq_len` is the source and the target length of
    an encoder-decoder and the context of a causal LM; `dropout` sets every dropout site the
    configuration sets (attention and activation dropout too where it sets them). Generation keeps its own batch.
    Raises ValueError naming the option when a value does not fit the configuration."""
    import dataclasses

    bc = get_config(name)
    for key, value in (("batch_size", batch_size), ("seq_len", seq_len)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"{OVERRIDE_OPTIONS[key]}: expected an integer >= 1, got {value!r}")
    if dropout is not None and not (isinstance(dropout, (int, float)) and 0.0 <= dropout < 1.0):
        raise ValueError(f"--dropout: expected a probability in [0, 1), got {dropout!r}")
    changes: dict[str, Any] = {}
    fields = dict(bc.model_fields)
    if batch_size is not None:
        changes["batch"] = batch_size
    if seq_len is not None:
        max_len = fields.get("max_len", 512)          # TransformerConfig's default
        if seq_len > max_len:
            raise ValueError(f"--seq-len: expected at most {max_len} for config {name!r} (its "
                             f"max_len, the length of its positional table), got {seq_len}")
        changes["tgt_len"] = seq_len
        if bc.model == "seq2seq":
            changes["src_len"] = seq_len
    if dropout is not None:
        fields["dropout"] = float(dropout)
        for site in ("attention_dropout", "activation_dropout"):
            if site in fields:
                fields[site] = float(dropout)
        changes["model_fields"] = fields
    if not changes:
        return bc
    note = ", ".join(f"{OVERRIDE_OPTIONS[k]} {v}" for k, v in
                     (("batch_size", batch_size), ("seq_len", seq_len), ("dropout", dropout))
                     if v is not None)
    return dataclasses.replace(bc, **changes, note=(bc.note + "; " if bc.note else "") + "set by " + note)
