"""Slots of a plain class holding torch tensors as its weights (no torch.nn.Module, a hand-written
backward): layers written "by hand with torch tensors". Such a class is checked as a NumPy class
with a backward of its own (frameworks.TensorOps hands it tensors); this module finds its weights
(float tensors under its attributes, in lists, in dicts, in its parts, by dotted path, as
slots.numpy_space does for arrays), writes the reference's values into them (in place where dtype
and shape allow, so that lists and dicts holding the same tensor see them) and reads the gradients
its backward keeps beside them (`grad_weights`, `dW`, `grads['W']`) as NumPy arrays."""
from __future__ import annotations

import sys

import numpy as np

from . import forward_reads
from .slots import (
    GRAD_PATTERNS,
    PARAM_DICTS,
    SKIP_ATTRS,
    NumpySlot,
    is_object,
    looks_like_grad,
    replace_aliases,
    space_of,
)

GRAD_DICTS = ("grads", "gradients", "grad", "dparams", "param_grads")


def is_tensor(v) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, torch.Tensor)


def as_numpy(v):
    """A torch tensor as a NumPy copy; anything else as it is."""
    return v.detach().cpu().numpy().copy() if is_tensor(v) else v


def _weight(v) -> bool:
    return is_tensor(v) and v.is_floating_point() and v.dim() >= 1


class TensorSlot(NumpySlot):
    """A torch tensor held by a plain class: container[key] or getattr(container, key)."""

    def array(self):
        return self._get()

    @property
    def shape(self):
        return tuple(self._get().shape)

    def set(self, arr: np.ndarray) -> None:
        import torch
        cur = self._get()
        new = torch.from_numpy(np.array(arr, copy=True, order="C"))
        if tuple(cur.shape) == tuple(new.shape) and cur.dtype == new.dtype and cur.device.type == "cpu":
            with torch.no_grad():
                cur.copy_(new)
            return
        if isinstance(self.container, (dict, list)):
            self.container[self.key] = new
        else:
            setattr(self.container, self.key, new)
        replace_aliases(self.owner if self.owner is not None else self.container, cur, new)

    def clear_grad(self) -> None:
        return None                    # tensors' gradients live beside them, under names

    def named_grads(self) -> list[tuple[str, np.ndarray]]:
        key = str(self.grads_key)
        holders = [self.owner, self.container] if self.owner is not None else [self.container]
        hits = []
        for h in holders:
            if h is None or isinstance(h, (list, dict)):
                continue
            for pat in GRAD_PATTERNS:
                g = getattr(h, pat.format(key), None)
                if is_tensor(g):
                    hits.append((pat.format(key), as_numpy(g)))
            for dname in GRAD_DICTS:
                d = getattr(h, dname, None)
                if isinstance(d, dict):
                    for k in (key, "d" + key, "d_" + key, "grad_" + key):
                        if is_tensor(d.get(k)):
                            hits.append((f"{dname}[{k!r}]", as_numpy(d[k])))
        return hits


def tensor_space(obj, weight=_weight, slot=None, part=None):
    """(Space, slots) over the float tensors a plain class holds, or None when it holds none (a
    NumPy candidate: slots.numpy_space reads it). `weight` says which tensors count, `slot`
    makes each one's slot and `part(obj, prefix, slots)` may read a part itself, returning True
    (plain_torch_params.py: the tensors that require grad, a torch module's parameters)."""
    slot = slot or TensorSlot
    if "torch" not in sys.modules or not is_object(obj) or is_tensor(obj):
        return None
    slots: dict[str, TensorSlot] = {}
    seen: set[int] = set()

    def walk(o, prefix: str, depth: int, private: bool) -> None:
        if id(o) in seen or depth > 6:
            return
        seen.add(id(o))
        if depth and part is not None and part(o, prefix, slots):
            return
        try:
            items = list(vars(o).items())
        except TypeError:
            return
        names = {k for k, _ in items}
        held = {id(v) for _, v in items if is_tensor(v)}          # its own, as attributes
        for k, v in items:
            if k.startswith("__") or k in SKIP_ATTRS or looks_like_grad(k, names) or \
                    (k.startswith("_") and not private):
                continue
            name = f"{prefix}{k.lstrip('_')}"
            if weight(v):
                if not forward_reads.unread(o, k):
                    slots[name] = slot(o, k)
            elif isinstance(v, (list, tuple)):
                for i, item in enumerate(v):
                    if weight(item) and isinstance(v, list):
                        slots[f"{name}.{i}"] = slot(v, i, owner=o, grads_key=f"{k}{i}")
                    elif is_object(item) and not is_tensor(item):
                        walk(item, f"{name}.{i}.", depth + 1, private)
            elif isinstance(v, dict):
                for kk, item in v.items():
                    if weight(item) and id(item) in held:
                        continue         # `self.params = {'W': self.W}`: the attribute's tensor
                    if weight(item):
                        short = f"{prefix}{kk}"
                        flat = k in PARAM_DICTS and str(kk) not in names and short not in slots
                        slots[short if flat else f"{name}.{kk}"] = slot(v, kk, owner=o,
                                                                        grads_key=str(kk))
                    elif is_object(item) and not is_tensor(item):
                        walk(item, f"{name}.{kk}.", depth + 1, private)
            elif is_object(v) and not is_tensor(v):
                walk(v, f"{name}.", depth + 1, private)

    walk(obj, "", 0, False)
    if not slots:                    # every weight private (`self._W = torch.randn(...)`)
        seen.clear()
        walk(obj, "", 0, True)
    return (space_of(slots, bare=True), slots) if slots else None
