"""Parameter slots (where a candidate keeps one array: a torch Parameter, a NumPy attribute, a dict
entry, a list item), the candidate's parameter space, and the values handed to it."""
from __future__ import annotations

import inspect

import numpy as np

from ..core.options import Options
from . import forward_reads, naming
from .grad_buffers import widen
from .naming import InterfaceError
from .packed_order import regroup
from .recognise import hooks
from .registry_dicts import is_registry, key_name
from .slot_aliases import drop_listed_twice, listed_grad

RESOLVE = hooks("resolve")


class TorchSlot:
    def __init__(self, param):
        self.p = param

    @property
    def shape(self):
        return tuple(self.p.shape)

    def set(self, arr: np.ndarray) -> None:
        import torch
        with torch.no_grad():
            self.p.copy_(torch.from_numpy(np.ascontiguousarray(arr)).to(self.p.dtype))

    def clear_grad(self) -> None:
        self.p.grad = None

    def grad(self):
        return None if self.p.grad is None else self.p.grad.detach().cpu().numpy().copy()


GRAD_PATTERNS = ("d{}", "grad_{}", "{}_grad", "d_{}", "grad{}", "{}grad", "delta_{}", "{}_delta",
                 "{}_gradient", "dL_d{}")


GRAD_FIELDS = ("grad", "gradient")
"""Where a Parameter-like object (an array under .data) keeps its gradient."""


def grad_field(v) -> str | None:
    """The attribute of a Parameter-like object (`.data` an array, not itself an array) holding its
    gradient array: `.grad` (micrograd, torch-like) or `.gradient` (a dataclass Parameter(data,
    gradient)); None for anything else."""
    if isinstance(v, np.ndarray) or not isinstance(getattr(v, "data", None), np.ndarray):
        return None
    return next((f for f in GRAD_FIELDS if isinstance(getattr(v, f, None), np.ndarray)), None)


def param_like(v) -> bool:
    """A Parameter-like object: an array under .data beside a gradient field (maybe None yet)."""
    return not isinstance(v, np.ndarray) and isinstance(getattr(v, "data", None), np.ndarray) and \
        any(hasattr(v, f) for f in GRAD_FIELDS)


class NumpySlot:
    """An array held by a numpy candidate: container[key] or getattr(container, key); the value may
    be a Parameter-like object with .data and .grad (or .gradient)."""

    def __init__(self, container, key, owner=None, grads_key=None):
        self.container, self.key, self.owner = container, key, owner
        self.grads_key = grads_key if grads_key is not None else key

    def _get(self):
        if isinstance(self.container, (dict, list, tuple)):
            return self.container[self.key]
        return getattr(self.container, self.key)

    def array(self) -> np.ndarray:
        v = self._get()
        return v.data if isinstance(getattr(v, "data", None), np.ndarray) and not isinstance(
            v, np.ndarray) else v

    @property
    def shape(self):
        return tuple(np.shape(self.array()))

    def set(self, arr: np.ndarray) -> None:
        v = self._get()
        cur = self.array()
        if isinstance(cur, np.ndarray) and cur.shape == arr.shape and cur.dtype == arr.dtype \
                and cur.flags.writeable:
            cur[...] = arr
        elif v is not cur:                        # Parameter-like: replace its data
            v.data = arr.copy()
            field = grad_field(v)
            if field is not None:
                setattr(v, field, np.zeros_like(v.data))
        else:
            new = arr.copy()
            if isinstance(self.container, (dict, list)):
                self.container[self.key] = new
            else:
                setattr(self.container, self.key, new)
            replace_aliases(self.owner if self.owner is not None else self.container, cur, new)
            widen([self.owner, self.container], str(self.grads_key), GRAD_PATTERNS, new)   # grad_buffers

    def clear_grad(self) -> None:
        field = grad_field(self._get())
        if field is not None:
            getattr(self._get(), field)[...] = 0

    def grad(self):
        """The gradient kept under a name (.grad, d<name>, grads[name], ...); None when there is
        none, or when two names hold different values (which one the code uses cannot be told:
        recognise/grad_behaviour reports them)."""
        hits = self.named_grads()
        if not hits or any(g.shape != hits[0][1].shape or not np.array_equal(g, hits[0][1])
                           for _, g in hits[1:]):
            return None
        return hits[0][1]

    def named_grads(self) -> list[tuple[str, np.ndarray]]:
        """Every (where, copy) a gradient of this slot is kept under a name, in reading order."""
        v = self._get()
        hits = []
        field = grad_field(v)
        if field is not None:
            hits.append((f"{self.key}.{field}", getattr(v, field).copy()))
        key = str(self.grads_key)
        holders = [self.owner, self.container] if self.owner is not None else [self.container]
        for h in holders:
            if h is None or isinstance(h, (list, dict)):
                continue
            for name in (n for pat in GRAD_PATTERNS for n in (pat.format(key), "_" + pat.format(key))):
                g = getattr(h, name, None)                  # `dW`, and privately `_dW`
                if isinstance(g, np.ndarray):
                    hits.append((name, g.copy()))
            if (lg := listed_grad(h, self.array())) is not None:      # params[i] <-> grads[i]
                hits.append((lg[0], np.array(lg[1], copy=True)))
            for dname in ("grads", "gradients", "grad", "dparams", "param_grads"):
                d = getattr(h, dname, None)
                if isinstance(d, dict):
                    for k in (key, "d" + key, "d_" + key, "grad_" + key, "dL/d" + key):
                        if isinstance(d.get(k), np.ndarray):
                            hits.append((f"{dname}[{k!r}]", d[k].copy()))
        return hits


PARAM_DICTS = ("params", "parameters", "weights", "param")


def replace_aliases(holder, old, new) -> None:
    """An array replaced (another dtype or shape) is replaced too where its object holds it again:
    `self.params = {'W_q': self.W_q}` keeps one array under two names, and the forward may read
    either."""
    try:
        items = list(vars(holder).items())
    except TypeError:
        return
    for name, val in items:
        if val is old:
            setattr(holder, name, new)
        elif isinstance(val, dict) and name in PARAM_DICTS:
            for k in [k for k, x in val.items() if x is old]:
                val[k] = new


SKIP_ATTRS = {"training", "cache", "caches", "grads", "gradients", "dparams", "param_grads"}


def looks_like_grad(name: str, siblings) -> bool:
    for pat in GRAD_PATTERNS:
        pre, _, post = pat.partition("{}")
        if name.startswith(pre) and name.endswith(post) and len(name) > len(pre) + len(post):
            base = name[len(pre): len(name) - len(post)]
            if base in siblings:
                return True
    return False


def numpy_space(obj) -> tuple[naming.Space, dict[str, NumpySlot]]:
    """Every float array a numpy candidate holds, by dotted attribute path, in definition order."""
    from .torch_tensor_slots import tensor_space  # a plain class over torch tensors
    if (found := tensor_space(obj)) is not None:
        return found
    slots: dict[str, NumpySlot] = {}
    if callable(getattr(obj, "named_parameters", None)):
        try:
            items = list(obj.named_parameters())
        except Exception:  # noqa: BLE001 - an unusual named_parameters: fall back to walking
            items = []
        for name, p in items:
            if isinstance(getattr(p, "data", None), np.ndarray) or isinstance(p, np.ndarray):
                slots[name] = _ParamRef(p)
        if slots:
            return space_of(slots, bare=True), slots
    params = getattr(obj, "params", None)
    if isinstance(params, dict) and params and all(isinstance(v, np.ndarray) for v in params.values()):
        for k, v in params.items():
            slots[str(k)] = NumpySlot(params, k, owner=obj)
        return space_of(slots, bare=True), slots

    seen: set[int] = set()
    private = False          # second pass: Parameters and parts kept under `_names` (see below)

    def walk(o, prefix: str, depth: int) -> None:
        if id(o) in seen or depth > 6:
            return
        seen.add(id(o))
        try:
            items = list(vars(o).items())
        except TypeError:
            return
        names = {k for k, _ in items}
        held = {id(v) for _, v in items if isinstance(v, np.ndarray) or param_like(v)}   # its own
        parts = {id(v) for _, v in items if is_object(v) and not param_like(v)}   # its own parts
        for k, v in items:
            if k.startswith("__") or k in SKIP_ATTRS or looks_like_grad(k, names) or \
                    (k.startswith("_") and not (private and (param_like(v) or is_object(v) or is_registry(v)))):
                continue
            name = f"{prefix}{k.lstrip('_') if private else k}"       # `_gamma` read as `gamma`
            if isinstance(v, np.ndarray):
                if v.dtype.kind == "f" and v.ndim >= 1 and not forward_reads.unread(o, k):
                    slots[name] = NumpySlot(o, k)
            elif param_like(v):
                slots[name] = NumpySlot(o, k)
            elif isinstance(v, (list, tuple)):
                for i, item in enumerate(v):
                    if isinstance(item, np.ndarray) and isinstance(v, list):
                        if item.dtype.kind == "f" and item.ndim >= 1:
                            slots[f"{name}.{i}"] = NumpySlot(v, i, owner=o, grads_key=f"{k}{i}")
                    elif param_like(item):
                        if id(item) not in held:    # `self.params = [self.weight, ...]`: named
                            slots[f"{name}.{i}"] = NumpySlot(v, i, owner=o)   # as the attribute
                    elif isinstance(item, (list, tuple)) and item and \
                            all(isinstance(a, np.ndarray) for a in item):
                        # `self.norms = [(gain, shift), ...]`: each array written in place
                        for j, a in enumerate(item):
                            if a.dtype.kind == "f" and a.ndim >= 1:
                                slots[f"{name}.{i}.{j}"] = NumpySlot(item, j, owner=o,
                                                                     grads_key=f"{k}{i}{j}")
                    elif is_object(item) and id(item) not in parts:   # `self.layers = [self.q,
                        walk(item, f"{name}.{i}.", depth + 1)              # ...]`: named q
            elif isinstance(v, dict):
                for kk, item in v.items():
                    if isinstance(item, np.ndarray) and id(item) in held:
                        continue     # `self.params = {'W1': self.W1}`: the attribute's own array
                    if isinstance(item, np.ndarray) and item.dtype.kind == "f" and item.ndim >= 1:
                        # a part's own params dict (course style: self.params = {'W': ..}) names its
                        # arrays as the part's attributes would: norm1.gamma, not norm1.params.gamma
                        short = f"{prefix}{key_name(kk)}"
                        flat = k.lstrip("_") in PARAM_DICTS and str(kk) not in names and short not in slots
                        slots[short if flat else f"{name}.{kk}"] = NumpySlot(
                            v, kk, owner=o, grads_key=str(kk))
                    elif is_object(item) and id(item) not in parts:
                        walk(item, f"{name}.{kk}.", depth + 1)
            elif is_object(v):
                walk(v, f"{name}.", depth + 1)

    walk(obj, "", 0)
    if not slots:            # every weight private (`self._Wq = Parameter(...)`, `self._attention`)
        seen.clear()
        private = True
        walk(obj, "", 0)
    slots = drop_listed_twice(slots)          # `self.params = [self.W, ...]` (slot_aliases)
    return space_of(slots, bare=True), slots


class _ParamRef(NumpySlot):
    """A Parameter-like object (.data, .grad) reached through named_parameters()."""

    def __init__(self, p):
        super().__init__({"p": p}, "p")


def is_object(v) -> bool:
    return (hasattr(v, "__dict__") and not inspect.ismodule(v) and not inspect.isclass(v)
            and not inspect.isroutine(v) and not isinstance(v, (np.ndarray, np.generic)))


def space_of(slots: dict, bare) -> naming.Space:
    names = list(slots)
    shapes = {n: slots[n].shape for n in names}
    b = bare if isinstance(bare, dict) else {n: bool(bare) for n in names}
    return naming.Space(names, shapes, b)


def torch_space(module) -> tuple[naming.Space, dict[str, TorchSlot]]:
    from .plain_torch_params import is_module, plain_space
    if not is_module(module):             # a plain class holding parameters
        return plain_space(module) or (space_of({}, bare=True), {})
    slots, bare, owners = {}, {}, {}
    for name, p in module.named_parameters():
        slots[name] = TorchSlot(p)
        owner = module.get_submodule(name.rsplit(".", 1)[0]) if "." in name else module
        bare[name] = not type(owner).__module__.startswith("torch.nn")
        if "." in name:
            owners[name] = f"{type(owner).__module__}.{type(owner).__qualname__}"
    space = space_of(slots, bare)
    space.owner = owners
    return space, slots


# ------------------------------------------------------------------------------------------------
# values for the candidate
# ------------------------------------------------------------------------------------------------
def candidate_arrays(entries: dict[str, naming.Entry], params: dict[str, np.ndarray],
                     dtype: str) -> dict[str, np.ndarray]:
    """The array each candidate parameter must hold (packed matrices assembled, layouts applied)."""
    out: dict[str, np.ndarray] = {}
    packed: dict[str, list] = {}
    for ref, e in entries.items():
        if e.cand is None:
            continue
        v = params[ref]
        if e.parts:                       # per-head pieces: rows of the reference matrix
            for cand, (a, b), transpose, shape in e.parts:
                piece = v[a:b]
                out[cand] = (piece.T if transpose else piece).reshape(shape).astype(dtype)
            continue
        if e.pre_shape is not None:       # heads on axes of their own (recognise/head_axes)
            out[e.cand] = RESOLVE.arrange_heads(v, e.transpose, e.pre_shape, e.perm) \
                .reshape(e.cand_shape).astype(dtype)          # with a unit axis it keeps, if any
            continue
        if e.cand_shape is not None:      # size-1 axes added: (1, n), (out, in, 1)
            out[e.cand] = v.reshape(e.cand_shape).astype(dtype)
            continue
        if e.rows is not None:
            packed.setdefault(e.cand, []).append((e.rows, v, e.transpose, e.grouped, e.group_order))
        else:
            out[e.cand] = (v.T if e.transpose else v).astype(dtype)
    for cand, parts in packed.items():
        n = max(r[1] for r, *_ in parts)
        first = parts[0][1]
        full = np.zeros((n,) + first.shape[1:], dtype=np.float64)
        for (a, b), v, *_ in parts:
            full[a:b] = v
        if parts[0][3]:                   # rows in another order of (part, head, width)
            full = regroup(full, len(parts), parts[0][3], order=parts[0][4])
        out[cand] = (full.T if parts[0][2] else full).astype(dtype)
    return out


def entry_grad(entry: naming.Entry, grad_of) -> np.ndarray | None:
    """The gradient of a reference parameter from the candidate's: `grad_of(cand)` reads one
    candidate array's gradient (None when it has none); per-head pieces are stacked back."""
    if entry.parts:
        rows = []
        for cand, (a, b), transpose, shape in entry.parts:
            g = grad_of(cand)
            if g is None:
                return None
            g = np.asarray(g)
            g = g.T if transpose else g
            rows.append(g.reshape((b - a,) + g.shape[1:]) if g.ndim > 1 else g.reshape(b - a))
        return np.concatenate(rows, axis=0)
    return read_param_grad(entry, grad_of(entry.cand))


def read_param_grad(entry: naming.Entry, g: np.ndarray | None) -> np.ndarray | None:
    if g is None:
        return None
    if entry.pre_shape is not None:
        return RESOLVE.unarrange_heads(g, entry.ref_shape, entry.transpose, entry.perm,
                                       entry.pre_shape)
    if entry.cand_shape is not None:
        return np.asarray(g).reshape(entry.ref_shape)
    if entry.transpose:
        g = g.T
    if entry.rows is not None:
        if entry.grouped:
            g = regroup(np.asarray(g), np.asarray(g).shape[0] // (entry.rows[1] - entry.rows[0]),
                        entry.grouped, back=True, order=entry.group_order)
        g = g[entry.rows[0]: entry.rows[1]]
    return g


def convert_mask(keep: np.ndarray | None, opts: Options, dtype: str):
    """keep-mask (B, Hm, Tq, Tk) bool -> the candidate's convention, rank and dtype (numpy)."""
    if keep is None:
        return None
    m = keep
    if opts.mask_rank == 3:
        if m.shape[1] != 1:
            raise InterfaceError("--mask-rank 3 cannot express a per-head mask")
        m = m[:, 0]
    if opts.mask_convention == "additive":
        return np.where(m, 0.0, -np.inf).astype(dtype)
    arr = m if opts.mask_convention == "keep" else ~m
    if opts.mask_dtype == "int":
        return arr.astype(np.int64)
    if opts.mask_dtype == "float":
        return arr.astype(dtype)
    return arr.copy()
