"""Recogniser: constructor arguments the oracle can derive from the component's hyperparameters.

    head width   d_k, d_v, d_head, head_dim, head_size, ... = d_model // num_heads
                 (for sdpa: the width of the drawn query/value)
    temperature  temperature, sqrt_d_k, scale_factor = sqrt(d_k)   (scores are q.k / temperature)
    kv heads     kv_heads, num_kv_heads, n_kv_heads, num_key_value_heads = num_heads (grouped-query
                 attention with as many key/value heads as query heads is multi-head attention)
    device       device = "cpu" (torch candidates)
    init spread  mean, init_mean = 0.0; std, init_std, initializer_range, ... = 0.02: the
                 distribution the constructor draws its weights from (`torch.normal(mean, std,
                 size)`), harmless since the oracle overwrites every weight
    generator    rng, random_state, generator = np.random.default_rng(0) (NumPy parts built with
                 their parent's generator, Dense(n_in, n_out, rng)); every weight is overwritten
                 by the oracle, so the seed only has to make instances alike
    input sizes  key_size, query_size, value_size, ... = d_model (d2l's older MultiHeadAttention(
                 key_size, query_size, value_size, num_hiddens, num_heads, dropout): the feature
                 sizes of the inputs, which the oracle draws equal to d_model); also a width of
                 each of query, key AND value in other words (`query_dim, key_dim, value_dim`,
                 `query_embed_dim, key_embed_dim, value_embed_dim`), found by `input_widths`
                 (one or two of them, as Keras' `key_dim` beside `num_heads`, are head widths)

Only REQUIRED arguments are filled: an optional one keeps the default the candidate chose, with
one exception (`optional_head_widths`): an optional head width with a NUMBER for its default
(`MultiHeadAttention(d_model=512, d_k=64, d_v=64, h=8)`, a default right only at the author's
sizes) in a constructor that also takes the head count gets d_model // num_heads, said in a note;
without it the heads' weights came out (h, d_model, 64) and nothing could be handed over. A None
default (the class works the width out itself) is left alone.
"""
from __future__ import annotations

import math

from .base import MISSING

HEAD_WIDTH = ("d_k", "d_v", "d_q", "dk", "dv", "d_head", "head_dim", "head_size", "dim_head",
              "d_key", "d_value", "d_kv", "head_width", "d_attn", "size_per_head", "k_dim", "v_dim",
              "kdim", "vdim", "dim_per_head", "depth", "d_queries", "d_keys", "d_values")
TEMPERATURE = ("temperature", "temp", "sqrt_d_k", "sqrt_dk", "scale_factor", "root_d_k")
DEVICE = ("device", "dev")
KV_HEADS = ("kv_heads", "num_kv_heads", "n_kv_heads", "num_key_value_heads", "n_kv_head", "kv_head",
            "num_kv_head", "n_heads_kv", "num_heads_kv", "key_value_heads", "n_kv")
INIT_MEAN = ("mean", "init_mean", "weight_mean", "mean_init", "mu")
INIT_STD = ("std", "init_std", "initializer_range", "weight_std", "std_init", "init_stddev", "stddev",
            "sigma", "initializer_std")
GENERATOR = ("rng", "random_state", "generator", "rand", "np_rng", "random_generator")
INPUT_SIZE = ("key_size", "query_size", "value_size", "q_size", "k_size", "v_size", "query_in",
              "key_in", "value_in", "q_in_dim", "k_in_dim", "v_in_dim")


INPUT_ROLES = {"query": "q", "queries": "q", "key": "k", "keys": "k", "value": "v", "values": "v"}
WIDTH_WORDS = ("dim", "dims", "dimension", "size", "width", "features", "embed", "embedding", "in")


def input_widths(params) -> list:
    """The required constructor arguments that are the widths of the query, key and value inputs,
    each named by its input's word and a width word (`query_dim`, `key_embed_dim`), when all three
    are there (and none names a head): each is passed d_model."""
    roles: dict[str, list] = {}
    for p in params:
        words = [w for w in p.name.lower().split("_") if w]
        role = {INPUT_ROLES[w] for w in words if w in INPUT_ROLES}
        if len(role) == 1 and any(w in WIDTH_WORDS for w in words) and p.name.lower() not in HEAD_WIDTH \
                and not any(w in ("head", "heads", "per", "n", "num") for w in words):
            roles.setdefault(role.pop(), []).append(p)
    if set(roles) != {"q", "k", "v"} or any(len(v) != 1 for v in roles.values()):
        return []
    return [v[0] for v in roles.values() if v[0].default is v[0].empty
            and v[0].name.lower() not in INPUT_SIZE]                # those: value() below


def head_width(values: dict) -> int | None:
    if "d_k" in values:
        return int(values["d_k"])
    if "d_model" in values and values.get("num_heads"):
        return int(values["d_model"]) // int(values["num_heads"])
    return None


def value(ctx, param, values: dict):
    """A value for a required constructor argument, or MISSING."""
    name = param.name.lower()
    if name in HEAD_WIDTH:
        w = values.get("d_v") if name in ("d_v", "dv", "d_value", "v_dim", "vdim", "d_values") else None
        w = w if w is not None else head_width(values)
        if w is not None:
            ctx.note(f"constructor argument {param.name!r}: passed the head width {w} "
                     f"(d_model // num_heads)")
            return w
    if name in TEMPERATURE:
        w = head_width(values)
        if w is not None:
            ctx.note(f"constructor argument {param.name!r}: passed sqrt(d_k) (scores divided by it)")
            return math.sqrt(w)
    if name in INPUT_SIZE and "d_model" in values:
        ctx.note(f"constructor argument {param.name!r}: passed d_model {values['d_model']} "
                 f"(the feature size of the inputs)")
        return int(values["d_model"])
    if name in KV_HEADS and values.get("num_heads"):
        ctx.note(f"constructor argument {param.name!r}: passed num_heads {values['num_heads']} (as many "
                 f"key/value heads as query heads: plain multi-head attention)")
        return int(values["num_heads"])
    if name in DEVICE and ctx.framework == "torch":
        ctx.note(f"constructor argument {param.name!r}: passed 'cpu'")
        return "cpu"
    if name in INIT_MEAN or name in INIT_STD:
        v = 0.0 if name in INIT_MEAN else 0.02
        ctx.note(f"constructor argument {param.name!r}: passed {v} (the spread its weights are drawn "
                 f"from; the oracle overwrites every weight)")
        return v
    if name in GENERATOR:
        import numpy as np
        ctx.note(f"constructor argument {param.name!r}: passed np.random.default_rng(0)")
        return np.random.default_rng(0)
    return MISSING


OPTIONAL_HEAD_WIDTH = ("d_k", "d_v", "dk", "dv", "d_head", "head_dim", "head_size", "dim_head", "d_key",
                       "d_value", "head_width", "dim_per_head", "size_per_head")


def optional_head_widths(ctx, params, values: dict, heads_taken: bool, taken: set) -> dict:
    """{argument: d_model // num_heads} for the optional head widths with a number for a default,
    when the constructor also takes the head count (`heads_taken`); see the module docstring."""
    w = head_width({k: v for k, v in values.items() if k in ("d_model", "num_heads")})
    if w is None or not heads_taken:
        return {}
    out = {}
    for p in params:
        if p.name.lower() in OPTIONAL_HEAD_WIDTH and p.name not in taken and \
                isinstance(p.default, int) and not isinstance(p.default, bool) and p.default != w:
            out[p.name] = w
            ctx.note(f"constructor argument {p.name!r}: defaults to {p.default}, a width of one head; "
                     f"passed the head width {w} (d_model // num_heads)")
    return out
