"""Recogniser: lazily created parameters (torch.nn.LazyLinear; NumPy weights made in the first
forward). Such a candidate is called once on the example's inputs before its parameters are mapped;
the reference's values are then written into the parameters that call created."""
from __future__ import annotations


def pending(m, framework: str, space_names) -> bool:
    """Whether `m` still has parameters to create."""
    if framework == "torch":
        from torch.nn.parameter import is_lazy
        if not callable(getattr(m, "parameters", None)):
            return False            # not an nn.Module: construction says so (an interface error)
        return any(is_lazy(p) for p in m.parameters())
    return not space_names and callable(getattr(m, "forward", None))


def drop_activations(space, slots, case):
    """After a first NumPy call: leave out arrays shaped like the example's activations (caches the
    forward kept, not parameters)."""
    shapes = {tuple(a.shape) for a in case.inputs.values()} | {tuple(case.out_shape)}
    keep = [n for n in space.names if tuple(space.shapes[n]) not in shapes and len(space.shapes[n]) <= 2]
    return keep, {n: slots[n] for n in keep}


def first_call(adapter, m, binding, case) -> None:
    """Run the candidate's forward once on the example (no gradients)."""
    values = adapter.feed(case, grad=False)[-1]
    fn = getattr(m, "forward", m) if adapter.framework != "torch" else m
    if adapter.framework == "torch":
        import torch
        with torch.no_grad():
            binding.call(fn, values)
    else:
        binding.call(fn, values)
    if NOTE not in adapter.notes:
        adapter.notes.append(NOTE)


NOTE = "parameters are created lazily: materialised by a first call on each example's inputs"


def probe(adapter) -> None:
    """Say so up front when the probe build has parameters still to create."""
    if adapter.probe is None or adapter.comp.tree is None:
        return
    from ..slots import numpy_space
    names = [] if adapter.framework == "torch" else numpy_space(adapter.probe)[0].names
    if pending(adapter.probe, adapter.framework, names) and NOTE not in adapter.notes:
        adapter.notes.append(NOTE)
