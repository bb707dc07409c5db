"""Recogniser: a feed-forward width fixed by the candidate's own code, which no constructor argument
sets: a multiple (nanoGPT's MLP: `Linear(n_embd, 4 * n_embd)`) or a constant (a layer that takes no
d_ff and builds `FeedForward(d_model)`, whose own default is d_ff=2048). Found by a probe: built with
two different d_ff, the candidate's parameter shapes do not change, and its hidden width is k *
d_model at two different d_model (drawn as k * d_model), or the same F at both (drawn at F, as a
size the code fixes), unless --set d_ff fixes it; the report says so. Where the model width is fixed too (global_width),
the hidden width found at that width is drawn as a constant; where the head count is (fixed_heads),
the two d_model are H and 2H. A whole model is probed alike (`D_FF = 2048` beside a layer that
takes only d_model and its head count); there the vocabulary sizes are set aside, as an output
projection kept as x @ W pairs with the embedding table like an up and a down projection. Without
the probe no reference weight would fit its shapes."""
from __future__ import annotations

COMPONENTS = ("ffn", "encoder_layer", "decoder_layer", "model")
VOCABS = ("src_vocab", "tgt_vocab", "vocab_size")


def _shapes(adapter, obj) -> list:
    if adapter.framework == "torch":
        from ..plain_torch_params import named_tensors  # a module's, or a plain class's
        return sorted(tuple(p.shape) for p in named_tensors(obj).values())
    from ..slots import numpy_space
    space, _ = numpy_space(obj)
    return sorted(tuple(s) for s in space.shapes.values() if s is not None)


def _ratios(shapes, D) -> set:
    """k for every pair of matrices shaped (k*D, D) and (D, k*D), k > 1: the feed-forward's up and
    down projections, in either layout (a packed (3D, D) q/k/v projection has no partner)."""
    two = {s for s in shapes if len(s) == 2}
    return {s[0] // D for s in two if s[1] == D and s[0] != D and s[0] % D == 0
            and (D, s[0]) in two}


def _hidden(shapes, D) -> set:
    """F for every pair of matrices shaped (F, D) and (D, F), F != D: up and down projections."""
    two = {s for s in shapes if len(s) == 2}
    return {s[0] for s in two if s[1] == D and s[0] != D and (D, s[0]) in two}


def probe(adapter) -> None:
    if adapter.comp.name not in COMPONENTS or adapter.mode != "class" or adapter.probe is None:
        return
    if adapter.hooks is not None or "d_ff" in adapter.opts.settings:
        return
    fixed = adapter.caps.fixed_sizes.get("d_model")    # a model width the code fixes (global_width)
    H = adapter.caps.fixed_sizes.get("num_heads", 2)    # a head count the code fixes (fixed_heads)
    D, W = (fixed, fixed) if fixed else (4, 6) if H == 2 else (H, 2 * H)
    base = dict(adapter.probe_hyper(), d_model=D, num_heads=H, d_k=D // H, d_v=D // H)
    vocabs = {base[v] for v in VOCABS if v in base} if adapter.comp.name == "model" else set()
    f1, f2 = [f for f in (3, 5, 7, 9, 11) if f not in vocabs | {D, W}][:2]
    notes = list(adapter.notes)         # the extra builds' guesses are the probe build's again
    try:
        a = _shapes(adapter, adapter.construct(dict(base, d_ff=f1)))
        b = _shapes(adapter, adapter.construct(dict(base, d_ff=f2)))
        if a != b or any(f1 in s or f2 in s for s in a):
            return                      # the candidate takes d_ff (or uses no matrices at all)
        wide = a if fixed else _shapes(adapter, adapter.construct(
            dict(base, d_model=W, num_heads=H, d_k=W // H, d_v=W // H, d_ff=7)))
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    finally:
        adapter.notes[:] = notes
    both = set() if fixed else {k for k in _ratios(a, D) & _ratios(wide, W) if k * D not in vocabs}
    constant = (_hidden(a, D) & _hidden(wide, W)) - vocabs
    if not both and len(constant) == 1:
        f = constant.pop()
        adapter.caps.fixed_sizes["d_ff"] = f
        how = (f"at the model width {fixed} the code fixes" if fixed else "and two d_model")
        adapter.notes.append(f"the feed-forward width is fixed by the candidate's code at {f} (built "
                             f"with two different d_ff {how}, its hidden width did not change): "
                             f"d_ff drawn as {f}")
    if len(both) == 1:
        k = both.pop()
        adapter.caps.d_ff_ratio = k
        adapter.notes.append(f"the feed-forward width is fixed by the candidate's code at {k} x "
                             f"d_model (built with two different d_ff, its shapes did not change): "
                             f"d_ff drawn as {k} * d_model")
