"""A plain class (no torch.nn.Module, no backward of its own) holding torch tensors that require
grad: `self.W1 = nn.Parameter(torch.empty(d, d_ff))`, a list of per-head parameters, a dict of
them, maybe a `parameters()` method of its own returning a list. It is checked on the torch path,
as a module is: its weights are the tensors that require grad, found by walking its attributes
(lists, dicts and parts too, by dotted path: `W_query.0`, `ffn.W1`, as torch_tensor_slots.py
walks a class over plain tensors), the reference's values are written into them (in place where
dtype and shape allow; otherwise each is replaced by a new leaf of the check's dtype that
requires grad), the forward is called (its `forward`, else the object itself), and each weight's
gradient is read from its `.grad` after autograd's backward. A non-leaf tensor computed once, at
construction, from weights the class holds (`self.W_qkv = torch.cat([self.W_q, ...], 1)`) is a copy
that an optimizer step never writes: it is no weight (said in a note), so a forward computing with
it is not checked as if it were the weights; a view of a weight (`self.W.view(...)`) follows it and
is kept.

A class of this kind whose attributes hold no tensor that requires grad has nothing to write the
reference's weights into nor gradients to read: an interface error that says so."""
from __future__ import annotations

import sys

import numpy as np

from .naming import InterfaceError
from .numpy_parts_eval import eval_parts
from .torch_tensor_slots import TensorSlot, is_tensor, tensor_space


def trainable(v) -> bool:
    """A float tensor of at least one axis that requires grad (an nn.Parameter, a tensor made with
    requires_grad=True)."""
    return is_tensor(v) and v.is_floating_point() and v.dim() >= 1 and v.requires_grad


def is_module(obj) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


class LeafSlot(TensorSlot):
    """A tensor that requires grad, held by a plain class: written in place, or replaced by a new
    leaf (an nn.Parameter where it was one) of the value's dtype; its gradient is its `.grad`."""

    def set(self, arr: np.ndarray) -> None:
        import torch
        cur = self._get()
        new = torch.from_numpy(np.array(arr, copy=True, order="C"))
        if cur.is_leaf and tuple(cur.shape) == tuple(new.shape) and cur.dtype == new.dtype \
                and cur.device.type == "cpu":
            with torch.no_grad():
                cur.copy_(new)
            return
        self.replace(torch.nn.Parameter(new) if isinstance(cur, torch.nn.Parameter)
                     else new.requires_grad_(True))

    def replace(self, new) -> None:
        from .slots import replace_aliases
        cur = self._get()
        if isinstance(self.container, (dict, list)):
            self.container[self.key] = new
        else:
            setattr(self.container, self.key, new)
        holder = self.owner if self.owner is not None else self.container
        replace_aliases(holder, cur, new)
        for v in (vars(holder).values() if hasattr(holder, "__dict__") else ()):
            if isinstance(v, list) and any(item is cur for item in v):   # `self.params = [self.W]`
                v[:] = [new if item is cur else item for item in v]

    def clear_grad(self) -> None:
        self._get().grad = None

    def grad(self):
        g = self._get().grad
        return None if g is None else g.detach().cpu().numpy().copy()

    def named_grads(self) -> list[tuple[str, np.ndarray]]:
        g = self.grad()
        return [] if g is None else [(f"{self.key}.grad", g)]


def _module_part(part, prefix: str, slots: dict) -> bool:
    """A torch module among the plain class's parts: its parameters, by their own dotted names."""
    if not is_module(part):
        return False
    for name, p in part.named_parameters():
        if trainable(p):
            owner, _, leaf = name.rpartition(".")
            slots[prefix + name] = LeafSlot(part.get_submodule(owner) if owner else part, leaf)
    return True


def plain_space(obj):
    """(Space, slots) over the tensors requiring grad that a plain class holds, each once (a tensor
    also listed in `self.params = [self.W, ...]` keeps the name met first), or None when it holds
    none."""
    found = tensor_space(obj, weight=trainable, slot=LeafSlot, part=_module_part)
    if found is None:
        return None
    space, slots = found
    seen: set[int] = set()
    for name in list(slots):
        key = id(slots[name].array())
        if key in seen:
            del slots[name]
        seen.add(key)
    held = all_held(obj)
    for name in [n for n, slot in slots.items() if derived_from(slot.array(), held)]:
        del slots[name]                   # a copy made from its own weights: not a weight itself
    if not slots:
        return None
    from .slots import space_of
    space = space_of(slots, bare=True)
    space.owner = {}
    return space, slots


def _storage(t) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001 - a tensor without storage (meta, sparse): never a view
        return -1


def kept_elsewhere(var) -> str | None:
    """What, besides autograd's graph, still refers to the leaf tensor `var` (a tuple in a module's
    dict, a closure's cell: 'a tuple', 'a cell'), or None: nothing does, as for the leaf of
    `torch.randn(..., requires_grad=True) * 0.1`, which nothing can update."""
    import gc
    import types
    return next((f"a {type(r).__name__}" for r in gc.get_referrers(var)
                 if not isinstance(r, types.FrameType)), None)


def derived_from(t, held: dict) -> list[str]:
    """The names in `held` of the tensors a non-leaf tensor `t` was computed
    from (`torch.cat([self.W_q, self.W_k, self.W_v], 1)` made once at construction), by walking
    its autograd graph, and a leaf requiring grad it does not hold that something else still
    refers to (`raw * 0.1` with raw kept in a module's dict or a closure an optimizer is handed:
    'a tensor kept in a tuple'); [] for a leaf, or one made from a leaf nothing else holds
    (`torch.randn(..., requires_grad=True) * 0.1`), or a view of one it holds (`self.W.view(...)`
    follows its weight when written in place). `held`: all_held's."""
    if any(_storage(t) == _storage(w) for _, w in held.values()):
        return []
    fn, out = getattr(t, "grad_fn", None), []
    stack, seen = [fn], set()
    while stack and len(seen) < 10_000:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        var = getattr(fn, "variable", None)
        if var is not None and id(var) in held and held[id(var)][0] not in out:
            out.append(held[id(var)][0])
        elif var is not None and trainable(var) and (where := kept_elsewhere(var)) is not None \
                and f"a tensor kept in {where}" not in out:
            out.append(f"a tensor kept in {where}")
        stack.extend(nxt for nxt, _ in getattr(fn, "next_functions", ()))
    order = [n for n, _ in held.values()]
    return sorted(out, key=lambda n: order.index(n) if n in order else len(order))


def finish(obj, name: str, dtype: str, notes: list):
    """The plain class made ready for the torch path: its weights in the check's dtype, its own
    eval() called or its `training` flag set False; an interface error when it holds no tensor
    that requires grad."""
    found = plain_space(obj)
    if found is None:
        raise InterfaceError(
            f"{name}: built a {type(obj).__name__}, which is no torch.nn.Module and holds no tensor "
            f"that requires grad (an nn.Parameter, or a tensor made with requires_grad=True) under "
            f"its attributes, lists or dicts: nothing to write the reference's weights into or to "
            f"take gradients from. Make it a torch.nn.Module, or hold its weights as nn.Parameter")
    import torch
    held = all_held(obj)
    for copy, v in _walked(obj).items():
        if not v.is_leaf and (srcs := derived_from(v, held)):
            whose = "its own weights" if srcs[0] in {n for n, _ in held.values()} else \
                "a leaf tensor it does not hold, which an optimizer may be handed"
            note = (f"{copy} of {type(obj).__name__} is computed from {whose} "
                    f"({', '.join(srcs)}) once, at construction: a copy that does not follow them "
                    f"when they are written (as an optimizer step writes them): not read as a "
                    f"weight, so a forward computing with it never sees its weights' values")
            if note not in notes:
                notes.append(note)
    want = getattr(torch, dtype)
    made = [n for n, slot in found[1].items() if not slot.array().is_leaf]
    if made:
        note = (f"{', '.join(made)} of {type(obj).__name__} are no leaf tensors (made by an "
                f"operation on a tensor requiring grad, as `torch.randn(..., requires_grad=True) "
                f"* 0.1` is): their .grad stays None after a backward, so an optimizer never "
                f"updates them; checked as leaves holding the reference's values")
        if note not in notes:
            notes.append(note)
    for slot in found[1].values():
        cur = slot.array()
        if cur.dtype != want or not cur.is_leaf:
            slot.replace(torch.nn.Parameter(cur.detach().to(want)) if isinstance(
                cur, torch.nn.Parameter) else cur.detach().to(want).requires_grad_(True))
    if callable(getattr(obj, "eval", None)):
        try:
            obj.eval()
        except TypeError:
            pass
    if isinstance(getattr(obj, "training", None), bool):
        obj.training = False
    if parts := eval_parts(obj):            # torch modules and others among its parts
        note = f"parts put in inference mode (eval()): {', '.join(dict.fromkeys(parts))}"
        if note not in notes:
            notes.append(note)
    note = (f"{type(obj).__name__} is no torch.nn.Module: its weights are the tensors requiring "
            f"grad under its attributes (lists, dicts and parts too, by attribute path), written "
            f"with the reference's values; gradients read from their .grad")
    if note not in notes:
        notes.append(note)
    return obj


def _walked(obj) -> dict:
    """Every tensor requiring grad the walk finds, by name, before copies are left out."""
    found = tensor_space(obj, weight=trainable, slot=LeafSlot, part=_module_part)
    return {} if found is None else {n: s.array() for n, s in found[1].items()}


def all_held(obj, prefix: str = "", depth: int = 0, seen=None) -> dict:
    """{id(tensor): (dotted path, tensor)} of every leaf tensor requiring grad under the object's
    attributes, lists, tuples and dicts, read by its forward or not (the walk keeps those it reads)."""
    seen = set() if seen is None else seen
    out: dict = {}
    if id(obj) in seen or depth > 4:
        return out
    seen.add(id(obj))
    if is_module(obj):
        return {id(p): (prefix + n, p) for n, p in obj.named_parameters() if trainable(p)}
    items = (obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, (list, tuple))
             else vars(obj).items() if hasattr(obj, "__dict__") and not is_tensor(obj) else ())
    for k, v in items:
        if trainable(v):
            if v.is_leaf:
                out.setdefault(id(v), (f"{prefix}{k}", v))
        elif not is_tensor(v) and (isinstance(v, (dict, list, tuple)) or hasattr(v, "__dict__")) \
                and not callable(v):
            out.update({i: n for i, n in all_held(v, f"{prefix}{k}.", depth + 1, seen).items()
                        if i not in out})
    return out


def named_tensors(obj) -> dict:
    """A torch module's parameters by name, or the tensors requiring grad a plain class holds."""
    if is_module(obj):
        return dict(obj.named_parameters())
    found = plain_space(obj)
    return {} if found is None else {n: s.array() for n, s in found[1].items()}
