"""The worker's extra runs of one example in the other modes a correct submission behaves alike in.

Each runs on inputs of its own, drawn by the parent for that mode alone ("min:MODE:NAME" arrays,
session.mode_case), which compares what it gives with its reference on them (core/modes.py);
nothing here decides anything.
Asked for by name in the "run" request ("modes"); each answers arrays "MODE:KEY" (float64), or
nothing where it does not apply to this candidate:

    nograd   torch: the forward under torch.no_grad(), inputs and functional parameters not
             requiring gradients (code taking another path at inference shows a different output)
    train    a module put in train() mode (torch), or a NumPy object's train() / `training = True`,
             and a forward's own `training`/`train` argument (a function's too) passed True (a
             switch of the other sense, `deterministic`, False: recognise/training_switch):
             built with every dropout rate 0 and called with dropout arguments 0, as always, a
             correct candidate is deterministic and gives its eval() output (a dropout rate of
             its own does not)
    eval_rate  a forward (a function's too) taking both a `training`/`train` argument and a
             dropout rate: called with training False and the rate 0.5 or another drawn for the
             example (ctor_modes.drawn_rate); dropout is the identity
             when not training, so the output must be the main run's (code dropping whenever the
             rate is not 0 differs). At training True and a rate above 0 only statistics could be
             checked: not done (docs/ORACLE.md, red-team round 4)
    repeat   a module called a second time, the same instance, after its first forward and
             backward: what a call leaves behind (keys and values appended to a cache, a weight
             update in backward, a counter) must not change the next call's output. Before that
             second call its weights are written again with other values (`updated_weights`, in
             place, as an optimizer step writes them): a copy of a weight taken by an earlier call
             and used instead of the weight (a lazily fused or transposed matrix) is stale there
    decoy    NumPy backward: between this example's forward and its backward, a forward and
             backward of another example (a fresh instance, other input values); the gradients must
             not change (a backward reading what the last forward left in module or class state,
             not its cache or its own instance, does), and dout must come back unchanged (an
             upstream gradient is shared with the other branches of a residual network)
    causal_flag  an attention function taking `is_causal` (passed False in every other run, as
             F.scaled_dot_product_attention takes it), on an example with as many keys as queries:
             called with is_causal True and no mask; the parent's reference draws the causal mask
             (query i attends keys 0..i). A candidate raising there is not compared (the report
             then lists is_causal as not checked, reading/unvaried.py)
    causal_ctor, bias_ctor  built with a constructor's causal flag True (called with no mask) or its
             bias flag False, a config object's too (sandbox/ctor_modes.py)
    default_ctor  built with the optional head widths the oracle derived (`d_k=64`) left at their
             defaults, where the weights keep their shapes (sandbox/ctor_modes.py)
    rate_ctor  built with the constructor's (or its config's) dropout rates at 0.5 or another rate
             drawn for the example, called in eval() (about half the examples)
             (sandbox/ctor_modes.py)
    aliased, strided, broadcast_mask, relaid  one array passed as query, key and value
             (`mha(x, x, x)`), inputs handed over as non-contiguous views, a key padding mask as
             (B, 1, 1, Tk) and a causal one as (1, 1, Tq, Tk), inputs and upstream gradient in
             other memory layouts (Fortran order, negative strides, a wider buffer, a broadcast)
             (sandbox/layout_modes.py)
    mask_dtype  masks in another dtype the assignment accepts (sandbox/layout_modes.py)
    soak     one instance called a secret number of times (3 to 16) before the call compared
             (sandbox/soak.py)
    frozen_input  torch: inputs not requiring gradients, parameters requiring them (frozen_input.py)
    assigned_form  masks or inputs in the assignment's form where a probe adapted it (assigned_form.py)
"""
from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable

import numpy as np

from ..components import REF, Case
from ..core.options import CandidateProblem
from ..reading.signatures import TRAINING_FLAGS
from ..reading.slots import candidate_arrays
from .assigned_form import assigned_form
from .ctor_modes import BIAS_CTOR, bias_ctor, causal_ctor, drawn_rate, flipped_flag, forward_only, query_key_lengths  # noqa: F401
from .ctor_modes import default_ctor as default_ctor
from .ctor_modes import rate_ctor as rate_ctor
from .frozen_input import frozen_input
from .layout_modes import aliased, broadcast_mask, mask_dtype, relaid, strided
from .raised_there import candidate_raised
from .soak import soak

MODES = ("nograd", "train", "eval_rate", "repeat", "decoy", "causal_flag", "causal_ctor", "bias_ctor",
         "default_ctor", "rate_ctor", "aliased", "strided", "broadcast_mask", "relaid", "mask_dtype", "soak",
         "frozen_input", "assigned_form")
CAUSAL_FLAG = "is_causal"         # reading/signatures.CALL_FLAGS passes it False


def nograd(ad, case: Case, tick=lambda: None) -> dict:
    if ad.framework != "torch":
        return {}
    inst = ad.instantiate(case)
    with ad.ops.torch.no_grad():
        return forward_only(ad, inst, case)


def _to_train(obj: Any) -> bool:
    """Put a built module in training mode; False where it has none."""
    if obj is None:
        return False
    train = getattr(obj, "train", None)
    if callable(train):
        try:
            train()
            return True
        except TypeError:      # a NumPy `train(data, ...)` method: not a mode switch
            pass
    if isinstance(getattr(obj, "training", None), bool):
        with contextlib.suppress(Exception):
            obj.training = True
            return True
    return False


def _flags(ad, inst) -> list[str]:
    """The forward's training arguments the main run passed their inference value: the usual
    spellings passed False, and the switches read by their words (`use_dropout` False,
    `deterministic` True, `mode` "eval": recognise/training_switch)."""
    own = getattr(ad, "switch_inference", None) or {}
    return [a for a, v in inst.binding.constants.items()
            if (a in own and type(v) is type(own[a]) and v == own[a])
            or (a not in own and a in TRAINING_FLAGS and v is False)]


def _with(inst, values: dict) -> None:
    """The forward called with these constants instead (the instance's binding is its own copy)."""
    inst.binding = dataclasses.replace(inst.binding, constants={**inst.binding.constants, **values})


def train(ad, case: Case, tick=lambda: None) -> dict:
    inst = ad.instantiate(case)
    if inst.table:
        return {}
    flags = _flags(ad, inst)
    moved = _to_train(inst.obj)
    if not moved and not flags:
        return {}
    training = getattr(ad, "switch_training", None) or {}
    _with(inst, {a: training.get(a, True) for a in flags})
    return forward_only(ad, inst, case)


def eval_rate(ad, case: Case, tick=lambda: None) -> dict:
    if getattr(ad, "eval_rate_args", None) == ():
        return {}              # its forward has no such arguments (a signature's, every example)
    inst = ad.instantiate(case)
    rates = [a for a, v in inst.binding.constants.items() if "drop" in a.lower()
             and isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0]
    if inst.table or not rates or not _flags(ad, inst):
        ad.eval_rate_args = ()
        return {}
    _with(inst, dict.fromkeys(rates, drawn_rate(case)))
    return forward_only(ad, inst, case)


def repeat(ad, case: Case, tick=lambda: None) -> dict:
    if ad.mode in ("instance", "function", "pair"):
        return {}              # one object for every run already, or no object to keep state
    inst = ad.instantiate(case)
    if inst.table or inst.obj is None:
        return {}
    want = candidate_arrays(inst.entries, case.params, ad.opts.dtype)
    for name, arr in want.items():
        inst.slots[name].set(arr)
    before = {name: _held(inst.slots[name]) for name in want}
    ad.execute(inst, case)
    tick()                     # each call is a stage of its own under the parent's --timeout
    changed = [n for n in want if before[n] is not None and not same_values(
        _held(inst.slots[n]), before[n])]
    if changed:
        raise CandidateProblem("mutates_input", f"the candidate changed its own parameter "
                               f"{changed[0]!r} during its forward and backward (a weight update of "
                               f"its own?); a layer must leave its parameters as they were")
    return forward_only(ad, inst, dataclasses.replace(case, params=updated_weights(case.params)))


def updated_weights(params: dict, keep=()) -> dict:
    """What an optimizer step might leave in each weight: its values rolled by one along the last
    axis and scaled by -0.5 (exact in every float dtype); those in `keep` (held at a neutral value
    because the candidate has no such parameter) as they are."""
    return {r: a if r in keep or not isinstance(a, np.ndarray) or a.dtype.kind != "f" else
            -0.5 * (np.roll(a, 1, axis=-1) if a.ndim else a) for r, a in params.items()}


def same_values(now: np.ndarray | None, before: np.ndarray) -> bool:
    """Whether a parameter holds the values it held, its unit axes aside: NumPy code that reshapes
    its gain once to the input's rank (`self.gamma = np.expand_dims(self.gamma, 0)`) changed no
    weight; any value changed, or a shape that is more than unit axes added or removed, did."""
    if now is None:
        return False
    if now.shape != before.shape:
        if [n for n in now.shape if n != 1] != [n for n in before.shape if n != 1]:
            return False
        now = now.reshape(before.shape)
    return bool(np.array_equal(now, before, equal_nan=True))


def _held(slot) -> np.ndarray | None:
    """The value a parameter slot holds now (a copy; None where it cannot be read)."""
    held = next((getattr(slot, a) for a in ("p", "v") if getattr(slot, a, None) is not None), None)
    try:
        if held is None:
            held = slot.array()
        if hasattr(held, "detach"):
            return held.detach().cpu().numpy().copy()
        return np.array(held, dtype=np.float64, copy=True)
    except Exception:  # noqa: BLE001 - a slot of an unusual kind: not compared
        return None


def decoy_case(case: Case) -> Case:
    """The same example with other input values (same shapes, masks, weights, upstream gradient)."""
    inputs = {n: (np.flip(a, axis=-1) * -0.75 + 0.125 if a.dtype == REF else a)
              for n, a in case.inputs.items()}
    return Case(component=case.component, example=case.example, hyper=case.hyper, inputs=inputs,
                masks=dict(case.masks), params=dict(case.params), dout=case.dout,
                out_shape=case.out_shape, weights_shape=case.weights_shape,
                row_keep=case.row_keep, self_attention=case.self_attention,
                settings=case.settings)


def decoy(ad, case: Case, tick=lambda: None) -> dict:
    """Gradients of `case` with another example's forward and backward run just before its
    backward; {} where the candidate has no NumPy backward of its own to interleave."""
    if ad.framework != "numpy" or getattr(ad, "hooks", None) is not None:
        return {}
    other = decoy_case(case)
    busy = [False]

    def interleaved(real: Callable) -> Callable:
        def call(*a, **k):
            if busy[0]:
                return real(*a, **k)
            busy[0] = True
            try:
                ad.execute(ad.instantiate(other), other)
            finally:
                busy[0] = False
            tick()
            dout = a[0] if a and isinstance(a[0], np.ndarray) else None
            kept = None if dout is None else dout.copy()
            grads = real(*a, **k)
            if kept is not None and not np.array_equal(dout, kept, equal_nan=True):
                raise CandidateProblem("mutates_input", "the candidate's backward modified its "
                                       "upstream gradient dout in place; a backward must leave "
                                       "dout as it was (in a network it is shared with the "
                                       "other branches)")
            return grads
        return call

    if ad.mode == "pair" and callable(getattr(ad, "backward", None)):
        real = ad.backward
        ad.backward = interleaved(real)
        try:
            p = ad.execute(ad.instantiate(case), case)
        finally:
            ad.backward = real
    elif ad.mode != "instance":
        inst = ad.instantiate(case)
        real = getattr(inst.obj, "backward", None)
        if inst.obj is None or not callable(real):
            return {}
        try:
            setattr(inst.obj, "backward", interleaved(real))
        except Exception:  # noqa: BLE001 - slots, a property: not interleaved
            return {}
        p = ad.execute(inst, case)
    else:                      # one object for every example: its own state is its cache
        return {}
    return {k: v for k, v in p.values.items() if k not in ("output", "attention_weights")}


def causal_flag(ad, case: Case, tick=lambda: None) -> dict:
    binding = getattr(ad, "binding", None)
    if ad.comp.name != "sdpa" or binding is None or binding.constants.get(CAUSAL_FLAG) is not False:
        return {}
    q, k = case.inputs.get("q"), case.inputs.get("k")
    if q is None or k is None or q.ndim < 2 or q.shape[-2] != k.shape[-2]:
        return {}                  # top-left or bottom-right alignment: compared only when equal
    case = dataclasses.replace(case, masks={n: None for n in case.masks})
    inst = ad.instantiate(case)
    if inst.table or inst.binding.constants.get(CAUSAL_FLAG) is not False:
        return {}
    _with(inst, {CAUSAL_FLAG: True})
    try:
        return forward_only(ad, inst, case)
    except Exception as exc:  # noqa: BLE001 - not taken as F.sdpa takes it: left "not checked"
        if not candidate_raised(exc):
            raise
        return {}


def inference(ad, case: Case, tick=lambda: None) -> dict:
    """torch: the forward under torch.inference_mode() (not one of MODES: tensors made there and
    kept by correct code, a mask cached at module level, cannot be saved for a later backward, so
    the parent asks for it only at the end of a check, after every run with autograd: `infer`)."""
    if ad.framework != "torch":
        return {}
    inst = ad.instantiate(case)
    with ad.ops.torch.inference_mode():
        return forward_only(ad, inst, case)


CALLS = 2          # the most calls (each followed by a tick) one mode's run makes
RUNS: dict[str, Callable] = {"nograd": nograd, "train": train, "eval_rate": eval_rate,
                             "repeat": repeat, "decoy": decoy, "causal_flag": causal_flag,
                             "causal_ctor": causal_ctor, "bias_ctor": bias_ctor, "default_ctor": default_ctor,
                             "rate_ctor": rate_ctor,
                             "aliased": aliased, "strided": strided, "broadcast_mask": broadcast_mask,
                             "relaid": relaid, "mask_dtype": mask_dtype, "soak": soak,
                             "frozen_input": frozen_input, "assigned_form": assigned_form}
WHAT = {"nograd": "calling the candidate under torch.no_grad()",
        "train": "calling the candidate in train() mode (dropout 0)",
        "eval_rate": "calling the candidate with training False and a dropout rate of 0.5 or another drawn rate",
        "repeat": "calling the same instance a second time",
        "decoy": "calling the candidate's backward after another example's forward",
        "causal_flag": "calling the candidate with is_causal=True and no mask",
        "causal_ctor": "building the candidate with its causal flag True and calling it with no mask "
                       "or its padding mask",
        "bias_ctor": "building the candidate with its bias flag False",
        "default_ctor": "building the candidate with the head widths the oracle derived left at their defaults",
        "rate_ctor": "building the candidate with its constructor's dropout rates at 0.5 or another drawn rate "
                     "(called in eval())",
        "aliased": "calling the candidate with one array as query, key and value",
        "strided": "calling the candidate on non-contiguous inputs",
        "broadcast_mask": "calling the candidate with masks of one query row or one batch row",
        "relaid": "calling the candidate on inputs and an upstream gradient in other memory layouts",
        "mask_dtype": "calling the candidate with its masks in another dtype the assignment accepts",
        "soak": "calling one instance of the candidate many times",
        "frozen_input": "calling the candidate on inputs not requiring gradients",
        "assigned_form": "calling the candidate with masks or inputs in the assignment's form"}
