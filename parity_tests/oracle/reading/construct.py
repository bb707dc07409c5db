"""Construction: build a candidate module (class or factory) from the component's hyperparameters."""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from . import naming, plain_torch_params, recognise
from .division_roles import head_count_correction
from .given_keywords import refuse_unknown
from .main_sizes import own_arguments, remember, set_sizes
from .naming import InterfaceError
from .numpy_parts_eval import eval_parts

CONFIG_ARG_NAMES = recognise.hooks("constructor").config_arg_names
DROPOUT_RATES = recognise.hooks("constructor").dropout_rates
NONE_DROPOUT_RATES = recognise.hooks("constructor").none_dropout_rates
GLOBAL_DROPOUT_RATES = recognise.hooks("constructor").global_dropout_rates
CONFIG_FLAGS = recognise.hooks("constructor").config_flags
OPTIONAL_HEAD_WIDTHS = recognise.hooks("constructor").optional_head_widths
INPUT_WIDTHS = recognise.hooks("constructor").input_widths
CAUSAL_DEFAULTS = recognise.hooks("constructor").causal_defaults
PROJECT_RATES = ("dropout", "attention_dropout", "activation_dropout")   # TransformerConfig's
DROPOUT_NAMES = {a.lower() for a in naming.HYPER_ALIASES.get("dropout", ())}
CLASS_SPELLED = recognise.hooks("constructor").class_spelled
MODEL_FACTORY = recognise.hooks("constructor")


def _may_be_ours(param) -> bool:
    """A config argument that may be npformer's TransformerConfig: not annotated with a class of
    another name (`config: ModelConfig` is the candidate's own dataclass, built by its fields)."""
    ann = param.annotation
    if ann is inspect.Parameter.empty:
        return True
    name = ann if isinstance(ann, str) else getattr(ann, "__name__", "")
    return name.strip("'\"").split(".")[-1] == "TransformerConfig"


class ConstructMixin:
    """Adapter methods that build the candidate (see adapters.Adapter)."""

    def takes(self, hyper: str) -> bool:
        """Whether the constructor (or factory) takes `hyper`, by an alias or in words."""
        if self.mode not in ("class", "factory"):
            return False
        sig = naming.signature_of(self.obj.__init__ if self.mode == "class" else self.obj)
        params = [p.name for p in sig.parameters.values()] if sig else []
        return bool({n.lower() for n in params} & {a.lower() for a in naming.HYPER_ALIASES[hyper]}) \
            or any(naming.names_hyper(hyper, n) for n in params)     # in words: num_layers_enc

    def _takes_two_vocabs(self) -> bool:
        if self.mode not in ("class", "factory"):
            return True
        fn = self.obj.__init__ if self.mode == "class" else self.obj
        sig = naming.signature_of(fn)
        if sig is None:
            return True
        names = {p.name.lower() for p in sig.parameters.values()}
        src = {a.lower() for a in naming.HYPER_ALIASES["src_vocab"]}
        single = {a.lower() for a in naming.HYPER_ALIASES["vocab_size"]}
        return bool(names & src) or not bool(names & single)

    def probe_hyper(self) -> dict:
        h = {"d_model": 4, "num_heads": 2, "d_ff": 3, "eps": 1e-5, "max_len": 16, "activation": "relu",
             "norm_first": False, "src_vocab": 5, "tgt_vocab": 5, "vocab_size": 5,
             "num_encoder_layers": 1, "num_decoder_layers": 1, "num_layers": 1, "pad_id": 0, "tgt_pad_id": 0,
             "d_k": 2, "d_v": 2}
        h.update({k: v for k, v in self.opts.settings.items() if k in h})
        return h

    def _probe_build(self):
        """Build a class candidate once with small sizes, so that what the oracle guessed about its
        constructor is known (and in self.notes) before the search; an interface problem shows
        here. Any other failure is left for the examples to report. Returns the object or None."""
        if self.mode != "class":
            return None
        try:
            return self.construct(self.probe_hyper())
        except InterfaceError:
            raise
        except Exception:  # noqa: BLE001 - reported, with its example, by the search
            return None

    def _is_table(self, made) -> bool:
        return self.comp.name == "positional" and (self.ops.is_array(made)
                                                   or isinstance(made, np.ndarray))

    # -- construction -----------------------------------------------------------------------------
    def _transformer_config(self, values: dict):
        """npformer's TransformerConfig, for code built on this project (else None; the configs
        recogniser then offers a config object carrying every usual name); its dropout rates 0 but
        where --init-kwargs sets one (the rate_ctor run does)."""
        try:
            from npformer.models.config import TransformerConfig
            return TransformerConfig(
                d_model=values.get("d_model", 4), num_heads=values.get("num_heads", 1),
                d_ff=values.get("d_ff", 4), dtype=self.opts.dtype,
                **{r: values.get(r, 0.0) for r in PROJECT_RATES},
                activation=values.get("activation", "relu"), layer_norm_eps=values.get("eps", 1e-5),
                norm_first=values.get("norm_first", False))
        except Exception:  # noqa: BLE001 - values outside what TransformerConfig accepts
            return None

    def construct(self, hyper: dict):
        """Build the candidate module for these hyperparameters (class or factory)."""
        if self.hooks is not None and self.hooks.build is not None:
            return self.hooks.build(self.comp.name, dict(hyper))
        if self.mode == "instance":
            return self.obj
        values = self.comp.constructor_values(hyper) if self.comp.name != "model" else \
            {k: hyper[k] for k in self.comp.hypers if k in hyper}
        values.update({k: hyper[k] for k in ("d_k", "d_v") if k in hyper})   # sdpa head widths
        target, order = self._model_factory() or self.obj, tuple(self.comp.hypers)
        self.spell_classes = False          # the assignment's activation name first, unless
        try:                                # a call on it raised (spell_lookup, session.run)
            if not getattr(self, "spell_lookup", False):
                return self._build(target, values, order, depth=0)
        except Exception:
            if self.framework != "torch" or CLASS_SPELLED(self.source_module(), values, []) == values:
                raise
        self.spell_classes = True           # it raised: torch.nn's class name ('ReLU')
        try:
            return self._build(target, values, order, depth=0)
        finally:
            self.spell_classes = False

    def _model_factory(self):
        """A model class assembled from parts handed to it: the function of its file that builds
        the parts from sizes and returns it (recognise/model_factory), noted once; else None."""
        if self.comp.name != "model" or self.mode != "class":
            return None
        if not hasattr(self, "_factory_fn"):
            self._factory_fn = MODEL_FACTORY.model_factory(self.obj, self.loaded.module or
                                                           inspect.getmodule(self.obj))
            if self._factory_fn is not None:
                self.notes.append(MODEL_FACTORY.model_factory_note(self.obj, self._factory_fn))
        return self._factory_fn

    def _build(self, target, values: dict, order: tuple, depth: int = 0):
        """Call `target` (a class or factory) with what its signature asks for: hyperparameters by
        name (naming.HYPER_ALIASES, in `order`), dropout 0, --init-kwargs (top level only; they may
        supply required arguments), then the recognisers for required arguments left over."""
        values = dict(values)
        sizes = set_sizes(self.source_module(), values, self.notes, own_arguments(target)) \
            if depth == 0 else {}
        if depth == 0:
            GLOBAL_DROPOUT_RATES(self.source_module(), self.notes)
        if getattr(self, "spell_classes", False):     # getattr(nn, "ReLU")(): the class's spelling
            values = CLASS_SPELLED(self.source_module(), values, self.notes)
        if isinstance(target, type) and target.__init__ is object.__init__ \
                and target.__new__ is object.__new__:
            built = target()            # no constructor of its own: it takes no arguments
            remember(built, self.source_module(), sizes)
            return built
        sig_fn = target.__init__ if isinstance(target, type) else target
        sig = naming.signature_of(sig_fn)
        params = [p for p in (sig.parameters.values() if sig else []) if p.name not in ("self", "cls")]
        required = [p for p in params if p.default is inspect.Parameter.empty
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        init = dict(self.opts.init_kwargs) if depth == 0 else {}
        takes_any = any(p.kind == p.VAR_KEYWORD for p in params)
        if init and not takes_any and any(p.name.lower() in CONFIG_ARG_NAMES for p in required):
            names = {p.name for p in params}     # the rest are the config object's attributes
            values.update({k: v for k, v in init.items() if k not in names})
            init = {k: v for k, v in init.items() if k in names}
        elif depth == 0:                   # a keyword it has no parameter for: said by name
            refuse_unknown(f"{getattr(target, '__name__', self._name())}(...)", params, init)
        if depth == 0 and len(required) == 1 and required[0].name.lower() in CONFIG_ARG_NAMES \
                and required[0].name not in init and _may_be_ours(required[0]):
            cfg = self._transformer_config(values)   # code built on this project
            if cfg is not None:
                try:
                    built = target(cfg, **init)
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass                   # another config: the recognisers build it
                else:                      # its rates at 0 (sandbox/ctor_modes.rate_ctor)
                    self.ctor_rates = tuple(r for r in PROJECT_RATES if r not in self.opts.init_kwargs)
                    return built
        # activation: only when the candidate takes a string
        act = next((p for p in params if p.name.lower() in
                    [a.lower() for a in naming.HYPER_ALIASES["activation"]]), None)
        drawn_act = values.get("activation")
        if act is None or not (isinstance(act.default, str) or act.default is inspect.Parameter.empty):
            values.pop("activation", None)
        hyper_names = {a.lower() for h in order if h in values for a in naming.HYPER_ALIASES.get(h, [h])}
        consts: dict[str, Any] = {"dropout": 0.0, "batch_first": True}
        if self.framework == "numpy" and any(p.name == "dtype" for p in params):
            consts["dtype"] = self.opts.dtype
        const_names = {a.lower() for k in consts for a in naming.HYPER_ALIASES.get(k, [k])}
        ctx = recognise.BuildContext(module=self.source_module(), framework=self.framework, order=order,
                                     build=lambda cls, v, o: self._build(cls, v, o, depth + 1),
                                     notes=self.notes, depth=depth,
                                     target_name=getattr(target, "__name__", ""),
                                     target_module=getattr(target, "__module__", ""),
                                     dtype=self.opts.dtype, component=self.comp.name, target=target)
        # a config argument defaulting to None that the class reads anyway (Whisper's, BART's
        # attention) gets one too, said in the notes
        none_configs = [p for p in params if p.default is None and p.name.lower() in CONFIG_ARG_NAMES]
        for p in _per_head_sizes(params, values, self.comp.hypers):
            consts[p.name] = int(values["d_model"]) // int(values["num_heads"])
            ctx.note(f"constructor argument {p.name!r}: beside 'd_model' and the head count, "
                     f"{'and a feed-forward width, ' if 'd_ff' in values else ''}a width of one "
                     f"head: passed d_model // num_heads = {consts[p.name]}")
        heads = any(p.name.lower() in [a.lower() for a in naming.HYPER_ALIASES["num_heads"]]
                    or naming.names_hyper("num_heads", p.name) for p in params)
        derived = OPTIONAL_HEAD_WIDTHS(ctx, params, values, heads, set(consts))   # d_k=64
        consts.update(derived)
        flipped = CAUSAL_DEFAULTS(ctx, params, set(init))                 # causal=True -> False
        consts.update(flipped)
        if depth == 0 and target is getattr(self, "_factory_fn", None):     # d_embed beside d_model
            consts.update(MODEL_FACTORY.builder_twin_widths(ctx, target, values))
        for p in (INPUT_WIDTHS(params) if "d_model" in values else []):
            consts[p.name] = int(values["d_model"])
            ctx.note(f"constructor argument {p.name!r}: one of the query, key and value widths, "
                     f"passed d_model {consts[p.name]} (the feature size of the inputs)")
        given: dict[str, Any] = {}                      # by name, over the None default
        for p in required + none_configs:
            low = p.name.lower()
            if p.name in init or p.name in consts or low in hyper_names or low in const_names or \
                    any(naming.names_hyper(h, p.name) for h in values):
                continue
            v = recognise.constructor_value(
                ctx, p, dict(values, activation=drawn_act) if drawn_act else values)
            if v is not recognise.MISSING:
                (given if p in none_configs else consts)[p.name] = v
                if p in none_configs:
                    ctx.note(f"constructor argument {p.name!r} defaults to None: given the config "
                             f"above instead")
        taken = hyper_names | const_names | {k.lower() for k in list(consts) + list(init) + list(given)}
        fed = DROPOUT_RATES(ctx, target, params, taken)             # `nn.Dropout(p_d)`
        consts.update(fed)
        for k, v in init.items():        # --init-kwargs: by name, required or not
            consts[k] = v
        sources = [(h, naming.HYPER_ALIASES.get(h, [h]), False) for h in order if h in values]
        fix = head_count_correction(sig_fn, naming.HYPER_ALIASES["num_heads"]) \
            if {"d_model", "num_heads"} <= set(values) else None
        if fix is not None:                # `H // A`: H is the width (BERT's names), A the heads
            width, heads = fix
            sources = [(h, [heads] if h == "num_heads" else [width, *al] if h == "d_model" else al,
                        req) for h, al, req in sources]
            ctx.note(f"constructor arguments {width!r} and {heads!r}: the constructor divides "
                     f"{width} by {heads} (itself or in the class it hands them to), so "
                     f"{width!r} is the width (passed d_model) and {heads!r} the head count "
                     f"(passed num_heads)")
        lone = getattr(self, "model_width_arg", None) if depth == 0 else None
        if lone:                           # recognise/lone_width: the one width is the model's
            sources = [(h, [lone, *al] if h == "d_model" else al, req) for h, al, req in sources]
        what = f"{getattr(target, '__name__', self._name())}(...)"
        b = naming.bind(sig_fn, sources, constants=consts, what=what)
        args, kwargs, by_name = [], {}, False
        by_position = {}
        for src in b.positional:
            arg = b.arg_of.get(src, "")
            if arg and not arg.startswith(("*", "#")) and arg not in init and arg.lower() not in \
                    {x.lower() for x in naming.HYPER_ALIASES.get(src, [src])} and \
                    not naming.names_hyper(src, arg) and not (fix and arg in fix) and arg != lone:
                by_position[arg] = src
                if self.comp.name == "model" and MODEL_FACTORY.model_part_named(arg):
                    raise InterfaceError(MODEL_FACTORY.model_parts_message(what[:-5], [
                        p.name for p in params if MODEL_FACTORY.model_part_named(p.name)]))
                ctx.note(f"constructor argument {arg!r}: passed {src} by position (no "
                         f"hyperparameter has that name)")
            if arg in init:
                by_name = True   # --init-kwargs replaces it: what follows goes by name
                continue
            if by_name and not arg.startswith(("*", "#")):
                kwargs[arg] = values[src]
            else:
                args.append(values[src])
        kwargs.update({a: values[src] for a, src in b.keywords.items()})
        kwargs.update(b.constants)
        kwargs.update(given)
        kwargs.update(init)
        fed = {**fed, **NONE_DROPOUT_RATES(ctx, target, params[len(args):], set(kwargs))}   # `dropout=None`
        kwargs.update(fed)
        if depth == 0:                     # what only its position gave (recognise/lone_width)
            self.ctor_by_position, self.ctor_unbound = by_position, tuple(b.unbound)
        if depth == 0:                     # what the constructor left at its default (unvaried.py)
            self.ctor_required = {p.name: consts[p.name] for p in params   # filled in by a recogniser
                                  if (p in required or p.name in flipped)
                                  and p.name in consts and p.name not in init}
            self.ctor_derived = {p.name: p.default for p in params if p.name in derived   # default_ctor
                                 and p.name not in init}
            self.ctor_rates = tuple(k for k, v in kwargs.items() if k not in init and (  # rate_ctor
                k in fed or k.lower() in DROPOUT_NAMES) and type(v) in (int, float) and v == 0)
            self.ctor_left = {p.name: p.default for i, p in enumerate(params)
                              if p.default is not inspect.Parameter.empty and p.name not in kwargs
                              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                              and not (p.kind != p.KEYWORD_ONLY and i < len(args))}
        given = [*args, *kwargs.values()]
        before = CONFIG_FLAGS(given, init) if depth == 0 else {}   # a switch the build overwrites
        built = target(*args, **kwargs)
        remember(built, self.source_module(), sizes)   # sizes only a __main__ block set (main_sizes)
        if depth == 0:                     # switches its config objects hold (sandbox/ctor_modes.py)
            self.ctor_config_left = {**before, **CONFIG_FLAGS(given, init)}
            self.ctor_configs = (given, init)   # read again after calls
        return built

    def call_target(self, m):
        """What a finished candidate's forward is called through: a torch module itself (its hooks
        run), else its `forward` (a plain class, a NumPy module), else the object."""
        if self.framework == "torch" and (plain_torch_params.is_module(m) or self.hooks is not None):
            return m
        return getattr(m, "forward", None) or m

    def source_module(self):
        return self.loaded.module or inspect.getmodule(self.obj)

    def finish_module(self, m):
        if self.framework == "torch":
            torch = self.ops.torch
            if not isinstance(m, torch.nn.Module) and self.hooks is not None:
                return m                        # built by the adapter file: as it is
            if not isinstance(m, torch.nn.Module):      # its parameters under its attributes
                return plain_torch_params.finish(m, self._name(), self.opts.dtype, self.notes)
            m = m.to(getattr(torch, self.opts.dtype))
            m.eval()
            return m
        if callable(getattr(m, "eval", None)):
            try:
                m.eval()
            except TypeError:
                pass
        if hasattr(m, "training") and isinstance(getattr(m, "training"), bool):
            try:
                m.training = False
            except Exception:  # noqa: BLE001
                pass
        if parts := eval_parts(m):                                  # reading/numpy_parts_eval.py
            note = (f"parts in training mode put in inference mode, as torch's eval() does "
                    f"(the candidate has no eval() of its own): {', '.join(dict.fromkeys(parts))}")
            if note not in self.notes:
                self.notes.append(note)
        return m


AMBIGUOUS_SIZES = ("hidden_size", "hidden_dim", "hidden", "size", "dim", "d_hidden", "dim_hidden")


def _per_head_sizes(params, values: dict, hypers) -> list:
    """Required arguments with a size name any width could have (`hidden_size`, `d_hidden`) in a constructor
    that also takes `d_model` by that exact name and a head count, and either a feed-forward width
    by a name of its own or no feed-forward at all (multi-head attention): each head's width then,
    as in `MultiHeadAttention(hidden_size, num_heads, d_model)` projecting to hidden_size *
    num_heads. Only when nothing else names it (not an --init-kwargs one)."""
    if not {"d_model", "num_heads"} <= set(values) or not values.get("num_heads"):
        return []
    names = {p.name.lower(): p for p in params}
    heads = any(a.lower() in names for a in naming.HYPER_ALIASES["num_heads"])
    ff = "d_ff" not in hypers or any(naming.names_hyper("d_ff", n) or n in ("d_ff", "dim_feedforward")
                                     for n in names if n not in AMBIGUOUS_SIZES)
    if "d_model" not in names or not heads or not ff:
        return []
    return [p for n, p in names.items() if n in AMBIGUOUS_SIZES
            and p.default is inspect.Parameter.empty]
