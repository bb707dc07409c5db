"""Recogniser: a model width fixed by a module-level global (`n_embd = 384` at the top of the file,
`nn.Linear(n_embd, head_size)` inside the class, `nn.LayerNorm([d_model])` in a norm taking no
size), which no constructor argument sets. Built at two
different d_model, the candidate keeps one width N >= 8 in both; it fails on inputs of the width it
was asked for and runs on inputs of width N. Then every example is drawn at d_model = N (heads
among N's divisors), the probes after this one (a causal mask built in, ...) see the candidate
built at N, and the report says so; without this, no reference weight fits its shapes.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..calls import Finished, run_limited
from . import global_heads

COMPONENTS = ("mha", "ffn", "encoder_layer", "decoder_layer", "layernorm")
SMALL = 8


def _dims(adapter, obj) -> set:
    if adapter.framework == "torch":
        from ..plain_torch_params import named_tensors  # a module's, or a plain class's
        shapes = [tuple(p.shape) for p in named_tensors(obj).values()]
    else:
        from ..slots import numpy_space
        space, _ = numpy_space(obj)
        shapes = [tuple(s) for s in space.shapes.values() if s is not None]
    rank = 1 if adapter.comp.name == "layernorm" else 2      # a norm's gain and shift are vectors
    return {d for s in shapes if len(s) == rank for d in s}


def _runs(adapter, obj, width: int) -> bool:
    """The built module takes inputs of this width and returns that width."""
    m = adapter.finish_module(obj)
    fn = adapter.call_target(m)
    x = adapter.ops.from_np(np.random.default_rng(0).standard_normal((1, 3, width))
                            .astype(adapter.opts.dtype))
    vals = {"x": x, "query": x, "key": x, "value": x, "key_value": x, "memory": x}
    vals.update({mk.name: None for mk in adapter.comp.masks})
    res = run_limited(lambda: adapter.binding.call(fn, vals), 10.0)
    if not isinstance(res, Finished):
        return False
    out = res.value[0] if isinstance(res.value, (tuple, list)) and res.value else res.value
    return tuple(getattr(out, "shape", ()))[-1:] == (width,)


def _hyper(adapter, d_model: int) -> dict:
    return dict(adapter.probe_hyper(), d_model=d_model, num_heads=2, d_k=d_model // 2,
                d_v=d_model // 2, d_ff=d_model + 3)


def probe(adapter) -> None:
    if adapter.comp.name not in COMPONENTS or adapter.mode != "class" or adapter.probe is None:
        return
    if adapter.hooks is not None or "d_model" in adapter.opts.settings:
        return
    notes = list(adapter.notes)
    try:
        small = adapter.construct(_hyper(adapter, 4))
        common = {d for d in _dims(adapter, small) & _dims(adapter, adapter.construct(_hyper(adapter, 6)))
                  if d >= SMALL and d % 2 == 0}
        if not common or _runs(adapter, small, 4):
            return
        # several fixed axes (a hidden width, a head size beside the model width): the model width
        # is the one axis whose inputs the built module takes and returns
        widths = [d for d in sorted(common) if _runs(adapter, adapter.construct(_hyper(adapter, d)), d)]
        if len(widths) != 1:
            return
        n = widths[0]
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    finally:
        adapter.notes[:] = notes
    adapter.caps.fixed_sizes["d_model"] = n
    # the probes after this one build and call the candidate at the width it runs at
    adapter.opts = dataclasses.replace(adapter.opts, settings=dict(adapter.opts.settings, d_model=n))
    global_heads.fix(adapter, n)
    try:
        adapter.probe = adapter.construct(adapter.probe_hyper())
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        pass
    adapter.notes.append(f"the model width is fixed by the candidate's code at {n} (a module-level "
                         f"size: built at two different d_model its matrices kept a {n} axis, and "
                         f"it runs only on inputs of width {n}): every example drawn at d_model = "
                         f"{n}")
