"""How the oracle finds its way around code it has never seen: names of arguments and parameters.

Three jobs:

1. `bind(...)`: match a candidate's signature (constructor or forward) to what the oracle has to pass,
   by the names tutorials use (`d_model`/`embed_dim`/`hidden_size`, `num_heads`/`h`/`nhead`, `Q`/`query`,
   `src_mask`/`tgt_mask`, ...), falling back to position for names it does not know.
2. `ParamTree` + `resolve(...)`: map every reference parameter (npformer's `state_dict` names, such as
   `self_attn.q_proj.weight`) to where the candidate keeps it (`attention.W_q.weight`,
   `sublayer.0.norm.a_2`, a slice of `in_proj_weight`, a bare `W1` argument, ...). Names first, then,
   inside one attention or feed-forward block, registration order for what names did not settle.
   An explicit map (`--map REF=CAND`, `REF=CAND.T`, `REF=-` for "the candidate has none") wins over
   both; a map key may also be a block (`--map self_attn=my_attention`).
3. The layout of each weight: the reference stores Linear weights as (out_features, in_features)
   (`y = x @ W.T + b`, as torch.nn.Linear). A candidate matrix stored the other way round is
   transposed automatically when its shape says so; a square bare matrix is ambiguous and follows
   `--weight-layout` (default out_in).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence


class InterfaceError(Exception):
    """The candidate cannot be called or mapped as the component requires (exit status 2)."""


# ------------------------------------------------------------------------------------------------
# 1. signatures
# ------------------------------------------------------------------------------------------------
HYPER_ALIASES: dict[str, list[str]] = {
    "d_model": ["d_model", "embed_dim", "d_embed", "model_dim", "dim_model", "n_embd", "emb_dim",
                "embedding_dim", "embed_size", "dim", "d", "hidden_size", "hidden_dim", "size",
                "features", "normalized_shape", "num_features", "n_features", "d_hid", "model_size",
                "dmodel", "d_in", "input_dim", "in_dim", "width", "d_word_vec", "emb_size",
                "embedding_size", "dim_embed", "n_hidden"],
    "num_heads": ["num_heads", "n_heads", "nhead", "n_head", "heads", "h", "num_attention_heads",
                  "head_num", "nheads", "n_heads_", "num_head", "attention_heads", "nb_heads"],
    "d_ff": ["d_ff", "dim_feedforward", "ff_dim", "d_hidden", "hidden_dim", "ffn_dim", "d_inner",
             "ff_hidden", "hidden", "d_ffn", "intermediate_size", "dff", "feedforward_dim",
             "hidden_size", "d_ff_", "ff_size", "ffn_hidden", "inner_dim", "mlp_dim", "d_fc",
             "hidden_features", "d_inner_hid", "expansion_dim", "dim_ff", "ffn_hidden_dim",
             "forward_expansion_dim", "ff_dim_"],
    "eps": ["eps", "epsilon", "layer_norm_eps", "norm_eps", "ln_eps", "layernorm_eps", "variance_epsilon"],
    "max_len": ["max_len", "max_seq_len", "max_seq_length", "max_length", "seq_len", "n_position",
                "max_position", "block_size", "maxlen", "num_positions", "max_positions",
                "max_position_embeddings", "max_sequence_length", "context_length", "length",
                "n_positions", "seq_length", "position", "positions", "max_pos", "len", "n_ctx"],
    "num_layers": ["num_layers", "n_layers", "N", "n", "n_layer", "layers", "depth", "num_blocks",
                   "nlayers", "num_layer", "n_blocks", "number_of_layers"],
    "num_encoder_layers": ["num_encoder_layers", "n_encoder_layers", "enc_layers", "num_enc_layers",
                           "encoder_layers", "n_enc", "num_encoder_blocks", "N_enc"],
    "num_decoder_layers": ["num_decoder_layers", "n_decoder_layers", "dec_layers", "num_dec_layers",
                           "decoder_layers", "n_dec", "num_decoder_blocks", "N_dec"],
    "src_vocab": ["src_vocab_size", "src_vocab", "input_vocab_size", "source_vocab_size",
                  "enc_vocab_size", "vocab_src", "n_src_vocab", "src_vocab_len", "src_ntoken",
                  "encoder_vocab_size", "src_vocab_sz", "in_vocab", "input_vocab", "src_n_vocab"],
    "tgt_vocab": ["tgt_vocab_size", "tgt_vocab", "trg_vocab_size", "trg_vocab", "output_vocab_size",
                  "target_vocab_size", "dec_vocab_size", "n_trg_vocab", "n_tgt_vocab", "tgt_vocab_len",
                  "tgt_ntoken", "decoder_vocab_size", "tgt_vocab_sz", "out_vocab", "output_vocab",
                  "tgt_n_vocab"],
    "vocab_size": ["vocab_size", "vocab", "n_vocab", "num_tokens", "ntoken", "ntokens", "vocab_len"],
    "dropout": ["dropout", "p", "drop", "dropout_rate", "drop_prob", "dropout_p", "p_drop", "prob",
                "drop_rate", "dropout_prob", "attn_dropout", "attention_dropout", "dropout_ratio",
                "pdrop", "resid_pdrop", "attn_pdrop", "activation_dropout", "dropout_attn"],
    "activation": ["activation", "act", "activation_fn", "activation_function", "act_fn",
                   "nonlinearity", "act_layer", "hidden_act"],
    "norm_first": ["norm_first", "pre_norm", "prenorm", "pre_ln", "normalize_before", "pre_layer_norm"],
    "pad_id": ["pad_idx", "pad_id", "padding_idx", "src_pad_idx", "pad_token_id", "pad",
               "pad_index", "pad_token", "src_pad_id", "padding_id"],
    "tgt_pad_id": ["trg_pad_idx", "tgt_pad_idx", "tgt_pad_id", "trg_pad_id"],
    "batch_first": ["batch_first"],
    "bias": ["bias", "use_bias", "qkv_bias"],
    "dtype": ["dtype"],
}
"""Constructor/factory argument names per hyperparameter. Earlier names in a list win; lists are
consulted in the order a component asks for them, so `hidden_dim` means d_ff for a feed-forward
block (which asks for d_ff first) and d_model for an attention block (which has no d_ff)."""

CALL_FLAGS: dict[str, Any] = {
    # names a forward may take that change what it returns; set so the oracle sees everything
    "need_weights": True, "average_attn_weights": False, "return_attention": True,
    "return_attn": True, "return_weights": True, "output_attentions": True,
    "return_attention_weights": True, "return_attn_weights": True, "is_causal": False,
    "dropout_p": 0.0, "training": False, "train": False,
}


@dataclass
class Binding:
    """How to call a signature: (argument name or None for positional, source) pairs in order."""

    positional: list[str] = field(default_factory=list)         # sources passed by position
    keywords: dict[str, str] = field(default_factory=dict)      # arg name -> source
    constants: dict[str, Any] = field(default_factory=dict)     # arg name -> fixed value
    arg_of: dict[str, str] = field(default_factory=dict)        # source -> arg name
    unbound: list[str] = field(default_factory=list)            # sources the signature had no room for
    params: list[str] = field(default_factory=list)             # leftover args (parameters of a function)

    def call(self, fn: Callable, values: dict[str, Any], extra: dict[str, Any] | None = None):
        args = [values[s] for s in self.positional]
        kwargs = {a: values[s] for a, s in self.keywords.items()}
        kwargs.update(self.constants)
        if extra:
            kwargs.update(extra)
        return fn(*args, **kwargs)

    def describe(self) -> str:
        parts = [f"{s} (position {i})" for i, s in enumerate(self.positional)]
        parts += [f"{s} as {a}=" for a, s in self.keywords.items()]
        parts += [f"{a}={v!r}" for a, v in self.constants.items()]
        return ", ".join(parts) or "(no arguments)"


def signature_of(fn: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _compatible(default: Any, value: Any) -> bool:
    """Pass `value` over a parameter's default only when it is the same sort of thing (a float for a
    float, a bool for a bool, a str for a str): a `dropout=None` that expects a module keeps None."""
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, (int, float)) and isinstance(value, (int, float)):
        return True
    return isinstance(default, str) and isinstance(value, str)


def _norm(name: str) -> str:
    return name.lower()


def bind(fn: Callable, sources: Sequence[tuple[str, Sequence[str], bool]], *,
         constants: dict[str, Any] | None = None, flags: dict[str, Any] | None = None,
         fallback_positional: bool = True, keep_params: bool = False, what: str = "call") -> Binding:
    """Match fn's parameters to `sources` [(source name, aliases, required)].

    Each named parameter takes the first source whose alias list holds its name (case-insensitive);
    `constants` {alias-list name -> value} are passed to parameters with those names (and only when
    the signature has them); `flags` likewise (CALL_FLAGS). A required parameter the names did not
    settle takes the next unbound source in order (when fallback_positional); with keep_params the
    rest are collected as `.params` (a function's weights) instead of being an error.
    """
    sig = signature_of(fn)
    b = Binding()
    srcs = list(sources)
    if sig is None:  # builtins and C functions: everything by position
        b.positional = [s for s, _, _ in srcs]
        b.arg_of = {s: f"#{i}" for i, s in enumerate(b.positional)}
        return b
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
    alias_of = {s: [_norm(a) for a in al] for s, al, _ in srcs}
    taken: set[str] = set()
    chosen: dict[str, str] = {}           # param name -> source
    # pass 1: names (exact alias order: a source's first alias beats a later one)
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        for s, _, _ in srcs:
            if s not in taken and _norm(p.name) in alias_of[s]:
                chosen[p.name] = s
                taken.add(s)
                break
    # pass 2: positions for required parameters left over; flags and constants
    const_vals = {}
    for key, value in (constants or {}).items():
        const_vals.update({_norm(a): value for a in HYPER_ALIASES.get(key, [key])})
    flag_vals = {_norm(k): v for k, v in (flags or {}).items()}
    positional_only_seen = False
    leftovers: list[str] = []
    for p in params:
        if p.kind == p.VAR_KEYWORD or p.name in chosen:
            continue
        if p.kind == p.VAR_POSITIONAL:
            positional_only_seen = True
            continue
        required = p.default is inspect.Parameter.empty
        for table in (flag_vals, const_vals):
            if _norm(p.name) in table and (required or _compatible(p.default, table[_norm(p.name)])):
                b.constants[p.name] = table[_norm(p.name)]
                break
        else:
            table = None
        if table is not None:
            continue
        if keep_params and required:
            leftovers.append(p.name)
            continue
        if required and fallback_positional:
            nxt = next((s for s, _, _ in srcs if s not in taken), None)
            if nxt is None:
                raise InterfaceError(f"{what}: parameter {p.name!r} is required, but the oracle has "
                                     f"nothing left to pass (it passes: "
                                     f"{', '.join(s for s, _, _ in srcs) or 'nothing'})")
            chosen[p.name] = nxt
            taken.add(nxt)
    b.params = leftovers
    # build the call: positional up to the first keyword-only or skipped parameter, then keywords
    positional_ok = True
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in chosen and positional_ok and p.kind != p.KEYWORD_ONLY:
            b.positional.append(chosen[p.name])
        elif p.name in chosen:
            b.keywords[p.name] = chosen[p.name]
        elif p.name in leftovers:
            positional_ok = False
        else:
            positional_ok = False
    b.arg_of = {s: a for a, s in chosen.items()}
    if positional_only_seen:  # *args: whatever sources are left go after, by position
        rest = [s for s, _, _ in srcs if s not in taken]
        if b.keywords:
            pass
        else:
            b.positional += rest
            taken.update(rest)
            b.arg_of.update({s: f"*args[{i}]" for i, s in enumerate(rest)})
    b.unbound = [s for s, _, _ in srcs if s not in taken]
    missing = [s for s, _, req in srcs if req and s in b.unbound]
    if missing:
        raise InterfaceError(f"{what}: the signature {sig} has no place for {', '.join(missing)}")
    return b


# ------------------------------------------------------------------------------------------------
# 2. parameter trees
# ------------------------------------------------------------------------------------------------
LINEAR_WEIGHT = ["weight", "W", "w", "kernel", "weights"]
LINEAR_BIAS = ["bias", "b", "biases"]
NORM_WEIGHT = ["weight", "gamma", "a_2", "g", "scale", "alpha", "w", "a", "gain"]
NORM_BIAS = ["bias", "beta", "b_2", "b", "shift", "offset"]
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


Q = Child("q_proj", "linear", _t("q_proj", "W_q", "w_q", "Wq", "wq", "W_Q", "query", "q_linear",
                                 "linear_q", "to_q", "fc_q", "q", "query_proj", "q_layer", "queries",
                                 "proj_q", "q_lin", "lin_q", "w_qs", "WQ", "query_linear", "linears.0",
                                 "W_query", "wquery", "Q"),
          _t("W_q", "Wq", "w_q", "wq", "W_Q", "WQ", "q_proj_weight", "q_weight", "W_query", "Q_w",
             "Wquery"),
          _t("b_q", "bq", "q_bias", "bias_q", "q_proj_bias", "b_Q", "B_q", "bQ"))
K = Child("k_proj", "linear", _t("k_proj", "W_k", "w_k", "Wk", "wk", "W_K", "key", "k_linear",
                                 "linear_k", "to_k", "fc_k", "k", "key_proj", "k_layer", "keys",
                                 "proj_k", "k_lin", "lin_k", "w_ks", "WK", "key_linear", "linears.1",
                                 "W_key", "wkey", "K"),
          _t("W_k", "Wk", "w_k", "wk", "W_K", "WK", "k_proj_weight", "k_weight", "W_key", "K_w", "Wkey"),
          _t("b_k", "bk", "k_bias", "bias_k_", "k_proj_bias", "b_K", "B_k", "bK"))
V = Child("v_proj", "linear", _t("v_proj", "W_v", "w_v", "Wv", "wv", "W_V", "value", "v_linear",
                                 "linear_v", "to_v", "fc_v", "v", "value_proj", "v_layer", "values",
                                 "proj_v", "v_lin", "lin_v", "w_vs", "WV", "value_linear", "linears.2",
                                 "W_value", "wvalue", "V"),
          _t("W_v", "Wv", "w_v", "wv", "W_V", "WV", "v_proj_weight", "v_weight", "W_value", "V_w",
             "Wvalue"),
          _t("b_v", "bv", "v_bias", "bias_v_", "v_proj_bias", "b_V", "B_v", "bV"))
O = Child("out_proj", "linear", _t("out_proj", "W_o", "w_o", "Wo", "wo", "W_O", "out", "fc_out",
                                   "o_proj", "linear_out", "out_linear", "to_out.0", "to_out", "fc_o",
                                   "o", "output", "proj", "c_proj", "dense", "o_linear", "output_proj",
                                   "out_lin", "lin_o", "proj_out", "W_out", "wout", "fc", "linears.3",
                                   "WO", "output_linear", "concat_proj", "W_0", "O"),
          _t("W_o", "Wo", "w_o", "wo", "W_O", "WO", "out_weight", "W_out", "o_weight", "W_0"),
          _t("b_o", "bo", "o_bias", "bias_o", "out_bias", "b_out", "b_O", "B_o", "bO", "b_0"))
PACKED_QKV = _t("in_proj", "c_attn", "qkv", "qkv_proj", "to_qkv", "W_qkv", "Wqkv", "w_qkv",
                "qkv_linear", "attn", "query_key_value", "in_proj_qkv")
PACKED_RAW = (("in_proj_weight", "in_proj_bias"), ("W_qkv", "b_qkv"), ("Wqkv", "bqkv"),
              ("qkv_weight", "qkv_bias"))

L1 = Child("linear1", "linear", _t("linear1", "linear_1", "w_1", "w1", "W1", "W_1", "fc1", "fc_1",
                                   "lin1", "layer1", "dense1", "c_fc", "up_proj", "fc_in", "net.0",
                                   "layers.0", "ff1", "l1", "linear_in", "w_in", "ffn1", "dense_1",
                                   "ff.0", "mlp.0", "fc.0", "seq.0", "model.0", "0", "first", "inner",
                                   "intermediate", "expand", "hidden"),
           _t("W1", "w1", "W_1", "w_1", "weight1", "W_in", "w_in"),
           _t("b1", "b_1", "bias1", "b_in"))
L2 = Child("linear2", "linear", _t("linear2", "linear_2", "w_2", "w2", "W2", "W_2", "fc2", "fc_2",
                                   "lin2", "layer2", "dense2", "c_proj", "down_proj", "fc_out",
                                   "net.3", "net.2", "net.4", "layers.3", "layers.2", "ff2", "l2",
                                   "linear_out", "w_out", "ffn2", "dense_2", "ff.3", "ff.2", "mlp.3",
                                   "mlp.2", "fc.3", "fc.2", "seq.2", "seq.3", "model.2", "model.3",
                                   "3", "2", "second", "outer", "output", "project", "out"),
           _t("W2", "w2", "W_2", "w_2", "weight2", "W_out", "w_out"),
           _t("b2", "b_2", "bias2", "b_out"))

ATTN_SELF = _t("self_attn", "self_attention", "attention", "attn", "mha", "multi_head_attention",
               "multihead_attention", "self_mha", "slf_attn", "masked_attn", "masked_attention",
               "masked_mha", "masked_self_attn", "attn1", "mha1", "attention1", "sa", "att",
               "dec_self_attn", "enc_self_attn", "self_attn_layer", "attention_layer", "mhsa",
               "multihead_attn", "self_att", "mh_attn", "multi_head")
ATTN_CROSS = _t("cross_attn", "src_attn", "cross_attention", "enc_dec_attn", "encoder_attention",
                "enc_attn", "multihead_attn", "attn2", "mha2", "encoder_decoder_attention",
                "cross_mha", "enc_dec_attention", "attention2", "dec_enc_attn", "src_attention",
                "context_attn", "encdec_attn", "inter_attn", "cross_att", "enc_dec_mha",
                "encoder_attn", "cross_attn_layer", "memory_attn")
FFN_NAMES = _t("feed_forward", "ffn", "ff", "feedforward", "pos_ffn", "position_wise_ffn",
               "positionwise_ffn", "mlp", "pwff", "feed_fwd", "ffwd", "ffnn", "pffn",
               "position_wise_feed_forward", "positionwise_feed_forward", "feed_forward_layer",
               "ff_layer", "ffn_layer", "pos_ff", "fc", "ff_block", "ffn_block", "linear_block",
               "feedforward_layer", "dense", "")


def _norms(i: int, extra: Iterable[str] = ()) -> tuple[str, ...]:
    return _t(f"norm{i}", f"norm_{i}", f"ln{i}", f"ln_{i}", f"layer_norm{i}", f"layernorm{i}",
              f"layer_norm_{i}", f"layernorm_{i}", f"sublayer.{i - 1}.norm", f"lnorm{i}",
              f"layer_norms.{i - 1}", f"norms.{i - 1}", f"ln.{i - 1}", f"LayerNorm{i}",
              f"sublayers.{i - 1}.norm", f"sublayer_connection{i}.norm", *extra)


TREES: dict[str, tuple[Child, ...]] = {
    "mha": (Q, K, V, O),
    "ffn": (L1, L2),
    "encoder_layer": (
        Child("self_attn", "mha", ATTN_SELF),
        Child("norm1", "norm", _norms(1, ("attn_norm", "attention_norm", "self_attn_layer_norm",
                                           "norm_attn", "ln_attn", "norm_1st", "norm_sa"))),
        Child("feed_forward", "ffn", FFN_NAMES),
        Child("norm2", "norm", _norms(2, ("ffn_norm", "ff_norm", "final_layer_norm", "norm_ff",
                                           "norm_ffn", "ln_ff", "ln_mlp", "mlp_norm"))),
    ),
    "decoder_layer": (
        Child("self_attn", "mha", ATTN_SELF),
        Child("norm1", "norm", _norms(1, ("self_attn_norm", "self_attn_layer_norm", "attn_norm",
                                           "norm_self", "ln_self"))),
        Child("cross_attn", "mha", ATTN_CROSS),
        Child("norm2", "norm", _norms(2, ("cross_attn_norm", "encoder_attn_layer_norm", "cross_norm",
                                           "norm_cross", "ln_cross", "enc_attn_norm"))),
        Child("feed_forward", "ffn", FFN_NAMES),
        Child("norm3", "norm", _norms(3, ("ffn_norm", "ff_norm", "final_layer_norm", "norm_ff",
                                           "norm_ffn", "ln_ff", "ln_mlp", "mlp_norm"))),
    ),
    "model": (
        Child("src_embed", "embedding",
              _t("src_embed", "encoder_embedding", "src_embedding", "enc_embedding",
                 "input_embedding", "src_emb", "src_tok_emb", "encoder.embedding", "encoder.embed",
                 "encoder.tok_embedding", "encoder.embed_tokens", "encoder.token_embedding",
                 "src_embed.0", "embed_src", "src_word_emb", "encoder.src_word_emb",
                 "src_embeddings", "enc_emb", "source_embedding", "embedding_src",
                 "encoder.word_embedding", "src_token_embedding", "encoder.emb", "enc_embed",
                 "encoder_embed", "src_tok_embedding", "input_emb", "embedding", "embed", "emb"),
              _t("src_embed_weight", "W_src_emb", "E_src")),
        Child("tgt_embed", "embedding",
              _t("tgt_embed", "decoder_embedding", "tgt_embedding", "dec_embedding",
                 "output_embedding", "tgt_emb", "trg_embedding", "trg_emb", "tgt_tok_emb",
                 "decoder.embedding", "decoder.embed", "decoder.tok_embedding",
                 "decoder.embed_tokens", "decoder.token_embedding", "tgt_embed.0", "embed_tgt",
                 "trg_word_emb", "decoder.trg_word_emb", "tgt_embeddings", "dec_emb",
                 "target_embedding", "embedding_tgt", "decoder.word_embedding",
                 "tgt_token_embedding", "decoder.emb", "dec_embed", "decoder_embed",
                 "tgt_tok_embedding", "output_emb", "trg_embed"),
              _t("tgt_embed_weight", "W_tgt_emb", "E_tgt")),
        Child("encoder.layers.{i}", "encoder_layer",
              _t("encoder.layers", "encoder_layers", "encoder.layer", "enc_layers",
                 "encoder.encoder_layers", "encoder.layer_stack", "encoder.blocks", "encoder",
                 "encoders", "encoder_blocks", "transformer.encoder.layers", "encoder.enc_layers",
                 "encoder.layer_list", "enc_blocks", "encoder_stack", "encoder.stack"),
              count="num_encoder_layers"),
        Child("encoder.norm", "norm",
              _t("encoder.norm", "encoder.layer_norm", "encoder_norm", "encoder.ln", "encoder.final_norm",
                 "enc_norm", "encoder.ln_f", "encoder.norm_f", "encoder.final_layer_norm",
                 "transformer.encoder.norm")),
        Child("decoder.layers.{i}", "decoder_layer",
              _t("decoder.layers", "decoder_layers", "decoder.layer", "dec_layers",
                 "decoder.decoder_layers", "decoder.layer_stack", "decoder.blocks", "decoder",
                 "decoders", "decoder_blocks", "transformer.decoder.layers", "decoder.dec_layers",
                 "decoder.layer_list", "dec_blocks", "decoder_stack", "decoder.stack"),
              count="num_decoder_layers"),
        Child("decoder.norm", "norm",
              _t("decoder.norm", "decoder.layer_norm", "decoder_norm", "decoder.ln", "decoder.final_norm",
                 "dec_norm", "decoder.ln_f", "decoder.norm_f", "decoder.final_layer_norm",
                 "transformer.decoder.norm")),
        Child("output_proj", "linear",
              _t("output_proj", "fc", "fc_out", "generator.proj", "generator", "out", "output",
                 "linear", "projection", "lm_head", "final_linear", "output_layer", "out_proj", "proj",
                 "classifier", "output_linear", "vocab_proj", "tgt_word_prj", "head", "to_logits",
                 "fc_final", "final_layer", "output_projection", "out_linear", "logits", "generator.0",
                 "fc_output", "linear_out", "out_layer", "dense", "decoder.fc_out",
                 "decoder.output_proj", "decoder.fc", "decoder.out", "decoder.linear"),
              _t("W_out", "W_vocab", "W_o"), _t("b_out", "b_vocab", "b_o")),
    ),
}
LEAVES = {"linear": (("weight", LINEAR_WEIGHT, True), ("bias", LINEAR_BIAS, False)),
          "norm": (("weight", NORM_WEIGHT, False), ("bias", NORM_BIAS, False)),
          "embedding": (("weight", EMBED_WEIGHT, True),)}
"""Leaf kinds: (reference leaf name, candidate aliases, required). A LayerNorm without parameters,
or a Linear without a bias, is allowed: the reference then holds that parameter at its neutral value
(weight 1, bias 0) and does not compare its gradient."""


# ------------------------------------------------------------------------------------------------
# 3. candidate parameter spaces and the resolver
# ------------------------------------------------------------------------------------------------
@dataclass
class Space:
    """The candidate's parameters: names in registration order, shapes, and whether each is a bare
    matrix (layout unknown) or a weight of a known layer type (torch.nn.Linear: (out, in))."""

    names: list[str]
    shapes: dict[str, tuple]
    bare: dict[str, bool]

    def __post_init__(self) -> None:
        self._lower = {}
        for n in self.names:
            self._lower.setdefault(n.lower(), n)

    def find(self, name: str) -> str | None:
        """Exact name, else a case-insensitive match."""
        if name in self.shapes:
            return name
        return self._lower.get(name.lower())

    def has_prefix(self, prefix: str) -> bool:
        p = prefix.lower()
        return any(n.lower().startswith(p) for n in self.names)


@dataclass
class Entry:
    """A reference parameter and where the candidate keeps it."""

    ref: str
    cand: str | None                 # None: the candidate has none (neutral value, not compared)
    transpose: bool = False          # candidate stores it transposed
    rows: tuple[int, int] | None = None   # a slice of a packed matrix (rows of the (out, in) view)
    how: str = "name"                # name | order | map | absent | packed

    def describe(self) -> str:
        if self.cand is None:
            return f"{self.ref} <- (none: fixed at its neutral value, not compared)"
        extra = []
        if self.rows:
            extra.append(f"rows {self.rows[0]}:{self.rows[1]} of a packed matrix")
        if self.transpose:
            extra.append("transposed")
        if self.how == "order":
            extra.append("by registration order")
        if self.how == "map":
            extra.append("from --map")
        return f"{self.ref} <- {self.cand}" + (f" ({', '.join(extra)})" if extra else "")


class Resolver:
    """Walks a component's tree, matching reference names to candidate names."""

    def __init__(self, space: Space, ref_shapes: dict[str, tuple], hyper: dict[str, Any],
                 name_map: dict[str, str] | None = None, layout: str = "out_in"):
        self.space = space
        self.ref_shapes = ref_shapes
        self.hyper = hyper
        self.map = dict(name_map or {})
        self.layout = layout
        self.claimed: set[str] = set()
        self.entries: dict[str, Entry] = {}
        self.problems: list[str] = []

    # -- helpers ----------------------------------------------------------------------------------
    @staticmethod
    def join(prefix: str, name: str) -> str:
        if not name:
            return prefix
        return f"{prefix}.{name}" if prefix else name

    def _orient(self, ref: str, cand: str) -> bool | None:
        """False: same layout, True: transposed, None: shapes incompatible."""
        r = tuple(self.ref_shapes[ref])
        if self.space.shapes.get(cand) is None:  # a function argument: it takes what it is given
            return len(r) == 2 and self.layout == "in_out"
        c = tuple(self.space.shapes[cand])
        if len(r) == 2 and r[0] == r[1] and c == r:
            return self.space.bare.get(cand, True) and self.layout == "in_out"
        if c == r:
            return False
        if len(r) == 2 and c == (r[1], r[0]):
            return True
        return None

    def _take(self, ref: str, cand: str, how: str = "name") -> bool:
        if cand in self.claimed:
            return False
        t = self._orient(ref, cand)
        if t is None:
            return False
        self.entries[ref] = Entry(ref, cand, transpose=bool(t), how=how)
        self.claimed.add(cand)
        return True

    def _free(self, prefix: str) -> list[str]:
        p = (prefix + ".") if prefix else ""
        return [n for n in self.space.names if n not in self.claimed and n.startswith(p)]

    # -- explicit map -----------------------------------------------------------------------------
    def _apply_map(self, ref: str) -> bool:
        if ref not in self.map:
            return False
        target = self.map[ref].strip()
        if target in ("", "-", "none", "None"):
            self.entries[ref] = Entry(ref, None, how="absent")
            return True
        transpose = target.endswith(".T")
        name = target[:-2] if transpose else target
        cand = self.space.find(name)
        if cand is None:
            raise InterfaceError(f"--map {ref}={target}: the candidate has no parameter {name!r} "
                                 f"(it has: {', '.join(self.space.names[:40])})")
        want = tuple(self.ref_shapes[ref])
        got = tuple(self.space.shapes[cand]) if self.space.shapes.get(cand) is not None else (
            want[::-1] if transpose else want)
        if transpose:
            got = got[::-1]
        if got != want:
            raise InterfaceError(f"--map {ref}={target}: shape {tuple(self.space.shapes[cand])} "
                                 f"{'(transposed ' + str(got) + ') ' if transpose else ''}does not "
                                 f"fit the reference's {want}")
        self.entries[ref] = Entry(ref, cand, transpose=transpose, how="map")
        self.claimed.add(cand)
        return True

    # -- leaves -----------------------------------------------------------------------------------
    def leaf_block(self, kind: str, ref_prefix: str, cand_prefix: str, child: Child | None,
                   parent_cand: str) -> bool:
        """Resolve a linear/norm/embedding at cand_prefix; True when its required leaves are found."""
        leaves = LEAVES[kind]
        found_any = False
        for leaf, aliases, _req in leaves:
            ref = self.join(ref_prefix, leaf)
            if ref not in self.ref_shapes or ref in self.entries:
                found_any = found_any or ref in self.entries
                continue
            for a in aliases:
                cand = self.space.find(self.join(cand_prefix, a))
                if cand and self._take(ref, cand):
                    found_any = True
                    break
        return all(self.join(ref_prefix, leaf) in self.entries for leaf, _, req in leaves
                   if req and self.join(ref_prefix, leaf) in self.ref_shapes) and found_any

    def linear_raw(self, ref_prefix: str, parent_cand: str, child: Child) -> bool:
        """A Linear kept as bare arrays beside its siblings (W_q, b_q)."""
        wref, bref = self.join(ref_prefix, "weight"), self.join(ref_prefix, "bias")
        if wref not in self.entries:
            for a in child.raw_weight:
                cand = self.space.find(self.join(parent_cand, a))
                if cand and self._take(wref, cand):
                    break
        if wref not in self.entries:
            return False
        if bref in self.ref_shapes and bref not in self.entries:
            for a in child.raw_bias:
                cand = self.space.find(self.join(parent_cand, a))
                if cand and self._take(bref, cand):
                    break
        return True

    # -- blocks -----------------------------------------------------------------------------------
    def block(self, kind: str, ref_prefix: str, cand_prefix: str) -> None:
        """Resolve every child of a block (mha, ffn, layers, model) at cand_prefix."""
        children = TREES[kind]
        for child in children:
            for ref_child in self._expand(child, ref_prefix):
                self.child(child, ref_child, cand_prefix)
        if kind == "mha":
            self._packed_qkv(ref_prefix, cand_prefix)
        if kind in ("mha", "ffn"):
            self._by_order(children, ref_prefix, cand_prefix)

    def _expand(self, child: Child, ref_prefix: str) -> list[str]:
        if "{i}" not in child.ref:
            name = self.join(ref_prefix, child.ref)
            return [name] if any(r == name or r.startswith(name + ".") for r in self.ref_shapes) else []
        n = int(self.hyper.get(child.count, 0))
        return [self.join(ref_prefix, child.ref.replace("{i}", str(i))) for i in range(n)]

    def _child_aliases(self, child: Child, ref_child: str) -> list[str]:
        # a block map (--map self_attn=attention) replaces the aliases
        rel_keys = [ref_child]
        for k in rel_keys:
            if k in self.map:
                return [self.map[k]]
        if "{i}" in child.ref:
            i = ref_child.rsplit(".", 1)[-1]
            return [f"{a}.{i}" for a in child.aliases]
        return list(child.aliases)

    def child(self, child: Child, ref_child: str, cand_prefix: str) -> None:
        leaf_kinds = ("linear", "norm", "embedding")
        best = None
        if child.kind in leaf_kinds:
            for leaf, _, _ in LEAVES[child.kind]:
                self._apply_map(self.join(ref_child, leaf))
        for alias in self._child_aliases(child, ref_child):
            p = self.join(cand_prefix, alias)
            if child.kind in leaf_kinds:
                bare = self.space.find(p)
                if bare and child.kind == "linear" and self._take(self.join(ref_child, "weight"), bare):
                    self.linear_raw(ref_child, cand_prefix, child)
                    return
                if bare and child.kind == "embedding" and self._take(self.join(ref_child, "weight"), bare):
                    return
                if alias and not self.space.has_prefix(p + "."):
                    continue
                if self.leaf_block(child.kind, ref_child, p, child, cand_prefix):
                    return
            else:
                if alias and not self.space.has_prefix(p + "."):
                    continue
                snap = (dict(self.entries), set(self.claimed))
                self.block(child.kind, ref_child, p)
                if self._complete(ref_child):
                    return
                gained = len(self.entries) - len(snap[0])
                if gained > 0 and (best is None or gained > best[0]):
                    best = (gained, dict(self.entries), set(self.claimed))
                self.entries, self.claimed = snap
        if best is not None:  # nothing complete: keep the attempt that found the most
            self.entries, self.claimed = best[1], best[2]
            return
        if child.kind == "linear" and child.raw_weight:
            self.linear_raw(ref_child, cand_prefix, child)

    def _complete(self, ref_prefix: str) -> bool:
        """Every required weight (Linear/Embedding weights) under ref_prefix has an entry."""
        need = [r for r in self.ref_shapes if r.startswith(ref_prefix + ".")
                and r.endswith(".weight") and len(self.ref_shapes[r]) == 2]
        return all(r in self.entries for r in need)

    def _packed_qkv(self, ref_prefix: str, cand_prefix: str) -> None:
        names = [self.join(ref_prefix, f"{p}.weight") for p in ("q_proj", "k_proj", "v_proj")]
        if all(n in self.entries for n in names) or not all(n in self.ref_shapes for n in names):
            return
        D = self.ref_shapes[names[0]][0]
        pairs = [(self.join(cand_prefix, f"{m}.weight"), self.join(cand_prefix, f"{m}.bias"))
                 for m in PACKED_QKV]
        pairs += [(self.join(cand_prefix, w), self.join(cand_prefix, b)) for w, b in PACKED_RAW]
        for w, b in pairs:
            cw = self.space.find(w)
            if not cw or cw in self.claimed:
                continue
            shape = tuple(self.space.shapes[cw])
            if shape == (3 * D, D):
                transpose = False
            elif shape == (D, 3 * D):
                transpose = True
            else:
                continue
            for j, p in enumerate(("q_proj", "k_proj", "v_proj")):
                self.entries[self.join(ref_prefix, f"{p}.weight")] = Entry(
                    self.join(ref_prefix, f"{p}.weight"), cw, transpose, (j * D, (j + 1) * D), "packed")
            self.claimed.add(cw)
            cb = self.space.find(b)
            if cb and cb not in self.claimed and tuple(self.space.shapes[cb]) == (3 * D,):
                for j, p in enumerate(("q_proj", "k_proj", "v_proj")):
                    bref = self.join(ref_prefix, f"{p}.bias")
                    if bref in self.ref_shapes:
                        self.entries[bref] = Entry(bref, cb, False, (j * D, (j + 1) * D), "packed")
                self.claimed.add(cb)
            return

    def _by_order(self, children: tuple[Child, ...], ref_prefix: str, cand_prefix: str) -> None:
        """Linear children still unresolved take the free weights under the block, in order."""
        todo = [c for c in children if c.kind == "linear"
                and self.join(self.join(ref_prefix, c.ref), "weight") in self.ref_shapes
                and self.join(self.join(ref_prefix, c.ref), "weight") not in self.entries]
        if not todo:
            return
        free = self._free(cand_prefix)
        skip = len(cand_prefix) + 1 if cand_prefix else 0
        for c in todo:
            wref = self.join(self.join(ref_prefix, c.ref), "weight")
            bref = self.join(self.join(ref_prefix, c.ref), "bias")
            for pos, m in enumerate(free):
                if len(self.space.shapes[m]) != 2 or not self._take(wref, m, how="order"):
                    continue
                if bref in self.ref_shapes and bref not in self.entries:
                    rel = m[skip:]
                    if "." in rel:  # a module's weight: its bias sits beside it
                        owner = m.rsplit(".", 1)[0]
                        options = [self.join(owner, a) for a in LINEAR_BIAS]
                    else:           # a bare matrix: the next free vector registered after it
                        options = [v for v in free[pos + 1:] if len(self.space.shapes[v]) == 1
                                   and "." not in v[skip:]][:1]
                    for v in options:
                        v = self.space.find(v)
                        if v and self._take(bref, v, how="order"):
                            break
                break

    # -- entry point ------------------------------------------------------------------------------
    def run(self, kind: str) -> dict[str, Entry]:
        if kind in TREES:
            self.block(kind, "", "")
        else:  # a single leaf block at the top: linear / norm / embedding
            for leaf, _, _ in LEAVES[kind]:
                self._apply_map(leaf)
            self.leaf_block(kind, "", "", None, "")
        # explicit full-name maps the walk did not visit
        for ref in self.ref_shapes:
            if ref not in self.entries:
                self._apply_map(ref)
        return self.entries


def resolve(kind: str, space: Space, ref_shapes: dict[str, tuple], hyper: dict[str, Any], *,
            name_map: dict[str, str] | None = None, layout: str = "out_in",
            optional: Callable[[str], bool] = lambda r: False) -> tuple[dict[str, Entry], list[str]]:
    """Map every reference parameter to the candidate; returns (entries, unclaimed candidate names).

    Raises InterfaceError naming the reference parameters that stayed unmapped (biases and norm
    parameters may be absent: `optional(ref)` says which).
    """
    unknown = [k for k in (name_map or {}) if k not in ref_shapes
               and not any(r.startswith(k + ".") for r in ref_shapes)]
    if unknown:
        raise InterfaceError(f"--map: unknown reference name(s) {unknown}; reference parameters are: "
                             f"{', '.join(ref_shapes)}")
    r = Resolver(space, ref_shapes, hyper, name_map, layout)
    entries = r.run(kind)
    missing = []
    for ref in ref_shapes:
        if ref in entries:
            continue
        if optional(ref):
            entries[ref] = Entry(ref, None, how="absent")
        else:
            missing.append(ref)
    unclaimed = [n for n in space.names if n not in r.claimed]
    if missing:
        listing = ", ".join(f"{n} {tuple(space.shapes[n])}" for n in space.names[:60])
        raise InterfaceError(
            "cannot tell where the candidate keeps "
            + ", ".join(f"{m} {tuple(ref_shapes[m])}" for m in missing)
            + f". Candidate parameters: {listing or '(none)'}. Name them with --map REF=CAND "
              "(e.g. --map q_proj.weight=attn.Wq.weight; append .T for a transposed matrix).")
    # entries in reference order
    return {k: entries[k] for k in ref_shapes}, unclaimed
