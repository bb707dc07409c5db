"""Recogniser: square matrices take the layout their layer class shows on its non-square ones.

Hugging Face's `Conv1D` (GPT-2) keeps every weight as (in, out): the packed `c_attn.weight`
(d, 3d) and the feed-forward's (d, 4d) are read transposed by their shapes, but a square
`c_proj.weight` (d, d) has no shape to tell, and was read (out, in). The layout a class shows on
its non-square weights (in the probe build, d_model 4, d_ff 3, and on every example) is
remembered per class and given to its square weights; the mapping line says so. Only for classes
whose non-square weights all agree; explicit maps are left alone.
"""
from __future__ import annotations


def _learn(entries: dict, space, ref_shapes: dict, known: dict) -> None:
    owner = space.owner or {}
    for e in entries.values():
        if e.cand is None or e.cand not in owner or e.how == "map" or e.parts or \
                e.cand_shape is not None:
            continue
        r = tuple(ref_shapes.get(e.ref, ()))
        if len(r) == 2 and (e.rows is not None or r[0] != r[1]):
            known.setdefault(owner[e.cand], set()).add(bool(e.transpose))


def apply(entries: dict, space, ref_shapes: dict, known: dict | None = None) -> list[str]:
    """Switch square weights of a class seen only as (in, out) to (in, out), and (under
    --weight-layout in_out, or after recognise/layout's switch) those of a class seen only as
    (out, in) back to (out, in); returns their names.
    `known` (class -> set of layouts seen) carries what earlier builds showed."""
    known = {} if known is None else known
    _learn(entries, space, ref_shapes, known)
    owner = space.owner or {}
    switched = []
    for e in entries.values():
        r = tuple(ref_shapes.get(e.ref, ()))
        if e.cand is None or e.how == "map" or e.rows is not None or e.parts or \
                e.cand_shape is not None or len(r) != 2 or r[0] != r[1]:
            continue
        cls = owner.get(e.cand, "")
        if known.get(cls) == {(not e.transpose)}:    # the class shows the other layout
            e.transpose = not e.transpose
            e.why = (e.why + "; " if e.why else "") + \
                f"square, read {'(in, out)' if e.transpose else '(out, in)'} like the other " \
                f"{cls.rsplit('.', 1)[-1]} weights"
            switched.append(e.cand)
    return switched


def probe(adapter) -> None:
    """Learn each layer class's layout from the probe build (sizes where nothing is square)."""
    adapter.class_layout = {}
    if adapter.framework != "torch" or adapter.probe is None or adapter.comp.tree is None:
        return
    from .. import naming
    from ..slots import torch_space
    notes = list(adapter.notes)          # an extra build's guesses are the probe build's again
    try:
        hyper = adapter.probe_hyper()
        for build in (adapter.probe, None):
            if build is None:                # sizes fixed square (--set d_ff=d_model): one more
                hyper = dict(hyper, d_model=12, num_heads=3, d_ff=20, d_k=4, d_v=4)  # build
                build = adapter.construct(hyper)
            space, _ = torch_space(build)
            shapes = _ref_shapes(adapter.comp, hyper)
            r = naming.Resolver(space, shapes, hyper, adapter.opts.name_map, adapter.opts.weight_layout)
            _learn(r.run(adapter.comp.tree), space, shapes, adapter.class_layout)
            if adapter.class_layout:
                return
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    finally:
        adapter.notes[:] = notes


def _ref_shapes(comp, hyper: dict) -> dict:
    """The reference's parameter shapes at `hyper`, also in the worker (which imports no npformer:
    a layer's come from norm_order.part_shapes there)."""
    from . import norm_order
    if comp.name in norm_order.PARTS:
        return norm_order.part_shapes(comp.name, hyper)
    return {n: tuple(s) for n, s in comp.param_shapes(hyper).items()}
