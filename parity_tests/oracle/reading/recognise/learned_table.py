"""Recogniser: a positional module holding a LEARNED table (`self.emb = nn.Embedding(max_len,
d_model)` looked up with `torch.arange(T)`, `self.pe = nn.Parameter(torch.randn(1, max_len,
d_model))`, a NumPy `np.random.randn(max_len, d_model)`) instead of computing the sinusoid. The
reference has no parameter, so the table was an unplaced parameter and the check an interface
error before any call.

Such a table is the sinusoidal encoding's slot: when the candidate's only parameter the reference
has no counterpart for is one table of (L, d_model) or (1, L, d_model), with L the positional
length the candidate was built for (at least every example's T), the reference's sinusoid table of
that shape is placed into it, and the report says so. What is then checked is the candidate's own
code: that it looks up positions 0 .. T-1 (an offset, a reversed or a clipped lookup differs), adds
the rows to x (not multiplies, not concatenates) and passes the input gradient. The table's own
gradient has no reference counterpart and is not compared. Found when the candidate is prepared
(`probe`), such a table is also the gap `table` (core/completeness): its values are the trainer's,
never compared, and grading requires a computed table by default. Any other unplaced parameter (a
projection, a second table) keeps the interface error. A NumPy class whose text computes its
table with sin / cos holds no learned table: nothing is placed, its own table is compared (placing
the reference's there hid a wrong sinusoid). Except beside a second table: when the module holds
exactly two such tables and one starts as a computed sinusoid (row 0 is sin 0, cos 0) while the
other does not (ViT code: a learned `param` by default, a sinusoid `posk` used only when
`fixed=True`; in torch the sinusoid a buffer beside the one learned parameter), the other is the
learned table, placed and a `table` gap as above; without this the learned table stayed random and
two fresh instances differed (NONDETERMINISTIC)."""
from __future__ import annotations

import numpy as np

COMPONENT = "positional"


def sinusoid(length: int, d_model: int) -> np.ndarray:
    """The reference's (length, d_model) table, float64: sin(pos / 10000^(2i/d)) in even columns,
    cos in odd ones, computed as npformer.layers.positional does it (the worker cannot import
    npformer; the examples compare against the reference's own table, so a drift here would show
    as a mismatch, never hide one)."""
    angle = np.arange(length, dtype=np.float64)[:, None] / np.power(
        10000.0, np.arange(0, d_model, 2, dtype=np.float64) / d_model)
    table = np.empty((length, d_model), dtype=np.float64)
    table[:, 0::2] = np.sin(angle)
    table[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return table


def _computes_sinusoid(adapter) -> bool:
    """Whether the text of the candidate's class (or of a base class in the same file) calls sin or
    cos (np.sin, math.sin, torch.cos): its table is computed, not learned, and what it computes is
    what is checked."""
    import ast
    import inspect
    import textwrap
    obj = adapter.obj if inspect.isclass(adapter.obj) else type(adapter.obj)
    for cls in getattr(obj, "__mro__", (obj,)):       # its own classes (a subclass, its base)
        if getattr(cls, "__module__", None) != obj.__module__:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError, SyntaxError, ValueError, IndentationError):
            continue
        if any(isinstance(n, ast.Call) and (getattr(n.func, "attr", None) or getattr(n.func, "id", None))
               in ("sin", "cos") for n in ast.walk(tree)):
            return True
    return False


def _is_table(shape: tuple, D: int, T: int) -> bool:
    return len(shape) in (2, 3) and (len(shape) == 2 or shape[0] == 1) and shape[-1] == D and shape[-2] >= T


def beside_computed(tables: dict) -> tuple[str, str] | None:
    """(learned, computed) when exactly two tables are held and one of them starts as a computed
    sinusoid (sin 0, cos 0) while the other does not: a learned table beside a sinusoid the code
    uses on another path (`posk` when `fixed=True`)."""
    if len(tables) != 2:
        return None
    starts = {n: _sinusoid_start(np.asarray(t)) for n, t in tables.items()}
    computed = [n for n, s in starts.items() if s]
    if len(computed) != 1:
        return None
    return next(n for n in tables if n != computed[0]), computed[0]


def place(adapter, unclaimed: list, slots: dict, space, case) -> list:
    """`unclaimed` less the one learned positional table placed with the reference's sinusoid
    (see the module docstring); unchanged when the candidate is not such a module."""
    if adapter.comp.name != COMPONENT or adapter.opts.allow_unmapped:
        return unclaimed
    D, T = case.hyper["d_model"], case.out_shape[1]
    shapes = {n: tuple(space.shapes[n]) if space.shapes.get(n) is not None else () for n in unclaimed}
    pair = beside_computed({n: _values(slots[n]) for n in unclaimed if n in slots
                            and _is_table(shapes[n], D, T)}) if len(unclaimed) == 2 else None
    if pair is not None:
        name, own = pair
        slots[name].set(sinusoid(shapes[name][-2], D).reshape(shapes[name]))
        note = (f"a learned positional table ({name}) beside a sinusoid the candidate computes ({own}, "
                f"used on another path): the reference's sinusoid table placed into the learned one "
                f"(what is checked is the lookup of positions 0 .. T-1 and the addition to x)")
        _note(adapter, note)
        return []
    if len(unclaimed) != 1:
        return unclaimed
    name = unclaimed[0]
    slot, shape = slots.get(name), shapes[name]
    if slot is None or not _is_table(shape, D, T):
        return unclaimed
    if _computes_sinusoid(adapter) and not adapter.caps.learned_table:   # (probe: learned beside computed)
        note = (f"a positional table ({name}) the candidate computes itself (its text calls sin / "
                f"cos): not a learned table, compared as computed")
        _note(adapter, note)
        return []
    slot.set(sinusoid(shape[-2], D).reshape(shape))
    beside = ", beside a sinusoid buffer" if _computes_sinusoid(adapter) else ""
    note = (f"a learned positional table ({name}, {len(shape)} axes{beside}): the reference's sinusoid table placed "
            f"into it (what is checked is the lookup of positions 0 .. T-1 and the addition to x; "
            f"the table's own gradient has no reference counterpart)")
    _note(adapter, note)
    return []


def _values(slot) -> np.ndarray:
    """A slot's current values: a NumPy slot's array, a torch slot's parameter as an array."""
    if hasattr(slot, "array"):
        return np.asarray(slot.array())
    return slot.p.detach().cpu().numpy()


def _note(adapter, note: str) -> None:
    if note not in adapter.notes:
        adapter.notes.append(note)


def _tables(adapter, obj, buffers: bool = False) -> list[np.ndarray]:
    """The built module's trainable parameters (and, with `buffers`, a torch module's buffers after
    them), as arrays."""
    if adapter.framework == "torch":
        return [p.detach().cpu().numpy() for p in obj.parameters() if p.requires_grad] + (
            [b.detach().cpu().numpy() for b in obj.buffers() if b.is_floating_point()] if buffers else [])
    from ..slots import numpy_space
    _, slots = numpy_space(obj)
    return [np.asarray(slot.array()) for slot in slots.values()]


def _sinusoid_start(table: np.ndarray) -> bool:
    """Position 0 of a computed sinusoid: sin 0 = 0 in the even columns, cos 0 = 1 in the odd ones
    (a table computed by a helper outside the class's text; a wrong frequency keeps this row)."""
    row = table.reshape(-1, table.shape[-1])[0]
    return bool(np.allclose(row[0::2], 0.0, atol=1e-6) and np.allclose(row[1::2], 1.0, atol=1e-6))


def probe(adapter) -> None:
    """At preparation: a positional module whose only trainable parameter is one (L, d_model) or
    (1, L, d_model) table that is not a computed sinusoid (its text computes none, its first row is
    not sin 0, cos 0) holds a learned table (the gap `table`, core/completeness)."""
    if adapter.comp.name != COMPONENT or adapter.mode != "class" or adapter.probe is None or adapter.caps.table:
        return
    D, notes = adapter.probe_hyper()["d_model"], list(adapter.notes)
    try:            # built afresh: the probes before this one called it (a NumPy cache is no table)
        built = adapter.construct(adapter.probe_hyper())
        tables = _tables(adapter, built)
        held = _tables(adapter, built, buffers=True)[len(tables):]    # a torch module's buffers
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    finally:
        adapter.notes[:] = notes
    t = tables[0] if len(tables) == 1 else np.zeros(0)
    if t.ndim in (2, 3) and t.shape[-1] == D and (t.ndim == 2 or t.shape[0] == 1) and t.size \
            and not _sinusoid_start(t) and not _computes_sinusoid(adapter):
        adapter.caps.learned_table = True
    shaped = {(kind, i): a for kind, arrays in (("param", tables), ("buffer", held))
              for i, a in enumerate(arrays) if _is_table(np.shape(a), D, 1)}
    pair = beside_computed(shaped)
    if pair is not None and pair[0][0] == "param":   # a learned table beside a computed one (a
        adapter.caps.learned_table = True             # torch buffer, a second NumPy array)
