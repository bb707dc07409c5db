"""Hugging Face GPT-2 and BERT weights, to and from torchformer models (twin of npformer.io.hub).

The name plan, the Conv1D transposes, the q|k|v split, the config mapping and the safetensors
reader are npformer.io.hub's (plain numpy on state dicts, one implementation for both twins); this file
builds torchformer models from them and adds `to_transformers`, which needs transformers itself.

    model = from_pretrained("path/to/gpt2", device="cuda")   # config.json + model.safetensors
    model = from_transformers(hf_model)
    hf_model = to_transformers(model)                          # a transformers model, same weights

A model wrapped by torch.compile or DDP is saved and converted as the model inside it.
"""
from __future__ import annotations

import importlib

import torch

from npformer.io.hub import (
    HF_CLASS,
    KINDS,
    config_from_hf,
    hf_config_for,
    hf_model_parts,
    hf_to_state,
    kind_from_hf,
    kind_of,
    pretrained_parts,
    warn_new_weights,
)
from npformer.io.hub import save_pretrained as _save_pretrained
from npformer.io.hub import to_hf_state_dict as _to_hf_state_dict
from torchformer.models.bridge import unwrap

__all__ = ["from_pretrained", "from_transformers", "to_transformers", "to_hf_state_dict",
           "save_pretrained"]


def save_pretrained(model, folder, overwrite: bool = False, extra_files: dict | None = None,
                    remove: tuple[str, ...] = ()):
    """npformer.io.hub.save_pretrained for a torchformer model, unwrapped from torch.compile / DDP."""
    return _save_pretrained(unwrap(model), folder, overwrite=overwrite, extra_files=extra_files,
                            remove=remove)


def to_hf_state_dict(model) -> dict:
    """npformer.io.hub.to_hf_state_dict for a torchformer model, unwrapped from torch.compile / DDP."""
    return _to_hf_state_dict(unwrap(model))


def _build(kind: str, c, state: dict, device=None):
    module = {"gpt2": "models.causal_lm"}.get(kind, "models.bert")
    model = getattr(importlib.import_module(f"torchformer.{module}"), KINDS[kind])(c, device=device)
    model.load_state_dict(state)                     # numpy values accepted; checked before writing
    return model.eval()


def _dtype_name(dtype):
    """A torch dtype as its name ("float64"), as torchformer's layers take it; anything else as given
    (npformer's check names it)."""
    return str(dtype).removeprefix("torch.") if isinstance(dtype, torch.dtype) else dtype


def from_pretrained(folder, dtype="float32", kind: str | None = None, device=None,
                    num_labels: int | None = None, seed: int = 0):
    """A torchformer model (eval mode) from a Hugging Face folder (config.json + model.safetensors,
    never pickle). kind ("gpt2", "bert", "bert_mlm", "bert_cls") overrides config.json; a fresh
    classifier head on a folder without one: npformer.io.hub.from_pretrained (the same values)."""
    kind, c, state, new = pretrained_parts(folder, _dtype_name(dtype), kind, num_labels, seed)
    model = _build(kind, c, state, device)
    model.new_weights = new
    warn_new_weights(folder, new, seed)
    return model


def from_transformers(hf_model, dtype="float32", device=None):
    """A torchformer model (eval mode) holding the weights of an in-memory transformers model."""
    hf_config, hf_state, cls = hf_model_parts(hf_model)
    kind = kind_from_hf(hf_config, cls)
    c = config_from_hf(hf_config, kind, _dtype_name(dtype))
    return _build(kind, c, hf_to_state(kind, c, hf_state)[0], device)


def to_transformers(model, attn_implementation: str = "eager"):
    """A transformers model (eval mode, float64 when `model` is) with the weights of an npformer or
    torchformer GPT-2/BERT model. Needs the [hf] extra (transformers)."""
    import torch

    try:
        import transformers
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("to_transformers needs transformers: pip install transformers "
                          "(or, in the repository: pip install -e '.[hf]')") from None
    model = unwrap(model)
    kind = kind_of(model)
    cfg_dict = dict(hf_config_for(kind, model.config))
    cfg_cls = transformers.GPT2Config if kind == "gpt2" else transformers.BertConfig
    cfg_dict.pop("model_type")
    hf_cfg = cfg_cls(**cfg_dict, attn_implementation=attn_implementation)
    hf = getattr(transformers, HF_CLASS[kind])(hf_cfg)
    if model.config.dtype == "float64":
        hf = hf.double()
    state = {k: torch.from_numpy(v) for k, v in to_hf_state_dict(model).items()}
    hf.load_state_dict(state, strict=True)
    return hf.eval()
