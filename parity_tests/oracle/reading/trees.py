"""Parameter trees: each reference block's children and the names candidates give them.

The reference stores Linear weights as (out_features, in_features) (`y = x @ W.T + b`, as
torch.nn.Linear); the resolver (resolver.py) transposes a candidate matrix stored the other way round.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

LINEAR_WEIGHT = ["weight", "W", "w", "kernel", "weights"]
LINEAR_BIAS = ["bias", "b", "biases"]
# "0" / "1": a norm's (gain, shift) kept as a tuple in a list (`self.norms = [(g, b), ...]`); a
# Linear's pair is placed by order (resolve_fallbacks._by_order), as "Wq.0" is the first head's matrix
NORM_WEIGHT = ["weight", "gamma", "a_2", "g", "scale", "alpha", "w", "a", "gain", "0"]
NORM_BIAS = ["bias", "beta", "b_2", "b", "shift", "offset", "1"]
EMBED_WEIGHT = ["weight", "lut.weight", "embedding.weight", "emb.weight", "embed.weight", "W",
                "table", "embeddings", "E"]


@dataclass(frozen=True)
class Child:
    """One named child of a block: its reference name, its kind and where candidates keep it."""

    ref: str                          # reference name (may contain {i} for stacks)
    kind: str                         # linear | norm | embedding | mha | ffn | encoder_layer | ...
    aliases: tuple[str, ...]          # candidate module prefixes ("" = the parent itself)
    raw_weight: tuple[str, ...] = ()  # bare-matrix names beside the parent's other parameters
    raw_bias: tuple[str, ...] = ()
    count: str = ""                   # hyperparameter holding the number of repeats, for {i}


def _t(*xs: str) -> tuple[str, ...]:
    return tuple(xs)


def _under(prefix: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """`names`, then each top-level one again inside the model's `prefix` part (`enc_blocks` is
    also looked for as `encoder.enc_blocks`, as a model whose encoder holds its stack under a name
    of its own writes it)."""
    return names + tuple(f"{prefix}.{n}" for n in names if "." not in n and n != prefix
                         and f"{prefix}.{n}" not in names)


Q = Child("q_proj", "linear", _t("q_proj", "W_q", "w_q", "Wq", "wq", "W_Q", "query", "q_linear",
                                 "linear_q", "to_q", "fc_q", "q", "query_proj", "q_layer", "queries",
                                 "proj_q", "q_lin", "lin_q", "w_qs", "WQ", "query_linear", "linears.0",
                                 "W_query", "wquery", "Q"),
          _t("W_q", "Wq", "w_q", "wq", "W_Q", "WQ", "q_proj_weight", "q_weight", "W_query", "Q_w",
             "Wquery", "queries_transform", "query_transform", "q_transform", "query_weight",
             "query_matrix"),
          _t("b_q", "bq", "q_bias", "bias_q", "q_proj_bias", "b_Q", "B_q", "bQ"))
K = Child("k_proj", "linear", _t("k_proj", "W_k", "w_k", "Wk", "wk", "W_K", "key", "k_linear",
                                 "linear_k", "to_k", "fc_k", "k", "key_proj", "k_layer", "keys",
                                 "proj_k", "k_lin", "lin_k", "w_ks", "WK", "key_linear", "linears.1",
                                 "W_key", "wkey", "K"),
          _t("W_k", "Wk", "w_k", "wk", "W_K", "WK", "k_proj_weight", "k_weight", "W_key", "K_w", "Wkey",
             "keys_transform", "key_transform", "k_transform", "key_weight", "key_matrix"),
          _t("b_k", "bk", "k_bias", "bias_k_", "k_proj_bias", "b_K", "B_k", "bK"))
V = Child("v_proj", "linear", _t("v_proj", "W_v", "w_v", "Wv", "wv", "W_V", "value", "v_linear",
                                 "linear_v", "to_v", "fc_v", "v", "value_proj", "v_layer", "values",
                                 "proj_v", "v_lin", "lin_v", "w_vs", "WV", "value_linear", "linears.2",
                                 "W_value", "wvalue", "V"),
          _t("W_v", "Wv", "w_v", "wv", "W_V", "WV", "v_proj_weight", "v_weight", "W_value", "V_w",
             "Wvalue", "values_transform", "value_transform", "v_transform", "value_weight",
             "value_matrix"),
          _t("b_v", "bv", "v_bias", "bias_v_", "v_proj_bias", "b_V", "B_v", "bV"))
O = Child("out_proj", "linear", _t("out_proj", "W_o", "w_o", "Wo", "wo", "W_O", "out", "fc_out",
                                   "o_proj", "linear_out", "out_linear", "to_out.0", "to_out", "fc_o",
                                   "o", "output", "proj", "c_proj", "dense", "o_linear", "output_proj",
                                   "out_lin", "lin_o", "proj_out", "W_out", "wout", "fc", "linears.3",
                                   "WO", "output_linear", "concat_proj", "W_0", "O"),
          _t("W_o", "Wo", "w_o", "wo", "W_O", "WO", "out_weight", "W_out", "o_weight", "W_0",
             "output_transform", "out_transform", "o_transform", "output_weight", "output_matrix",
             "out_proj_weight"),
          _t("b_o", "bo", "o_bias", "bias_o", "out_bias", "b_out", "b_O", "B_o", "bO", "b_0",
             "out_proj_bias"))
PACKED_QKV = _t("in_proj", "c_attn", "qkv", "qkv_proj", "to_qkv", "W_qkv", "Wqkv", "w_qkv",
                "qkv_linear", "attn", "query_key_value", "in_proj_qkv")
PACKED_RAW = (("in_proj_weight", "in_proj_bias"), ("W_qkv", "b_qkv"), ("Wqkv", "bqkv"),
              ("qkv_weight", "qkv_bias"))

L1 = Child("linear1", "linear", _t("linear1", "linear_1", "w_1", "w1", "W1", "W_1", "fc1", "fc_1",
                                   "lin1", "layer1", "dense1", "c_fc", "fc", "up_proj", "fc_in", "net.0",
                                   "layers.0", "ff1", "l1", "linear_in", "w_in", "ffn1", "dense_1",
                                   "ff.0", "mlp.0", "fc.0", "seq.0", "model.0", "0", "first", "inner",
                                   "intermediate", "expand", "hidden", "conv1", "conv_1"),
           _t("W1", "w1", "W_1", "w_1", "weight1", "W_in", "w_in"),
           _t("b1", "b_1", "bias1", "b_in"))
L2 = Child("linear2", "linear", _t("linear2", "linear_2", "w_2", "w2", "W2", "W_2", "fc2", "fc_2",
                                   "lin2", "layer2", "dense2", "c_proj", "down_proj", "fc_out",
                                   "net.3", "net.2", "net.4", "layers.3", "layers.2", "ff2", "l2",
                                   "linear_out", "w_out", "ffn2", "dense_2", "ff.3", "ff.2", "mlp.3",
                                   "mlp.2", "fc.3", "fc.2", "seq.2", "seq.3", "model.2", "model.3",
                                   "3", "2", "second", "outer", "output", "project", "proj", "out", "conv2",
                                   "conv_2"),
           _t("W2", "w2", "W_2", "w_2", "weight2", "W_out", "w_out"),
           _t("b2", "b_2", "bias2", "b_out"))

ATTN_SELF = _t("self_attn", "self_attention", "attention", "attn", "mha", "multi_head_attention",
               "multihead_attention", "self_mha", "slf_attn", "masked_attn", "masked_attention",
               "masked_mha", "masked_self_attn", "attn1", "mha1", "attention1", "sa", "att",
               "dec_self_attn", "enc_self_attn", "self_attn_layer", "attention_layer", "mhsa",
               "multihead_attn", "self_att", "mh_attn", "multi_head")
MASKED_SELF = _t("masked_multi_head_attention", "masked_multihead_attention", "masked_mha",
                 "masked_self_attn", "masked_self_attention", "masked_attn", "masked_attention",
                 "masked_multi_head_attn", "masked_mh_attn", "causal_self_attention",
                 "causal_self_attn", "causal_attention", "causal_attn", "causal_mha")
"""A decoder's self-attention named for its mask, looked for before ATTN_SELF's plain names: beside
`masked_multi_head_attention`, a plain `multi_head_attention` is the cross-attention."""
DEC_SELF = MASKED_SELF + tuple(n for n in ATTN_SELF if n not in MASKED_SELF)
ATTN_CROSS = _t("cross_attn", "src_attn", "cross_attention", "enc_dec_attn", "encoder_attention",
                "enc_attn", "multihead_attn", "attn2", "mha2", "encoder_decoder_attention",
                "cross_mha", "enc_dec_attention", "attention2", "dec_enc_attn", "src_attention",
                "context_attn", "encdec_attn", "inter_attn", "cross_att", "enc_dec_mha",
                "encoder_attn", "cross_attn_layer", "memory_attn", "joint_attention", "joint_attn")
FFN_NAMES = _t("feed_forward", "ffn", "ff", "feedforward", "pos_ffn", "position_wise_ffn",
               "positionwise_ffn", "mlp", "pwff", "feed_fwd", "ffwd", "ffnn", "pffn",
               "position_wise_feed_forward", "positionwise_feed_forward", "feed_forward_layer",
               "ff_layer", "ffn_layer", "pos_ff", "fc", "ff_block", "ffn_block", "linear_block",
               "feedforward_layer", "positionwise_feedforward", "position_wise_feedforward",
               "dense", "")


def _norms(i: int, extra: Iterable[str] = ()) -> tuple[str, ...]:
    return _t(f"norm{i}", f"norm_{i}", f"ln{i}", f"ln_{i}", f"layer_norm{i}", f"layernorm{i}",
              f"layer_norm_{i}", f"layernorm_{i}", f"sublayer.{i - 1}.norm", f"lnorm{i}",
              f"layer_norms.{i - 1}", f"norms.{i - 1}", f"ln.{i - 1}", f"LayerNorm{i}",
              f"sublayers.{i - 1}.norm", f"sublayer_connection{i}.norm", f"addnorm{i}.ln",
              f"add_norm{i}.ln", f"addnorm{i}.norm", f"add_norm{i}.norm", f"addnorm{i}.layer_norm",
              *extra)


def _norm_raw(i: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Bare gain and shift vectors of the layer's i-th norm, beside its other arrays (NumPy code)."""
    return (_t(f"gamma{i}", f"gamma_{i}", f"g{i}", f"ln{i}_g", f"ln{i}_gamma", f"ln{i}_weight",
               f"ln_{i}_g", f"ln_{i}_gamma", f"norm{i}_weight", f"norm{i}_gamma", f"norm{i}_g",
               f"layernorm{i}_weight", f"ln{i}_w", f"gain{i}"),
            _t(f"beta{i}", f"beta_{i}", f"be{i}", f"ln{i}_b", f"ln{i}_beta", f"ln{i}_bias",
               f"ln_{i}_b", f"ln_{i}_beta", f"norm{i}_bias", f"norm{i}_beta", f"norm{i}_b",
               f"layernorm{i}_bias", f"bias_ln{i}", f"shift{i}"))


TREES: dict[str, tuple[Child, ...]] = {
    "mha": (Q, K, V, O),
    "ffn": (L1, L2),
    "encoder_layer": (
        Child("self_attn", "mha", ATTN_SELF),
        Child("norm1", "norm", _norms(1, ("attn_norm", "attention_norm", "self_attn_layer_norm",
                                           "norm_attn", "ln_attn", "norm_1st", "norm_sa")), *_norm_raw(1)),
        Child("feed_forward", "ffn", FFN_NAMES),
        Child("norm2", "norm", _norms(2, ("ffn_norm", "ff_norm", "final_layer_norm", "norm_ff",
                                           "norm_ffn", "ln_ff", "ln_mlp", "mlp_norm",
                                           "ff_layer_norm", "ffn_layer_norm")), *_norm_raw(2)),
    ),
    "decoder_layer": (
        Child("self_attn", "mha", DEC_SELF),
        Child("norm1", "norm", _norms(1, ("self_attn_norm", "self_attn_layer_norm", "attn_norm",
                                           "norm_self", "ln_self")), *_norm_raw(1)),
        Child("cross_attn", "mha", ATTN_CROSS),
        Child("norm2", "norm", _norms(2, ("cross_attn_norm", "encoder_attn_layer_norm", "cross_norm",
                                           "norm_cross", "ln_cross", "enc_attn_norm",
                                           "enc_attn_layer_norm", "cross_attn_layer_norm")), *_norm_raw(2)),
        Child("feed_forward", "ffn", FFN_NAMES),
        Child("norm3", "norm", _norms(3, ("ffn_norm", "ff_norm", "final_layer_norm", "norm_ff",
                                           "norm_ffn", "ln_ff", "ln_mlp", "mlp_norm",
                                           "ff_layer_norm", "ffn_layer_norm")), *_norm_raw(3)),
    ),
    "model": (
        Child("src_embed", "embedding",
              _t("src_embed", "encoder_embedding", "src_embedding", "enc_embedding",
                 "input_embedding", "src_emb", "src_tok_emb", "encoder.embedding", "encoder.embed",
                 "encoder.tok_embedding", "encoder.embed_tokens", "encoder.token_embedding",
                 "src_embed.0", "embed_src", "src_word_emb", "encoder.src_word_emb",
                 "src_embeddings", "enc_emb", "source_embedding", "embedding_src",
                 "encoder.word_embedding", "src_token_embedding", "encoder.emb", "enc_embed",
                 "encoder_embed", "src_tok_embedding", "input_emb", "encoder.tok_emb", "embedding", "embed",
                 "emb"),
              _t("src_embed_weight", "W_src_emb", "E_src")),
        Child("tgt_embed", "embedding",
              _t("tgt_embed", "decoder_embedding", "tgt_embedding", "dec_embedding",
                 "output_embedding", "tgt_emb", "trg_embedding", "trg_emb", "tgt_tok_emb",
                 "decoder.embedding", "decoder.embed", "decoder.tok_embedding",
                 "decoder.embed_tokens", "decoder.token_embedding", "tgt_embed.0", "embed_tgt",
                 "trg_word_emb", "decoder.trg_word_emb", "tgt_embeddings", "dec_emb",
                 "target_embedding", "embedding_tgt", "decoder.word_embedding",
                 "tgt_token_embedding", "decoder.emb", "dec_embed", "decoder_embed",
                 "tgt_tok_embedding", "output_emb", "trg_embed", "decoder.tok_emb"),
              _t("tgt_embed_weight", "W_tgt_emb", "E_tgt")),
        Child("encoder.layers.{i}", "encoder_layer", _under("encoder",
              _t("encoder.layers", "encoder_layers", "encoder.layer", "enc_layers",
                 "encoder.encoder_layers", "encoder.layer_stack", "encoder.blocks", "encoder",
                 "encoders", "encoder_blocks", "transformer.encoder.layers", "encoder.enc_layers",
                 "encoder.layer_list", "enc_blocks", "encoder_stack", "encoder.stack", "enc")),
              count="num_encoder_layers"),
        Child("encoder.norm", "norm",
              _t("encoder.norm", "encoder.layer_norm", "encoder_norm", "encoder.ln", "encoder.final_norm",
                 "enc_norm", "encoder.ln_f", "encoder.norm_f", "encoder.final_layer_norm",
                 "transformer.encoder.norm")),
        Child("decoder.layers.{i}", "decoder_layer", _under("decoder",
              _t("decoder.layers", "decoder_layers", "decoder.layer", "dec_layers",
                 "decoder.decoder_layers", "decoder.layer_stack", "decoder.blocks", "decoder",
                 "decoders", "decoder_blocks", "transformer.decoder.layers", "decoder.dec_layers",
                 "decoder.layer_list", "dec_blocks", "decoder_stack", "decoder.stack", "dec")),
              count="num_decoder_layers"),
        Child("decoder.norm", "norm",
              _t("decoder.norm", "decoder.layer_norm", "decoder_norm", "decoder.ln", "decoder.final_norm",
                 "dec_norm", "decoder.ln_f", "decoder.norm_f", "decoder.final_layer_norm",
                 "transformer.decoder.norm")),
        Child("output_proj", "linear", _under("decoder",
              _t("output_proj", "fc", "fc_out", "generator.proj", "generator", "out", "output",
                 "linear", "projection", "lm_head", "final_linear", "output_layer", "out_proj", "proj",
                 "classifier", "output_linear", "vocab_proj", "tgt_word_prj", "head", "to_logits",
                 "fc_final", "final_layer", "output_projection", "out_linear", "logits", "generator.0",
                 "fc_output", "linear_out", "out_layer", "dense", "decoder.fc_out",
                 "decoder.output_proj", "decoder.fc", "decoder.out", "decoder.linear")),
              _t("W_out", "W_vocab", "W_o"), _t("b_out", "b_vocab", "b_o")),
    ),
}
LEAVES = {"linear": (("weight", LINEAR_WEIGHT, True), ("bias", LINEAR_BIAS, False)),
          "norm": (("weight", NORM_WEIGHT, False), ("bias", NORM_BIAS, False)),
          "embedding": (("weight", EMBED_WEIGHT, True),)}
"""Leaf kinds: (reference leaf name, candidate aliases, required). A LayerNorm without parameters,
or a Linear without a bias, is allowed: the reference then holds that parameter at its neutral value
(weight 1, bias 0) and does not compare its gradient."""
