"""Running one example: feed inputs, masks and parameters, read the output, run the backward."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..components import REF, Case
from ..core.options import CandidateProblem
from .autograd_tensors import given_backward
from .execute_backward import BackwardMixin
from .recognise import hooks
from .run_state import Instance, Produced
from .slots import candidate_arrays, convert_mask
from .table_call import execute_table

CALL, FORWARD, MASK, OUTPUT = (hooks(k) for k in ("call", "forward", "mask", "output"))


class ExecuteMixin(BackwardMixin):
    """Adapter methods that call the candidate (see adapters.Adapter); the backward half in
    execute_backward.py."""

    # -- running ----------------------------------------------------------------------------------
    def execute(self, inst: Instance, case: Case, grad: bool = True) -> Produced:
        """Forward (and backward where the candidate has one, unless `grad` is False: then the
        forward alone, on inputs and parameters that do not require gradients)."""
        if inst.table:
            return execute_table(self, inst, case, Produced(), self._name(), self._mark_missing)
        ops, dtype = self.ops, self.opts.dtype
        torch_mode = self.framework == "torch" and grad
        produced = Produced()
        cand_vals = candidate_arrays(inst.entries, case.params, dtype)
        # parameters: written into modules, or passed as arguments to functions
        param_leaves: dict[str, Any] = {}
        if inst.obj is not None:
            for cname, arr in cand_vals.items():
                inst.slots[cname].set(arr)
        else:
            for cname, arr in cand_vals.items():
                param_leaves[cname] = ops.leaf(arr, grad=torch_mode)
        leaves, feeds, fed_np, masks_np, mask_feeds, values = self.feed(case, torch_mode)
        # call
        extra = dict(param_leaves)
        values = OUTPUT.with_token_ids(self.caps, values, feeds, ops)     # a table from ids
        ret = inst.binding.call(inst.call, values, extra)
        self._last_call = ({inst.binding.arg_of.get(n, n): f for n, f in feeds.items()}, ret)
        # inputs must come back untouched
        for name, f in feeds.items():
            now = ops.to_np(f)
            if now.shape != fed_np[name].shape or not np.array_equal(now, fed_np[name], equal_nan=True):
                arg = inst.binding.arg_of.get(name, name)
                raise CandidateProblem("mutates_input", f"the candidate modified its input {arg!r} "
                                       f"({name}) in place; a forward must leave its inputs as "
                                       f"they were")
        for name, f in mask_feeds.items():
            if f is None:
                continue
            now = ops.to_np(f)
            if now.shape != masks_np[name].shape or not np.array_equal(now, masks_np[name]):
                arg = inst.binding.arg_of.get(name, name)
                raise CandidateProblem("mutates_input", f"the candidate modified the mask argument "
                                       f"{arg!r} in place")
        if self.mode == "pair":
            if not (isinstance(ret, tuple) and len(ret) == 2):
                raise CandidateProblem("wrong_type", f"the forward of a forward/backward pair must "
                                       f"return (out, cache), got {type(ret).__name__}"
                                       + (f" of length {len(ret)}" if isinstance(ret, tuple) else ""))
            ret, cache = ret
        if self.caps.one_sequence:
            ret = self._one_sequence_out(ret)
        out, weights = self.parse_output(ret, case, produced)
        if self.caps.time_first and len(out.shape) == 3:        # (T, B, d) -> (B, T, d)
            out = out.swapaxes(0, 1)
        if self.caps.bh_layout:                          # (B*H, T, d) -> (B, H, T, d)
            out = FORWARD.bh_split(out, case.out_shape)
            weights = None if weights is None else FORWARD.bh_split(weights, case.weights_shape)
        if self.key_perm is not None:                          # back to the original order
            rows = FORWARD.lens_axes(self.comp.name, case.self_attention)[1]
            if weights is not None and tuple(weights.shape) == tuple(case.weights_shape or ()):
                weights = FORWARD.untake_last_keys(weights, self.key_perm)
                if rows:
                    weights = FORWARD.untake_keys(weights, self.key_perm, len(weights.shape) - 2)
            if rows and tuple(out.shape) == tuple(case.out_shape):
                out = FORWARD.untake_keys(out, self.key_perm, 1)
        if self.caps.returns_table:                      # a positional table: x + table
            out = OUTPUT.add_input(out, feeds["x"], case.out_shape)
            self._mark_missing(case, produced, OUTPUT.no_grad)
        produced.values["output"] = ops.to_np(out)
        produced.dtypes["output"] = ops.dtype_name(out)
        if weights is not None:
            produced.values["attention_weights"] = ops.to_np(weights)
        if tuple(produced.values["output"].shape) != tuple(case.out_shape) or \
                self.caps.returns_table or not grad:
            return produced  # the runner reports the shape; no backward on a wrong shape
        # backward
        if self.framework == "torch":
            self._torch_backward(out, case, leaves, param_leaves, inst, produced)
        elif self.mode == "pair":
            self._pair_backward(cache, case, inst, produced)
        elif (bwd := given_backward(self.hooks, ops, inst.obj)) is not None:   # adapter file, own autograd
            self._module_backward(case, inst, produced, backward=bwd)
        elif inst.obj is not None and callable(getattr(inst.obj, "backward", None)):
            self._module_backward(case, inst, produced)
        else:
            reason = "the candidate is a forward-only NumPy function (give a forward/backward pair " \
                     "to have gradients checked)"
            self._mark_missing(case, produced, reason)
        return produced

    def feed(self, case: Case, grad: bool):
        """Inputs and masks as the candidate takes them: leaves (collecting gradients), what is fed,
        numpy copies to check they come back untouched, and the values by source name."""
        ops, dtype = self.ops, self.opts.dtype
        bh = self.caps.bh_layout
        lens = self.caps.valid_lens
        self.key_perm = None
        for n, keep in case.masks.items():
            if n in lens and keep is not None:
                self.key_perm = FORWARD.key_order(keep)            # (B, Tk): kept keys first
        leaves, feeds, fed_np = {}, {}, {}
        for name, a in case.inputs.items():
            is_float = a.dtype == REF
            arr = a.astype(dtype) if is_float else a
            leaves[name] = ops.leaf(arr, grad=grad and is_float)
            feeds[name] = ops.feed(leaves[name])
            fed_np[name] = arr.copy()
            axis = FORWARD.lens_axes(self.comp.name, case.self_attention)[0].get(name)
            if self.key_perm is not None and axis is not None:
                feeds[name] = FORWARD.take_keys(feeds[name], self.key_perm, axis)
                fed_np[name] = FORWARD.take_keys(fed_np[name], self.key_perm, axis)
            if bh:                                              # (B, H, T, d) -> (B*H, T, d)
                feeds[name] = FORWARD.bh_merge(feeds[name])
                fed_np[name] = FORWARD.bh_merge(fed_np[name])
            if self.caps.time_first and len(arr.shape) == 3:   # (B, T, d) -> (T, B, d)
                feeds[name], fed_np[name] = feeds[name].swapaxes(0, 1), fed_np[name].swapaxes(0, 1)
        masks_np = {}
        for n, keep in case.masks.items():
            if n in lens:
                if keep is not None:
                    keep = FORWARD.take_keys(np.asarray(keep), self.key_perm, 3)
                masks_np[n] = FORWARD.lens_mask(keep, n, per_query=lens[n],
                                                heads=case.inputs["q"].shape[1] if bh else 0)
            elif bh and keep is not None:
                m = convert_mask(keep, replace(self.opts, mask_rank=4), dtype)
                masks_np[n] = FORWARD.bh_merge(np.broadcast_to(
                    m, (m.shape[0], case.inputs["q"].shape[1]) + m.shape[2:])).copy()
            elif keep is not None and (getattr(self, "torch_mha_mask", False) or self.heads_merged_mask):
                H = case.hyper["num_heads"]
                masks_np[n] = MASK.torch_form(keep, self.opts, dtype, H, not self.heads_merged_mask)
            else:
                if keep is None and n in getattr(self, "required_masks", ()):
                    keep = self._all_keep(case, n)      # a mask the signature requires
                masks_np[n] = MASK.call_mask(self, convert_mask(keep, self.opts, dtype))
        mask_feeds = {n: (None if v is None else ops.from_np(v)) for n, v in masks_np.items()}
        values = {**feeds, **mask_feeds}
        if case.self_attention:
            values["x"] = feeds["x"]
        if self.caps.one_sequence:                        # (T, d) code: batch 1 dropped
            values = {k: (CALL.squeeze_mask(v) if k in masks_np else CALL.squeeze_input(v, self.comp.name))
                      for k, v in values.items()}
        if self.caps.list_input:
            values[FORWARD.list_source] = [values[n] for n in getattr(self, "list_order", None)
                                           or [s.name for s in self.comp.inputs]]
        return leaves, feeds, fed_np, masks_np, mask_feeds, values

    def _one_sequence_out(self, ret):
        """What one-sequence code returned, with the batch axes put back."""
        if isinstance(ret, (tuple, list)):
            return tuple(CALL.unsqueeze(r, self.comp.name) if hasattr(r, "shape") else r
                         for r in ret)
        return CALL.unsqueeze(ret, self.comp.name) if hasattr(ret, "shape") else ret

    def _all_keep(self, case: Case, name: str):
        """An all-attend keep-mask (B, 1, Tq, Tk) for a mask argument the candidate requires
        (`attention(q, k, v, mask)`): the same computation as no mask, in its convention."""
        spec = next((m for m in self.comp.masks if m.name == name), None)
        ex = case.example
        try:
            return np.ones((int(ex["B"]), 1, int(ex[spec.q]), int(ex[spec.k])), dtype=bool)
        except (KeyError, TypeError, AttributeError):
            return None

    def _mark_missing(self, case: Case, produced: Produced, reason: str) -> None:
        for q in self.comp.quantities(case):
            if q.kind in ("input_grad", "param_grad"):
                produced.missing.setdefault(q.key, reason)

    def parse_output(self, ret, case: Case, produced: Produced):
        ops = self.ops
        is_arr = lambda x: ops.is_array(x) or isinstance(x, np.ndarray)  # noqa: E731
        if is_arr(ret):
            arrays = [ret]
        elif isinstance(ret, (tuple, list)) and ret and any(is_arr(r) for r in ret):
            arrays = [r for r in ret if is_arr(r)]
        elif isinstance(ret, dict):
            arrays = [ret[k] for k in ("output", "out", "logits", "x", "y", "result", "context",
                                       "attn", "attention", "weights", "attn_weights",
                                       "attention_weights", "probs", "p_attn", "scores")
                      if k in ret and is_arr(ret[k])]
            if not arrays:
                raise CandidateProblem("wrong_type", f"forward returned a dict with keys "
                                       f"{sorted(map(str, ret))[:10]}; expected the output array")
        else:
            raise CandidateProblem("wrong_type", f"forward returned {type(ret).__name__}; expected "
                                   f"an array/tensor, or a tuple (output, attention_weights)")
        want = tuple(case.out_shape)
        out_i = 0  # (output, weights) as tutorials return it; (weights, output) when shapes say so
        if len(arrays) > 1 and case.weights_shape is not None and \
                tuple(case.weights_shape) != want and tuple(arrays[1].shape) == want and \
                tuple(arrays[0].shape) == tuple(case.weights_shape):
            out_i = 1
        out = arrays[out_i]
        weights = None
        rest = [a for i, a in enumerate(arrays) if i != out_i]
        if self.comp.returns_weights and rest and case.weights_shape is not None:
            B, H, Tq, Tk = case.weights_shape
            for a in rest:
                s = tuple(a.shape)
                if s == (B, H, Tq, Tk) or (self.caps.bh_layout and s == (B * H, Tq, Tk)):
                    weights = a                    # (B*H, ..) weights are split back by the caller
                    break
                if s == (B, Tq, Tk) and not self.caps.bh_layout:   # averaged over the heads
                    weights = a
                    produced.weights_averaged = True
                    break
            else:
                weights = rest[0]
        return out, weights
