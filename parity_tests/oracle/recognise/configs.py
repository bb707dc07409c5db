"""Recogniser: config objects. A required constructor argument named config/cfg/args/... or annotated
with a dataclass gets an object carrying every usual name of each hyperparameter, readable both as
attributes (`cfg.d_model`) and as items (`cfg["n_heads"]`); an annotated dataclass is built itself,
its fields filled by name (dropout 0)."""
from __future__ import annotations

import dataclasses
import inspect
import typing

from .base import MISSING

CONFIG_ARG_NAMES = ("config", "cfg", "args", "hparams", "hp", "opt", "opts", "conf", "configs",
                    "params", "hyperparams", "settings", "model_config", "c", "conf_dict",
                    "config_dict", "hyper_params")


class ConfigBag(dict):
    """A dict whose keys are also attributes (config.d_model and config["d_model"])."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def fill(values: dict, aliases: dict) -> ConfigBag:
    """Every alias of every hyperparameter (earlier hyperparameters win a shared alias), dropout 0."""
    bag = ConfigBag()
    for h, v in values.items():
        for a in aliases.get(h, [h]):
            bag.setdefault(a, v)
    for a in aliases["dropout"]:
        bag[a] = 0.0
    bag.setdefault("bias", True)
    bag.setdefault("batch_first", True)
    return bag


def annotation_class(param, module):
    """The class a parameter is annotated with (string annotations resolved in the module)."""
    ann = param.annotation
    if ann is inspect.Parameter.empty:
        return None
    if isinstance(ann, str) and module is not None:
        ann = getattr(module, ann.strip("'\""), None)
    if typing.get_origin(ann) is typing.Union:   # Optional[Config]
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        ann = args[0] if len(args) == 1 else None
    return ann if inspect.isclass(ann) else None


def value(ctx, param, values: dict):
    from ..signatures import HYPER_ALIASES
    cls = annotation_class(param, ctx.module)
    if cls is not None and dataclasses.is_dataclass(cls):
        bag = fill(values, HYPER_ALIASES)
        kwargs = {f.name: bag[f.name] for f in dataclasses.fields(cls) if f.init and f.name in bag}
        ctx.note(f"constructor argument {param.name!r}: built {cls.__name__}("
                 + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")")
        return cls(**kwargs)
    if param.name.lower() in CONFIG_ARG_NAMES and (cls is None or cls in (dict, object)):
        ctx.note(f"constructor argument {param.name!r}: a config object (attributes and items) "
                 f"holding {', '.join(f'{h}={v!r}' for h, v in values.items())}, dropout 0")
        return fill(values, HYPER_ALIASES)
    return MISSING
