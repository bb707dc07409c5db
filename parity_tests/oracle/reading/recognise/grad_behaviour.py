"""Recogniser: parameter gradients a hand-written NumPy backward keeps under names of its own
(`self.first_step`, `self.cache["g_w"]`, `self.store[2]`), where no naming pattern (`dW`, `W_grad`,
`W_delta`, `grads["W"]`, `gradients["dL/dW"]`) finds them.

Found by behaviour: every float array the candidate object reaches (attributes, dicts, lists, its
parts) is recorded before the backward and after it; an array that appeared or changed during the
backward and has the shape of a parameter is that parameter's gradient when it is the only one
(ties go to the array beside the parameter, in the same part, then to one whose name holds the
parameter's, then to a finite-difference test through the candidate's own forward). Arrays it
cannot tell apart are never guessed: the gradient is then reported as not read, and the verdict
cannot be a match (completeness.UNREAD). The report says where each gradient was found.

The finite-difference test only ORDERS arrays that must all be gradients: when more arrays of a
parameter shape changed in backward than there are parameters of that shape to fill, holding
different values (a "debug" copy of the right gradients beside the wrong ones the update uses), the
gradients of that shape are ambiguous and reported unread with the arrays named, never chosen: a
test that picks whichever array agrees with the forward would be an answer key. Named gradients
that disagree (`dgamma` and `grads["gamma"]`, reading/slots) are reported the same way.
"""
from __future__ import annotations

import inspect
import re

import numpy as np

from . import grad_neighbours, returned_grads

MAX_DEPTH = 5
EQUAL = "(they hold equal values here)"    # copies: either may be read on this example, none memoised
MAX_ARRAYS = 400


def snapshot(obj) -> dict[str, np.ndarray]:
    """Copies of every float array reachable from `obj`, by path (`attn.cache.g_w`, `store.2`)."""
    out: dict[str, np.ndarray] = {}
    seen: set[int] = set()

    def walk(o, prefix: str, depth: int) -> None:
        if len(out) >= MAX_ARRAYS or depth > MAX_DEPTH or id(o) in seen:
            return
        o = o.detach().cpu().numpy() if type(o).__module__ == "torch" else o   # a plain class's tensor
        if isinstance(o, np.ndarray):
            if o.dtype.kind == "f" and o.ndim >= 1:
                out[prefix.rstrip(".")] = o.copy()
            return
        seen.add(id(o))
        if isinstance(o, dict):
            items = [(str(k), v) for k, v in list(o.items())[:64]]
        elif isinstance(o, (list, tuple)):
            items = [(str(i), v) for i, v in enumerate(o[:64])]
        elif type(o).__module__ in ("builtins", "numpy") or inspect.isroutine(o) \
                or inspect.isclass(o):       # an instance with __call__ (a Module base) is walked
            return
        else:
            try:
                items = [(k, v) for k, v in vars(o).items() if not k.startswith("__")]
            except TypeError:
                return
        for k, v in items:
            walk(v, f"{prefix}{k}.", depth + 1)

    walk(obj, "", 0)
    return out


def _changed(before: dict, after: dict) -> dict[str, np.ndarray]:
    return {p: a for p, a in after.items()
            if p not in before or before[p].shape != a.shape
            or not np.array_equal(before[p], a, equal_nan=True)}


def _tokens(path: str) -> set[str]:
    return {t.lower() for t in re.split(r"[^A-Za-z0-9]+", path.rsplit(".", 1)[-1]) if t}


def _named_for(path: str, leaf: str) -> bool:
    toks, leaf = _tokens(path), leaf.lower()
    last = path.rsplit(".", 1)[-1].lower()      # a leaf of several words: `dw_q` names `w_q`
    return any(t in (leaf, "d" + leaf, "grad" + leaf, "dl" + leaf) or t.endswith("d" + leaf)
               for t in toks) or last in (f"d{leaf}", f"d_{leaf}", f"grad_{leaf}", f"{leaf}_grad")


def find(before: dict, after: dict, wanted: dict[str, tuple], params: set, known: list,
         check=None, shapes: dict | None = None, withheld: dict | None = None) -> tuple[dict, dict]:
    """({cand: (path, gradient, how)}, {cand: [paths it could be]}) for the parameters in `wanted`
    (cand name -> its shape) from two snapshots around a backward. Parameter arrays themselves
    (`params`, of `shapes`) and gradients already read by name (`known`) are never taken, nor an
    array beside another parameter of the cand's shape (grad_neighbours; put in `withheld`, cand ->
    [(path, that parameter)]). Arrays of one shape that neither place nor name tells apart go to
    `check(cand, array)` (a finite-difference test through the candidate's own forward: True,
    False, or None when it cannot tell)."""
    changed = _candidates(before, after, params, known)
    found: dict[str, tuple] = {}
    unsure: dict[str, list] = {}
    taken: set[str] = set()
    shapes = {**{c: tuple(a.shape) for c in params for a in (after.get(c, before.get(c)),)
                 if a is not None}, **(shapes or {}), **wanted}
    options, told = {}, {}
    for c, s in wanted.items():
        same = [p for p, a in changed.items() if tuple(a.shape) == tuple(s)]
        other = {p: grad_neighbours.beside_other(p, c, shapes) for p in same}
        options[c] = [p for p in same if other[p] is None]
        hows = [o[1] for o in other.values() if o is not None]
        told[c] = "by place" if "by place" in hows else "by its name" if hows else "by shape"
        if withheld is not None and hows:
            withheld[c] = [(p, o[0]) for p, o in other.items() if o is not None]
    crowded = ambiguous(changed, wanted)
    left = sorted((c for c in wanted if c not in crowded), key=lambda c: len(options[c]))
    while left:                          # again while a pass settles one (fewer left to tell apart)
        unsure = {}
        for cand in left:
            paths = [p for p in options[cand] if p not in taken]
            fresh = [p for p in paths if not any(np.any(changed[t]) and np.array_equal(changed[p], changed[t])
                                                 for t in taken)]
            paths = fresh or paths             # a copy of a gradient taken is not another one (all
            #                                    zeros is no copy: a dead ReLU zeroes a layer's dW and db)
            owner = cand.rsplit(".", 1)[0] + "." if "." in cand else ""
            leaf = cand.rsplit(".", 1)[-1]
            how = told[cand] if len(paths) == len(options[cand]) else "by elimination"
            for narrow, said in ((lambda p: not owner or p.startswith(owner), "by place"),
                                 (lambda p: _named_for(p, leaf), "by its name")):
                if len(paths) > 1 and any(narrow(p) for p in paths):
                    paths, how = [p for p in paths if narrow(p)], said
            if len(paths) > 1 and all(np.array_equal(changed[paths[0]], changed[p])
                                      for p in paths[1:]):
                paths, how = paths[:1], EQUAL
            if len(paths) > 1 and check is not None:
                passed = [p for p in paths if check(cand, changed[p]) is True]
                if passed and all(np.array_equal(changed[passed[0]], changed[p]) for p in passed[1:]):
                    paths, how = passed[:1], ("by a finite-difference test through its forward"
                                              + (f" {EQUAL}" if len(passed) > 1 else ""))
            if len(paths) == 1:
                found[cand] = (paths[0], changed[paths[0]], how)
                taken.add(paths[0])
            elif paths:
                unsure[cand] = paths
        if len(unsure) == len(left):
            break
        left = list(unsure)
    return found, {**unsure, **crowded}


def _candidates(before: dict, after: dict, params: set, known: list) -> dict[str, np.ndarray]:
    """The arrays that changed in backward and may be gradients: neither a parameter array nor
    equal to a gradient already read by name."""
    return {p: a for p, a in _changed(before, after).items() if p not in params
            and not any(k.shape == a.shape and np.array_equal(k, a) for k in known)}


def ambiguous(changed: dict, wanted: dict[str, tuple]) -> dict[str, list]:
    """{cand: [paths]} for the parameters of each shape with more arrays of that shape changed in
    backward, holding different values, than parameters to fill: which ones the code uses cannot be
    told, and no test is allowed to choose."""
    out: dict[str, list] = {}
    for shape in {tuple(s) for s in wanted.values()}:
        cands = [c for c, s in wanted.items() if tuple(s) == shape]
        paths = [p for p, a in changed.items() if tuple(a.shape) == shape]
        if len(_distinct(paths, changed)) > len(cands):
            out.update({c: sorted(paths) for c in cands})
    return out


def _distinct(paths: list, changed: dict) -> list:
    """`paths` less those holding the same values as an earlier one."""
    out: list = []
    for p in paths:
        if not any(np.array_equal(changed[p], changed[q]) for q in out):
            out.append(p)
    return out


def param_grads(inst, before: dict, notes: list, memo: dict, check=None,
                returned: tuple = (None, 0)) -> tuple[dict, dict, dict]:
    """Each candidate parameter's gradient after a NumPy backward (`before`: the snapshot taken
    just before it): by name (the slot's own lookup), else in what backward returned after its
    `returned[1]` input gradients (returned_grads), else where an earlier example found it
    (`memo`), else by behaviour; the notes say which. Returns (gradients by name, {name: paths it
    could be}, {name: why a gradient backward returned could not be tied to it})."""
    cands = {c for e in inst.entries.values() if e.cand is not None
             for c in ([p[0] for p in e.parts] or [e.cand])}
    by_name = {c: inst.slots[c].grad() for c in cands}
    clash = {c: named for c in cands if len(named := _disagreeing(inst.slots[c])) > 1}
    order = {c: i for i, c in enumerate(inst.slots)}          # the candidate's registration order
    need = {c: tuple(inst.slots[c].shape) for c in sorted(cands, key=order.get)
            if by_name[c] is None and c not in clash}
    untied: dict[str, str] = {}        # returned, but which parameter's cannot be told
    stated = returned_grads.stated_order(inst.obj, {c: inst.slots[c].array() for c in need})
    if stated is not None:
        need = {c: need[c] for c in stated[0]}
    for c, (g, where) in returned_grads.read(returned[0], returned[1], need, check,
                                             stated and stated[1]).items():
        del need[c]
        if g is None:
            untied[c] = where
            continue
        by_name[c] = g
        text = f"the gradient of {c} was read from {where}"
        if text not in notes:
            notes.append(text)
    if not need:
        return by_name, clash, untied
    after = snapshot(inst.obj)
    known = [g for g in by_name.values() if g is not None]
    crowded = ambiguous(_candidates(before, after, set(inst.slots), known), need)
    where: dict[str, str] = {}             # parameter -> where its gradient was read, by behaviour
    for c in list(need):
        path = memo.get(c)                 # never past arrays that disagree on this example
        if c not in crowded and path in after and tuple(after[path].shape) == tuple(need[c]):
            by_name[c], where[c] = after.pop(path), path
            del need[c]
    if not need:
        return by_name, clash, untied
    withheld: dict[str, list] = {}
    found, unsure = find(before, after, need, set(inst.slots),
                         [g for g in by_name.values() if g is not None], check,
                         {c: tuple(s.shape) for c, s in inst.slots.items()}, withheld)
    for c, (path, g, how) in found.items():
        by_name[c] = g
        if how != "by elimination" and EQUAL not in how:
            memo[c] = path                 # settled for the whole check: later examples read it
        text = (f"the gradient of {c} was read from {path} (found by behaviour: it changed during "
                f"backward and has {c}'s shape; told apart {how})")
        if text not in notes:
            notes.append(text)
    where.update({o: path for o, (path, _, _) in found.items()})
    shapes = {c: tuple(s.shape) for c, s in inst.slots.items()}
    for c in need:
        if c in found or c in unsure:
            continue
        spot = grad_neighbours.kept_alike(c, where, shapes, after, set(inst.slots))
        if spot is not None:
            by_name[c] = after[spot]
            text = (f"the gradient of {c} was read from {spot}, in its own part where its neighbours "
                    f"of its shape keep theirs; it did not change in backward (zero on this example)")
        elif withheld.get(c):
            text = (f"the gradient of {c} was not read: what changed in backward with its shape "
                    f"sits beside another parameter of that shape ("
                    + ", ".join(f"{p} beside {o}" for p, o in withheld[c][:4])
                    + "), and is not taken for it")
        else:
            continue
        if text not in notes:
            notes.append(text)
    return by_name, {**unsure, **clash}, untied


def _disagreeing(slot) -> list[str]:
    """Where a slot's named gradients are kept (`dgamma`, `grads['gamma']`), when they hold
    different values (slots.NumpySlot.named_grads); [] when they agree or there is one."""
    named = getattr(slot, "named_grads", None)
    hits = named() if callable(named) else []
    first = hits[0][1] if hits else None
    if all(g.shape == first.shape and np.array_equal(g, first) for _, g in hits[1:]):
        return []
    return [where for where, _ in hits]


def fd_agrees(loss, cand: str, value: np.ndarray, grad: np.ndarray) -> bool | None:
    """Whether `grad` is d loss / d cand at `value`, along one random direction (central
    difference); None when the loss cannot be computed. Float64 only."""
    rng = np.random.default_rng(3)
    v = rng.standard_normal(value.shape)
    eps = 1e-5 * max(1.0, float(np.abs(value).max(initial=0.0)))
    try:
        up, down = loss(cand, value + eps * v), loss(cand, value - eps * v)
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return None
    if up is None or down is None:
        return None
    fd, an = (up - down) / (2 * eps), float(np.sum(grad * v))
    return bool(abs(fd - an) <= 1e-5 * max(1.0, abs(fd), abs(an), abs(up)))


def fd_check(adapter, case, inst):
    """check(cand, grad) for `find`: the candidate's own loss <dout, forward(x)> with one parameter
    moved, on this example's inputs (float64, plain layouts only; None otherwise)."""
    from ..run_state import Produced
    if adapter.opts.dtype != "float64" or adapter.key_perm is not None or \
            adapter.caps.bh_layout:
        return None
    dout = case.dout.astype(np.float64)

    def loss(cand, arr):
        slot = inst.slots[cand]
        old = np.array(slot.array(), copy=True)
        try:
            slot.set(arr)
            values = adapter.feed(case, False)[-1]
            out, _ = adapter.parse_output(inst.binding.call(inst.call, values, {}), case,
                                           Produced())
            out = np.asarray(adapter.ops.to_np(out), dtype=np.float64)
            return float(np.sum(out * dout)) if out.shape == dout.shape else None
        finally:
            slot.set(old)

    return lambda cand, g: fd_agrees(loss, cand, np.array(inst.slots[cand].array(),
                                                          dtype=np.float64), g)
