"""Checks npformer.io.hub runs on what it reads, before any model is allocated (one line each, naming
the file or tensor, what was expected and what came)."""
from __future__ import annotations

import json
import math
from pathlib import Path

from npformer.models.config import TransformerConfig

__all__ = ["read_json", "expected_shape", "check_hf_config"]


def read_json(path: Path, what: str) -> dict:
    """A JSON object from `path`, or a ValueError naming the file, what was expected and what came."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:          # not UTF-8, not JSON, a number of more than 4300 digits
        raise ValueError(f"{path}: expected {what}, got text that is not JSON ({e})") from None
    except RecursionError:                               # [[[[...]]]] deeper than Python's stack
        raise ValueError(f"{path}: expected {what}, got JSON nested too deeply to read") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: expected {what}, got a JSON {type(value).__name__}")
    return value


def expected_shape(ours: str, c: TransformerConfig) -> tuple | None:
    """The shape our parameter `ours` has under config `c` (None: not one checked here), so that
    a config.json that disagrees with its weights is refused before a model is allocated (an
    n_positions of 2**40 would ask for 64 TiB)."""
    D, F, V = c.d_model, c.d_ff, c.tgt_vocab
    last = ours.rsplit(".", 2)[-2:]                             # [module, weight|bias]
    rows = {"tgt_embed": V, "tok_embed": V, "tgt_pos": c.max_len, "pos": c.max_len,
            "type_embed": c.type_vocab_size, "linear1": F, "linear2": D, "out_proj": D,
            "dense": D, "mlm_dense": D, "classifier": c.num_classes, "output_proj": V}
    if last[0] in rows:
        n = rows[last[0]]
        if last[1] == "bias":
            return (n,)
        return (n, F) if last[0] == "linear2" else (n, D)
    if last[0].startswith("norm") or last[0].endswith("norm"):
        return (D,)
    return None


# the config.json keys the loader reads, by the JSON type each must have (absent is fine: a missing
# required key is named where it is read; None is allowed where transformers writes null)
_INTS = ("vocab_size", "n_positions", "n_embd", "n_head", "n_layer", "max_position_embeddings",
         "hidden_size", "num_attention_heads", "intermediate_size", "num_hidden_layers",
         "type_vocab_size")
_INTS_OR_NULL = ("n_inner", "num_labels", "pad_token_id")
_NUMBERS = ("layer_norm_epsilon", "layer_norm_eps", "resid_pdrop", "embd_pdrop", "attn_pdrop",
            "hidden_dropout_prob", "attention_probs_dropout_prob", "initializer_range")
_BOOLS = ("tie_word_embeddings", "scale_attn_weights", "scale_attn_by_inverse_layer_idx",
          "add_cross_attention", "is_decoder")
_STRINGS = ("model_type", "activation_function", "hidden_act", "position_embedding_type")


def _kind_of(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def check_hf_config(hf_config: dict, path) -> None:
    """Refuse a config.json whose keys read by the loader have the wrong JSON type, one ValueError
    naming the file, the key, what was expected and what came (so that a wrong type is never met
    first by a comparison or a lookup deep in the loader, and an error there is a bug, not a file)."""
    def bad(key, expected):
        raise ValueError(f"{path}: {key}: expected {expected}, got {_kind_of(hf_config[key])}")

    def is_int(v):
        return isinstance(v, int) and not isinstance(v, bool)

    for key in _INTS + _INTS_OR_NULL:
        if key in hf_config and not is_int(hf_config[key]) \
                and not (hf_config[key] is None and key in _INTS_OR_NULL):
            bad(key, "an integer" + (" or null" if key in _INTS_OR_NULL else ""))
    for key in _NUMBERS:
        v = hf_config.get(key, 0.0)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            bad(key, "a finite number")
    for key in _BOOLS:
        if key in hf_config and not isinstance(hf_config[key], (bool, type(None))):
            bad(key, "true, false or null")
    for key in _STRINGS:
        if key in hf_config and not isinstance(hf_config[key], (str, type(None))):
            bad(key, "a string")
    arch = hf_config.get("architectures")
    if arch is not None and (not isinstance(arch, list) or not all(isinstance(a, str) for a in arch)):
        bad("architectures", "a list of class names (strings)")
    labels = hf_config.get("id2label")
    if labels is not None and not isinstance(labels, dict):
        bad("id2label", "an object {id: label name}")
