"""Construction: build a candidate module (class or factory) from the component's hyperparameters."""
from __future__ import annotations

import inspect
from types import SimpleNamespace
from typing import Any

import numpy as np

from . import naming
from .naming import InterfaceError

CONFIG_ARG_NAMES = ("config", "cfg", "args", "hparams", "hp", "opt", "opts", "conf", "configs",
                    "params", "hyperparams", "settings", "model_config", "c")


class ConstructMixin:
    """Adapter methods that build the candidate (see adapters.Adapter)."""

    def _takes(self, hyper: str) -> bool:
        if self.mode not in ("class", "factory"):
            return False
        sig = naming.signature_of(self.obj.__init__ if self.mode == "class" else self.obj)
        names = {p.name.lower() for p in sig.parameters.values()} if sig else set()
        return bool(names & {a.lower() for a in naming.HYPER_ALIASES[hyper]})

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

    def _probe_hyper(self) -> dict:
        h = {"d_model": 4, "num_heads": 2, "d_ff": 3, "eps": 1e-5, "max_len": 16, "activation": "relu",
             "norm_first": False, "src_vocab": 5, "tgt_vocab": 5, "vocab_size": 5,
             "num_encoder_layers": 1, "num_decoder_layers": 1, "num_layers": 1, "pad_id": 0}
        h.update({k: v for k, v in self.opts.settings.items() if k in h})
        return h

    def _is_table(self, made) -> bool:
        return self.comp.name == "positional" and (self.ops.is_array(made)
                                                   or isinstance(made, np.ndarray))

    # -- construction -----------------------------------------------------------------------------
    def _config_objects(self, values: dict) -> list:
        """Config objects to try for constructors that take one: npformer's TransformerConfig (for
        code built on this project), then a namespace carrying every usual attribute name."""
        out = []
        try:
            from npformer.config import TransformerConfig
            out.append(TransformerConfig(
                d_model=values.get("d_model", 4), num_heads=values.get("num_heads", 1),
                d_ff=values.get("d_ff", 4), dropout=0.0, dtype=self.opts.dtype,
                activation=values.get("activation", "relu"), layer_norm_eps=values.get("eps", 1e-5),
                norm_first=values.get("norm_first", False)))
        except Exception:  # noqa: BLE001 - values outside what TransformerConfig accepts
            pass
        ns = SimpleNamespace()
        for h, v in values.items():
            for a in naming.HYPER_ALIASES.get(h, [h]):
                if not hasattr(ns, a):
                    setattr(ns, a, v)
        for a in naming.HYPER_ALIASES["dropout"]:
            setattr(ns, a, 0.0)
        ns.bias = True
        ns.batch_first = True
        out.append(ns)
        return out

    def _construct(self, hyper: dict):
        """Build the candidate module for these hyperparameters (class or factory)."""
        if self.mode == "instance":
            return self.obj
        values = self.comp.constructor_values(hyper) if self.comp.name != "model" else \
            {k: hyper[k] for k in self.comp.hypers if k in hyper}
        target = self.obj
        sig_fn = target.__init__ if isinstance(target, type) else target
        sig = naming.signature_of(sig_fn)
        params = [p for p in (sig.parameters.values() if sig else []) if p.name not in ("self", "cls")]
        required = [p for p in params if p.default is inspect.Parameter.empty
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if len(required) == 1 and required[0].name.lower() in CONFIG_ARG_NAMES:
            configs = self._config_objects(values)
            for i, cfg in enumerate(configs):
                try:
                    return target(cfg, **self.opts.init_kwargs)
                except (TypeError, ValueError, AttributeError):
                    if i == len(configs) - 1:
                        raise
        # activation: only when the candidate takes a string
        act = next((p for p in params if p.name.lower() in
                    [a.lower() for a in naming.HYPER_ALIASES["activation"]]), None)
        if act is None or not (isinstance(act.default, str) or act.default is inspect.Parameter.empty):
            values.pop("activation", None)
        sources = [(h, naming.HYPER_ALIASES.get(h, [h]), False) for h in self.comp.hypers if h in values]
        consts: dict[str, Any] = {"dropout": 0.0, "batch_first": True}
        if self.framework == "numpy" and any(p.name == "dtype" for p in params):
            consts["dtype"] = self.opts.dtype
        b = naming.bind(sig_fn, sources, constants=consts, what=f"{self._name()}(...)")
        init = dict(self.opts.init_kwargs)
        args, kwargs, by_name = [], {}, False
        for src in b.positional:
            arg = b.arg_of.get(src, "")
            if arg in init:
                by_name = True   # --init-kwargs replaces it: what follows goes by name
                continue
            if by_name and not arg.startswith(("*", "#")):
                kwargs[arg] = values[src]
            else:
                args.append(values[src])
        kwargs.update({a: values[src] for a, src in b.keywords.items()})
        kwargs.update(b.constants)
        kwargs.update(init)
        made = target(*args, **kwargs)
        if self.mode == "factory" and self._is_table(made):
            return made
        return made

    def _finish_module(self, m):
        if self.framework == "torch":
            torch = self.ops.torch
            if not isinstance(m, torch.nn.Module):
                raise InterfaceError(f"{self._name()}: built a {type(m).__name__}, expected a "
                                     f"torch.nn.Module")
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
        return m
