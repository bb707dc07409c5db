"""Whether a whole model takes its two stack depths apart. A model taking one depth has both
stacks drawn the same (Findings.one_layer_count), so one that builds its decoder with the
encoder's depth would match; its depths are drawn apart wherever it is handed them apart:
- its constructor takes an argument named for either stack's depth (an alias, or words:
  `num_layers_enc`, `n_dec_blocks`);
- the config class it is built with (its own dataclass, a library's `...Config`) has a field
  named for the decoder's depth;
- it read the oracle's config object (which holds every alias) under a name for either stack's
  depth while being built (`config.num_encoder_layers`).
The first is read before any build, the others from the probe build's config objects."""
from __future__ import annotations

import dataclasses

from . import naming, recognise

ConfigBag = recognise.hooks("constructor").config_bag      # the oracle's config object

ENCODER, DECODER = "num_encoder_layers", "num_decoder_layers"


def _names(key, hyper: str) -> bool:
    return isinstance(key, str) and (key.lower() in {a.lower() for a in naming.HYPER_ALIASES[hyper]}
                                     or naming.names_hyper(hyper, key))


def _config_names_depths(cfg) -> bool:
    if isinstance(cfg, ConfigBag):
        read = cfg.__dict__.get("_oracle_read", {})
        return any(_names(k, ENCODER) or _names(k, DECODER) for k in read)
    if dataclasses.is_dataclass(cfg) and not isinstance(cfg, type):
        return any(_names(f.name, DECODER) for f in dataclasses.fields(cfg))
    if type(cfg).__name__.endswith("Config") and hasattr(cfg, "__dict__"):
        return any(_names(k, DECODER) for k in vars(cfg))
    return False


def takes_two_depths(adapter) -> bool:
    """Before any build: the constructor's arguments (see the module docstring)."""
    return adapter.takes(ENCODER) or adapter.takes(DECODER)


def after_probe_build(adapter, probe):
    """`probe` (the probe build), unchanged; a model whose build's config objects name the stacks'
    depths apart has them drawn apart."""
    if adapter.comp.name == "model" and adapter.caps.one_layer_count:
        given = (getattr(adapter, "ctor_configs", None) or ((), ()))[0]
        if any(_config_names_depths(c) for c in given):
            adapter.caps.one_layer_count = False
    return probe
