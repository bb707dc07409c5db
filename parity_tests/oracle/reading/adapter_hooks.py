"""`--adapter adapter.py`: small hooks for code the oracle's guessing cannot reach.

An adapter file is plain Python beside the submission; it defines any of these functions (each
optional; what it leaves out the oracle does as usual):

    build(component, hyper) -> obj            or build(component, hyper, candidate) -> obj
        Build the candidate for one example (`candidate`: the object named on the command line).
        `component` is the oracle's component name ("mha", "ffn", ...); `hyper` its hyperparameters
        ({"d_model": 8, "num_heads": 2}, for sdpa the head
        widths {"d_k": .., "d_v": ..}). The candidate named on the command line is importable from the
        adapter as usual (`from student import Model`).
    call(obj, inputs) -> output, or (output, attention_weights)
        Run the forward. `inputs` is keyed by the component's input names (`npformer-oracle
        components` lists them: sdpa q, k, v, mask; mha query, key, value, mask; ffn, layernorm and
        positional x; encoder_layer x, mask; ...), tensors for a torch candidate, arrays for NumPy;
        masks are in the convention and rank the options asked for (default: keep = True may attend).
    weights(obj) -> {reference name: tensor or array, or "-" for none}
        Where each reference parameter lives (names as `state_dict()` of the npformer twin:
        q_proj.weight, linear1.bias, norm1.weight, ...). The oracle writes the drawn values into these objects in
        place (a torch Parameter, or a NumPy array); layouts are found from shapes ((in, out) matrices
        are transposed, (1, n) vectors reshaped; a square matrix follows --weight-layout). Every
        reference parameter must be named ("-" means the candidate really has none: it is then fixed
        at its neutral value and not compared).
    backward(obj, dout) -> {input name: gradient}          (NumPy candidates)
        Run the hand-written backward for the last call; return the input gradients.
    grads(obj) -> {reference name: gradient}               (NumPy candidates, after backward)

Torch candidates get their gradients from autograd; a NumPy candidate without `backward` is checked on
its forward only. All hooks run where the candidate runs (in the child process), under the same time
limit; they choose nothing about the verdict: they only say how to build, call and read the candidate.
"""
from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import naming
from .naming import InterfaceError
from .recognise import hooks

RESOLVE = hooks("resolve")

HOOKS = {"build": 2, "call": 2, "weights": 1, "backward": 2, "grads": 1}


@dataclass
class Hooks:
    path: str
    build: Callable | None = None
    call: Callable | None = None
    weights: Callable | None = None
    backward: Callable | None = None
    grads: Callable | None = None
    self_attention: bool = False      # SELF_ATTENTION = True: mha called as call(obj, {x, mask})


def _takes(fn, n: int) -> bool:
    try:
        inspect.signature(fn).bind(*range(n))
        return True
    except TypeError:
        return False


def _with_candidate(fn, candidate):
    return lambda component, hyper: fn(component, hyper, candidate)


def load(path: str, candidate: Any = None) -> Hooks:
    """Import the adapter file and check its hooks (names and argument counts)."""
    from .loader import _import_file
    if not (isinstance(path, str) and path.endswith(".py") and os.path.isfile(path)):
        raise InterfaceError(f"--adapter: expected an existing .py file, got {path!r}")
    module = _import_file(path)
    found = {}
    for name, nargs in HOOKS.items():
        fn = getattr(module, name, None)
        if fn is None:
            continue
        if not callable(fn):
            raise InterfaceError(f"--adapter {path}: {name} must be a function, got "
                                 f"{type(fn).__name__}")
        if not (_takes(fn, nargs) or (name == "build" and _takes(fn, 3))):
            raise InterfaceError(f"--adapter {path}: {name} must take {nargs} argument(s) "
                                 f"({HOOK_DOC[name]}), got {name}{inspect.signature(fn)}")
        if name == "build" and not _takes(fn, 2):
            fn = _with_candidate(fn, candidate)
        found[name] = fn
    if not found:
        raise InterfaceError(f"--adapter {path}: defines none of the hooks {', '.join(HOOKS)}")
    flag = getattr(module, "SELF_ATTENTION", False)
    if not isinstance(flag, bool):
        raise InterfaceError(f"--adapter {path}: SELF_ATTENTION must be True or False, got "
                             f"{type(flag).__name__}")
    return Hooks(path, **found, self_attention=flag)


def note(hooks: Hooks) -> str:
    used = [n for n in HOOKS if getattr(hooks, n) is not None]
    return (f"adapter file {os.path.basename(hooks.path)}: hooks {', '.join(used)} (the rest "
            f"guessed)" + ("; declares self-attention (call gets x and the mask)"
                           if hooks.self_attention else ""))


HOOK_DOC = {"build": "component, hyper", "call": "obj, inputs", "weights": "obj",
            "backward": "obj, dout", "grads": "obj"}


def binding(adapter) -> naming.Binding:
    """The call hook takes every input and mask by its component name; a self-attention adapter
    (SELF_ATTENTION = True, mha only) takes `x` and the mask."""
    if adapter.hooks.self_attention and adapter.comp.name == "mha":
        adapter.caps.self_attention = True
        names = ["x"] + [m.name for m in adapter.comp.masks]
        return naming.Binding(keywords={n: n for n in names}, arg_of={n: n for n in names})
    names = [s.name for s in adapter.comp.inputs] + [m.name for m in adapter.comp.masks]
    return naming.Binding(keywords={n: n for n in names}, arg_of={n: n for n in names})


def forward(hooks: Hooks, obj) -> Callable:
    return lambda **inputs: hooks.call(obj, inputs)


class HookSlot:
    """A parameter named by weights(): written in place; its gradient from .grad (torch) or from
    the grads() hook (NumPy)."""

    def __init__(self, value, ref: str, grads: Callable | None):
        self.v, self.ref, self.grads = value, ref, grads

    @property
    def shape(self):
        return tuple(self.v.shape)

    def set(self, arr: np.ndarray) -> None:
        if isinstance(self.v, np.ndarray):
            if not self.v.flags.writeable:
                raise InterfaceError(f"--adapter weights(): {self.ref} is a read-only array")
            self.v[...] = arr
            return
        import torch
        with torch.no_grad():
            self.v.copy_(torch.from_numpy(np.ascontiguousarray(arr)).to(self.v.dtype))

    def clear_grad(self) -> None:
        if getattr(self.v, "grad", None) is not None and not isinstance(self.v, np.ndarray):
            self.v.grad = None

    def grad(self):
        if not isinstance(self.v, np.ndarray):
            g = getattr(self.v, "grad", None)
            return None if g is None else g.detach().cpu().numpy().copy()
        if self.grads is None:
            return None
        g = (self.grads() or {}).get(self.ref)
        return None if g is None else np.array(g, dtype=np.float64)


def entries(adapter, obj, case) -> tuple[dict, dict]:
    """Entries and slots from the weights() hook; every reference parameter must be named."""
    from .resolver import Entry
    hooks = adapter.hooks
    given = hooks.weights(obj)
    if not isinstance(given, dict):
        raise InterfaceError(f"--adapter weights() returned {type(given).__name__}; expected a dict "
                             f"{{reference name: tensor or array}}")
    unknown = sorted(set(map(str, given)) - set(case.params))
    if unknown:
        raise InterfaceError(f"--adapter weights(): unknown reference name(s) {unknown}; reference "
                             f"parameters are: {', '.join(case.params)}")
    grads = (lambda: hooks.grads(obj)) if hooks.grads else None
    out, slots = {}, {}
    for ref, value in case.params.items():
        if ref not in given:
            raise InterfaceError(f"--adapter weights() does not name {ref} {tuple(value.shape)}; "
                                 f"give where it lives, or '-' when the candidate has none")
        v = given[ref]
        if v is None or (isinstance(v, str) and v.strip() == "-"):
            out[ref] = Entry(ref, None, how="absent", why="the adapter's weights() says none")
            continue
        if not hasattr(v, "shape"):
            raise InterfaceError(f"--adapter weights(): {ref} is a {type(v).__name__}; expected a "
                                 f"tensor or an array")
        r, c = tuple(value.shape), tuple(v.shape)
        if c == r and len(r) == 2 and r[0] == r[1] and adapter.opts.weight_layout == "in_out":
            e = Entry(ref, ref, transpose=True, how="map")      # square: as --weight-layout says
        elif c == r:
            e = Entry(ref, ref, how="map")
        elif len(r) == 2 and c == r[::-1]:
            e = Entry(ref, ref, transpose=True, how="map")
        elif RESOLVE.unit_axes_shape(r, c) is not None:
            e = Entry(ref, ref, how="map", cand_shape=c, ref_shape=r)
        else:
            raise InterfaceError(f"--adapter weights(): {ref} has shape {c}; the reference's is {r}")
        out[ref] = e
        slots[ref] = HookSlot(v, ref, grads)
    return out, slots


__all__ = ["Hooks", "load", "binding", "forward", "entries", "HookSlot", "Any"]
