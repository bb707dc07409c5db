"""Components: encoder layer, decoder layer, the whole model (registered in components.py)."""
from __future__ import annotations

import numpy as np

from .base import (
    MASK_ALIASES,
    SEARCH,
    X_ALIASES,
    Case,
    Component,
    DecoderLayer,
    EncoderLayer,
    InputSpec,
    MaskSpec,
    Transformer,
    TransformerConfig,
    _activation,
    _bool,
    _cast,
    _choice,
    _float,  # noqa: F401
    _index,
    _int,
    _load,
    _mask,
    _own_eps,
    _param_grads,
    _state_shapes,
    draw_params,
    hs,
    mask_array,
    st,
)
from .parts import _heads

# ------------------------------------------------------------------------------------------------
# encoder and decoder layers
# ------------------------------------------------------------------------------------------------
LAYER_SETTABLE = {"d_model": _int, "num_heads": _int, "d_ff": _int, "activation": _activation,
                  "eps": _float, "norm_first": _bool, "max_batch": _int, "max_len": _int}


def _layer_hyper(d, fixed, caps=None) -> dict:
    D, H = _heads(d, fixed, min_width=hs.MIN_D_MODEL)      # a LayerNorm inside: no degenerate widths
    ratio = caps.d_ff_ratio if caps is not None else None       # the candidate's width is ratio * d_model
    return {"d_model": D, "num_heads": H,
            "d_ff": ratio * D if ratio and "d_ff" not in fixed else
            d(_choice(fixed, "d_ff", st.integers(1, SEARCH["max_d_ff"]))),
            "activation": fixed.get("activation", "relu"),
            "eps": fixed.get("eps", _own_eps(caps)),
            "norm_first": fixed.get("norm_first", bool(caps is not None and caps.norm_first))}


def layer_config(hyper: dict, **extra) -> TransformerConfig:
    return TransformerConfig(d_model=hyper["d_model"], num_heads=hyper["num_heads"],
                             d_ff=hyper["d_ff"], activation=hyper["activation"],
                             layer_norm_eps=hyper["eps"], norm_first=hyper["norm_first"],
                             dropout=0.0, dtype="float64", **extra)


class EncoderLayerComponent(Component):
    name = "encoder_layer"
    title = "Transformer encoder layer (module)"
    inputs = (InputSpec("x", X_ALIASES + ("enc_input", "src_emb", "encoder_input")),)
    # a decoder-only (GPT-style) layer is checked here too: its self-attention mask's names count
    masks = (MaskSpec("mask", MASK_ALIASES + ("enc_mask", "src_key_mask", "slf_attn_mask",
                                               "enc_self_attn_mask", "self_attn_mask", "tgt_mask",
                                               "trg_mask", "dec_mask", "dec_self_attn_mask", "target_mask"),
                      ("none", "padding", "causal", "causal_padding", "random_2d"), "T", "T"),)
    hypers = ("d_model", "num_heads", "d_ff", "eps", "activation", "norm_first")
    tree = "encoder_layer"
    settable = LAYER_SETTABLE

    def strategy(self, fixed, strict, caps):
        @st.composite
        def draw(d):
            hyper = _layer_hyper(d, fixed, caps)
            B = d(st.integers(1, fixed.get("max_batch", SEARCH["max_batch"])))
            T = d(st.integers(1, fixed.get("max_len", SEARCH["max_len"])))
            kinds = caps.mask_kinds.get("mask", self.masks[0].kinds)
            mask = d(_mask(kinds, B, hyper["num_heads"], T, T, strict))
            return {"B": B, "T": T, **hyper, "mask": mask, "seed": d(hs.seeds())}
        return draw()

    def hyper_of(self, ex):
        return {k: ex[k] for k in ("d_model", "num_heads", "d_ff", "activation", "eps", "norm_first")}

    def param_shapes(self, hyper):
        return _state_shapes(EncoderLayer(layer_config(hyper)))

    def build(self, ex, dtype, caps):
        rng = np.random.default_rng(ex["seed"])
        hyper = self.hyper_of(ex)
        B, T, D = ex["B"], ex["T"], ex["d_model"]
        x = _cast(rng.standard_normal((B, T, D)), dtype)
        params = draw_params(rng, self.param_shapes(hyper), dtype)
        return Case(self.name, ex, hyper, {"x": x}, {"mask": mask_array(ex["mask"])}, params,
                    self._upstream(rng, (B, T, D), dtype), (B, T, D))

    def forward_module(self, case):
        """(the reference module, after its forward on `case`, its output)."""
        m = EncoderLayer(layer_config(case.hyper))
        _load(m, case.params)
        return m, m.forward(case.inputs["x"], case.masks["mask"])

    def reference(self, case):
        m, out = self.forward_module(case)
        return {"output": out, "grad_input:x": m.backward(case.dout), **_param_grads(m)}


class DecoderLayerComponent(EncoderLayerComponent):
    name = "decoder_layer"
    title = "Transformer decoder layer with cross-attention (module)"
    inputs = (InputSpec("x", ("x", "tgt", "trg", "dec_input", "y", "target", "input", "inputs",
                              "dec_inp", "tgt_emb", "decoder_input", "h", "X", "hidden_states",
                              # seq2seq words: the output sequence is the decoder's own
                              "output_sequence_encoding", "output_sequence", "output_encoding")),
              InputSpec("memory", ("memory", "enc_output", "enc_out", "encoder_output",
                                   "encoder_out", "enc", "src", "context", "memory_bank", "m",
                                   "e_outputs", "enc_outputs", "encoder_outputs", "mem",
                                   "enc_hidden", "encoder_hidden_states", "src_enc",
                                   "enc_output_", "encoded", "source", "cross",
                                   "input_sequence_encoding", "input_sequence", "input_encoding")))
    masks = (MaskSpec("self_mask", ("self_mask", "tgt_mask", "trg_mask", "look_ahead_mask",
                                    "causal_mask", "dec_mask", "self_attn_mask", "tgt_attn_mask",
                                    "slf_attn_mask", "dec_self_attn_mask", "mask", "attn_mask",
                                    "target_mask", "lookahead_mask", "no_peak_mask",
                                    "output_attention_mask", "output_sequence_mask"),
                      ("none", "causal", "causal_padding", "padding"), "T", "T"),
             MaskSpec("memory_mask", ("memory_mask", "src_mask", "cross_mask", "enc_mask",
                                      "padding_mask", "src_attn_mask", "enc_dec_mask",
                                      "dec_enc_attn_mask", "cross_attn_mask", "source_mask",
                                      "enc_dec_attn_mask", "mem_mask", "context_mask",
                                      "memory_attn_mask", "src_padding_mask",
                                      "input_attention_mask", "input_sequence_mask"),
                      ("none", "padding", "random_2d"), "T", "S"))
    tree = "decoder_layer"

    def strategy(self, fixed, strict, caps):
        @st.composite
        def draw(d):
            hyper = _layer_hyper(d, fixed, caps)
            B = d(st.integers(1, fixed.get("max_batch", SEARCH["max_batch"])))
            T = d(st.integers(1, fixed.get("max_len", SEARCH["max_len"])))
            S = d(st.integers(1, fixed.get("max_len", SEARCH["max_len"])))
            kinds = caps.mask_kinds
            H = hyper["num_heads"]
            sm = d(_mask(kinds.get("self_mask", self.masks[0].kinds), B, H, T, T, strict))
            mm = d(_mask(kinds.get("memory_mask", self.masks[1].kinds), B, H, T, S, strict))
            return {"B": B, "T": T, "S": S, **hyper, "self_mask": sm, "memory_mask": mm,
                    "seed": d(hs.seeds())}
        return draw()

    def param_shapes(self, hyper):
        return _state_shapes(DecoderLayer(layer_config(hyper), cross_attention=True))

    def build(self, ex, dtype, caps):
        rng = np.random.default_rng(ex["seed"])
        hyper = self.hyper_of(ex)
        B, T, S, D = ex["B"], ex["T"], ex["S"], ex["d_model"]
        x = _cast(rng.standard_normal((B, T, D)), dtype)
        mem = _cast(rng.standard_normal((B, S, D)), dtype)
        params = draw_params(rng, self.param_shapes(hyper), dtype)
        masks = {"self_mask": mask_array(ex["self_mask"]), "memory_mask": mask_array(ex["memory_mask"])}
        return Case(self.name, ex, hyper, {"x": x, "memory": mem}, masks, params,
                    self._upstream(rng, (B, T, D), dtype), (B, T, D))

    def forward_module(self, case):
        m = DecoderLayer(layer_config(case.hyper), cross_attention=True)
        _load(m, case.params)
        return m, m.forward(case.inputs["x"], case.inputs["memory"], case.masks["self_mask"],
                            case.masks["memory_mask"])

    def reference(self, case):
        m, out = self.forward_module(case)
        dx, dmem = m.backward(case.dout)
        return {"output": out, "grad_input:x": dx, "grad_input:memory": dmem, **_param_grads(m)}


# ------------------------------------------------------------------------------------------------
# whole encoder-decoder model
# ------------------------------------------------------------------------------------------------
class Model(Component):
    name = "model"
    title = "encoder-decoder Transformer (src ids, tgt ids -> logits)"
    inputs = (InputSpec("src", ("src", "source", "src_ids", "input_ids", "enc_input", "x",
                                "src_seq", "src_tokens", "encoder_input", "src_input", "inputs",
                                "src_sentence", "enc_inputs", "input_sequence", "source_sequence", "src_sequence",
                                "source_ids", "input_tokens", "source_tokens"), kind="ids"),
              InputSpec("tgt", ("tgt", "target", "trg", "tgt_ids", "dec_input", "y", "tgt_seq",
                                "decoder_input", "tgt_tokens", "trg_seq", "tgt_input",
                                "decoder_input_ids", "trg_input", "dec_inputs", "outputs", "output_sequence",
                                "target_sequence", "tgt_sequence", "target_ids", "output_tokens",
                                "target_tokens"),
                        kind="ids"))
    masks = (MaskSpec("src_mask", ("src_mask", "source_mask", "enc_mask", "src_padding_mask",
                                   "encoder_mask", "src_attn_mask", "memory_mask", "input_attention_mask",
                                   "source_attention_mask", "src_attention_mask", "input_mask",
                                   "src_key_padding_mask", "source_padding_mask", "src_pad_mask"),
                      ("padding",), "S", "S"),
             MaskSpec("tgt_mask", ("tgt_mask", "trg_mask", "target_mask", "dec_mask",
                                   "look_ahead_mask", "tgt_attn_mask", "decoder_mask", "output_attention_mask",
                                   "target_attention_mask", "tgt_attention_mask", "output_mask",
                                   "tgt_key_padding_mask", "target_padding_mask", "tgt_pad_mask"),
                      ("causal_padding",), "T", "T"))
    hypers = ("src_vocab", "tgt_vocab", "d_model", "num_heads", "d_ff", "num_encoder_layers",
              "num_decoder_layers", "num_layers", "max_len", "pad_id", "tgt_pad_id", "eps", "activation",
              "norm_first", "vocab_size")
    tree = "model"
    settable = {"d_model": _int, "num_heads": _int, "d_ff": _int, "num_layers": _int,
                "num_encoder_layers": _int, "num_decoder_layers": _int, "src_vocab": _int,
                "tgt_vocab": _int, "max_len": _int, "pad_id": _index, "eps": _float,
                "activation": _activation, "norm_first": _bool, "final_norm": _bool,
                "scale_embeddings": _bool, "tie_embeddings": _bool, "share_embeddings": _bool,
                "output_bias": _bool, "max_batch": _int, "max_seq": _int}

    def strategy(self, fixed, strict, caps):
        @st.composite
        def draw(d):
            # sinusoidal positions: the paper's even d_model; LayerNorms inside: no degenerate widths
            D, H = _heads(d, fixed, even=True, min_width=hs.MIN_D_MODEL)
            n = fixed.get("num_layers")
            ne = fixed.get("num_encoder_layers", n) or d(st.integers(1, 2))
            nd = fixed.get("num_decoder_layers", n) or d(st.integers(1, 2))
            if n is None and "num_encoder_layers" not in fixed and "num_decoder_layers" not in fixed \
                    and caps.one_layer_count:
                nd = ne
            sv = d(_choice(fixed, "src_vocab", st.integers(3, SEARCH["max_vocab"])))
            share = fixed.get("share_embeddings", caps.share_embeddings)   # one table: one vocabulary
            tv = sv if caps.one_vocab or share else d(_choice(fixed, "tgt_vocab",
                                                                     st.integers(3, SEARCH["max_vocab"])))
            B = d(st.integers(1, fixed.get("max_batch", SEARCH["max_batch"])))
            S = d(st.integers(1, fixed.get("max_seq", SEARCH["max_seq_model"])))
            T = d(st.integers(1, fixed.get("max_seq", SEARCH["max_seq_model"])))
            src_len = [d(st.integers(1, S)) for _ in range(B)]
            tgt_len = [d(st.integers(1, T)) for _ in range(B)]
            return {"B": B, "S": S, "T": T, "d_model": D, "num_heads": H,
                    "d_ff": caps.d_ff_ratio * D if caps.d_ff_ratio and "d_ff" not in fixed else
                    d(_choice(fixed, "d_ff", st.integers(1, SEARCH["max_d_ff"]))),
                    "num_encoder_layers": ne, "num_decoder_layers": nd,
                    "src_vocab": sv, "tgt_vocab": tv, "src_len": src_len, "tgt_len": tgt_len,
                    "seed": d(hs.seeds())}
        return draw()

    def config(self, ex, fixed) -> TransformerConfig:
        return TransformerConfig(
            d_model=ex["d_model"], num_heads=ex["num_heads"], d_ff=ex["d_ff"],
            num_encoder_layers=ex["num_encoder_layers"], num_decoder_layers=ex["num_decoder_layers"],
            vocab_size=max(ex["src_vocab"], ex["tgt_vocab"]), src_vocab_size=ex["src_vocab"],
            tgt_vocab_size=ex["tgt_vocab"], max_len=fixed.get("max_len", 64),
            pad_id=fixed.get("pad_id", 0), activation=fixed.get("activation", "relu"),
            norm_first=fixed.get("norm_first", False), final_norm=fixed.get("final_norm", False),
            layer_norm_eps=fixed.get("eps", 1e-5), scale_embeddings=fixed.get("scale_embeddings", True),
            tie_embeddings=fixed.get("tie_embeddings", False),
            share_embeddings=fixed.get("share_embeddings", False),
            output_bias=fixed.get("output_bias", True), dropout=0.0, dtype="float64")

    def hyper_from(self, cfg: TransformerConfig) -> dict:
        return {"src_vocab": cfg.src_vocab, "tgt_vocab": cfg.tgt_vocab, "vocab_size": cfg.src_vocab,
                "d_model": cfg.d_model, "num_heads": cfg.num_heads, "d_ff": cfg.d_ff,
                "num_encoder_layers": cfg.num_encoder_layers,
                "num_decoder_layers": cfg.num_decoder_layers,
                "num_layers": cfg.num_encoder_layers, "max_len": cfg.max_len, "pad_id": cfg.pad_id,
                "tgt_pad_id": cfg.pad_id,           # a target padding id of its own (`trg_pad_idx`)
                "eps": cfg.layer_norm_eps, "activation": cfg.activation, "norm_first": cfg.norm_first,
                "final_norm": cfg.final_norm, "scale_embeddings": cfg.scale_embeddings}

    def build(self, ex, dtype, caps):
        fixed = caps.fixed
        if caps.norm_eps and "eps" not in fixed:     # the candidate's own (recognise/norm_eps)
            fixed = dict(fixed, eps=caps.norm_eps)
        for key in ("share_embeddings", "tie_embeddings", "final_norm"):   # recognise/vocab_tables, final_norms
            if getattr(caps, key) and key not in fixed:
                fixed = dict(fixed, **{key: True})
        cfg = self.config(ex, fixed)
        hyper = self.hyper_from(cfg)
        rng = np.random.default_rng(ex["seed"])
        B, S, T = ex["B"], ex["S"], ex["T"]
        pad = cfg.pad_id
        src_keep = np.arange(S)[None, :] < np.asarray(ex["src_len"])[:, None]      # (B, S)
        tgt_keep = np.arange(T)[None, :] < np.asarray(ex["tgt_len"])[:, None]      # (B, T)
        src = hs.token_ids(rng, src_keep, cfg.src_vocab, pad)
        tgt = hs.token_ids(rng, tgt_keep, cfg.tgt_vocab, pad)
        ref_model = Transformer(cfg)
        params = draw_params(rng, _state_shapes(ref_model), dtype)
        if pad is not None:  # as torch.nn.Embedding(padding_idx=...): the padding row starts at 0
            for k in ("src_embed.weight", "tgt_embed.weight"):
                if k in params:
                    params[k][pad] = 0.0
        dout = self._upstream(rng, (B, T, cfg.tgt_vocab), dtype)
        dout = dout * tgt_keep[:, :, None]          # padded target positions carry no loss
        masks = {"src_mask": src_keep[:, None, None, :],                          # (B,1,1,S)
                 "tgt_mask": tgt_keep[:, None, None, :] & np.tril(np.ones((T, T), bool))[None, None]}
        return Case(self.name, ex, hyper, {"src": src, "tgt": tgt}, masks, params, dout,
                    (B, T, cfg.tgt_vocab), row_keep=tgt_keep, settings=dict(fixed))

    def forward_module(self, case):
        m = Transformer(self.config(case.example, case.settings))
        _load(m, case.params)
        return m, m.forward(case.inputs["src"], case.inputs["tgt"])

    def reference(self, case):
        m, out = self.forward_module(case)
        m.backward(case.dout)
        return {"output": out, **_param_grads(m)}


