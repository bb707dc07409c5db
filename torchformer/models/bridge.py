"""Weights (and gradients) across the twins: npformer <-> torchformer.

Both twins use the same class names and parameter names, so a bridge is a plain copy by name.

    to_torch(np_model, device="cpu", dtype=None)   -> the torchformer twin, weights copied
    to_numpy(torch_model)                          -> the npformer twin, weights copied
    copy_weights(src, dst)                         -> copy a state by name, either direction
    grads_by_name(model)                           -> {name: numpy gradient}, either twin
    copy_grads_to_numpy(torch_model, np_model)     -> torch's .grad into npformer's .grad
    masks_to_numpy(masks) / masks_to_torch(masks, device)
    unwrap(model)                                  -> the model inside torch.compile / DDP wrappers

A torch model wrapped by `torch.compile` (its parameter names start with `_orig_mod.`) or by
DistributedDataParallel / DataParallel (`module.`) is unwrapped first everywhere here, so its names
are the plain model's and a bridge or checkpoint of it is the plain model's.

Twins are built by class name: the models (Transformer, EncoderClassifier, CausalLM) and the config
layers (Encoder, EncoderLayer, Decoder, DecoderLayer) from the model's config (dtype replaced when a
dtype is given), the components (Linear, Embedding, LayerNorm, positional encodings, Dropout,
Activation, MultiHeadAttention, PositionwiseFeedForward, CrossEntropyLoss) from their attributes.
Tied parameters stay tied: both twins build the tie from the config, and a copy writes the shared
parameter once per name with the same value. The train/eval mode is copied too. The sinusoidal tables
are not copied: each twin computes the same formula (tests compare them).

Named parameters are unique on both sides (a tied one appears under its first name), in the same
order, so gradient dicts line up key for key.
"""
from __future__ import annotations

import importlib

import numpy as np
import torch

_FILES = {
    "Transformer": "models.transformer", "EncoderClassifier": "models.classifier", "CausalLM": "models.causal_lm",
    "Encoder": "models.encoder", "EncoderLayer": "models.encoder", "Decoder": "models.decoder",
    "DecoderLayer": "models.decoder", "Linear": "layers.linear", "Embedding": "layers.embedding",
    "LayerNorm": "layers.layernorm", "SinusoidalPositionalEncoding": "layers.positional",
    "LearnedPositionalEncoding": "layers.positional", "Dropout": "layers.dropout", "Activation": "layers.activations",
    "MultiHeadAttention": "layers.attention", "PositionwiseFeedForward": "layers.feedforward",
    "CrossEntropyLoss": "layers.loss",
    "BertModel": "models.bert", "BertForMaskedLM": "models.bert", "BertForSequenceClassification": "models.bert",
}
_MODELS = ("Transformer", "EncoderClassifier", "CausalLM")


def unwrap(model):
    """The model inside `torch.compile`'s OptimizedModule and DistributedDataParallel / DataParallel
    wrappers (nested ones too); any other object unchanged. The wrapped model shares the wrapper's
    parameters, so reading or writing it reads or writes the wrapper's."""
    while isinstance(model, torch.nn.Module):
        if type(model).__name__ == "OptimizedModule" and isinstance(
                getattr(model, "_orig_mod", None), torch.nn.Module):
            model = model._orig_mod
        elif isinstance(model, (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)):
            model = model.module
        else:
            break
    return model


def _twin_of(name: str, model, want_torch: bool):
    """Refuse an object that is not a module of the expected twin, naming the argument."""
    is_torch = isinstance(model, torch.nn.Module)
    is_numpy = hasattr(model, "named_parameters") and not is_torch
    if want_torch and not is_torch:
        what = (f"the npformer module {type(model).__name__}" if is_numpy
                else type(model).__name__)
        raise TypeError(f"{name}: expected a torchformer module, got {what}")
    if not want_torch and not is_numpy:
        what = (f"the torch module {type(model).__name__}" if is_torch
                else type(model).__name__)
        raise TypeError(f"{name}: expected an npformer module, got {what}")
    return unwrap(model)


def _twin_class(package: str, name: str):
    if name not in _FILES:
        raise TypeError(f"model: expected one of {sorted(_FILES)} (a class both twins have), got "
                        f"{name}")
    return getattr(importlib.import_module(f"{package}.{_FILES[name]}"), name)


def _dtype_name(dtype) -> str:
    if isinstance(dtype, torch.dtype):
        names = {torch.float32: "float32", torch.float64: "float64"}
        if dtype not in names:
            raise TypeError(f"dtype: expected float32 or float64, got {dtype}")
        return names[dtype]
    name = np.dtype(dtype).name
    if name not in ("float32", "float64"):
        raise TypeError(f"dtype: expected 'float32' or 'float64', got {dtype!r}")
    return name


def _module_dtype(model) -> str:
    if isinstance(model, torch.nn.Module):
        p = next(model.parameters(), None)
        if p is not None:
            return _dtype_name(p.dtype)
    dt = getattr(model, "dtype", None)
    if dt is not None:
        return _dtype_name(dt)
    cfg = getattr(model, "config", None)
    return cfg.dtype if cfg is not None else "float32"


def _constructor(model, dtype: str):
    """(args, kwargs) that rebuild `model`'s twin (same architecture) in `dtype`."""
    name = type(model).__name__
    if hasattr(model, "config") and name in _FILES and name not in ("Activation",):
        cfg = model.config if model.config.dtype == dtype else model.config.replace(dtype=dtype)
        if name in ("Decoder", "DecoderLayer"):
            return (cfg,), {"cross_attention": bool(model.cross_attention)}
        if name == "BertModel":
            return (cfg,), {"pooler": bool(model.has_pooler)}
        return (cfg,), {}
    if name == "Linear":
        return (model.in_features, model.out_features), {"bias": model.bias is not None,
                                                         "dtype": dtype}
    if name == "Embedding":
        return (model.num_embeddings, model.embedding_dim), {
            "padding_idx": model.padding_idx, "scale": model.scale, "dtype": dtype}
    if name == "LayerNorm":
        return (model.weight.shape[0],), {"eps": model.eps, "dtype": dtype}
    if name == "SinusoidalPositionalEncoding":
        L, D = tuple(model.pe.shape)
        return (D, L), {"dtype": dtype}
    if name == "LearnedPositionalEncoding":
        L, D = tuple(model.weight.shape)
        return (D, L), {"dtype": dtype}
    if name == "Dropout":
        return (model.p,), {}
    if name == "Activation":
        return (model.name,), {}
    if name == "MultiHeadAttention":
        return (model.d_model, model.num_heads), {
            "dropout": model.attn_dropout.p, "bias": model.q_proj.bias is not None, "dtype": dtype}
    if name == "PositionwiseFeedForward":
        return (model.linear1.in_features, model.linear1.out_features), {
            "activation": model.activation.name, "dropout": model.dropout.p,
            "bias": model.linear1.bias is not None, "dtype": dtype}
    if name == "CrossEntropyLoss":
        return (), {"ignore_index": model.ignore_index, "label_smoothing": model.label_smoothing}
    raise TypeError(f"model: no twin known for {name}")  # pragma: no cover


def _state_numpy(model) -> dict:
    """{name: numpy array} of either twin's state_dict (tied parameters under each name)."""
    if isinstance(model, torch.nn.Module):
        return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}
    return {k: np.array(v, copy=True) for k, v in model.state_dict().items()}


def copy_weights(src, dst) -> None:
    """Copy every parameter of `src` into `dst` by name (either twin to either twin); the keys must
    match exactly and nothing is written when they do not. Values are cast to dst's dtype."""
    src, dst = unwrap(src), unwrap(dst)
    for name, m in (("src", src), ("dst", dst)):
        if not hasattr(m, "state_dict") or not hasattr(m, "load_state_dict"):
            raise TypeError(f"copy_weights: {name}: expected an npformer or torchformer module, got "
                            f"{type(m).__name__}")
    state = _state_numpy(src)
    if isinstance(dst, torch.nn.Module):
        own = dst.state_dict()
        missing = sorted(set(own) - set(state))
        unexpected = sorted(set(state) - set(own))
        if missing or unexpected:
            raise ValueError(f"copy_weights: state keys differ: missing {missing}, unexpected "
                             f"{unexpected} (nothing was copied)")
        dst.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    else:
        dst.load_state_dict(state)


def _train_mode(src, dst) -> None:
    dst.train(bool(src.training))


def to_torch(np_model, device="cpu", dtype=None):
    """The torchformer twin of an npformer model or component, with its weights, on `device`, in
    `dtype` ("float32"/"float64"/torch dtype; default the npformer model's)."""
    np_model = _twin_of("np_model", np_model, want_torch=False)
    dtype = _dtype_name(dtype) if dtype is not None else _module_dtype(np_model)
    cls = _twin_class("torchformer", type(np_model).__name__)
    args, kwargs = _constructor(np_model, dtype)
    twin = cls(*args, **kwargs)
    try:
        twin.to(device)
    except (AssertionError, RuntimeError, TypeError) as e:   # torch: no CUDA, "gpu", ...
        raise ValueError(f"device: cannot place the model on {device!r} "
                         f"({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
    copy_weights(np_model, twin)
    _train_mode(np_model, twin)
    return twin


def to_numpy(torch_model):
    """The npformer twin of a torchformer model or component, with its weights (in the torch model's
    dtype)."""
    torch_model = _twin_of("torch_model", torch_model, want_torch=True)
    dtype = _module_dtype(torch_model)
    cls = _twin_class("npformer", type(torch_model).__name__)
    args, kwargs = _constructor(torch_model, dtype)
    twin = cls(*args, **kwargs)
    copy_weights(torch_model, twin)
    _train_mode(torch_model, twin)
    return twin


def grads_by_name(model) -> dict[str, np.ndarray]:
    """{name: gradient as a numpy array} for every distinct parameter of either twin (a tied one under
    its first name). A torch parameter without .grad gives zeros (npformer's grads start at zero)."""
    model = unwrap(model)
    if not hasattr(model, "named_parameters"):
        raise TypeError(f"grads_by_name: model: expected an npformer or torchformer module, got "
                        f"{type(model).__name__}")
    out = {}
    for name, p in model.named_parameters():
        if isinstance(p, torch.Tensor):
            g = p.grad
            out[name] = (np.zeros(tuple(p.shape), dtype=_dtype_name(p.dtype)) if g is None
                         else g.detach().cpu().numpy().copy())
        else:
            out[name] = np.array(p.grad, copy=True)
    return out


def copy_grads_to_numpy(torch_model, np_model) -> None:
    """Write the torch twin's gradients into the npformer twin's .grad arrays (cast to their dtype);
    names must match."""
    torch_model = _twin_of("torch_model", torch_model, want_torch=True)
    np_model = _twin_of("np_model", np_model, want_torch=False)
    grads = grads_by_name(torch_model)
    params = dict(np_model.named_parameters())
    if set(grads) != set(params):
        raise ValueError(f"copy_grads_to_numpy: parameter names differ: only in torch "
                         f"{sorted(set(grads) - set(params))}, only in npformer "
                         f"{sorted(set(params) - set(grads))}")
    for name, p in params.items():
        np.copyto(p.grad, grads[name], casting="unsafe")


def masks_to_numpy(masks: dict) -> dict[str, np.ndarray]:
    """Dropout masks (tensors or arrays) as bool numpy arrays, names unchanged."""
    return {k: (v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else np.asarray(v))
            .astype(bool) for k, v in masks.items()}


def masks_to_torch(masks: dict, device="cpu") -> dict[str, torch.Tensor]:
    """Dropout masks (arrays or tensors) as bool tensors on `device`, names unchanged."""
    return {k: torch.as_tensor(np.asarray(v) if not isinstance(v, torch.Tensor) else v,
                               device=device).bool() for k, v in masks.items()}
