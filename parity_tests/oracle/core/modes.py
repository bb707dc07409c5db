"""One example in other modes (sandbox/modes.py runs them in the worker): a quantity that matched the
reference in the main run (autograd on, eval(), forward then backward) must match it as well
without autograd, in train() mode built with dropout 0, from the same instance called a second
time, and, for a NumPy backward, with another example's forward and backward run in between. A
difference is a mismatch of that quantity that names the mode: the reference check alone never runs
those paths.

Tolerance: the quantity's own reference tolerance at the check's dtype (harness.compare.measure),
never bit equality. Correct code may take another
kernel there (nn.MultiheadAttention's and nn.TransformerEncoderLayer's fused inference path under
no_grad in eval(), scaled_dot_product_attention's backends), which rounds like any other correct
implementation; a path that differs by less than that tolerance would pass the reference comparison
as well. Runs in the parent, on validated float64 arrays.

Inputs: each other mode runs on inputs of its own (`other_inputs`: the example's input values
shuffled, negated, scaled and perturbed with a draw the worker cannot predict, one draw per mode and
one for the run under inference mode, same shapes, masks, weights and upstream gradient), and the
parent compares each with its own reference computed on that mode's inputs. Replayed on inputs the
candidate has seen, a candidate remembering the outputs it gave by the bytes of its inputs hands
back a remembered right answer and hides the path the mode exists to run: on the main run's inputs
(`oracle_hostile/remembers_inputs.py`), or on inputs shared by the modes, an earlier mode's answer
given back in a later one (`remembers_across_modes.py`: the train run) or under inference mode
(`remembers_for_inference.py`).
"""
from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from parity_tests.harness.compare import measure

from ..components import REF, Case
from ..sandbox.ctor_modes import joined_causal
from ..sandbox.modes import MODES, query_key_lengths, updated_weights

WHAT = {
    "nograd": ("differs under torch.no_grad() (inputs not requiring gradients, as at inference) "
               "from the reference (the modes run on inputs of their own, the same weights): the "
               "inference path computes something else"),
    "train": ("differs in train() mode (or called with training=True), built and called with "
              "every dropout rate 0, from the reference (the modes run on inputs of their own, "
              "the same weights): a dropout at a rate of its own (not the one it was given) "
              "or another training-only path"),
    "eval_rate": ("differs when called with training=False and a dropout rate of 0.5 or another "
                  "drawn for the example (0.05 to 0.95) from the reference (the modes run on "
                  "inputs of their own): dropout applied when not "
                  "training (it must be the identity then)"),
    "repeat": ("differs when the same instance is called a second time, after its first forward "
               "and backward and with its weights written again with other values (as an "
               "optimizer step writes them), from the reference on those weights (the modes run "
               "on inputs of their own): the first call left state behind (keys and values kept "
               "in a cache, a copy of a weight used instead of the weight, a counter) that "
               "changes the next call"),
    "decoy": ("changes when another example's forward and backward run between this example's "
              "forward and its backward: the backward reads state a previous call left behind "
              "(module or class state) instead of its cache or its own instance"),
    "causal_flag": ("differs when called with is_causal=True and no mask from the reference with "
                    "a causal mask (query i attends keys 0..i; the modes run on inputs of their "
                    "own): is_causal taken and ignored, or applied another way"),
    "causal_ctor": ("differs when built with its constructor's causal flag (`causal`, "
                    "`is_causal`, `masked`, ...) True and called with no mask, or with the "
                    "example's padding where it takes a mask, from the reference with a causal "
                    "mask (query i attends keys 0..i), joined to that padding (the modes run on "
                    "inputs of their own): the flag taken and ignored, applied another way, or "
                    "dropping a mask it is given"),
    "bias_ctor": ("differs when built with its constructor's bias flag (`bias`, `use_bias`, ...) "
                  "False from the reference with every bias 0 (the modes run on inputs of their "
                  "own, the same weights): the flag taken and ignored, biases still added"),
    "default_ctor": ("differs when built with the optional head widths the oracle passed "
                     "(`d_k`, defaulting to a number, beside the head count) left at their defaults, "
                     "as a call giving only the assignment's sizes leaves them, from the reference "
                     "(the weights kept their shapes; the modes run on inputs of their own): a "
                     "default right only at the author's sizes, used in the arithmetic (the scale "
                     "1/sqrt(d_k)) and never handed over"),
    "rate_ctor": ("differs when built with its constructor's dropout rates at 0.5 or another "
                  "rate drawn for the example (0.05 to 0.95; those its config object holds too; 0 "
                  "in every other run) and called in eval(), where dropout is the identity, from the "
                  "reference (the modes run on inputs of their own, the same weights): an eval() "
                  "output scaled by 1 - rate, or dropout applied in eval()"),
    "aliased": ("differs when one array is passed as query, key and value (`mha(x, x, x)`, the "
                "call a network makes; the gradient of that array is dq + dk + dv) from the "
                "reference (the modes run on inputs of their own): a path taken when the inputs "
                "are the same object (`query is key`)"),
    "strided": ("differs when its inputs are non-contiguous views holding the same values (the "
                "last two axes transposed in memory, or, on about half the examples, every axis "
                "but the last reversed in memory and writable, as an attention's heads are after "
                "`.transpose(1, 2)`) from the reference (the modes run on inputs of their own): a "
                "path taken on the inputs' memory layout"),
    "broadcast_mask": ("differs when a key padding mask is handed over with one query row, "
                       "(B, 1, 1, Tk), the broadcast form `(src != pad).unsqueeze(1).unsqueeze(2)` "
                       "makes, or a mask alike in every batch row (a causal one) with one batch "
                       "row, (1, 1, Tq, Tk), as `torch.tril(...)[None, None]` makes it, from the "
                       "reference with the same mask (the modes run on inputs of their own): a "
                       "mask read only in its full form"),
    "relaid": ("differs when its inputs and upstream gradient are handed over in other memory "
               "layouts holding the same values (Fortran order, negative strides, a slice of a "
               "wider buffer, a broadcast with stride 0) from the reference (the modes run on "
               "inputs of their own): a path taken on the memory layout"),
    "mask_dtype": ("differs when its masks are handed over in another dtype the assignment "
                   "accepts or the candidate's code says it takes (`mask_dtypes_also`: bool, 0/1 "
                   "int or 0/1 float, the same positions hidden) from the reference (the modes run "
                   "on inputs of their own): masks read right in one dtype only"),
    "soak": ("differs when one instance has been called several times before (3 to 16 calls, a "
             "number drawn from the check's secret, each a forward and a backward on other "
             "inputs) and its weights then written again with other values, from the reference "
             "on those weights (the modes run on inputs of their own): state kept across calls, "
             "a weight copy kept from some call on, or a path taken after some number of calls"),
    "assigned_form": ("differs when its masks or inputs are handed over in the assignment's form "
                      "((batch, 1, Tq, Tk) masks, (batch, heads, T, d) attention inputs), which a "
                      "probe found it refusing, from the reference (the modes run on inputs of "
                      "their own): a form refused only where the oracle probed, and computed "
                      "otherwise everywhere else"),
    "frozen_input": ("differs when its inputs do not require gradients while its parameters do (a "
                     "network's first layer, a layer after a frozen one) from the reference (the "
                     "modes run on inputs of their own): a backward taking another path then "
                     "(`ctx.needs_input_grad`, `x.requires_grad`)"),
}

ALIASED = ("query", "key", "value")      # sandbox/layout_modes.aliased


def kept_rows(case: Case, a: np.ndarray) -> np.ndarray:
    """Fully masked query rows zeroed, as the reference comparison does for the output."""
    if case.row_keep is None:
        return a
    keep = case.row_keep.reshape(case.row_keep.shape + (1,) * (a.ndim - 2))
    return np.where(keep, a, 0.0) if keep.ndim == a.ndim else a


def other_inputs(case: Case, salt: int, dtype: str, run: str = "") -> Case:
    """The example with other input values for the other mode `run`: each float input's values
    shuffled, negated, scaled by 0.75 and perturbed by a quarter of their spread, from a generator
    seeded by the check's own secret `salt`, the run's name and the example (the same example gives
    the same inputs within one check, so a search replays alike; each run draws its own, so no run
    sees inputs another run saw; the worker never sees the salt). Inputs equal to each other stay
    equal (self-attention's q = k = v); integer ids, masks, weights, upstream gradient and sizes
    are the example's own, shared with it (a parameter found absent is absent in both)."""
    h = hashlib.blake2b(salt.to_bytes(16, "little") + run.encode(), digest_size=16)
    for name, a in case.inputs.items():
        h.update(name.encode() + np.ascontiguousarray(a).tobytes())
    seed = int.from_bytes(h.digest(), "little")
    rng = np.random.default_rng(seed)
    made: dict[bytes, np.ndarray] = {}
    inputs = {}
    for name, a in case.inputs.items():
        key = a.dtype.str.encode() + str(a.shape).encode() + np.ascontiguousarray(a).tobytes()
        if a.dtype != REF or a.size == 0:
            inputs[name] = a
            continue
        if key not in made:
            flat = rng.permutation(a.reshape(-1))
            spread = float(np.std(a)) or 1.0
            new = -0.75 * flat.reshape(a.shape) + 0.25 * spread * rng.standard_normal(a.shape)
            made[key] = np.asarray(new, dtype=np.float64).astype(dtype).astype(REF)
        inputs[name] = made[key]
    return dataclasses.replace(case, inputs=inputs)


def causal_case(case: Case, keep_masks: bool = False) -> Case:
    """The causal modes' reference example: its first mask is the causal one (query i attends keys
    0..i, top-left, as F.scaled_dot_product_attention's is_causal), the others none; (B, H, Tq, Tk)
    for sdpa's q (B, H, Tq, d), (B, 1, Tq, Tk) for multi-head attention and layers. `keep_masks`
    (the causal_ctor run): the causal mask and the example's first mask together, where every
    query keeps a key so (a layer built causal is also handed its padding there)."""
    lengths = query_key_lengths(case)
    if lengths is None or not case.masks:
        return case
    keep = np.tril(np.ones(lengths, dtype=bool))
    q = case.inputs.get("q")
    lead = q.shape[:-2] if q is not None else (next(iter(case.inputs.values())).shape[0], 1)
    first = next(iter(case.masks))
    joined = joined_causal(case) if keep_masks else None
    if joined is not None:
        return joined
    causal = np.broadcast_to(keep, lead + keep.shape).copy()
    return dataclasses.replace(case, masks={n: (causal if n == first else None) for n in case.masks})


def aliased_case(case: Case) -> Case:
    """The aliased mode's example: key and value equal to the query where the three have one shape
    (the worker then passes one object for all three); the example unchanged otherwise (the
    worker then does not run the mode)."""
    arrs = [case.inputs.get(n) for n in ALIASED]
    if any(a is None for a in arrs) or len({a.shape for a in arrs}) != 1:
        return case
    return dataclasses.replace(case, inputs={**case.inputs, "key": arrs[0], "value": arrs[0]})


def mode_inputs(case: Case, salt: int, dtype: str, mode: str) -> Case:
    """The example `mode` runs on: inputs of its own (`other_inputs`), the causal mask for the
    causal modes, one array as query, key and value for the aliased mode."""
    other = other_inputs(case, salt, dtype, mode)
    if mode in ("causal_flag", "causal_ctor"):
        return causal_case(other, keep_masks=mode == "causal_ctor")
    if mode == "relaid":
        return batch_alike_case(other)
    return aliased_case(other) if mode == "aliased" else other


def batch_alike_case(case: Case) -> Case:
    """The relaid mode's example: where it has more than one batch row and its masks are alike in
    every batch row (none, causal, a leading axis of 1), every input and the upstream gradient
    repeat their first batch row, so the worker can hand them over as broadcasts (stride 0) and
    every row's gradient is the same; the example unchanged otherwise."""
    d = case.dout
    if not isinstance(d, np.ndarray) or d.ndim < 2 or d.shape[0] < 2:
        return case
    rows = d.shape[0]

    def alike(a) -> bool:
        return a is None or a.ndim == 0 or a.shape[0] != rows or np.array_equal(a, np.repeat(a[:1], rows, 0))
    if not all(alike(m) for m in (*case.masks.values(), case.row_keep)):
        return case
    inputs = {n: np.repeat(a[:1], rows, axis=0) if a.ndim and a.shape[0] == rows else a
              for n, a in case.inputs.items()}
    return dataclasses.replace(case, inputs=inputs, dout=np.repeat(d[:1], rows, axis=0))


def mode_reference(comp, mode: str, case: Case) -> dict:
    """The parent's reference for `mode` on its example: the weights the worker wrote before the
    repeat mode's second call (sandbox/modes.updated_weights); every bias 0 for bias_ctor; for the
    aliased mode the one input's gradient is the sum of the three uses' (dq + dk + dv, kept as
    the query's; key's and value's are not compared)."""
    if mode in ("repeat", "soak"):       # its last call runs on the updated weights
        case = dataclasses.replace(case, params=updated_weights(case.params, case.absent))
    ref = comp.reference(without_biases(case) if mode == "bias_ctor" else case)
    if mode == "aliased" and all(f"grad_input:{n}" in ref for n in ALIASED):
        ref = dict(ref)
        ref["grad_input:query"] = sum(ref.pop(f"grad_input:{n}") for n in reversed(ALIASED))
    return ref


def without_biases(case: Case) -> Case:
    """The bias_ctor mode's reference example: every bias (projections' and norms') 0."""
    return dataclasses.replace(case, params={r: np.zeros_like(a) if r.split(".")[-1] == "bias" else a
                                             for r, a in case.params.items()})


def mode_difference(reply, key: str, kind: str, label: str, case: Case, dtype: str,
                    expected: dict | None = None, comp=None):
    """(mode, measure report) for the first mode whose `key` differs from what it should be, or
    None: `expected` is {mode: the parent's reference on that mode's own inputs} (`other_inputs`);
    without it, the main run's values (modes run on the main run's inputs). A mode that returned
    this quantity with another shape, or not at all while returning others, differs too. `comp`:
    the component, whose `conditioning` scales the tolerance on the inputs the mode ran on."""
    if reply.values.get(key) is None:
        return None
    for mode in MODES:
        got = reply.modes.get(mode)
        if not got or (key not in got and key == "attention_weights"):
            continue            # weights returned only when asked for them, or no such mode here
        main = reply.values[key]
        if expected is not None:
            if key not in (expected.get(mode) or {}):
                continue
            main = expected[mode][key]
            if key == "attention_weights" and reply.weights_averaged:
                main = main.mean(axis=1)
        if key not in got:
            if mode == "decoy" or key != "output":
                continue
            got = {key: np.full(main.shape, np.nan)}
        a, b = got[key], main
        if key == "output" and a.shape == b.shape:
            a, b = kept_rows(case, a), kept_rows(case, b)
        ran_on = (reply.mode_cases or {}).get(mode, case) if expected is not None else case
        tol = comp.tolerance(ran_on, key, b, dtype, kind) if comp is not None else None
        rep = measure(f"{label} ({mode})", a, b, dtype=dtype, quantity=kind, tol=tol)
        if not rep.passed:
            return mode, rep
    return None
