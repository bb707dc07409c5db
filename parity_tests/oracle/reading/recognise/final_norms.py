"""Recogniser: a whole model that normalises the output of each stack once more (`self.norm =
LayerNorm(...)` in its Encoder and Decoder, as pre-norm code and the Annotated Transformer do),
when nothing says so: no `--set final_norm`. The reference was built without final norms, so the
two norms were parameters with no counterpart (INTERFACE_ERROR, with a hint to pass
`--set final_norm=true`).

Found by name on the model built for probing, never by comparing with the reference: it holds a
norm's gain (a vector of d_model) under one of the names the reference's final encoder norm has in
the model's name table (`encoder.norm`, `encoder.layer_norm`, `enc_norm`, ...) AND one under a
name of the final decoder norm's. Then the reference is built with final_norm=true (the parent's
finding, `caps.final_norm`), and the report says so. One stack's norm alone, or a norm under
another name, leaves the default. The norm order is not inferred from it: torch.nn.Transformer
keeps final norms in post-norm models too.
"""
from __future__ import annotations

from ..trees import NORM_WEIGHT, TREES


def _names(ref: str) -> tuple[str, ...]:
    child = next((c for c in TREES["model"] if c.ref == ref), None)
    return tuple(child.aliases) if child is not None else ()


def holds_final_norms(names: dict, d_model: int) -> bool:
    """Whether {parameter name: shape} holds a final encoder norm's and a final decoder norm's gain."""
    def held(ref: str) -> bool:
        return any(tuple(names.get(f"{a}.{w}", ())) == (d_model,) for a in _names(ref) for w in NORM_WEIGHT)
    return held("encoder.norm") and held("decoder.norm")


def probe(adapter) -> None:
    if adapter.comp.name != "model" or adapter.mode not in ("class", "factory") \
            or adapter.framework != "torch" or "final_norm" in adapter.opts.settings:
        return
    try:
        sizes = adapter.probe_hyper()
        built = adapter.probe if adapter.probe is not None or adapter.mode != "factory" else \
            adapter.construct(sizes)            # a builder function (make_model): built here once
        names = {n: tuple(p.shape) for n, p in built.named_parameters()}
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    if holds_final_norms(names, int(sizes["d_model"])):
        adapter.caps.final_norm = True
        adapter.notes.append("the model normalises each stack's output once more (a final norm "
                             "after its encoder and its decoder): the reference is built with "
                             "final_norm=true (--set final_norm=false to require none)")
