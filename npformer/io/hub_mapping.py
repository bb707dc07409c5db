"""How Hugging Face GPT-2 and BERT configs and weight names map onto npformer's.

What maps to what (D = d_model; our weights are (out, in) like torch.nn.Linear):

  GPT-2 (GPT2LMHeadModel -> CausalLM, layout gpt2_config: pre-norm, tanh GELU, learned positions)
    wte, wpe                       tgt_embed.weight, tgt_pos.weight
    h.i.ln_1, h.i.ln_2             decoder.layers.i.norm1, norm2
    h.i.attn.c_attn  W (D, 3D)     q|k|v packed on the last axis: q_proj.weight = W[:, 0:D].T,
                     b (3D,)       k_proj = W[:, D:2D].T, v_proj = W[:, 2D:3D].T; biases likewise
    h.i.attn.c_proj, mlp.c_fc,     Conv1D stores (in, out): out_proj, linear1, linear2 get W.T
    h.i.mlp.c_proj
    ln_f                           decoder.norm
    lm_head.weight                 tied: it is wte (output_proj.weight is tgt_embed.weight)
  BERT (BertModel / BertForMaskedLM / BertForSequenceClassification, layout bert_config)
    embeddings.word_embeddings, position_embeddings, token_type_embeddings, LayerNorm
                                   tok_embed, pos, type_embed, embed_norm
    encoder.layer.i.attention.self.query|key|value, attention.output.dense
                                   encoder.layers.i.self_attn.q_proj|k_proj|v_proj, out_proj
    attention.output.LayerNorm, intermediate.dense, output.dense, output.LayerNorm
                                   norm1, feed_forward.linear1, feed_forward.linear2, norm2
    pooler.dense                   pooler.dense
    cls.predictions.transform.dense, transform.LayerNorm, bias, decoder (tied)
                                   mlm_dense, mlm_norm, output_proj.bias, output_proj.weight
    classifier                     classifier

Keys that carry no weights (GPT-2's attn.bias causal-mask buffers, BERT's position_ids) and heads the
target model lacks (BERT's next-sentence head, a pooler under a masked-LM) are skipped and listed;
any other unknown or missing key is an error naming it, raised before a model is built. Old TF-style
LayerNorm names (gamma/beta) are accepted. The attention mask convention differs from Hugging Face
in one place: BERT's forward without attention_mask masks pad_id tokens here (Hugging Face attends
to everything); pass attention_mask to get Hugging Face's behaviour on padded input. A sequence
whose attention_mask is all zeros attends to nothing here (zero weights, the project's safe softmax)
where Hugging Face spreads its attention uniformly; real inputs always have a real token.
"""
from __future__ import annotations

import re

import numpy as np

from npformer.io.hub_checks import expected_shape
from npformer.models.config import TransformerConfig, bert_config, gpt2_config

KINDS = {"gpt2": "CausalLM", "bert": "BertModel", "bert_mlm": "BertForMaskedLM",
         "bert_cls": "BertForSequenceClassification"}
ARCHITECTURES = {"GPT2LMHeadModel": "gpt2", "GPT2Model": "gpt2", "BertModel": "bert",
                 "BertForMaskedLM": "bert_mlm", "BertForPreTraining": "bert_mlm",
                 "BertForSequenceClassification": "bert_cls"}
HF_CLASS = {"gpt2": "GPT2LMHeadModel", "bert": "BertModel", "bert_mlm": "BertForMaskedLM",
            "bert_cls": "BertForSequenceClassification"}
FROM_HF_ACT = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu",
               "relu": "relu"}
TO_HF_ACT = {"gelu_tanh": "gelu_new", "gelu": "gelu", "relu": "relu"}


# --------------------------------------------------------------------------------------------------
# configs
# --------------------------------------------------------------------------------------------------
def kind_from_hf(hf_config: dict, class_name: str | None = None) -> str:
    names = [class_name] if class_name else list(hf_config.get("architectures") or [])
    for n in names:
        if n in ARCHITECTURES:
            return ARCHITECTURES[n]
    default = {"gpt2": "gpt2", "bert": "bert"}.get(hf_config.get("model_type"))
    if default is None:
        raise ValueError(f"hf_config: expected a GPT-2 or BERT model (architectures in "
                         f"{sorted(ARCHITECTURES)}), got architectures {names} and model_type "
                         f"{hf_config.get('model_type')!r}")
    return default


def hf_activation(hf_config: dict, key: str) -> str:
    act = hf_config.get(key, "gelu_new" if key == "activation_function" else "gelu")
    if act not in FROM_HF_ACT:
        raise ValueError(f"hf_config.{key}: expected one of {sorted(FROM_HF_ACT)}, got {act!r}")
    return FROM_HF_ACT[act]


class HFFields(dict):
    """A config.json dict whose missing required keys raise a ValueError naming them."""

    def __missing__(self, key):
        raise ValueError(f"hf_config: missing {key!r} (expected in the config.json of a "
                         f"{self.get('model_type', 'GPT-2 or BERT')} model)")


# our config field -> the config.json key it is read from, so that a bad value is reported under
# the name the user sees in the file
HF_KEYS = {
    "gpt2": {"vocab_size": "vocab_size", "max_len": "n_positions", "d_model": "n_embd",
             "num_heads": "n_head", "d_ff": "n_inner", "num_decoder_layers": "n_layer",
             "layer_norm_eps": "layer_norm_epsilon", "dropout": "resid_pdrop",
             "attention_dropout": "attn_pdrop", "tie_embeddings": "tie_word_embeddings"},
    "bert": {"vocab_size": "vocab_size", "max_len": "max_position_embeddings",
             "d_model": "hidden_size", "num_heads": "num_attention_heads",
             "d_ff": "intermediate_size", "num_encoder_layers": "num_hidden_layers",
             "layer_norm_eps": "layer_norm_eps", "type_vocab_size": "type_vocab_size",
             "num_classes": "num_labels", "dropout": "hidden_dropout_prob",
             "attention_dropout": "attention_probs_dropout_prob",
             "tie_embeddings": "tie_word_embeddings"},
}


def config_from_hf(hf_config: dict, kind: str, dtype="float32") -> TransformerConfig:
    """Our TransformerConfig for a Hugging Face config dict (config.json). Settings this project
    does not model are refused with the field's name (never silently computed differently); a
    value our config refuses is reported under its config.json key."""
    try:
        return _config_from_hf(hf_config, kind, dtype)
    except ValueError as e:
        msg = str(e)
        if not msg.startswith("TransformerConfig."):
            raise
        keys = HF_KEYS["gpt2" if kind == "gpt2" else "bert"]
        msg = re.sub(r"^TransformerConfig\.(\w+)",
                     lambda m: f"config.json: {keys.get(m.group(1), m.group(1))}", msg)
        msg = re.sub(r"\b(" + "|".join(keys) + r")=", lambda m: keys[m.group(1)] + "=", msg)
        raise ValueError(msg) from None


def _config_from_hf(hf_config: dict, kind: str, dtype="float32") -> TransformerConfig:
    if not isinstance(hf_config, dict):
        raise TypeError(f"hf_config: expected a dict (config.json), got {type(hf_config).__name__}")
    h = HFFields(hf_config)
    if kind == "gpt2":
        unsupported = {"scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
                       "add_cross_attention": False}
        bad = {k: h[k] for k, v in unsupported.items() if k in h and h[k] != v}
        if bad:
            raise ValueError(f"hf_config: GPT-2 settings not supported: {bad}")
        c = gpt2_config(vocab_size=h["vocab_size"], max_len=h["n_positions"],
                        d_model=h["n_embd"], num_heads=h["n_head"],
                        d_ff=h.get("n_inner") or 4 * h["n_embd"],
                        num_decoder_layers=h["n_layer"], activation=hf_activation(h, "activation_function"),
                        layer_norm_eps=h.get("layer_norm_epsilon", 1e-5),
                        dropout=h.get("resid_pdrop", 0.1),
                        attention_dropout=h.get("attn_pdrop", 0.1),
                        tie_embeddings=h.get("tie_word_embeddings", True), dtype=dtype)
        if h.get("embd_pdrop", 0.1) != h.get("resid_pdrop", 0.1):     # one rate for both here
            raise ValueError(f"hf_config: GPT-2 settings not supported: embd_pdrop="
                             f"{h.get('embd_pdrop', 0.1)!r} differs from resid_pdrop="
                             f"{h.get('resid_pdrop', 0.1)!r} (npformer uses one dropout rate for "
                             f"the embeddings and the residual branches)")
        return c
    if kind in ("bert", "bert_mlm", "bert_cls"):
        if h.get("position_embedding_type", "absolute") != "absolute" or h.get("is_decoder"):
            raise ValueError(f"hf_config: BERT settings not supported: position_embedding_type="
                             f"{h.get('position_embedding_type')!r}, is_decoder={h.get('is_decoder')}")
        labels = h.get("id2label")
        pad = h.get("pad_token_id", 0)
        return bert_config(vocab_size=h["vocab_size"], max_len=h["max_position_embeddings"],
                           d_model=h["hidden_size"], num_heads=h["num_attention_heads"],
                           d_ff=h["intermediate_size"], num_encoder_layers=h["num_hidden_layers"],
                           activation=hf_activation(h, "hidden_act"), layer_norm_eps=h.get("layer_norm_eps",
                                                                                   1e-12),
                           type_vocab_size=h.get("type_vocab_size", 2),
                           pad_id=pad if pad is not None and 0 <= pad < h["vocab_size"] else None,
                           num_classes=h.get("num_labels") or (len(labels) if labels else 2),
                           dropout=h.get("hidden_dropout_prob", 0.1),
                           attention_dropout=h.get("attention_probs_dropout_prob", 0.1),
                           tie_embeddings=h.get("tie_word_embeddings", True), dtype=dtype)
    raise ValueError(f"kind: expected one of {sorted(KINDS)}, got {kind!r}")


def hf_config_for(kind: str, c: TransformerConfig) -> dict:
    """The Hugging Face config.json dict of our config (refused when the layout has no HF twin)."""
    need = dict(positional="learned", scale_embeddings=False, bias=True, activation_dropout=0.0)
    if kind == "gpt2":
        need.update(norm_first=True, final_norm=True, output_bias=False, type_vocab_size=0,
                    embedding_norm=False)
    else:
        need.update(norm_first=False, final_norm=False, embedding_norm=True, output_bias=True)
    bad = {k: getattr(c, k) for k, v in need.items() if getattr(c, k) != v}
    if c.activation not in TO_HF_ACT or (kind != "gpt2" and c.type_vocab_size < 1):
        bad.update(activation=c.activation, type_vocab_size=c.type_vocab_size)
    if bad:
        raise ValueError(f"config: no Hugging Face {HF_CLASS[kind]} has this layout; expected "
                         f"{need} (and type_vocab_size >= 1 for BERT), got {bad}")
    if kind == "gpt2":
        return {"model_type": "gpt2", "architectures": [HF_CLASS[kind]],
                "vocab_size": c.vocab_size, "n_positions": c.max_len, "n_embd": c.d_model,
                "n_head": c.num_heads, "n_layer": c.num_decoder_layers, "n_inner": c.d_ff,
                "activation_function": TO_HF_ACT[c.activation], "layer_norm_epsilon": c.layer_norm_eps,
                "resid_pdrop": c.dropout, "embd_pdrop": c.dropout,
                "attn_pdrop": c.attention_dropout, "tie_word_embeddings": c.tie_embeddings,
                "bos_token_id": c.vocab_size - 1, "eos_token_id": c.vocab_size - 1}
    out = {"model_type": "bert", "architectures": [HF_CLASS[kind]], "vocab_size": c.vocab_size,
           "hidden_size": c.d_model, "num_hidden_layers": c.num_encoder_layers,
           "num_attention_heads": c.num_heads, "intermediate_size": c.d_ff,
           "hidden_act": TO_HF_ACT[c.activation], "hidden_dropout_prob": c.dropout,
           "attention_probs_dropout_prob": c.attention_dropout, "max_position_embeddings": c.max_len,
           "type_vocab_size": c.type_vocab_size, "layer_norm_eps": c.layer_norm_eps,
           "pad_token_id": c.pad_id, "position_embedding_type": "absolute",
           "tie_word_embeddings": c.tie_embeddings}
    if kind == "bert_cls":
        out["id2label"] = {str(i): f"LABEL_{i}" for i in range(c.num_classes)}
        out["label2id"] = {f"LABEL_{i}": i for i in range(c.num_classes)}
    return out


# --------------------------------------------------------------------------------------------------
# the name plan: (our name, Hugging Face name, how) for every weight
# --------------------------------------------------------------------------------------------------
def weight_pairs(ours: str, hf: str, how: str = "copy", bias: bool = True):
    yield f"{ours}.weight", f"{hf}.weight", how
    if bias:
        yield f"{ours}.bias", f"{hf}.bias", "copy"


def plan(kind: str, c: TransformerConfig) -> list[tuple[str, str, object]]:
    """Every weight of our model: (our name, HF name, how) with how "copy", "T" (transpose: Conv1D
    stores (in, out)) or ("qkv", j, "weight"|"bias") (part j of GPT-2's packed c_attn)."""
    P = []
    if kind == "gpt2":
        P += [("tgt_embed.weight", "transformer.wte.weight", "copy"),
              ("tgt_pos.weight", "transformer.wpe.weight", "copy")]
        for i in range(c.num_decoder_layers):
            o, h = f"decoder.layers.{i}.", f"transformer.h.{i}."
            P += weight_pairs(o + "norm1", h + "ln_1")
            for j, p in enumerate("qkv"):
                P += [(o + f"self_attn.{p}_proj.weight", h + "attn.c_attn.weight", ("qkv", j, "weight")),
                      (o + f"self_attn.{p}_proj.bias", h + "attn.c_attn.bias", ("qkv", j, "bias"))]
            P += weight_pairs(o + "self_attn.out_proj", h + "attn.c_proj", "T")
            P += weight_pairs(o + "norm2", h + "ln_2")
            P += weight_pairs(o + "feed_forward.linear1", h + "mlp.c_fc", "T")
            P += weight_pairs(o + "feed_forward.linear2", h + "mlp.c_proj", "T")
        P += weight_pairs("decoder.norm", "transformer.ln_f")
        if not c.tie_embeddings:
            P.append(("output_proj.weight", "lm_head.weight", "copy"))
        return P
    o, h = ("", "") if kind == "bert" else ("bert.", "bert.")
    P += [(o + "tok_embed.weight", h + "embeddings.word_embeddings.weight", "copy"),
          (o + "pos.weight", h + "embeddings.position_embeddings.weight", "copy")]
    if c.type_vocab_size:
        P.append((o + "type_embed.weight", h + "embeddings.token_type_embeddings.weight", "copy"))
    P += weight_pairs(o + "embed_norm", h + "embeddings.LayerNorm")
    for i in range(c.num_encoder_layers):
        ol, hl = f"{o}encoder.layers.{i}.", f"{h}encoder.layer.{i}."
        for p, name in zip("qkv", ("query", "key", "value")):
            P += weight_pairs(ol + f"self_attn.{p}_proj", hl + f"attention.self.{name}")
        P += weight_pairs(ol + "self_attn.out_proj", hl + "attention.output.dense")
        P += weight_pairs(ol + "norm1", hl + "attention.output.LayerNorm")
        P += weight_pairs(ol + "feed_forward.linear1", hl + "intermediate.dense")
        P += weight_pairs(ol + "feed_forward.linear2", hl + "output.dense")
        P += weight_pairs(ol + "norm2", hl + "output.LayerNorm")
    if kind in ("bert", "bert_cls"):
        P += weight_pairs(o + "pooler.dense", h + "pooler.dense")
    if kind == "bert_cls":
        P += weight_pairs("classifier", "classifier")
    if kind == "bert_mlm":
        P += weight_pairs("mlm_dense", "cls.predictions.transform.dense")
        P += weight_pairs("mlm_norm", "cls.predictions.transform.LayerNorm")
        if c.tie_embeddings:
            P.append(("output_proj.bias", "cls.predictions.bias", "copy"))
        else:       # untied, transformers keeps two biases and its forward adds the decoder's
            P.append(("output_proj.bias", "cls.predictions.decoder.bias", "copy"))
            P.append(("output_proj.weight", "cls.predictions.decoder.weight", "copy"))
    return P


def tied(kind: str, c: TransformerConfig) -> dict[str, str]:
    """{duplicate name: name it repeats}, ours and Hugging Face's, for tied weights."""
    if kind == "gpt2":
        return ({"output_proj.weight": "tgt_embed.weight",
                 "lm_head.weight": "transformer.wte.weight"} if c.tie_embeddings else {})
    if kind == "bert_mlm" and c.tie_embeddings:
        return {"cls.predictions.decoder.bias": "cls.predictions.bias",
                "output_proj.weight": "bert.tok_embed.weight",
                "cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight"}
    return {}


def unused_copies(kind: str, c: TransformerConfig) -> dict[str, str]:
    """{Hugging Face name its forward never reads: the name it is written as a copy of}. An untied
    BertForMaskedLM keeps `cls.predictions.bias` beside the decoder's own bias and adds only the
    decoder's; the unused one is skipped when reading (or read in place of a missing decoder bias,
    as older files tied the two) and written as a copy, so either kind of loader gets the bias."""
    if kind == "bert_mlm" and not c.tie_embeddings:
        return {"cls.predictions.bias": "cls.predictions.decoder.bias"}
    return {}


SKIPPED = {  # keys that hold no weight of the target model: buffers, heads it does not have
    "gpt2": r"transformer\.h\.\d+\.attn\.(bias|masked_bias)",
    "bert": r"embeddings\.(position_ids|token_type_ids)|cls\..*|classifier\..*",
    "bert_mlm": r"bert\.embeddings\.(position_ids|token_type_ids)|bert\.pooler\..*"
                r"|cls\.seq_relationship\..*",
    "bert_cls": r"bert\.embeddings\.(position_ids|token_type_ids)",
}


def normalise_hf_keys(kind: str, hf_state: dict) -> dict:
    """Canonical Hugging Face names: the head class's prefixes (a GPT2Model file has no
    "transformer.", a BertModel inside a head has "bert."), LayerNorm gamma/beta -> weight/bias."""
    out = {}
    for k, v in hf_state.items():
        k = re.sub(r"(LayerNorm|ln_\w+)\.gamma$", r"\1.weight", k)
        k = re.sub(r"(LayerNorm|ln_\w+)\.beta$", r"\1.bias", k)
        if kind == "gpt2" and not k.startswith(("transformer.", "lm_head.")):
            k = "transformer." + k
        elif kind == "bert" and k.startswith("bert."):
            k = k[len("bert."):]
        elif kind in ("bert_mlm", "bert_cls") and not k.startswith(("bert.", "cls.", "classifier.")):
            k = "bert." + k
        out[k] = v
    return out


_LAYER_KEY = {"gpt2": ("n_layer", r"transformer\.h\.(\d+)\."),
              "bert": ("num_hidden_layers", r"(?:bert\.)?encoder\.layer\.(\d+)\.")}


def check_layer_count(kind: str, c: TransformerConfig, hf: dict) -> None:
    """The config's layer count equals the layers the weights hold, checked before every layer's
    names are listed (a config.json with "n_layer": 2**1000 would enumerate names forever)."""
    key, pattern = _LAYER_KEY["gpt2" if kind == "gpt2" else "bert"]
    n = c.num_decoder_layers if kind == "gpt2" else c.num_encoder_layers
    found = {int(m.group(1)) for m in (re.match(pattern, k) for k in hf) if m}
    have = len(found)
    if n != have:
        raise ValueError(f"config.json: {key}={n}, but the weights hold {have} layer(s) "
                         f"({'indices ' + str(min(found)) + '..' + str(max(found)) if found else 'none'})")


def hf_to_state(kind: str, c: TransformerConfig, hf_state: dict) -> tuple[dict, list[str]]:
    """(our state dict, skipped HF keys) from a Hugging Face state dict of numpy arrays."""
    hf = normalise_hf_keys(kind, hf_state)
    check_layer_count(kind, c, hf)                              # before plan() lists every layer
    P = plan(kind, c)
    dup = tied(kind, c)
    for extra, src in unused_copies(kind, c).items():
        if src not in hf and extra in hf:                      # an older file: the two were one
            hf[src] = hf[extra]
        dup = {**dup, extra: src}
    used = {h for _, h, _ in P}
    missing = sorted({h for h in used if h not in hf})
    for d, src in tied(kind, c).items():                        # a stored duplicate must agree
        if d in hf and src in hf and not np.array_equal(hf[d], hf[src]):
            raise ValueError(f"hf_state: {d} differs from {src}, but they are tied "
                             f"(tie_word_embeddings); untie in the config to load both")
    skip = re.compile(SKIPPED[kind])
    skipped = sorted(k for k in hf if k not in used and (k in dup or skip.fullmatch(k)))
    unexpected = sorted(k for k in hf if k not in used and k not in skipped)
    if missing or unexpected:
        raise ValueError(f"hf_state: does not match {HF_CLASS[kind]} with this config: missing "
                         f"{missing}, unexpected {unexpected}")
    D = c.d_model
    out = {}
    for ours, name, how in P:
        v = np.asarray(hf[name])
        if v.dtype.kind != "f":                                 # ints/bools are never weights
            raise ValueError(f"hf_state: {name}: expected a floating-point tensor, got {v.dtype}")
        if not np.isfinite(v).all():
            raise ValueError(f"hf_state: {name}: {int(v.size - np.isfinite(v).sum())} non-finite "
                             f"values (NaN or inf); refusing weights that would give NaN outputs")
        if how == "T":
            v = v.T
        elif how != "copy":
            _, j, part = how
            want = (D, 3 * D) if part == "weight" else (3 * D,)
            if v.shape != want:
                raise ValueError(f"hf_state: {name}: expected shape {want} (q|k|v packed), got "
                                 f"{v.shape}")
            v = v[:, j * D:(j + 1) * D].T if part == "weight" else v[j * D:(j + 1) * D]
        want = expected_shape(ours, c)
        if want is not None and v.shape != want:              # before a model is allocated
            raise ValueError(f"hf_state: {name}: expected shape {want[::-1] if how == 'T' else want} "
                             f"for this config.json, got {np.asarray(hf[name]).shape}")
        out[ours] = np.array(v, dtype=c.dtype)                  # a fresh C-contiguous copy
    for d, src in tied(kind, c).items():
        if src in out:
            out[d] = out[src]
    return out, skipped


def state_to_hf(kind: str, c: TransformerConfig, state: dict) -> dict:
    """The Hugging Face state dict (numpy) of our state dict, tied duplicates included as
    transformers' own state_dict() lists them."""
    out, packed = {}, {}
    for ours, name, how in plan(kind, c):
        v = np.asarray(state[ours])
        if how == "copy":
            out[name] = v.copy()
        elif how == "T":
            out[name] = np.ascontiguousarray(v.T)
        else:
            packed.setdefault(name, {})[how[1]] = v.T if how[2] == "weight" else v
    for name, parts in packed.items():
        out[name] = np.ascontiguousarray(np.concatenate([parts[j] for j in range(3)], axis=-1))
    for d, src in {**tied(kind, c), **unused_copies(kind, c)}.items():
        if src in out:
            out[d] = out[src].copy()
    return out
