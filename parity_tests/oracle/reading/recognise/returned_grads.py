"""Recogniser: a NumPy module whose backward RETURNS its parameter gradients beside the input's
instead of keeping them on the object, a common layer API:

    return dx, {"gamma": dgamma, "beta": dbeta}         a dict after the input gradients
    return dx, dgamma, dbeta                            arrays after the input gradients
    return {"dx": dx, "dW1": dW1, ...}                  one dict for everything

The input gradients are read as before (the first items, or their keys); what follows them was
thrown away, and right code was MISSING_GRADIENT. Now a dict's keys name parameters (the parameter's
path, the path joined by underscores as `w1_W`, or its last part, with d / d_ / grad_ before or
_grad after it, in any case; nested dicts by dotted path; two keys naming one parameter with
different arrays leave it unread), and arrays after the inputs are the parameters still unread, in
the order the candidate registers them, when there are exactly as many and every shape fits; arrays
of one shape (a norm's gain and shift) go where a finite-difference test of the candidate's own loss
places them when it tells them apart (`check`, grad_behaviour.fd_check), else in order. Where the
candidate states the order itself (`self.params = [self.gamma, self.beta]`, or a `params()` method
returning them: its own update pairs the returned arrays with that list), arrays in that order are
compared in it: the test never moves them, so a gain's and a shift's gradients swapped against the
code's own list are a mismatch. Arrays
returned in an order of their own (`return dx, db2, dW2, db1, dW1`) go by shape: each shape to
the parameters of that shape; where several share one, the finite-difference test places them;
where it cannot run (a layout the oracle rearranged), they are not compared on that example (NOT
COMPARED, said why), never guessed; where it runs and places none, not all of them are the
forward's gradients, and they are compared in the order returned (no placement makes a wrong
one right). Arrays whose shapes are not the parameters' (a gain's gradient summed over the batch
axis only, (T, D)) are read by order, so that the wrong shape is reported on its gradient instead
of the gradient being called unreadable. Anything else is left to the other readers
(grad_behaviour). The report says where each gradient came from."""
from __future__ import annotations

import numpy as np


def _flat(d: dict, prefix: str = "") -> dict[str, object]:
    out = {}
    for k, v in d.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict):
            out.update(_flat(v, key))
        else:
            out[key.lower()] = v
    return out


def _keys(cand: str) -> list[str]:
    """The keys that may name `cand` (`w1.W`): its path (`w1.W`), the path joined by underscores
    (`w1_W`), its last part (`W`), each bare or with a gradient prefix or suffix."""
    out = []
    for name in dict.fromkeys((cand, cand.replace(".", "_"), cand.rsplit(".", 1)[-1])):
        head, _, leaf = name.rpartition(".")
        pre = head + "." if head else ""
        out += [pre + f.format(leaf) for f in ("{}", "d{}", "d_{}", "grad_{}", "{}_grad", "grad{}")]
    return [k.lower() for k in out]


def _array(v, shape: tuple) -> np.ndarray | None:
    if isinstance(v, (np.ndarray, np.generic)) and np.issubdtype(np.asarray(v).dtype, np.floating):
        a = np.asarray(v)
        return a if a.shape == tuple(shape) else None
    return None


def _by_check(pairs: list, check, ran: list | None = None, tested: list | None = None) -> list:
    """`pairs` [(cand, grad)] with the grads of one shape given to the cands a finite-difference
    test says they belong to (`_placed`); unchanged where it places none. `ran` collects the cands
    whose test could run (it answered True or False), `tested` those it placed."""
    if check is None:
        return pairs
    out = list(pairs)
    for shape in {g.shape for _, g in pairs}:
        idx = [i for i, (_, g) in enumerate(pairs) if g.shape == shape]
        if len(idx) < 2:
            continue
        said = {(i, j): check(pairs[i][0], pairs[j][1]) for i in idx for j in idx}
        if ran is not None:
            ran.extend(pairs[i][0] for i in idx if any(said[i, j] is not None for j in idx))
        fits = {i: [j for j in idx if said[i, j] is True] for i in idx}
        for i, j in _placed(idx, fits).items():
            out[i] = (pairs[i][0], pairs[j][1])
            if tested is not None:
                tested.append(pairs[i][0])
    return out


def _placed(idx: list, fits: dict) -> dict:
    """{cand index: array index} from the test's answers: a cand whose one passing array passes
    for no other cand takes it, again until none does; then a last cand left takes the last array
    (by elimination: a test failing near a ReLU's kink leaves one out), and any others left keep
    their arrays in order. {} when the test placed none."""
    placed: dict = {}
    while True:
        free = {i: [j for j in fits[i] if j not in placed.values()] for i in idx if i not in placed}
        one = next((i for i, f in free.items() if len(f) == 1
                    and not any(f[0] in g for k, g in free.items() if k != i)), None)
        if one is None:
            break
        placed[one] = free[one][0]
    if not placed:
        return {}
    left = [i for i in idx if i not in placed]
    rest = [j for j in idx if j not in placed.values()]
    placed.update(zip(left, rest))
    return placed


def read(returned, n_inputs: int, need: dict[str, tuple], check=None,
         stated: str | None = None) -> dict[str, tuple[np.ndarray, str]]:
    """{candidate parameter: (gradient, where it was read)} for the `need`ed ones {name: shape}
    found in what backward returned (see the module docstring); `stated`: where the candidate
    states the order of `need` (stated_order), or None."""
    dicts: list[dict] = []
    arrays: list = []
    if isinstance(returned, dict):
        dicts.append(returned)
    elif isinstance(returned, (tuple, list)):
        for item in list(returned)[n_inputs:]:
            if isinstance(item, dict):
                dicts.append(item)
            elif isinstance(item, (tuple, list)):
                arrays.extend(item)
            else:
                arrays.append(item)
    found: dict[str, tuple[np.ndarray, str]] = {}
    for d in dicts:
        flat = _flat(d)
        for c, shape in need.items():
            hits = [(k, g) for k in dict.fromkeys(_keys(c)) if (g := _array(flat.get(k), shape)) is not None]
            if c in found or not hits:
                continue
            if all(np.array_equal(g, hits[0][1]) for _, g in hits[1:]):
                found[c] = (hits[0][1].copy(), f"the dict backward returned, key {hits[0][0]!r}")
            # keys naming it with different arrays: which one the code uses is unknown, none is read
    rest = [c for c in need if c not in found]
    if arrays and len(arrays) == len(rest):
        pairs = [(c, _array(a, need[c])) for c, a in zip(rest, arrays)]
        said = "by order"
        if not all(g is not None for _, g in pairs):
            pairs, said = by_shape(rest, arrays, need)
        elif stated is not None:       # the code's own update pairs them so: never moved
            check, said = None, f"by order, the order {stated} states"
        ran: list = []
        tested: list = []
        placed_pairs = _by_check(pairs, check, ran, tested)
        for (c, g), (_, placed) in zip(pairs, placed_pairs):
            how = said if placed is g else "placed by a finite-difference test"
            if said == "by shape" and c not in tested and _shared(c, pairs, need):
                if c not in ran:           # the order is already not the parameters': no guess
                    found[c] = (None, _untied(c, rest, need))
                    continue
                how = ("by shape, in the order returned (a finite-difference test through the "
                       "forward placed none of them: they are not all its gradients)")
            found[c] = (placed.copy(), f"an item after the input gradients in what backward returned, {how}")
    return found


def _shared(c: str, pairs: list, need: dict) -> bool:
    return sum(tuple(need[o]) == tuple(need[c]) for o, _ in pairs) > 1


def _untied(c: str, rest: list, need: dict) -> str:
    """Why a returned array of a shape several parameters share was not compared."""
    same = [o for o in rest if tuple(need[o]) == tuple(need[c])]
    return (f"on an example where {', '.join(same)} share the shape {tuple(need[c])}, backward "
            f"returned their gradients in an order other than the parameters', and no "
            f"finite-difference test could run to place them: not compared there")


def by_shape(rest: list[str], arrays: list, need: dict[str, tuple]) -> tuple[list, str]:
    """([(cand, gradient)], how) for float arrays returned in an order of their own: each
    parameter's shape taken by as many arrays as there are parameters of that shape, in the order
    returned within one shape (`_by_check` may reorder those); where the shapes returned are not
    the parameters' shapes (a gradient left summed over one axis only) every array is read by
    order, so that its shape is reported against its parameter's, never thrown away. Nothing ([])
    when an item is not a float array (what follows the input gradients is not gradients)."""
    if not all(isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating) for a in arrays):
        return [], ""
    wanted = sorted(tuple(need[c]) for c in rest)
    if sorted(tuple(a.shape) for a in arrays) != wanted:
        return list(zip(rest, arrays)), "by order (the arrays returned do not have the parameters' shapes)"
    pool = {shape: [a for a in arrays if tuple(a.shape) == shape] for shape in set(wanted)}
    return [(c, pool[tuple(need[c])].pop(0)) for c in rest], "by shape"


STATED = ("params", "parameters", "get_params")


def stated_order(obj, arrays: dict[str, object]) -> tuple[list[str], str] | None:
    """([candidate parameters in order], where) when `obj` states the order of every one of
    `arrays` {name: the array it holds}: a list or tuple attribute, or a `params()` /
    `parameters()` / `get_params()` method taking no argument, whose items are those arrays
    themselves (or objects holding them as `.data`); None where nothing does."""
    if len(arrays) < 2:
        return None
    held = [(k, v) for k, v in (vars(obj).items() if hasattr(obj, "__dict__") else ())
            if isinstance(v, (list, tuple))]
    for name in STATED:
        fn = getattr(obj, name, None)
        if callable(fn) and not isinstance(fn, (list, tuple)):
            try:
                got = fn()
            except Exception:  # noqa: BLE001 - a method taking arguments, or failing: no statement
                continue
            if isinstance(got, (list, tuple)):
                held.append((f"{name}()", got))
    for where, items in held:
        ids = [id(getattr(a, "data", None)) if not isinstance(a, np.ndarray) else id(a) for a in items]
        place = {c: ids.index(id(a)) for c, a in arrays.items() if id(a) in ids}
        if len(place) == len(arrays):
            return sorted(arrays, key=place.get), f"self.{where}" if "(" not in where else f"its {where}"
    return None
