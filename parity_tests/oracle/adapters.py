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
"""
from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from . import naming
from .components import REF, Case, Component, X_ALIASES, Q_ALIASES
from .loader import Loaded
from .naming import InterfaceError


class CandidateProblem(Exception):
    """Something the candidate did that has a verdict of its own (mutation, wrong type...)."""

    def __init__(self, verdict: str, message: str, quantity: str | None = None):
        super().__init__(message)
        self.verdict = verdict
        self.message = message
        self.quantity = quantity


@dataclass
class Options:
    """Everything that changes how a candidate is called or judged (the CLI's flags)."""

    mask_convention: str = "keep"       # keep | drop | additive
    mask_dtype: str = "bool"            # bool | int | float
    mask_rank: int = 4                  # 4: (B, 1, Tq, Tk); 3: (B, Tq, Tk)
    strict: bool = False                # include fully masked query rows, expect zeros
    examples: int = 25
    seed: int = 0
    dtype: str = "float64"
    timeout: float = 20.0
    framework: str = "auto"             # auto | torch | numpy
    weight_layout: str = "out_in"       # out_in | in_out, for square bare matrices
    name_map: dict = field(default_factory=dict)
    init_kwargs: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)   # --set: fixed hyperparameters / bounds
    allow_unmapped: bool = False
    check_dtype: bool = True

    def validate(self) -> None:
        def need(ok, what, expected, got):
            if not ok:
                raise ValueError(f"{what}: expected {expected}, got {got!r}")
        need(self.mask_convention in ("keep", "drop", "additive"), "--mask-convention",
             "keep, drop or additive", self.mask_convention)
        need(self.mask_dtype in ("bool", "int", "float"), "--mask-dtype", "bool, int or float",
             self.mask_dtype)
        need(self.mask_rank in (3, 4), "--mask-rank", "3 or 4", self.mask_rank)
        need(self.dtype in ("float32", "float64"), "--dtype", "float32 or float64", self.dtype)
        need(self.framework in ("auto", "torch", "numpy"), "--framework", "auto, torch or numpy",
             self.framework)
        need(self.weight_layout in ("out_in", "in_out"), "--weight-layout", "out_in or in_out",
             self.weight_layout)
        need(isinstance(self.examples, int) and self.examples >= 1, "--examples", "a positive int",
             self.examples)
        need(self.timeout is None or self.timeout > 0, "--timeout", "a positive number of seconds",
             self.timeout)


# ------------------------------------------------------------------------------------------------
# frameworks
# ------------------------------------------------------------------------------------------------
class NumpyOps:
    name = "numpy"

    def is_array(self, x) -> bool:
        return isinstance(x, np.ndarray)

    def to_np(self, x) -> np.ndarray:
        if hasattr(x, "detach") and hasattr(x, "cpu"):
            return x.detach().cpu().numpy().copy()
        return np.array(x, copy=True)

    def leaf(self, a: np.ndarray, grad: bool):
        return a.copy()

    def feed(self, leaf):
        return leaf.copy()

    def from_np(self, a: np.ndarray):
        return a.copy()

    def dtype_name(self, x) -> str:
        return str(getattr(x, "dtype", type(x).__name__)).replace("torch.", "")


class TorchOps(NumpyOps):
    name = "torch"

    def __init__(self) -> None:
        import torch
        self.torch = torch

    def is_array(self, x) -> bool:
        return isinstance(x, self.torch.Tensor)

    def leaf(self, a: np.ndarray, grad: bool):
        t = self.torch.from_numpy(np.ascontiguousarray(a).copy())
        if grad:
            t.requires_grad_(True)
        return t

    def feed(self, leaf):
        # a non-leaf copy: the candidate may even modify it in place (the oracle notices), and
        # gradients still reach the leaf
        return leaf.clone()

    def from_np(self, a: np.ndarray):
        return self.torch.from_numpy(np.ascontiguousarray(a).copy())


def torch_loaded() -> Any:
    return sys.modules.get("torch")


def detect_framework(loaded: Loaded, opts: Options) -> str:
    if opts.framework != "auto":
        return opts.framework
    if loaded.backward is not None:
        return "numpy"
    torch = torch_loaded()
    obj = loaded.obj
    if torch is not None:
        if isinstance(obj, torch.nn.Module) or (isinstance(obj, type)
                                                and issubclass(obj, torch.nn.Module)):
            return "torch"
    mod = loaded.module or inspect.getmodule(obj)
    g = vars(mod) if mod is not None else {}
    verdict = _framework_of_names(_names_used(obj, g), g)
    if verdict is None:   # the code itself names neither: go by what the module imports
        verdict = _framework_of_names(set(g), g) or "numpy"
    return verdict


def _framework_of_names(names: set[str], g: dict) -> str | None:
    found = set()
    for name in names:
        v = g.get(name)
        modname = getattr(v, "__name__", "") if inspect.ismodule(v) else getattr(v, "__module__", "")
        if not isinstance(modname, str):
            continue
        if modname == "torch" or modname.startswith("torch."):
            found.add("torch")
        elif modname == "numpy" or modname.startswith("numpy."):
            found.add("numpy")
    if "torch" in found:
        return "torch"
    return "numpy" if found else None


def _names_used(obj, g: dict | None = None, depth: int = 0) -> set[str]:
    """Global names the code of a function (or a class's methods) refers to, following functions
    and classes of the same module it calls (a helper that does the real work)."""
    codes = []
    if inspect.isclass(obj):
        for klass in obj.__mro__:
            if klass.__module__ in ("builtins",):
                continue
            for v in vars(klass).values():
                f = getattr(v, "__func__", v)
                if inspect.isfunction(f):
                    codes.append(f.__code__)
    elif inspect.isfunction(obj):
        codes.append(obj.__code__)
    names: set[str] = set()
    while codes:
        c = codes.pop()
        names.update(c.co_names)
        codes.extend(k for k in c.co_consts if inspect.iscode(k))
    if g is not None and depth < 3:
        home = getattr(obj, "__module__", None)
        for n in list(names):
            v = g.get(n)
            if v is not obj and (inspect.isfunction(v) or inspect.isclass(v)) and \
                    getattr(v, "__module__", None) == home:
                names |= _names_used(v, g, depth + 1)
    return names


# ------------------------------------------------------------------------------------------------
# parameter slots
# ------------------------------------------------------------------------------------------------
class TorchSlot:
    def __init__(self, param):
        self.p = param

    @property
    def shape(self):
        return tuple(self.p.shape)

    def set(self, arr: np.ndarray) -> None:
        import torch
        with torch.no_grad():
            self.p.copy_(torch.from_numpy(np.ascontiguousarray(arr)).to(self.p.dtype))

    def clear_grad(self) -> None:
        self.p.grad = None

    def grad(self):
        return None if self.p.grad is None else self.p.grad.detach().cpu().numpy().copy()


GRAD_PATTERNS = ("d{}", "grad_{}", "{}_grad", "d_{}", "grad{}", "{}grad", "delta_{}")


class NumpySlot:
    """An array held by a numpy candidate: container[key] or getattr(container, key); the value may
    be a Parameter-like object with .data and .grad."""

    def __init__(self, container, key, owner=None, grads_key=None):
        self.container, self.key, self.owner = container, key, owner
        self.grads_key = grads_key if grads_key is not None else key

    def _get(self):
        if isinstance(self.container, (dict, list)):
            return self.container[self.key]
        return getattr(self.container, self.key)

    def _array(self) -> np.ndarray:
        v = self._get()
        return v.data if isinstance(getattr(v, "data", None), np.ndarray) and not isinstance(
            v, np.ndarray) else v

    @property
    def shape(self):
        return tuple(np.shape(self._array()))

    def set(self, arr: np.ndarray) -> None:
        v = self._get()
        cur = self._array()
        if isinstance(cur, np.ndarray) and cur.shape == arr.shape and cur.dtype == arr.dtype \
                and cur.flags.writeable:
            cur[...] = arr
        elif v is not cur:                        # Parameter-like: replace its data
            v.data = arr.copy()
            if isinstance(getattr(v, "grad", None), np.ndarray):
                v.grad = np.zeros_like(v.data)
        elif isinstance(self.container, (dict, list)):
            self.container[self.key] = arr.copy()
        else:
            setattr(self.container, self.key, arr.copy())

    def clear_grad(self) -> None:
        v = self._get()
        if not isinstance(v, np.ndarray) and isinstance(getattr(v, "grad", None), np.ndarray):
            v.grad[...] = 0

    def grad(self):
        v = self._get()
        if not isinstance(v, np.ndarray) and isinstance(getattr(v, "grad", None), np.ndarray):
            return v.grad.copy()
        key = str(self.grads_key)
        holders = [self.owner, self.container] if self.owner is not None else [self.container]
        for h in holders:
            if h is None or isinstance(h, (list,)):
                continue
            if isinstance(h, dict):
                continue
            for pat in GRAD_PATTERNS:
                g = getattr(h, pat.format(key), None)
                if isinstance(g, np.ndarray):
                    return g.copy()
            for dname in ("grads", "gradients", "grad", "dparams", "param_grads"):
                d = getattr(h, dname, None)
                if isinstance(d, dict):
                    for k in (key, "d" + key, "d_" + key, "grad_" + key):
                        if isinstance(d.get(k), np.ndarray):
                            return d[k].copy()
        return None


_SKIP_ATTRS = {"training", "cache", "caches", "grads", "gradients", "dparams", "param_grads"}


def _looks_like_grad(name: str, siblings) -> bool:
    for pat in GRAD_PATTERNS:
        pre, _, post = pat.partition("{}")
        if name.startswith(pre) and name.endswith(post) and len(name) > len(pre) + len(post):
            base = name[len(pre): len(name) - len(post)]
            if base in siblings:
                return True
    return False


def numpy_space(obj) -> tuple[naming.Space, dict[str, NumpySlot]]:
    """Every float array a numpy candidate holds, by dotted attribute path, in definition order."""
    slots: dict[str, NumpySlot] = {}
    if callable(getattr(obj, "named_parameters", None)):
        try:
            items = list(obj.named_parameters())
        except Exception:  # noqa: BLE001 - an unusual named_parameters: fall back to walking
            items = []
        for name, p in items:
            if isinstance(getattr(p, "data", None), np.ndarray) or isinstance(p, np.ndarray):
                slots[name] = _ParamRef(p)
        if slots:
            return _space(slots, bare=True), slots
    params = getattr(obj, "params", None)
    if isinstance(params, dict) and params and all(isinstance(v, np.ndarray) for v in params.values()):
        for k, v in params.items():
            slots[str(k)] = NumpySlot(params, k, owner=obj)
        return _space(slots, bare=True), slots

    seen: set[int] = set()

    def walk(o, prefix: str, depth: int) -> None:
        if id(o) in seen or depth > 6:
            return
        seen.add(id(o))
        try:
            items = list(vars(o).items())
        except TypeError:
            return
        names = {k for k, _ in items}
        for k, v in items:
            if k.startswith("_") or k in _SKIP_ATTRS or _looks_like_grad(k, names):
                continue
            name = f"{prefix}{k}"
            if isinstance(v, np.ndarray):
                if v.dtype.kind == "f" and v.ndim >= 1:
                    slots[name] = NumpySlot(o, k)
            elif isinstance(getattr(v, "data", None), np.ndarray) and hasattr(v, "grad"):
                slots[name] = NumpySlot(o, k)
            elif isinstance(v, (list, tuple)):
                for i, item in enumerate(v):
                    if isinstance(item, np.ndarray) and isinstance(v, list):
                        if item.dtype.kind == "f" and item.ndim >= 1:
                            slots[f"{name}.{i}"] = NumpySlot(v, i, owner=o, grads_key=f"{k}{i}")
                    elif _is_object(item):
                        walk(item, f"{name}.{i}.", depth + 1)
            elif isinstance(v, dict):
                for kk, item in v.items():
                    if isinstance(item, np.ndarray) and item.dtype.kind == "f" and item.ndim >= 1:
                        slots[f"{name}.{kk}"] = NumpySlot(v, kk, owner=o, grads_key=str(kk))
                    elif _is_object(item):
                        walk(item, f"{name}.{kk}.", depth + 1)
            elif _is_object(v):
                walk(v, f"{name}.", depth + 1)

    walk(obj, "", 0)
    return _space(slots, bare=True), slots


class _ParamRef(NumpySlot):
    """A Parameter-like object (.data, .grad) reached through named_parameters()."""

    def __init__(self, p):
        super().__init__({"p": p}, "p")


def _is_object(v) -> bool:
    return (hasattr(v, "__dict__") and not inspect.ismodule(v) and not inspect.isclass(v)
            and not inspect.isroutine(v) and not isinstance(v, (np.ndarray, np.generic)))


def _space(slots: dict, bare) -> naming.Space:
    names = list(slots)
    shapes = {n: slots[n].shape for n in names}
    b = bare if isinstance(bare, dict) else {n: bool(bare) for n in names}
    return naming.Space(names, shapes, b)


def torch_space(module) -> tuple[naming.Space, dict[str, TorchSlot]]:
    slots, bare = {}, {}
    for name, p in module.named_parameters():
        slots[name] = TorchSlot(p)
        owner = module.get_submodule(name.rsplit(".", 1)[0]) if "." in name else module
        bare[name] = not type(owner).__module__.startswith("torch.nn")
    return _space(slots, bare), slots


# ------------------------------------------------------------------------------------------------
# values for the candidate
# ------------------------------------------------------------------------------------------------
def candidate_arrays(entries: dict[str, naming.Entry], params: dict[str, np.ndarray],
                     dtype: str) -> dict[str, np.ndarray]:
    """The array each candidate parameter must hold (packed matrices assembled, layouts applied)."""
    out: dict[str, np.ndarray] = {}
    packed: dict[str, list] = {}
    for ref, e in entries.items():
        if e.cand is None:
            continue
        v = params[ref]
        if e.rows is not None:
            packed.setdefault(e.cand, []).append((e.rows, v, e.transpose))
        else:
            out[e.cand] = (v.T if e.transpose else v).astype(dtype)
    for cand, parts in packed.items():
        n = max(r[1] for r, _, _ in parts)
        first = parts[0][1]
        full = np.zeros((n,) + first.shape[1:], dtype=np.float64)
        for (a, b), v, _ in parts:
            full[a:b] = v
        out[cand] = (full.T if parts[0][2] else full).astype(dtype)
    return out


def read_param_grad(entry: naming.Entry, g: np.ndarray | None) -> np.ndarray | None:
    if g is None:
        return None
    if entry.transpose:
        g = g.T
    if entry.rows is not None:
        g = g[entry.rows[0]: entry.rows[1]]
    return g


def convert_mask(keep: np.ndarray | None, opts: Options, dtype: str):
    """keep-mask (B, Hm, Tq, Tk) bool -> the candidate's convention, rank and dtype (numpy)."""
    if keep is None:
        return None
    m = keep
    if opts.mask_rank == 3:
        if m.shape[1] != 1:
            raise InterfaceError("--mask-rank 3 cannot express a per-head mask")
        m = m[:, 0]
    if opts.mask_convention == "additive":
        return np.where(m, 0.0, -np.inf).astype(dtype)
    arr = m if opts.mask_convention == "keep" else ~m
    if opts.mask_dtype == "int":
        return arr.astype(np.int64)
    if opts.mask_dtype == "float":
        return arr.astype(dtype)
    return arr.copy()


# ------------------------------------------------------------------------------------------------
# the adapter
# ------------------------------------------------------------------------------------------------
CONFIG_ARG_NAMES = ("config", "cfg", "args", "hparams", "hp", "opt", "opts", "conf", "configs",
                    "params", "hyperparams", "settings", "model_config", "c")


@dataclass
class Instance:
    """One constructed candidate for one example."""

    call: Any                                  # what to call for forward
    obj: Any                                   # the module object (None for functions)
    entries: dict[str, naming.Entry]
    slots: dict[str, Any]
    binding: naming.Binding
    unclaimed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    table: bool = False                        # positional table function


@dataclass
class Produced:
    values: dict[str, np.ndarray] = field(default_factory=dict)
    dtypes: dict[str, str] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)     # per-quantity remarks (e.g. no grad)
    weights_averaged: bool = False


class Adapter:
    """Prepared once per check; builds an Instance per example and runs it."""

    def __init__(self, loaded: Loaded, component: Component, opts: Options):
        self.loaded = loaded
        self.comp = component
        self.opts = opts
        self.framework = detect_framework(loaded, opts)
        self.ops = TorchOps() if self.framework == "torch" else NumpyOps()
        self.obj = loaded.obj
        self.backward = loaded.backward
        self.notes: list[str] = []
        self.caps: dict[str, Any] = {"fixed": dict(opts.settings), "mask_kinds": {}}
        self.mode = self._mode()
        self.kind = self._kind_label()
        self._prepare_forward()

    # -- what is it? ------------------------------------------------------------------------------
    def _mode(self) -> str:
        obj = self.obj
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
        return ins + [(m.name, m.aliases, False) for m in self.comp.masks]

    def _bind_forward(self, fn, hyper: dict | None = None) -> naming.Binding:
        """Bind the forward; for mha fall back to self-attention forward(x, mask) when key/value have
        no place."""
        functional = self.mode in ("function", "pair")
        # a function of a component with weights takes them as further arguments (kept by name);
        # otherwise unknown required arguments take the inputs by position
        weights = functional and self.comp.tree is not None
        consts = dict(hyper or self._dummy_hyper()) if functional else None
        what = f"{self._name()} forward"
        try:
            return naming.bind(fn, self._sources(self.caps.get("self_attention", False)),
                               constants=consts, flags=naming.CALL_FLAGS, keep_params=weights,
                               fallback_positional=not weights, what=what)
        except InterfaceError:
            if self.comp.name != "mha" or self.caps.get("self_attention"):
                raise
        b = naming.bind(fn, self._sources(True), constants=consts, flags=naming.CALL_FLAGS,
                        keep_params=weights, fallback_positional=not weights, what=what)
        self.caps["self_attention"] = True
        return b

    def _dummy_hyper(self) -> dict:
        return {"d_model": 4, "num_heads": 2, "d_ff": 3, "eps": 1e-5, "max_len": 8}

    def _name(self) -> str:
        return self.loaded.name or getattr(self.obj, "__name__", "candidate")

    def _prepare_forward(self) -> None:
        fn = self._forward_fn()
        if self.mode == "factory":
            # construct once with small sizes to see the forward it returns
            inst = self._construct(self._probe_hyper())
            if self._is_table(inst):
                self.caps["table"] = True
                self.binding = naming.Binding()
                return
            fn = self._forward_fn(inst)
        if self.mode in ("function", "pair") and self.comp.name == "positional":
            sig = naming.signature_of(fn)
            names = {p.name.lower() for p in sig.parameters.values()} if sig else set()
            if not names & {a.lower() for a in X_ALIASES}:
                self.caps["table"] = True
        if self.caps.get("table"):
            self.binding = naming.Binding()
            return
        b = self._bind_forward(fn)
        self.binding = b
        if self.comp.name == "mha" and not self.caps.get("self_attention"):
            bound = [s for s in ("query", "key", "value") if s not in b.unbound]
            if len(bound) < 3:
                raise InterfaceError(f"{self._name()} forward: expected query, key and value "
                                     f"arguments (or a single x for self-attention), bound only "
                                     f"{bound}")
        if self.caps.get("self_attention"):
            self.notes.append("forward takes one input: checked as self-attention, "
                              "forward(x) = MultiHead(x, x, x), gradient of x = dq + dk + dv")
        for m in self.comp.masks:
            if m.name in b.unbound:
                self.caps["mask_kinds"][m.name] = ("none",)
                self.notes.append(f"forward has no {m.name!r} argument: drew no {m.name}")
        if self.opts.mask_rank == 3:
            for m in self.comp.masks:
                kinds = self.caps["mask_kinds"].get(m.name, m.kinds)
                self.caps["mask_kinds"][m.name] = tuple(k for k in kinds if k != "random")
        if self.mode in ("function", "pair") and b.params and self.comp.tree is None:
            raise InterfaceError(f"{self._name()}: forward arguments {b.params} are required but "
                                 f"the oracle has nothing to pass for them")
        if self.comp.name == "model":
            self.caps["one_vocab"] = not self._takes_two_vocabs()
            self.caps["one_layer_count"] = not self._takes("num_encoder_layers")
            self.notes[:] = [n for n in self.notes if "drew no" not in n]
            if any(m.name in b.unbound for m in self.comp.masks):
                self.notes.append("forward takes no masks: the candidate builds its own from the "
                                  "padding id (pad_id, default 0)")

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

    def instantiate(self, case: Case) -> Instance:
        """Construct (or reuse) the candidate and map the reference parameters onto it."""
        hyper = dict(case.hyper)
        if self.mode in ("function", "pair"):
            return self._instantiate_function(case)
        made = self._construct(hyper)
        if self.caps.get("table"):
            return Instance(call=None, obj=made, entries={}, slots={}, binding=naming.Binding(),
                            table=True)
        m = self._finish_module(made)
        fn = m if (self.framework == "torch") else (getattr(m, "forward", None) or m)
        binding = self._bind_forward(getattr(m, "forward", m))
        space, slots = torch_space(m) if self.framework == "torch" else numpy_space(m)
        entries, unclaimed = self._resolve(space, case)
        inst = Instance(call=fn, obj=m, entries=entries, slots=slots, binding=binding,
                        unclaimed=unclaimed)
        if unclaimed and self.framework == "torch" and not self.opts.allow_unmapped:
            raise InterfaceError(
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

    def _resolve(self, space: naming.Space, case: Case):
        if self.comp.tree is None:
            return {}, list(space.names)
        ref_shapes = {n: tuple(v.shape) for n, v in case.params.items()}

        def optional(ref: str) -> bool:
            leaf = ref.rsplit(".", 1)[-1]
            owner = ref.rsplit(".", 1)[0] if "." in ref else ""
            return leaf == "bias" or (len(ref_shapes[ref]) == 1 and ("norm" in owner or owner == ""))

        return naming.resolve(self.comp.tree, space, ref_shapes, case.hyper,
                              name_map=self.opts.name_map, layout=self.opts.weight_layout,
                              optional=optional)

    def _instantiate_function(self, case: Case) -> Instance:
        fn = self.obj
        if self.caps.get("table"):
            return Instance(call=fn, obj=None, entries={}, slots={}, binding=naming.Binding(),
                            table=True)
        binding = self._bind_forward(fn, case.hyper)
        entries: dict[str, naming.Entry] = {}
        if self.comp.tree is not None:
            names = list(binding.params)
            space = naming.Space(names, {n: None for n in names}, {n: True for n in names})
            entries, unclaimed = self._resolve(space, case)
            if unclaimed:
                raise InterfaceError(f"{self._name()}: cannot tell what to pass for arguments "
                                     f"{unclaimed}; name them with --map REF=ARG")
        return Instance(call=fn, obj=None, entries=entries, slots={}, binding=binding)

    # -- running ----------------------------------------------------------------------------------
    def execute(self, inst: Instance, case: Case) -> Produced:
        """Forward (and backward where the candidate has one) on the case's inputs."""
        if inst.table:
            return self._execute_table(inst, case)
        ops, dtype = self.ops, self.opts.dtype
        torch_mode = self.framework == "torch"
        produced = Produced()
        cand_vals = candidate_arrays(inst.entries, case.params, dtype)
        # parameters: written into modules, or passed as arguments to functions
        param_leaves: dict[str, Any] = {}
        if inst.obj is not None:
            for cname, arr in cand_vals.items():
                inst.slots[cname].set(arr)
        else:
            for cname, arr in cand_vals.items():
                param_leaves[cname] = ops.leaf(arr, grad=torch_mode)
        # inputs
        leaves, feeds, fed_np = {}, {}, {}
        for name, a in case.inputs.items():
            is_float = a.dtype == REF
            arr = a.astype(dtype) if is_float else a
            leaves[name] = ops.leaf(arr, grad=torch_mode and is_float)
            feeds[name] = ops.feed(leaves[name])
            fed_np[name] = arr.copy()
        masks_np = {n: convert_mask(k, self.opts, dtype) for n, k in case.masks.items()}
        mask_feeds = {n: (None if v is None else ops.from_np(v)) for n, v in masks_np.items()}
        values = {**feeds, **mask_feeds}
        if case.self_attention:
            values["x"] = feeds["x"]
        # call
        extra = {}
        for cname, leaf in param_leaves.items():
            extra[cname] = leaf
        ret = inst.binding.call(inst.call, values, extra)
        # inputs must come back untouched
        for name, f in feeds.items():
            now = ops.to_np(f)
            if now.shape != fed_np[name].shape or not np.array_equal(now, fed_np[name], equal_nan=True):
                arg = inst.binding.arg_of.get(name, name)
                raise CandidateProblem("mutates_input", f"the candidate modified its input {arg!r} "
                                       f"({name}) in place; a forward must leave its inputs as "
                                       f"they were")
        for name, f in mask_feeds.items():
            if f is None:
                continue
            now = ops.to_np(f)
            if now.shape != masks_np[name].shape or not np.array_equal(now, masks_np[name]):
                arg = inst.binding.arg_of.get(name, name)
                raise CandidateProblem("mutates_input", f"the candidate modified the mask argument "
                                       f"{arg!r} in place")
        if self.mode == "pair":
            if not (isinstance(ret, tuple) and len(ret) == 2):
                raise CandidateProblem("wrong_type", f"the forward of a forward/backward pair must "
                                       f"return (out, cache), got {type(ret).__name__}"
                                       + (f" of length {len(ret)}" if isinstance(ret, tuple) else ""))
            ret, cache = ret
        out, weights = self._parse_output(ret, case, produced)
        produced.values["output"] = ops.to_np(out)
        produced.dtypes["output"] = ops.dtype_name(out)
        if weights is not None:
            produced.values["attention_weights"] = ops.to_np(weights)
        if tuple(produced.values["output"].shape) != tuple(case.out_shape):
            return produced  # the runner reports the shape; no backward on a wrong shape
        # backward
        if torch_mode:
            self._torch_backward(out, case, leaves, param_leaves, inst, produced)
        elif self.mode == "pair":
            self._pair_backward(cache, case, inst, produced)
        elif inst.obj is not None and callable(getattr(inst.obj, "backward", None)):
            self._module_backward(case, inst, produced)
        else:
            reason = "the candidate is a forward-only NumPy function (give a forward/backward pair " \
                     "to have gradients checked)"
            self._mark_missing(case, produced, reason)
        return produced

    def _mark_missing(self, case: Case, produced: Produced, reason: str) -> None:
        for q in self.comp.quantities(case):
            if q.kind in ("input_grad", "param_grad"):
                produced.missing.setdefault(q.key, reason)

    def _parse_output(self, ret, case: Case, produced: Produced):
        ops = self.ops
        is_arr = lambda x: ops.is_array(x) or isinstance(x, np.ndarray)  # noqa: E731
        if is_arr(ret):
            arrays = [ret]
        elif isinstance(ret, (tuple, list)) and ret and any(is_arr(r) for r in ret):
            arrays = [r for r in ret if is_arr(r)]
        elif isinstance(ret, dict):
            arrays = [ret[k] for k in ("output", "out", "logits", "x", "y", "result", "context",
                                       "attn", "attention", "weights", "attn_weights",
                                       "attention_weights", "probs", "p_attn", "scores")
                      if k in ret and is_arr(ret[k])]
            if not arrays:
                raise CandidateProblem("wrong_type", f"forward returned a dict with keys "
                                       f"{sorted(map(str, ret))[:10]}; expected the output array")
        else:
            raise CandidateProblem("wrong_type", f"forward returned {type(ret).__name__}; expected "
                                   f"an array/tensor, or a tuple (output, attention_weights)")
        want = tuple(case.out_shape)
        out_i = 0  # (output, weights) as tutorials return it; (weights, output) when shapes say so
        if len(arrays) > 1 and case.weights_shape is not None and \
                tuple(case.weights_shape) != want and tuple(arrays[1].shape) == want and \
                tuple(arrays[0].shape) == tuple(case.weights_shape):
            out_i = 1
        out = arrays[out_i]
        weights = None
        rest = [a for i, a in enumerate(arrays) if i != out_i]
        if self.comp.returns_weights and rest and case.weights_shape is not None:
            B, H, Tq, Tk = case.weights_shape
            for a in rest:
                s = tuple(a.shape)
                if s == (B, H, Tq, Tk):
                    weights = a
                    break
                if s == (B, Tq, Tk) and H > 1:
                    weights = a
                    produced.weights_averaged = True
                    break
            else:
                weights = rest[0]
        return out, weights

    def _torch_backward(self, out, case, leaves, param_leaves, inst, produced) -> None:
        torch = self.ops.torch
        if not isinstance(out, torch.Tensor) or not out.requires_grad:
            why = ("the output is not a tensor" if not isinstance(out, torch.Tensor)
                   else "the output does not require grad (computed outside autograd, detached, "
                        "or under torch.no_grad)")
            raise CandidateProblem("missing_gradient", f"cannot backpropagate: {why}",
                                   quantity=self._first_grad_key(case))
        g = torch.from_numpy(np.ascontiguousarray(case.dout.astype(self.opts.dtype)))
        out.backward(g.to(out.dtype))
        for name, leaf in leaves.items():
            if case.inputs[name].dtype != REF:
                continue
            key = f"grad_input:{name}"
            if leaf.grad is None:
                produced.values[key] = np.zeros(leaf.shape, dtype=self.opts.dtype)
                produced.notes[key] = "no gradient reached this input (it was treated as zeros)"
            else:
                produced.values[key] = leaf.grad.detach().cpu().numpy().copy()
        for ref, e in inst.entries.items():
            key = f"grad_param:{ref}"
            if e.cand is None:
                continue
            if inst.obj is not None:
                g = inst.slots[e.cand].grad()
                shape = inst.slots[e.cand].shape
            else:
                leaf = param_leaves[e.cand]
                g = None if leaf.grad is None else leaf.grad.detach().cpu().numpy().copy()
                shape = tuple(leaf.shape)
            if g is None:
                g = np.zeros(shape, dtype=self.opts.dtype)
                produced.notes[key] = "no gradient reached this parameter (treated as zeros)"
            produced.values[key] = read_param_grad(e, g)

    def _first_grad_key(self, case: Case) -> str | None:
        for q in self.comp.quantities(case):
            if q.kind in ("input_grad", "param_grad"):
                return q.key
        return None

    def _grad_targets(self, case: Case, inst: Instance) -> list[tuple[str, str]]:
        """(argument name, quantity key) of the forward's array arguments, in signature order."""
        sig = naming.signature_of(self.obj)
        order = [p.name for p in sig.parameters.values()] if sig else []
        by_arg = {}
        for name in case.inputs:
            if case.inputs[name].dtype == REF:
                by_arg[inst.binding.arg_of.get(name, name)] = f"grad_input:{name}"
        for ref, e in inst.entries.items():
            if e.cand is not None and e.rows is None:
                by_arg[e.cand] = f"grad_param:{ref}"
        listed = [(a, by_arg[a]) for a in order if a in by_arg]
        listed += [(a, k) for a, k in by_arg.items() if a not in order]
        return listed

    def _pair_backward(self, cache, case: Case, inst: Instance, produced: Produced) -> None:
        dout = case.dout.astype(self.opts.dtype)
        grads = self.backward(dout, cache)
        targets = self._grad_targets(case, inst)
        self._assign_grads(grads, targets, case, inst, produced, "backward(dout, cache)")

    def _module_backward(self, case: Case, inst: Instance, produced: Produced) -> None:
        dout = case.dout.astype(self.opts.dtype)
        grads = inst.obj.backward(dout)
        targets = [(inst.binding.arg_of.get(n, n), f"grad_input:{n}") for n, a in case.inputs.items()
                   if a.dtype == REF]
        self._assign_grads(grads, targets, case, inst, produced, "backward(dout)", params=False)
        for ref, e in inst.entries.items():
            if e.cand is None:
                continue
            key = f"grad_param:{ref}"
            g = read_param_grad(e, inst.slots[e.cand].grad())
            if g is None:
                produced.missing[key] = (f"cannot find the gradient of {e.cand!r} after backward "
                                         f"(looked for .grad, d{e.cand.rsplit('.', 1)[-1]}, "
                                         f"grads[...])")
            else:
                produced.values[key] = g

    def _assign_grads(self, grads, targets, case, inst, produced, what, params=True) -> None:
        if isinstance(grads, np.ndarray) or self.ops.is_array(grads):
            grads = (grads,)
        if isinstance(grads, dict):
            lower = {str(k).lower(): v for k, v in grads.items()}
            for arg, key in targets:
                name = key.split(":", 1)[1]
                for k in (arg, "d" + arg, "d_" + arg, "grad_" + arg, name, "d" + name, "d_" + name):
                    v = lower.get(k.lower())
                    if v is not None:
                        produced.values[key] = self.ops.to_np(v)
                        break
                else:
                    produced.missing[key] = f"{what} returned a dict without a gradient for {arg!r}"
            return
        if not isinstance(grads, (tuple, list)):
            raise CandidateProblem("wrong_type", f"{what} returned {type(grads).__name__}; expected "
                                   f"the gradients as a tuple (in the order of the forward's array "
                                   f"arguments) or a dict")
        for i, (arg, key) in enumerate(targets):
            if i < len(grads) and grads[i] is not None:
                produced.values[key] = self.ops.to_np(grads[i])
            else:
                produced.missing[key] = f"{what} returned {len(grads)} gradient(s); none for {arg!r}"

    def _execute_table(self, inst: Instance, case: Case) -> Produced:
        """Positional table function f(length, d_model) -> (length, d_model): out = x + table."""
        produced = Produced()
        T, D = case.inputs["x"].shape[1], case.hyper["d_model"]
        if inst.obj is not None and inst.call is None:      # a factory already returned the table
            table = inst.obj
        else:
            b = naming.bind(inst.call, [("max_len", naming.HYPER_ALIASES["max_len"], False),
                                        ("d_model", naming.HYPER_ALIASES["d_model"], False)],
                            what=f"{self._name()}(...)")
            vals = {"max_len": T, "d_model": D}
            table = b.call(inst.call, vals)
        t = self.ops.to_np(table)
        t = t.reshape(t.shape[-2:]) if t.ndim == 3 and t.shape[0] == 1 else t
        if t.ndim != 2 or t.shape[0] < T or t.shape[1] != D:
            raise CandidateProblem("wrong_shape", f"the positional table function returned shape "
                                   f"{tuple(np.shape(t))}; expected ({T}, {D}) (length, d_model)",
                                   quantity="output")
        x = case.inputs["x"].astype(self.opts.dtype)
        produced.values["output"] = x + t[:T].astype(self.opts.dtype)
        produced.dtypes["output"] = str(t.dtype) if t.dtype.kind == "f" else self.opts.dtype
        self._mark_missing(case, produced, "a table function has no input gradient (x + table)")
        produced.notes["output"] = "table function: compared x + table[:T]"
        return produced
