"""Recogniser: config objects. A required constructor argument named config/cfg/args/... or annotated
with a dataclass gets an object carrying every usual name of each hyperparameter, readable both as
attributes (`cfg.d_model`) and as items (`cfg["n_heads"]`); an annotated dataclass is built itself,
its fields filled by name (dropout 0). When the module defining the class being built names a
config class of its own (transformers' `GPT2Config` beside `GPT2Attention`), that one is built and
its attributes set (library_config). The generic object answers attributes no hyperparameter names
by their meaning (default_for) and names the rest in an interface error. A required argument named
for the part it configures (`encoder_args`, `attn_config`: a config word last) is a config too, and a
key naming a part of the model (`args['self_attention']`, `cfg['encoder']`) is a section of the
config: a bag holding the same hyperparameters (sections). A bag holds the head width under its
usual names (`d_k`, `head_dim`) as well."""
from __future__ import annotations

import dataclasses
import inspect
import types
import typing

from ..signatures import InterfaceError
from .base import MISSING
from .config_fields import required

CONFIG_ARG_NAMES = ("config", "cfg", "args", "hparams", "hp", "opt", "opts", "conf", "configs",
                    "params", "hyperparams", "settings", "model_config", "c", "conf_dict",
                    "config_dict", "hyper_params")


CONFIG_WORDS = ("args", "config", "cfg", "conf", "hparams", "configs", "settings", "opts")
"""The last word of a constructor argument named for the part it configures (`encoder_args`)."""

SECTION_WORDS = ("attention", "attn", "mha", "encoder", "decoder", "enc", "dec", "ffn", "mlp",
                 "feed", "feedforward", "ff", "model", "layer", "layers", "block", "blocks", "self",
                 "cross", "transformer")
"""Words of a config key that name a part of the model: such a key holds a section of the config."""


def is_config_name(name: str) -> bool:
    """Whether a constructor argument's name says it is a config (`config`, `encoder_args`)."""
    low = name.lower()
    words = [w for w in low.split("_") if w]
    return low in CONFIG_ARG_NAMES or (len(words) > 1 and words[-1] in CONFIG_WORDS)


def _section(name: str) -> bool:
    words = [w for w in name.lower().replace("-", "_").split("_") if w]
    return bool(words) and all(w in SECTION_WORDS or w in ("forward", "wise", "position")
                               for w in words) and any(w in SECTION_WORDS for w in words)


LONGEST = 512
"""A sequence length for config attributes such as block_size when the component draws none."""


class ConfigAttributeMissing(InterfaceError, AttributeError):
    """A config attribute the candidate reads that the oracle has no value for (an interface
    error naming it; hasattr/getattr with a default still see a plain AttributeError)."""


def default_for(name: str, values: dict):
    """A value for a config attribute no hyperparameter alias names, by what its name means:
    dropout probabilities 0, epsilons the drawn eps, bias switches True, feed-forward widths d_ff,
    chunking/cache/cross-attention switches off, a size named in words the constructor's word
    reader knows (`heads_num`, `model_dimension`: name_words) the drawn size. MISSING when the name
    says nothing."""
    n = name.lower()
    if "drop" in n:
        return 0.0
    if n.endswith(("eps", "epsilon")) or "_eps" in n:
        return values.get("eps", 1e-5)
    if n in ("bias", "use_bias", "qkv_bias", "add_bias") or n.endswith("_bias"):
        return True
    if n in ("n_inner", "inner_dim", "intermediate_dim", "ffn_dim", "mlp_hidden"):
        return values.get("d_ff", 4 * values.get("d_model", 1))
    if n.startswith(("chunk_size", "use_cache", "is_decoder", "add_cross", "output_hidden",
                     "is_encoder_decoder", "gradient_checkpointing", "scale_attn_by_inverse",
                     "reorder_and_upcast")) or n.endswith("_chunk_size"):
        return 0 if n.startswith("chunk") or n.endswith("chunk_size") else False
    if n in ("scale_attn_weights", "scale_attention", "scaled"):
        return True
    if n in ("output_attentions", "return_attention"):
        return True
    from ..signatures import HYPER_ALIASES, names_hyper
    if n in HYPER_ALIASES["activation"]:
        return values.get("activation", "relu")
    if n in [a.lower() for a in HYPER_ALIASES["max_len"]] or names_hyper("max_len", name):
        return values.get("max_len", LONGEST)        # buffers sized for the longest draw
    hyper = size_named(name, values)
    return MISSING if hyper is None else values[hyper]


def size_named(name: str, values: dict) -> str | None:
    """The drawn size a config attribute names in words the constructor's word reader knows
    (`heads_num` -> num_heads, `model_dimension` -> d_model), or None."""
    from ..signatures import names_hyper
    return next((h for h in ("num_heads", "d_model", "d_ff") if h in values and names_hyper(h, name)),
                None)


class ConfigBag(dict):
    """A dict whose keys are also attributes (config.d_model and config["d_model"]). An attribute
    it does not hold is answered by what its name means (default_for: dropout 0, eps, ...), and
    the report lists each one read so; one whose name says nothing is an interface error naming it
    and the option that sets it (--init-kwargs)."""

    def __getattr__(self, name):
        if name.startswith(("__", "_oracle")):
            raise AttributeError(name)
        try:
            return self._oracle_seen(name, dict.__getitem__(self, name))
        except KeyError:
            pass
        return self._oracle_answer(name, f"config.{name}")

    def __getitem__(self, key):
        return self._oracle_seen(key, dict.__getitem__(self, key))

    def _oracle_seen(self, name, v):
        """v, the value the code read under `name`, recorded (config_flags)."""
        if isinstance(name, str):
            self.__dict__.setdefault("_oracle_read", {})[name] = v
        return v

    def __missing__(self, key):
        """cfg["context_length"]: a key read as an item is answered like an attribute."""
        if not isinstance(key, str) or key.startswith(("__", "_oracle")):
            raise KeyError(key)
        return self._oracle_answer(key, f"config[{key!r}]")

    def _oracle_answer(self, name: str, how: str):
        v = default_for(name, self.__dict__.get("_oracle_values", {}))
        if v is MISSING and _section(name):
            v = ConfigBag(self)               # a section: the same hyperparameters
            v.__dict__.update(self.__dict__)
            notes = self.__dict__.get("_oracle_notes")
            text = f"config key {name!r} read: a section for a part of the model, given the same " \
                   f"hyperparameters"
            if isinstance(notes, list) and text not in notes:
                notes.append(text)
            return v
        if v is MISSING:
            raise ConfigAttributeMissing(
                f"the candidate reads {how}, which the oracle's config object has no "
                f"value for; give it with --init-kwargs '{{\"{name}\": VALUE}}'")
        self._oracle_seen(name, v)
        notes = self.__dict__.get("_oracle_notes")
        if isinstance(notes, list):
            hyper = size_named(name, self.__dict__.get("_oracle_values", {}))
            text = f"config key {name!r} read: no hyperparameter names it, given {v!r} (by its name)" \
                if hyper is None else f"config key {name!r} read as {hyper} (its words), given the drawn size"
            if text not in notes:
                notes.append(text)
        return v


def fill(values: dict, aliases: dict) -> ConfigBag:
    """Every alias of every hyperparameter (earlier hyperparameters win a shared alias), dropout 0."""
    bag = ConfigBag()
    for h, v in values.items():
        for a in aliases.get(h, [h]):
            bag.setdefault(a, v)
    if "d_model" in values:
        bag["hidden_size"] = values["d_model"]   # in a config, as Hugging Face names it: the
        #                                          model width (intermediate_size is d_ff's)
    from .derived import HEAD_WIDTH, head_width
    width = head_width(values)
    if width is not None:                        # config["d_k"]: the width of one head
        for a in HEAD_WIDTH:
            if a != "depth":
                bag.setdefault(a, values.get("d_v", width) if a in ("d_v", "dv", "d_value", "v_dim",
                                                                      "vdim") else width)
    for a in aliases["dropout"]:
        bag[a] = values.get(a, values.get("dropout", 0.0))   # 0 but where --init-kwargs sets one
    bag.setdefault("bias", True)
    bag.setdefault("batch_first", True)
    bag.__dict__["_oracle_values"] = dict(values)
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


def annotation_members(param, module) -> list:
    """The classes named *Config in a parameter's annotation when it names several
    (`CLIPVisionConfig | CLIPTextConfig`, `Union[...]`), in the order written; else []."""
    ann = param.annotation
    if isinstance(ann, str) and module is not None:
        try:
            ann = eval(ann, vars(module))          # noqa: S307 - the module's own annotation text
        except Exception:  # noqa: BLE001 - unresolvable: no members
            return []
    if typing.get_origin(ann) not in (typing.Union, types.UnionType):
        return []
    return [a for a in typing.get_args(ann) if inspect.isclass(a) and a.__name__.endswith("Config")]


def value(ctx, param, values: dict):
    from ..signatures import HYPER_ALIASES
    cls = annotation_class(param, ctx.module)
    if cls is not None and dataclasses.is_dataclass(cls):
        bag = fill(values, HYPER_ALIASES)
        fields = [f.name for f in dataclasses.fields(cls) if f.init]
        claims = _claims(set(fields).__contains__, values, lambda: fields)
        kwargs = {n: values[claims[n]] if n in claims else bag[n] for n in fields
                  if n in claims or n in bag}
        kwargs.update(required(cls, kwargs, values))    # unread required fields, by meaning
        if ctx.component == "decoder_layer":      # the component has a cross-attention
            kwargs.update({a: True for a in CROSS_SWITCHES if a in fields})
        ctx.note(f"constructor argument {param.name!r}: built {cls.__name__}("
                 + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")")
        return cls(**kwargs)
    if is_config_name(param.name) and (cls is None or cls in (dict, object)):
        real = library_config(ctx, values, annotation_members(param, ctx.module),
                              _attributes_read(ctx, param.name))
        if real is not None:
            return real
        ctx.note(f"constructor argument {param.name!r}: a config object (attributes and items) "
                 f"holding {', '.join(f'{h}={v!r}' for h, v in values.items())}, dropout 0")
        bag = fill(values, HYPER_ALIASES)
        bag.__dict__["_oracle_notes"] = ctx.notes
        return bag
    return MISSING


# -- a library's own config class --------------------------------------------------------------
CONFIG_ORDER = ("d_model", "num_heads", "d_ff", "eps", "max_len", "vocab_size", "num_layers")
EXTRA_NAMES = {"d_ff": ("n_inner", "encoder_ffn_dim", "decoder_ffn_dim"),
               "num_heads": ("encoder_attention_heads", "decoder_attention_heads"),
               "eps": ("layer_norm_epsilon",), "max_len": ("n_positions",)}
"""Names library configs give a hyperparameter beside its usual aliases (BART's and Whisper's
encoder_/decoder_ heads and feed-forward widths)."""


CROSS_SWITCHES = ("is_decoder", "add_cross_attention")
"""Config switches that build a decoder layer's cross-attention (TrOCR's, XGLM's; off by default)."""


def _claims(has, values: dict, words_of=tuple) -> dict:
    """Which hyperparameter each attribute of a config gets (`has(name)`: the config has it). A
    name that two hyperparameters share (`hidden_dim`: d_ff in DistilBERT's config beside `dim`)
    goes by meaning: to the one of them the config names nowhere else, the earlier in
    CONFIG_ORDER when both or neither are named elsewhere; `hidden_size` is always the model
    width (Hugging Face's name for it). `words_of()` lists the config's names, for a hyperparameter
    no alias finds there, named in words (embedding_dimension, number_of_heads)."""
    from ..name_words import names_hyper
    from ..signatures import HYPER_ALIASES
    order = [h for h in CONFIG_ORDER if h in values] + [h for h in values if h not in CONFIG_ORDER]
    names = {h: [a for a in list(HYPER_ALIASES.get(h, [h])) + list(EXTRA_NAMES.get(h, ()))
                 if has(a)] for h in order if h != "activation"}
    for h, found in names.items():        # widths in words: embedding_dimension, number_of_heads
        if not found:
            found.extend(a for a in words_of() if names_hyper(h, a))
    owners: dict[str, list] = {}
    for h, found in names.items():
        for a in found:
            if a == "hidden_size" and h != "d_model" and "d_model" in names:
                continue              # Hugging Face's name of the model width, never d_ff
            owners.setdefault(a, []).append(h)
    claims = {}
    for a, hs in owners.items():
        sole = [h for h in hs if any(owners.get(b) == [h] for b in names[h])]
        free = [h for h in hs if h not in sole]
        claims[a] = (free or hs)[0]
    return claims


def _config_classes(ctx) -> list:
    """The config classes the candidate's module names (`GPT2Config` beside `GPT2Attention`):
    classes named *Config, those sharing the longest prefix with the class being built first."""
    import sys
    found = []
    for mod in (sys.modules.get(ctx.target_module or ""), ctx.module):
        if mod is None or found:
            continue
        found = [(n, c) for n, c in vars(mod).items() if inspect.isclass(c) and n.endswith("Config")
                 and n != "Config"]
    target = str(getattr(ctx, "target_name", "") or "")

    def common(n):
        k = 0
        while k < min(len(n), len(target)) and n[k] == target[k]:
            k += 1
        return k
    found.sort(key=lambda t: -common(t[0]))
    return [c for _, c in found]


def _attributes_read(ctx, name: str) -> set:
    """The attributes the class being built reads from its argument `name` (`config.hidden_size`
    in its source text); empty when the source cannot be read."""
    import re
    import sys
    cls = getattr(sys.modules.get(ctx.target_module or ""), str(ctx.target_name or ""), None)
    try:
        src = inspect.getsource(cls)
    except (TypeError, OSError):
        return set()
    return set(re.findall(rf"\b{re.escape(name)}\.([A-Za-z_]\w*)", src))


def _best_config(classes, values: dict, reads=()):
    """(class, instance) of the first class with a no-argument constructor whose instance answers
    the most hyperparameters, then the most attributes the candidate reads: a composite config
    (CLIPConfig, holding a text and a vision config) answers none of the widths, its text config
    answers them all; of two that do (BLIP's text and vision configs), the one that also has the
    `attention_dropout` the attention reads. (None, None) when none builds."""
    best, score = (None, None), (-1, -1)
    for cls in classes:
        try:
            cfg = cls()
        except Exception:  # noqa: BLE001 - a config class that needs arguments: next one
            continue
        n = (len(_claims(lambda a, cfg=cfg: hasattr(cfg, a), values)),
             sum(hasattr(cfg, a) for a in reads))
        if n > score:
            best, score = (cls, cfg), n
    return best


def library_config(ctx, values: dict, annotated=(), reads=()):
    """The library's own config object (transformers' GPT2Config, BertConfig), built with its
    defaults, then every attribute it has that names a hyperparameter set to the drawn value,
    every dropout probability 0 and its activation the drawn one. The classes the annotation names
    come first, then the module's; of those, the one answering the most hyperparameters (then the
most of `reads`, the attributes the candidate reads from it). None when
    there is no config class or none builds without arguments."""
    from ..signatures import HYPER_ALIASES
    classes = list(dict.fromkeys([*annotated, *_config_classes(ctx)]))
    cls, cfg = _best_config(classes, values, reads)
    if cls is None:
        return None
    said = []
    for a, h in _claims(lambda a: hasattr(cfg, a), values).items():
        try:
            setattr(cfg, a, values[h])
        except Exception:  # noqa: BLE001
            continue
        said.append(f"{a}={h}")
    for a, v in list(vars(cfg).items()):
        if "drop" in a.lower() and isinstance(v, float):
            setattr(cfg, a, float(values.get(a, 0.0)))     # 0 but where --init-kwargs sets one
    act = values.get("activation")
    for a in HYPER_ALIASES["activation"]:
        if act is not None and isinstance(getattr(cfg, a, None), str):
            setattr(cfg, a, act)
            said.append(f"{a}=activation ({act})")
    if ctx.component == "decoder_layer":
        for a in CROSS_SWITCHES:            # a decoder layer is compared with its cross-attention
            if isinstance(getattr(cfg, a, None), bool):
                setattr(cfg, a, True)
                said.append(f"{a}=True (the component has a cross-attention)")
    if hasattr(cfg, "_attn_implementation"):
        try:
            cfg._attn_implementation = "eager"   # the attention weights are returned
        except Exception:  # noqa: BLE001
            pass
    ctx.note(f"built the module's own config class {cls.__name__}() with the drawn "
             f"hyperparameters: " + ", ".join(said) + ", every dropout 0")
    return cfg


def config_flags(given, init=()) -> dict:
    """{name: value} of the switches (bool values) held by the config objects among `given` (what a
    constructor was called with) that the build left as they were: a dataclass's fields still at
    their defaults, a library config's bool attributes, the oracle's ConfigBag's keys the code
    read and was answered by name; never a key of `init` (--init-kwargs). sandbox/modes.py builds
    the candidate again with a bias or causal switch among them flipped (through --init-kwargs,
    which every config style takes)."""
    out: dict = {}
    for cfg in given:
        if isinstance(cfg, ConfigBag):
            held = {k: v for k, v in cfg.__dict__.get("_oracle_read", {}).items()}
        elif dataclasses.is_dataclass(cfg) and not isinstance(cfg, type):
            held = {f.name: getattr(cfg, f.name, None) for f in dataclasses.fields(cfg)
                    if f.default is getattr(cfg, f.name, None)}
        elif type(cfg).__name__.endswith("Config"):
            held = dict(vars(cfg)) if hasattr(cfg, "__dict__") else {}
        else:
            continue
        out.update({k: v for k, v in held.items() if isinstance(v, bool) and isinstance(k, str)
                    and k not in init and k not in out})
    return out
