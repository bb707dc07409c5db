"""Running one example's backward: the candidate's gradients (autograd, a functional pair's
backward(dout, cache), a module's backward(dout)) read into the reference's quantities."""
from __future__ import annotations

import numpy as np

from ..components import REF, Case
from ..core.completeness import UNREAD
from ..core.options import CandidateProblem
from . import naming
from .layer_api_backward import bound_backward
from .recognise import hooks
from .run_state import Instance, Produced
from .slots import entry_grad, read_param_grad
from .upstream_layout import upstream, upstream_tensor

BACKWARD, FORWARD = (hooks(k) for k in ("backward", "forward"))


def grad_in_ref_layout(entries: dict, key: str, g: np.ndarray) -> np.ndarray:
    """A parameter gradient a function's backward returned in the candidate's layout (a transposed
    (in, out) matrix, a (1, n) bias) in the reference's, as module gradients are read."""
    e = entries.get(key.split(":", 1)[1]) if key.startswith("grad_param:") else None
    return read_param_grad(e, g) if e is not None and e.cand is not None else g


class BackwardMixin:
    """The backward half of ExecuteMixin (execute.py): called by execute after the forward."""

    def _torch_backward(self, out, case, leaves, param_leaves, inst, produced) -> None:
        torch = self.ops.torch
        if not isinstance(out, torch.Tensor) or not out.requires_grad:
            why = ("the output is not a tensor" if not isinstance(out, torch.Tensor)
                   else "the output does not require grad (computed outside autograd, detached, "
                        "or under torch.no_grad)")
            raise CandidateProblem("missing_gradient", f"cannot backpropagate: {why}",
                                   quantity=self._first_grad_key(case))
        g = upstream_tensor(torch, case.dout, self.opts.dtype)     # its layout kept (layout_modes)
        out.backward(g.to(out.dtype))
        for name, leaf in leaves.items():
            if case.inputs[name].dtype != REF:
                continue
            key = f"grad_input:{name}"
            if leaf.grad is None:
                produced.values[key] = np.zeros(leaf.shape, dtype=self.opts.dtype)
                produced.notes[key] = "no gradient reached this input (it was treated as zeros)"
            else:
                produced.values[key] = leaf.grad.detach().cpu().numpy().copy()
        for ref, e in inst.entries.items():
            key = f"grad_param:{ref}"
            if e.cand is None:
                continue
            zero = []

            def grad_of(cand):
                if inst.obj is not None:
                    g, shape = inst.slots[cand].grad(), inst.slots[cand].shape
                else:
                    leaf = param_leaves[cand]
                    g = None if leaf.grad is None else leaf.grad.detach().cpu().numpy().copy()
                    shape = tuple(leaf.shape)
                if g is None:
                    zero.append(cand)
                    g = np.zeros(shape, dtype=self.opts.dtype)
                return g

            produced.values[key] = entry_grad(e, grad_of)
            if zero:
                produced.notes[key] = "no gradient reached this parameter (treated as zeros)"

    def _first_grad_key(self, case: Case) -> str | None:
        for q in self.comp.quantities(case):
            if q.kind in ("input_grad", "param_grad"):
                return q.key
        return None

    def _grad_targets(self, case: Case, inst: Instance) -> list[tuple[str, str]]:
        """(argument name, quantity key) of the forward's array arguments, in signature order."""
        sig = naming.signature_of(self.obj)
        order = [p.name for p in sig.parameters.values()] if sig else []
        by_arg = {}
        for name in case.inputs:
            if case.inputs[name].dtype == REF:
                by_arg[inst.binding.arg_of.get(name, name)] = f"grad_input:{name}"
        for ref, e in inst.entries.items():
            if e.cand is not None and e.rows is None and not e.parts:
                by_arg[e.cand] = f"grad_param:{ref}"
        listed = [(a, by_arg[a]) for a in order if a in by_arg]
        listed += [(a, k) for a, k in by_arg.items() if a not in order]
        return listed

    def _pair_backward(self, cache, case: Case, inst: Instance, produced: Produced) -> None:
        dout = upstream(case.dout, self.opts.dtype)
        grads = self.backward(dout, cache)
        targets = self._grad_targets(case, inst)
        self._assign_grads(grads, targets, case, inst, produced, "backward(dout, cache)")

    def _module_backward(self, case: Case, inst: Instance, produced: Produced,
                         backward=None) -> None:
        dout = upstream(case.dout, self.opts.dtype)
        rows = self.key_perm is not None and FORWARD.lens_axes(self.comp.name, case.self_attention)[1]
        if rows:                             # the candidate saw reordered positions
            dout = FORWARD.take_keys(dout, self.key_perm, 1)
        before = BACKWARD.snapshot(inst.obj)
        targets = [(inst.binding.arg_of.get(n, n), f"grad_input:{n}") for n, a in case.inputs.items()
                   if a.dtype == REF]
        backward = backward or bound_backward(inst, getattr(self, "_last_call", None), self.notes) \
            or inst.obj.backward                       # backward(x, cache, dout, grads): layer_api_backward
        if self.caps.one_sequence:                     # (T, d) code: one sequence's dout, axis put back
            dout = BACKWARD.one_upstream(dout, self.comp.name)
        grads = BACKWARD.ungroup_inputs(backward(self.ops.upstream(dout)), len(targets))
        if self.caps.one_sequence:
            grads = BACKWARD.with_batch_axis(grads, len(targets), self.comp.name)
        kept = None
        if grads is None:                    # kept on the object, not returned (kept_input_grads)
            shapes = [(a, case.inputs[k.split(":", 1)[1]].shape) for a, k in targets]
            grads, kept = BACKWARD.kept_input_grads(before, BACKWARD.snapshot(inst.obj), shapes,
                                                    set(inst.slots), self.notes)
        if rows:
            grads = FORWARD.untake_key_grads(grads, self.key_perm)
        self._assign_grads(grads, targets, case, inst, produced, "backward(dout)", params=False)
        for _, key in targets if kept else ():
            if key in produced.missing:
                produced.missing[key] = kept
        memo = self.__dict__.setdefault("_grad_paths", {})
        by_name, unsure, untied = BACKWARD.param_grads(inst, before, self.notes, memo,
                                                       BACKWARD.fd_check(self, case, inst), (grads, len(targets)))
        for ref, e in inst.entries.items():
            if e.cand is None:
                continue
            key = f"grad_param:{ref}"
            g = entry_grad(e, by_name.get)
            if g is None and (why := next((untied[p[0]] for p in e.parts if p[0] in untied),
                                          untied.get(e.cand))):
                produced.missing[key] = why           # returned; not tied to it: NOT COMPARED
            elif g is None:
                leaf = e.cand.rsplit(".", 1)[-1]
                own = sorted({p for c in ([p[0] for p in e.parts] or [e.cand]) for p in unsure.get(c, ())})
                could = own or sorted({p for c, ps in unsure.items() for p in ps})
                produced.missing[key] = (
                    f"{UNREAD} {e.cand!r} after backward (looked for .grad, d{leaf}, {leaf}_delta, "
                    f"grads[...], and for an array that changed in backward with its shape"
                    + (f": could be any of {', '.join(could[:6])}, which hold different values, "
                       f"and which one the code uses cannot be told" if could else "") + ")")
            else:
                produced.values[key] = g

    def _assign_grads(self, grads, targets, case, inst, produced, what, params=True) -> None:
        if isinstance(grads, np.ndarray) or self.ops.is_array(grads):
            grads = (grads,)
        if isinstance(grads, dict):
            lower = {str(k).lower(): v for k, v in grads.items()}
            for arg, key in targets:
                name = key.split(":", 1)[1]
                keys = [k for k in dict.fromkeys(x.lower() for x in (arg, "d" + arg, "d_" + arg, "grad_" + arg,
                                                                     name, "d" + name, "d_" + name))
                        if lower.get(k) is not None]
                found = [np.asarray(self.ops.to_np(lower[k])) for k in keys]
                if not found:
                    produced.missing[key] = f"{what} returned a dict without a gradient for {arg!r}"
                elif any(not np.array_equal(f, found[0]) for f in found[1:]):      # shapes too
                    produced.missing[key] = (f"{UNREAD} {arg!r}: {what} returned different arrays for it "
                                             f"under {', '.join(map(repr, keys))}, and which one the code "
                                             f"uses cannot be told")
                else:
                    produced.values[key] = grad_in_ref_layout(inst.entries, key, found[0])
            return
        if not isinstance(grads, (tuple, list)):
            raise CandidateProblem("wrong_type", f"{what} returned {type(grads).__name__}; expected "
                                   f"the gradients as a tuple (in the order of the forward's array "
                                   f"arguments) or a dict")
        for i, (arg, key) in enumerate(targets):
            if i < len(grads) and grads[i] is not None:
                produced.values[key] = grad_in_ref_layout(inst.entries, key, self.ops.to_np(grads[i]))
            else:
                produced.missing[key] = f"{what} returned {len(grads)} gradient(s); none for {arg!r}"
