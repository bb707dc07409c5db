"""Recogniser: the dropout rates a config object holds (`config.dropout`, `cfg.attn_pdrop`, a
dataclass's `dropout` field), which the oracle sets to 0 as it sets a constructor's. The rate_ctor
run (sandbox/ctor_modes.py) builds the candidate again with each at another rate, through
--init-kwargs (which every config style takes: configs.fill, configs.library_config and a
dataclass's fields read them), and calls it in eval(), where dropout is the identity: code scaling
its eval() output by 1 - rate read from its config differs there.

A rate is a key or attribute whose name holds `drop` or is one of the dropout hyperparameter's
names (`p`, `prob`), holding a number (not a bool) equal to 0, in a config object the constructor
was given: the oracle's config object (the keys the code read, in the constructor or since), a
dataclass instance, or an object of a class named *Config (a library's config). A name in
--init-kwargs is the user's and is left as it is.
"""
from __future__ import annotations

import dataclasses

from ..signatures import HYPER_ALIASES
from .configs import ConfigBag

RATE_NAMES = {a.lower() for a in HYPER_ALIASES["dropout"]}


def is_rate(name, value) -> bool:
    """A dropout rate held at 0 under `name`."""
    return isinstance(name, str) and ("drop" in name.lower() or name.lower() in RATE_NAMES) \
        and type(value) in (int, float) and value == 0


def held_rates(given, init=()) -> tuple[str, ...]:
    """The names of the dropout rates at 0 the config objects among `given` (what a constructor was
    called with) hold, in the order found, none of `init`'s."""
    out: list[str] = []
    for cfg in given:
        if isinstance(cfg, ConfigBag):
            held = dict(cfg.__dict__.get("_oracle_read", {}))
        elif dataclasses.is_dataclass(cfg) and not isinstance(cfg, type):
            held = {f.name: getattr(cfg, f.name, None) for f in dataclasses.fields(cfg)}
        elif type(cfg).__name__.endswith("Config") and hasattr(cfg, "__dict__"):
            held = dict(vars(cfg))
        else:
            continue
        out += [k for k, v in held.items() if is_rate(k, v) and k not in init and k not in out]
    return tuple(out)
