"""Adapters: call a candidate the way it wants to be called, and read back what the oracle compares.

Candidate styles understood:

  torch module      a torch.nn.Module class (or factory, or instance): constructed from the component's
                    hyperparameters (by argument names, see naming.HYPER_ALIASES), moved to the dtype,
                    put in eval mode, its parameters set to the drawn reference values by name;
                    forward by argument names; backward via autograd (out.backward(upstream)).
  torch function    f(q, k, v, mask=None) and the like; parameters, if any, are further arguments
                    (f(x, W1, b1, W2, b2)); gradients via autograd.
  numpy function    the same, on numpy arrays; forward only (no gradients to check).
  numpy pair        forward(...) -> (out, cache) with backward(dout, cache) -> gradients in the order
                    of the forward's array arguments (a tuple), or a dict keyed by argument name.
  numpy module      a class with forward(...) and backward(dout): npformer-like Parameters (.data,
                    .grad) via named_parameters(), a `params`/`grads` dict pair, or plain array
                    attributes with gradients in `d<name>` / `grad_<name>` / `<name>_grad` / grads[..].

Masks are handed over in the convention asked for (keep: nonzero = may attend; drop: nonzero = hidden;
additive: 0 / -inf floats), shaped (B, 1, Tq, Tk) (rank 4) or (B, Tq, Tk) (rank 3).

The Adapter is assembled from short files: options.py (Options), frameworks.py, slots.py (where a
candidate keeps each array), construct.py (building it), execute.py (calling it), recognise/ (the
interface recognisers) and adapter_hooks.py (--adapter FILE).
"""
from __future__ import annotations

import inspect

import numpy as np

from ..components import Q_ALIASES, X_ALIASES, Case, Component
from ..core.options import CandidateProblem, Options  # noqa: F401
from . import adapter_hooks, naming, recognise, stack_depths
from .construct import CONFIG_ARG_NAMES, ConstructMixin
from .execute import ExecuteMixin
from .findings import Findings
from .frameworks import NumpyOps, TorchOps, default_dtype, detect_framework, ops_for  # noqa: F401
from .loader import Loaded
from .naming import InterfaceError
from .recognise import hooks
from .run_state import Instance, Produced  # noqa: F401 (imported from here too)
from .signatures import PerCall
from .slots import NumpySlot, TorchSlot, candidate_arrays, convert_mask, numpy_space, read_param_grad, torch_space  # noqa: F401

ABSENT, CALL, FORWARD, INSTANCE, LAZY, OUTPUT, RESOLVE = (hooks(k) for k in (
    "absent", "call", "forward", "instance", "lazy", "output", "resolve"))


class Adapter(ConstructMixin, ExecuteMixin):
    """Prepared once per check; builds an Instance per example and runs it."""

    def __init__(self, loaded: Loaded, component: Component, opts: Options):
        self.loaded = loaded
        self.comp = component
        self.opts = opts
        self.framework = detect_framework(loaded, opts)
        self.ops = ops_for(self.framework, loaded, opts)     # NumPy's, torch's, or tensors (frameworks)
        self.obj = loaded.obj
        self.backward = loaded.backward
        self.hooks = adapter_hooks.load(opts.adapter_path, loaded.obj) if opts.adapter_path else None
        self.notes: list[str] = [adapter_hooks.note(self.hooks)] if self.hooks else []
        self.caps = Findings(fixed=dict(opts.settings))
        self.mode = self._mode()
        self.kind = self._kind_label()
        self._unclaimed_constant: set | None = None
        self.heads_merged_mask = False        # set by the merged_mask probe
        try:
            self._prepare_forward()
        except InterfaceError as e:    # a decoder-only layer checked as decoder_layer: say so
            raise FORWARD.decoder_only(self, e) from None
        self.probe = stack_depths.after_probe_build(self, self._probe_build())
        recognise.run_probes(self)

    # -- what is it? ------------------------------------------------------------------------------
    def _mode(self) -> str:
        obj = self.obj
        if self.hooks is not None and self.hooks.build is not None:
            return "class"
        if isinstance(obj, type):
            return "class"
        if not inspect.isroutine(obj) and hasattr(obj, "forward"):
            return "instance"
        if self.backward is not None:
            return "pair"
        if self.comp.tree is None and self.comp.name != "positional":
            return "function"
        # a function: functional (takes the inputs) or a factory (takes hyperparameters)?
        sig = naming.signature_of(obj)
        if sig is None:
            return "function"
        names = {p.name.lower() for p in sig.parameters.values()}
        input_names = {a.lower() for spec in self.comp.inputs for a in spec.aliases}
        if self.comp.name == "mha":
            input_names |= {a.lower() for a in X_ALIASES}
        if names & input_names:
            return "function"
        hyper_names = {a.lower() for h in self.comp.hypers for a in naming.HYPER_ALIASES.get(h, [])}
        if names & (hyper_names | set(CONFIG_ARG_NAMES)) or not names:
            return "factory"
        return "function"

    def _kind_label(self) -> str:
        return {"class": f"{self.framework} module class", "instance": f"{self.framework} module instance",
                "pair": "numpy forward/backward pair", "function": f"{self.framework} function",
                "factory": f"{self.framework} factory"}[self.mode]

    # -- forward signature, capabilities ----------------------------------------------------------
    def _forward_fn(self, obj=None):
        if self.mode == "class":
            return getattr(self.obj, "forward", None) or getattr(self.obj, "__call__")
        target = obj if obj is not None else self.obj
        if self.mode in ("instance", "factory") or obj is not None:
            return getattr(target, "forward", None) or target
        return target

    def _sources(self, self_attention: bool = False):
        if self_attention:
            ins = [("x", tuple(X_ALIASES) + tuple(Q_ALIASES), True)]
        else:
            ins = [(s.name, s.aliases, True) for s in self.comp.inputs]
        return ins + [(m.name, tuple(m.aliases) + (FORWARD.lens_names if i == 0 else ()), False)
                      for i, m in enumerate(self.comp.masks)]

    def _meanings(self, hyper: dict | None) -> dict:
        """Values for required forward arguments no input matched, by what their name means."""
        if self.comp.name == "sdpa":
            width = PerCall(lambda v: int(v["q"].shape[-1]), "the width of q")
        else:
            h = hyper or self._dummy_hyper()
            width = PerCall(lambda v, h=h: int(h["d_model"]) // max(int(h.get("num_heads", 1)), 1),
                            "d_model // num_heads")
        return {"dropout": None, "cache": None, "head_width": width, **FORWARD.mask_parts(self)}

    def _note_guessed(self, b: naming.Binding) -> naming.Binding:
        for arg, k in b.guessed.items():
            v = b.constants[arg]
            given = repr(v) if isinstance(v, PerCall) else "None (no " + k + ")"
            given = f"the head width ({v!r})" if k == "head_width" else given
            text = f"forward argument {arg!r} is required: passed {given}"
            if text not in self.notes:
                self.notes.append(text)
        return b

    def _bind_forward(self, fn, hyper: dict | None = None) -> naming.Binding:
        b = self._note_guessed(self._bind_forward_names(fn, hyper))
        if self.mode in ("function", "pair") and self.comp.tree is not None and b.params:
            b.nested = CALL.dict_trees(fn, b.params)
            if b.nested and CALL.dict_note(b.nested) not in self.notes:
                self.notes.append(CALL.dict_note(b.nested))
        return b

    def _bind_forward_names(self, fn, hyper: dict | None = None) -> naming.Binding:
        """Bind the forward; for mha fall back to self-attention forward(x, mask) when key/value have
        no place."""
        functional = self.mode in ("function", "pair")
        # a function of a component with weights takes them as further arguments (kept by name);
        # otherwise unknown required arguments take the inputs by position
        weights = functional and self.comp.tree is not None
        consts = FORWARD.switches(self, fn, dict(hyper or self._dummy_hyper()) if functional else None)
        what = f"{self._name()} forward"
        if self.hooks is not None and self.hooks.call is not None:
            return adapter_hooks.binding(self)
        arg = FORWARD.list_arg(naming.signature_of(fn), self.comp, fn)
        if arg is not None:
            b = naming.bind(fn, FORWARD.list_sources(arg, self.comp), constants=consts,
                            flags=naming.CALL_FLAGS, keep_params=weights,
                            fallback_positional=not weights, what=what,
                            meanings=self._meanings(hyper))
            if not self.caps.list_input:
                self.caps.list_input, self.list_order = True, FORWARD.list_order(fn, arg, self.comp)
                self.notes.append(f"forward takes its inputs as one list: {arg}=[" + ", ".join(
                    self.list_order or [s.name for s in self.comp.inputs]) + "]")
            return b
        how = dict(constants=consts, flags=naming.CALL_FLAGS, keep_params=weights, what=what,
                   fallback_positional=not weights, meanings=self._meanings(hyper))
        kv = FORWARD.shared_kv(self, fn, how) or \
            FORWARD.layer_role_args(self, fn, how)                  # forward(value, key, query, mask)
        try:
            return kv or naming.bind(fn, self._sources(self.caps.self_attention), **how)
        except InterfaceError:
            if self.comp.name != "mha" or self.caps.self_attention:
                raise
        b = naming.bind(fn, self._sources(True), **how)
        self.caps.self_attention = True
        return b

    def _required_masks(self, fn, b: naming.Binding) -> set:
        """Masks bound to a parameter without a default: given an all-attend mask (not None) on
        examples drawn without one, and the report says so."""
        sig = naming.signature_of(fn)
        if sig is None or (self.hooks is not None and self.hooks.call is not None):
            return set()
        out = set()
        for m in self.comp.masks:
            p = sig.parameters.get(b.arg_of.get(m.name, ""))
            if p is not None and p.default is p.empty and p.kind not in (p.VAR_POSITIONAL,
                                                                         p.VAR_KEYWORD):
                out.add(m.name)
                self.notes.append(f"forward argument {p.name!r} is required: examples without a "
                                  f"mask pass an all-attend mask in the chosen convention")
        return out

    def _dummy_hyper(self) -> dict:
        return {"d_model": 4, "num_heads": 2, "d_ff": 3, "eps": 1e-5, "max_len": 8}

    def _name(self) -> str:
        return self.loaded.name or getattr(self.obj, "__name__", "candidate")

    def _prepare_forward(self) -> None:
        fn = self._forward_fn()
        if self.mode == "factory":
            # construct once with small sizes to see the forward it returns
            inst = self.construct(self.probe_hyper())
            if self._is_table(inst):
                self.caps.table = True
                self.binding = naming.Binding()
                return
            fn = self._forward_fn(inst)
        if self.mode in ("function", "pair") and self.comp.name == "positional":
            sig = naming.signature_of(fn)
            names = {p.name.lower() for p in sig.parameters.values()} if sig else set()
            if not names & {a.lower() for a in X_ALIASES}:
                self.caps.table = True
        if self.caps.table or OUTPUT.no_input_table(self, fn):   # the table is the call's result
            self.binding = naming.Binding()
            return
        b = self._bind_forward(fn)
        self.binding = b
        self.required_masks = self._required_masks(fn, b)
        if self.comp.name == "mha" and not self.caps.self_attention and not self.caps.list_input \
                and not self.caps.shared_kv:
            bound = [s for s in ("query", "key", "value") if s not in b.unbound]
            if len(bound) < 3:
                raise InterfaceError(f"{self._name()} forward: expected query, key and value "
                                     f"arguments (or a single x for self-attention), bound only "
                                     f"{bound}")
        if self.caps.self_attention:
            self.notes.append("forward takes one input: checked as self-attention, "
                              "forward(x) = MultiHead(x, x, x), gradient of x = dq + dk + dv")
        lens = FORWARD.lens_detect(b, self.comp, self.caps)
        if lens:
            self.caps.valid_lens = lens
            for name in lens:
                self.caps.mask_kinds[name] = FORWARD.lens_kinds
                self.notes.append(f"mask {name!r} is taken as lengths ({b.arg_of[name]}, shape (B,)): "
                                  f"only key-padding masks drawn, causal draws skipped")
        for m in self.comp.masks:
            if m.name in b.unbound:
                self.caps.mask_kinds[m.name] = ("none",)
                self.notes.append(f"forward has no {m.name!r} argument: drew no {m.name}")
        if self.opts.mask_rank == 3:
            for m in self.comp.masks:
                kinds = self.caps.mask_kinds.get(m.name, m.kinds)
                self.caps.mask_kinds[m.name] = tuple(k for k in kinds if k != "random")
        if self.mode in ("function", "pair") and b.params and self.comp.tree is None:
            raise InterfaceError(f"{self._name()}: forward arguments {b.params} are required but "
                                 f"the oracle has nothing to pass for them")
        if self.comp.name == "model":
            self.caps.one_vocab = not self._takes_two_vocabs()
            self.caps.one_layer_count = not stack_depths.takes_two_depths(self)
            self.notes[:] = [n for n in self.notes if "drew no" not in n]
            if any(m.name in b.unbound for m in self.comp.masks):
                self.notes.append("forward takes no masks: the candidate builds its own from the "
                                  "padding id (pad_id, default 0)")

    def instantiate(self, case: Case) -> Instance:
        """Construct (or reuse) the candidate and map the reference parameters onto it."""
        hyper = dict(case.hyper)
        if self.comp.name == "sdpa":          # head widths of this example (a temperature, a d_k)
            hyper["d_k"], hyper["d_v"] = case.inputs["q"].shape[-1], case.inputs["v"].shape[-1]
        if self.mode in ("function", "pair"):
            return self._instantiate_function(case)
        made = self.construct(hyper)
        if self.caps.table:
            return Instance(call=None, obj=made, entries={}, slots={}, binding=naming.Binding(),
                            table=True)
        m = self.finish_module(made)
        fn = self.call_target(m)
        binding = self.binding if self.caps.table_no_input else self._bind_forward(getattr(m, "forward", m), hyper)
        if self.hooks is not None and self.hooks.call is not None:
            fn = adapter_hooks.forward(self.hooks, m)
        if self.hooks is not None and self.hooks.weights is not None:
            entries, slots = adapter_hooks.entries(self, m, case)
            space, unclaimed = None, []
        else:
            space, slots = self._space(m, binding, case)
            entries, unclaimed = self._resolve(space, case, m)
        inst = Instance(call=fn, obj=m, entries=entries, slots=slots, binding=binding, unclaimed=unclaimed)
        if recognise.reads_x_at_w(self, inst, case):
            return self._switch_layout(case)
        if INSTANCE.ffn_layout_applies(self, inst, case) and INSTANCE.ffn_layout_probe(self, inst, case):
            return INSTANCE.ffn_layout_switch(self, case)
        if unclaimed:                  # frozen parameters, then a learned positional table
            unclaimed = OUTPUT.learned_table(self, OUTPUT.frozen(self, unclaimed, slots), slots, space, case)
        if unclaimed and self.framework == "numpy" and self.comp.tree is not None and \
                not self.opts.allow_unmapped:
            self._numpy_unclaimed(unclaimed, slots, space, case)
        if unclaimed and self.framework == "torch" and not self.opts.allow_unmapped:
            raise InterfaceError(RESOLVE.unclaimed_message(self.comp.name, unclaimed, space.shapes) or
                f"the candidate has parameters the reference has no counterpart for: "
                f"{', '.join(f'{n} {tuple(space.shapes[n])}' for n in unclaimed)}. Mapped so far: "
                + "; ".join(e.describe() for e in entries.values())
                + ". Name them with --map, or pass --allow-unmapped to leave them as constructed."
                + self._hint_unclaimed(unclaimed))
        if self.mode == "instance":
            for s in slots.values():
                s.clear_grad()
        return inst

    def _hint_unclaimed(self, unclaimed) -> str:
        if self.comp.name == "model" and any("norm" in n for n in unclaimed):
            return " (A final LayerNorm after each stack? try --set final_norm=true.)"
        return ""

    def _space(self, m, binding, case: Case):
        """The candidate's parameters (materialising lazy ones with a first call)."""
        if self.framework == "torch":
            if self.comp.tree is None or not LAZY.pending(m, "torch", ()):
                return torch_space(m)
        else:
            space, slots = numpy_space(m)
            if self.comp.tree is None or not LAZY.pending(m, "numpy", space.names):
                return space, slots
        LAZY.first_call(self, m, binding, case)
        if self.framework == "torch":
            m.to(getattr(self.ops.torch, self.opts.dtype))
            return torch_space(m)
        space, slots = numpy_space(m)
        names, slots = LAZY.drop_activations(space, slots, case)
        return space.made_by(names), slots

    def _numpy_unclaimed(self, unclaimed, slots, space, case: Case) -> None:
        """Arrays of a NumPy candidate the reference has no counterpart for: fine when they are the
        same in every freshly built instance (constants); an interface error when randomly
        initialised (they would change the output between instances and call it nondeterministic)."""
        if self._unclaimed_constant is None:
            twin = self.finish_module(self.construct(dict(case.hyper)))
            binding = self._bind_forward(getattr(twin, "forward", twin))
            _, twin_slots = self._space(twin, binding, case)
            same = set()
            for n in unclaimed:
                if n in twin_slots:
                    a, b = np.asarray(slots[n].array()), np.asarray(twin_slots[n].array())
                    if a.shape == b.shape and np.array_equal(a, b, equal_nan=True):
                        same.add(n)
            self._unclaimed_constant = same
            if same:
                self.notes.append("arrays the reference has no counterpart for, left as "
                                  "constructed (the same in every instance): " + ", ".join(sorted(same)))
        random = [n for n in unclaimed if n not in self._unclaimed_constant]
        if random:
            raise InterfaceError(
                "the candidate has randomly initialised arrays the reference has no counterpart "
                "for: " + ", ".join(f"{n} {tuple(space.shapes[n])}" for n in random)
                + ". Name them with --map REF=CAND (or --allow-unmapped to leave them as built).")

    def _resolve(self, space: naming.Space, case: Case, module=None):
        if self.comp.tree is None:
            return {}, list(space.names)
        ref_shapes = {n: tuple(v.shape) for n, v in case.params.items()}

        def optional(ref: str, entries: dict):
            return ABSENT.reason(self, module, ref, ref_shapes[ref], entries)

        return naming.resolve(self.comp.tree, space, ref_shapes, case.hyper,
                              name_map=self.opts.name_map, layout=self.opts.weight_layout,
                              optional=optional, hints=getattr(self, "head_axes", None),
                              class_layout=getattr(self, "class_layout", None))

    def _instantiate_function(self, case: Case) -> Instance:
        fn = self.obj
        if self.caps.table:
            return Instance(call=fn, obj=None, entries={}, slots={}, binding=naming.Binding(),
                            table=True)
        binding = self._bind_forward(fn, case.hyper)
        entries: dict[str, naming.Entry] = {}
        if self.comp.tree is not None:
            names = CALL.dict_leaves(list(binding.params), binding.nested)
            if len(binding.params) == 1 and list(binding.params) == list(binding.nested):
                binding.root = binding.params[0]        # one dict holds every weight: its keys
                names = [n.split(".", 1)[1] for n in names]   # are the names (params["fc1"]["w"])
            space = naming.Space(names, {n: None for n in names}, {n: True for n in names})
            entries, unclaimed = self._resolve(space, case)
            if unclaimed:
                raise InterfaceError(f"{self._name()}: cannot tell what to pass for arguments "
                                     f"{unclaimed}; name them with --map REF=ARG")
        if self.hooks is not None and self.hooks.call is not None:
            fn = adapter_hooks.forward(self.hooks, fn)
        inst = Instance(call=fn, obj=None, entries=entries, slots={}, binding=binding)
        if recognise.reads_x_at_w(self, inst, case):
            return self._switch_layout(case)
        return inst

    def _switch_layout(self, case: Case) -> Instance:
        self.opts.weight_layout = "in_out"
        self.notes.append("the candidate computes x @ W: a probe (W_q = W_k = 0, W_v and W_o "
                          "random) matched (in, out) square matrices, not (out, in); read as "
                          "--weight-layout in_out (gradients too)")
        return self.instantiate(case)
