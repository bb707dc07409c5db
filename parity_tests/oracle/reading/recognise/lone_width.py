"""Recogniser: a feed-forward whose constructor takes ONE width, under a name no alias list holds
(`FeedForward(layer_dim, expansion=4)`, its hidden width a multiple the code fixes). By position it
got d_ff, the feed-forward's first size, while the model width went unpassed; no reference weight
then fits its shapes, and right code was an interface error.

Found by a probe, only while nothing else gave that argument its value: built with it at two
values, every parameter's shape scales with it (each axis in proportion), so the argument sets the
widths on both sides of the hidden layer, which only the model width does (code whose model width is
a constant of its own, `FeedForward(hidden)` beside `n_embd = 384`, keeps that axis and is left to
recognise/global_width). Then the argument is passed d_model, the probe build is redone, and the
report says so; recognise/ffn_width after it finds the hidden width the code fixes.
"""
from __future__ import annotations

COMPONENTS = ("ffn",)


def _shapes(adapter, obj) -> list:
    if adapter.framework == "torch":
        from ..plain_torch_params import named_tensors  # a module's, or a plain class's
        return sorted(tuple(p.shape) for p in named_tensors(obj).values())
    from ..slots import numpy_space
    space, _ = numpy_space(obj)
    return sorted(tuple(s) for s in space.shapes.values() if s is not None)


def scales_with(a: list, b: list, x: int, y: int) -> bool:
    """Whether the shapes `b` (built at y) are the shapes `a` (built at x) with every axis times y/x,
    at least one of them a matrix."""
    return bool(a) and len(a) == len(b) and any(len(s) == 2 for s in a) and all(
        len(s) == len(t) and all(i * y == j * x for i, j in zip(s, t)) for s, t in zip(a, b))


def probe(adapter) -> None:
    if adapter.comp.name not in COMPONENTS or adapter.mode != "class" or adapter.probe is None \
            or adapter.hooks is not None or "d_ff" in adapter.opts.settings:
        return
    given = getattr(adapter, "ctor_by_position", None) or {}
    if list(given.values()) != ["d_ff"] or "d_model" not in getattr(adapter, "ctor_unbound", ()):
        return
    arg = next(iter(given))
    base = dict(adapter.probe_hyper(), d_model=4)
    notes = list(adapter.notes)
    try:
        a = _shapes(adapter, adapter.construct(dict(base, d_ff=3)))
        b = _shapes(adapter, adapter.construct(dict(base, d_ff=5)))
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    finally:
        adapter.notes[:] = notes
    if not scales_with(a, b, 3, 5):
        return
    adapter.model_width_arg = arg
    before = list(adapter.notes)
    try:
        made = adapter.construct(adapter.probe_hyper())
    except Exception:  # noqa: BLE001 - as it was: by position
        adapter.model_width_arg = None
        adapter.notes[:] = before
        return
    adapter.probe = made
    adapter.notes[:] = [n for n in adapter.notes if not n.startswith(f"constructor argument {arg!r}: passed d_ff")]
    adapter.notes.append(f"constructor argument {arg!r}: the feed-forward's one width argument; built "
                         f"at two values, every weight's shape scaled with it (the widths on both "
                         f"sides of the hidden layer): passed d_model")
