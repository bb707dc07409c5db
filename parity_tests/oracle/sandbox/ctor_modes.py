"""The worker's runs of one example built at a constructor flag's other value (sandbox/modes.py
registers them; core/modes.py compares them with the parent's reference):

    causal_ctor  a class whose constructor takes a causal flag (CAUSAL_CTOR: `causal`, `is_causal`,
             `masked`, ...; a mask switch, MASK_CTOR `use_mask`, where the forward takes no mask
             at all) that the build left at its default False, or passed False where it is
             required (recognise/flags), or a config object it was given holds False (a
             dataclass field at its default, a library config's attribute, a key of the oracle's
             config object the code read), for an sdpa class, multi-head attention or an
             encoder layer (a GPT block), on an example with as many keys as queries: built with
             the flag True and called with no mask; the parent's reference draws the causal mask
    rate_ctor  a class whose constructor took dropout rates (passed 0 in every other run), or was
             given a config object holding them (`config.dropout`): built with each at 0.5 or
             another rate drawn for the example and called in eval(), where dropout is the
             identity (a NumPy object only where it was told it is not training)
    default_ctor  built with the optional head widths the oracle derived left at their defaults
    bias_ctor  a class whose constructor takes a bias flag (BIAS_CTOR: `bias`, `use_bias`, ...) left
             at its default True, or whose config holds one True as above (nanoGPT's
             `GPTConfig.bias`): built with it False (a config's through --init-kwargs, which
             every config style takes), its norms' shifts (where it still has them) set to 0; the
             parent's reference has every bias 0. Code that ignores the flag adds the drawn biases

A build or call raising at the other value is not compared (the flag then stays "not checked").
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..components import Case
from ..reading.recognise import hooks
from ..reading.signatures import MASK_CTOR, TRAINING_FLAGS, is_causal_flag, signature_of
from .layout_modes import relaid_pick
from .raised_there import candidate_raised

CONFIG_FLAGS = hooks("constructor").config_flags

CAUSAL_CTOR_COMPONENTS = ("sdpa", "mha", "encoder_layer")
BIAS_CTOR = ("bias", "use_bias", "with_bias", "add_bias", "has_bias", "biases", "linear_bias")
BIAS_CTOR_COMPONENTS = ("mha", "ffn", "encoder_layer", "decoder_layer", "model")


def forward_only(ad, inst, case: Case) -> dict:
    p = ad.execute(inst, case, grad=False)
    return {k: v for k, v in p.values.items() if k in ("output", "attention_weights")}


def query_key_lengths(case: Case) -> tuple[int, int] | None:
    """(queries, keys) of an attention example (sdpa q/k, multi-head query/key, a layer's x)."""
    for q, k, axis in (("q", "k", -2), ("query", "key", 1), ("x", "x", 1)):
        a, b = case.inputs.get(q), case.inputs.get(k)
        if a is not None and b is not None and a.ndim >= 2 and b.ndim >= 2:
            return int(a.shape[axis]), int(b.shape[axis])
    return None


def config_left(ad) -> dict | None:
    """The switches the last build's config objects held before it and hold now: the oracle's
    config object records a key when the code reads it, in the constructor or when called
    (`self.config.bias` in forward), and the example's runs have called that build by the time
    these modes run; a switch the constructor overwrote (`config.bias = 1`) keeps the value it
    was handed."""
    given, held = getattr(ad, "ctor_configs", None), getattr(ad, "ctor_config_left", None)
    return {**(held or {}), **CONFIG_FLAGS(*given)} if given is not None else held


def ctor_flag(ctor_left: dict | None, names, default: bool) -> str | None:
    """The constructor's flag among `names` (a tuple, or a predicate on the name) the build left at
    `default`, or None."""
    named = names if callable(names) else (lambda n: n.lower() in names)
    return next((n for n, v in (ctor_left or {}).items() if named(n) and v is default), None)


def flipped_flag(mode: str, unvaried: dict) -> str | None:
    """The parent's reading of which constructor flag `mode` flipped, chosen as the worker chose it
    from the flags the listing says were left at a default (reading/unvaried); None when none is
    listed (a required causal flag is not: it was passed False, and the notes say so)."""
    left = {k: v.endswith("True in the constructor") for k, v in unvaried.items()
            if v in (f"left at its default {d} in the constructor" for d in ("True", "False"))}
    if mode == "bias_ctor":
        return ctor_flag(left, BIAS_CTOR, True)
    return ctor_flag(left, is_causal_flag, False) or ctor_flag(left, MASK_CTOR, False)


def built_with(ad, flag: str, value, case: Case, more: dict | None = None, accept=None) -> dict:
    """The forward of the candidate built with `flag=value` (and the arguments in `more`); {} where
    that build or call raises (the flag is then not taken as this mode reads it, and stays "not
    checked"), or where `accept(instance)` is given and says no."""
    init, left, required = ad.opts.init_kwargs, getattr(ad, "ctor_left", None), getattr(ad, "ctor_required", None)
    held, configs = getattr(ad, "ctor_config_left", None), getattr(ad, "ctor_configs", None)
    derived, rates = getattr(ad, "ctor_derived", None), getattr(ad, "ctor_rates", None)
    ad.opts.init_kwargs = {**init, flag: value, **(more or {})}
    try:
        inst = ad.instantiate(case)
        if inst.table or (accept is not None and not accept(inst)):
            return {}
        return forward_only(ad, inst, case)
    except Exception as exc:  # noqa: BLE001
        if not candidate_raised(exc):
            raise
        return {}
    finally:
        ad.opts.init_kwargs, ad.ctor_left, ad.ctor_required = init, left, required
        ad.ctor_config_left, ad.ctor_configs, ad.ctor_derived = held, configs, derived
        ad.ctor_rates = rates


def takes_no_mask(cls) -> bool:
    """The class's forward takes nothing that could carry a mask (no name with mask / pad / valid /
    bias / causal in it, no **kwargs): a mask switch of its constructor can only mean its own."""
    sig = signature_of(getattr(cls, "forward", None))
    if sig is None:
        return False
    words = ("mask", "pad", "valid", "bias", "causal", "len")
    return not any(p.kind == p.VAR_KEYWORD or any(w in p.name.lower() for w in words)
                   for p in sig.parameters.values())


def causal_ctor(ad, case: Case, tick=lambda: None) -> dict:
    left = getattr(ad, "ctor_left", None)
    flag = ctor_flag(left, is_causal_flag, False) or \
        ctor_flag(getattr(ad, "ctor_required", None), is_causal_flag, False) or \
        (ctor_flag(left, MASK_CTOR, False) if takes_no_mask(ad.obj) else None) or \
        ctor_flag(config_left(ad), is_causal_flag, False)
    lengths = query_key_lengths(case)
    if ad.mode != "class" or ad.comp.name not in CAUSAL_CTOR_COMPONENTS or flag is None or \
            lengths is None or lengths[0] != lengths[1]:
        return {}
    joined = joined_causal(case)        # the causal mask and the example's: handed over together
    if joined is not None:
        first = next(iter(ad.comp.masks), None)
        kinds = ad.caps.mask_kinds.get(first.name, first.kinds) if first is not None else ()
        return built_with(ad, flag, True, joined) if "causal_padding" in kinds else {}
    return built_with(ad, flag, True, dataclasses.replace(case, masks={n: None for n in case.masks}))


def joined_causal(case: Case) -> Case | None:
    """The example with its first mask joined to the causal one (query i keeps keys 0..i it kept),
    the others none, where that hides more than the future and every query keeps a key; else
    None. The parent's causal_ctor reference (core/modes.causal_case) and its run alike."""
    lengths = query_key_lengths(case)
    first = next(iter(case.masks), None)
    given = case.masks.get(first) if first is not None else None
    if lengths is None or given is None:
        return None
    causal = np.tril(np.ones(lengths, dtype=bool))
    try:
        both = np.broadcast_to(causal, given.shape) & given
    except ValueError:
        return None
    if not both.any(-1).all() or np.array_equal(both, np.broadcast_to(causal, both.shape)):
        return None
    return dataclasses.replace(case, masks={n: (both if n == first else None) for n in case.masks})


def norm_shift(ref: str) -> bool:
    """A norm's bias (`norm1.bias`, `encoder.norm.bias`), not a projection's."""
    parts = ref.split(".")
    return parts[-1] == "bias" and (len(parts) == 1 or "norm" in parts[-2])


def bias_ctor(ad, case: Case, tick=lambda: None) -> dict:
    flag = ctor_flag(getattr(ad, "ctor_left", None), BIAS_CTOR, True) or \
        ctor_flag(config_left(ad), BIAS_CTOR, True)
    if ad.mode != "class" or ad.comp.name not in BIAS_CTOR_COMPONENTS or flag is None:
        return {}
    params = {r: np.zeros_like(a) if norm_shift(r) else a for r, a in case.params.items()}
    return built_with(ad, flag, False, dataclasses.replace(case, params=params))


def default_ctor(ad, case: Case, tick=lambda: None) -> dict:
    """Built with the optional sizes the oracle derived for the build (a head width defaulting to a
    number, `d_k=64` beside the head count: recognise/derived.optional_head_widths) left at their
    defaults, as a call giving only the assignment's arguments leaves them; compared only where that
    build holds weights of the same shapes (a default that sizes weights cannot be handed the
    example's, and the build is not compared): a default used only in the arithmetic (the scale
    1/sqrt(d_k)) is what such a call computes with."""
    derived = getattr(ad, "ctor_derived", None)
    if ad.mode != "class" or not derived:
        return {}
    shapes = slot_shapes(ad.instantiate(case))       # the build as every other run makes it
    name, default = next(iter(derived.items()))
    return built_with(ad, name, default, case, derived, lambda inst: slot_shapes(inst) == shapes) \
        if shapes else {}


EVAL_RATE = 0.5          # the dropout rate of about half the rate_ctor and eval_rate runs
CONFIG_RATES = hooks("constructor").config_rates


def drawn_rate(case: Case) -> float:
    """The dropout rate an example's rate_ctor or eval_rate run passes: EVAL_RATE on about half the
    examples, on the others one between 0.05 and 0.95 read from the mode's inputs (drawn by the
    parent from the check's secret; 16 bits of them, no grid of values to recognise): code right
    only at 0 and 0.5, or at any values it could guess, differs. The reference does not depend on
    it: dropout is the identity there."""
    pick = relaid_pick(case) >> 1        # its lowest bit picks rate_ctor's examples
    if pick % 2 == 0:
        return EVAL_RATE
    return 0.05 + 0.9 * ((pick >> 1) % (1 << 16)) / (1 << 16)


def rate_ctor(ad, case: Case, tick=lambda: None) -> dict:
    """Built with the constructor's dropout rates (passed 0 in every other run), and those a config
    object it was given holds (recognise/config_rates: `config.dropout`, set through
    --init-kwargs), at a rate drawn for the example (drawn_rate) and called in eval(), as every run
    is: dropout is the identity there, so the output must be the reference's; code scaling its
    eval() output by 1 - rate, or dropping in eval(), differs. A NumPy object only where it was
    told it is not training (`told_eval`): one with no such notion may drop at every call, and is
    not compared here. On about half the examples (chosen from the mode's inputs, drawn from the
    check's secret): a scale by 1 - rate differs on every one. A builder function's rates
    (`make_model(..., dropout=0.1)`) alike."""
    given = getattr(ad, "ctor_configs", None)
    rates = (*(getattr(ad, "ctor_rates", None) or ()), *(CONFIG_RATES(*given) if given else ()))
    if ad.mode not in ("class", "factory") or not rates or relaid_pick(case) % 2:
        return {}
    rate, switched = drawn_rate(case), getattr(ad, "switch_inference", None) or {}
    return built_with(ad, rates[0], rate, case, dict.fromkeys(rates, rate),
                      None if ad.framework == "torch" else lambda inst: told_eval(inst, switched))


def told_eval(inst, switched: dict | None = None) -> bool:
    """A NumPy object told it is not training: its `training` is False or it has an eval() taking
    no arguments (reading/construct.finish_module used them), or its forward takes a training flag
    passed False (a switch in `switched` passed its inference value there, `deterministic=True`).
    An `eval(x)` of its own (evaluating something) tells it nothing."""
    obj = inst.obj
    sig = signature_of(getattr(obj, "eval", None)) if callable(getattr(obj, "eval", None)) else None
    no_args = sig is not None and all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                                      for p in sig.parameters.values())
    return getattr(obj, "training", None) is False or no_args \
        or any(type(v) is type(switched[a]) and v == switched[a] if a in (switched or {})
               else a in TRAINING_FLAGS and v is False for a, v in inst.binding.constants.items())


def slot_shapes(inst) -> dict:
    """{slot: the shape of the weight it holds now}, as the build left them."""
    return {n: tuple(s.shape) for n, s in inst.slots.items()}
