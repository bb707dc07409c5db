"""What the resolver (resolver.py) falls back on where names did not settle: q, k and v packed in
one (3D, D) matrix (or its transpose), and, inside one block, the free weights taken in
registration order, each with the bias beside it."""
from __future__ import annotations

from .bias_names import named_as_bias
from .leaf_words import role_biases
from .recognise import hooks
from .resolution import Entry
from .trees import LINEAR_BIAS, PACKED_QKV, PACKED_RAW, Child

RESOLVE = hooks("resolve")


class FallbackMixin:
    """Resolver methods for packed projections and registration order (Resolver holds the state:
    space, ref_shapes, entries, claimed, layout; join, take and free_names)."""

    def _packed_qkv(self, ref_prefix: str, cand_prefix: str) -> None:
        names = [self.join(ref_prefix, f"{p}.weight") for p in ("q_proj", "k_proj", "v_proj")]
        if all(n in self.entries for n in names) or not all(n in self.ref_shapes for n in names):
            return
        D = self.ref_shapes[names[0]][0]
        pairs = [(self.join(cand_prefix, f"{m}.weight"), self.join(cand_prefix, f"{m}.bias"))
                 for m in PACKED_QKV]
        pairs += [(self.join(cand_prefix, f"{m}.{w}"), self.join(cand_prefix, f"{m}.{b}"))
                  for m in PACKED_QKV for w, b in (("w", "b"), ("W", "b"), ("kernel", "bias"))]
        pairs += [(self.join(cand_prefix, w), self.join(cand_prefix, b)) for w, b in PACKED_RAW]
        for w, b in pairs:
            cw = self.space.find(w)
            if not cw or cw in self.claimed:
                continue
            if self.space.shapes[cw] is None:  # a function's argument: takes the layout asked
                shape = (D, 3 * D) if self.layout == "in_out" else (3 * D, D)
            else:
                shape = tuple(self.space.shapes[cw])
            if shape == (3 * D, D):
                transpose = False
            elif shape == (D, 3 * D):
                transpose = True
            else:
                continue
            for j, p in enumerate(("q_proj", "k_proj", "v_proj")):
                self.entries[self.join(ref_prefix, f"{p}.weight")] = Entry(
                    self.join(ref_prefix, f"{p}.weight"), cw, transpose, (j * D, (j + 1) * D), "packed")
            self.claimed.add(cw)
            cb = self.space.find(b)
            if cb and cb not in self.claimed and tuple(self.space.shapes[cb] or (3 * D,)) == (3 * D,):
                for j, p in enumerate(("q_proj", "k_proj", "v_proj")):
                    bref = self.join(ref_prefix, f"{p}.bias")
                    if bref in self.ref_shapes:
                        self.entries[bref] = Entry(bref, cb, False, (j * D, (j + 1) * D), "packed")
                self.claimed.add(cb)
            return
        RESOLVE.packed_by_shape(self, ref_prefix, cand_prefix) or RESOLVE.packed_kv(self, ref_prefix, cand_prefix)

    def _by_order(self, children: tuple[Child, ...], ref_prefix: str, cand_prefix: str) -> None:
        """Linear children still unresolved take the free weights under the block, in order."""
        todo = [c for c in children if c.kind == "linear"
                and self.join(self.join(ref_prefix, c.ref), "weight") in self.ref_shapes
                and self.join(self.join(ref_prefix, c.ref), "weight") not in self.entries]
        if not todo:
            return
        free = self.free_names(cand_prefix)
        skip = len(cand_prefix) + 1 if cand_prefix else 0
        for c in todo:
            wref = self.join(self.join(ref_prefix, c.ref), "weight")
            bref = self.join(self.join(ref_prefix, c.ref), "bias")
            for pos, m in enumerate(free):
                shape = self.space.shapes[m]       # None: a function's argument, any shape
                if shape is None and named_as_bias(m):
                    continue                       # no shape to go by: its name says bias
                if (shape is not None and len(shape) != 2) or not self.take(wref, m, how="order"):
                    continue
                if bref in self.ref_shapes and bref not in self.entries:
                    named = _named_bias(m, [v for v in free if _row(self.space.shapes[v]) or
                                            (self.space.shapes[v] is None and named_as_bias(v))])
                    if "." in m[skip:]:     # a module's weight: its bias sits beside it
                        owner = m.rsplit(".", 1)[0]
                        options = [self.join(owner, a) for a in LINEAR_BIAS]
                        if m.endswith(".0"):    # a (W, b) tuple in a list: layers.0.0, layers.0.1
                            options.append(self.join(owner, "1"))
                        options += named
                    else:   # a bare matrix: a bias its name pairs with it, else the next free
                        options = named + [v for v in free[pos + 1:]     # vector (never a row)
                                           if len(self.space.shapes[v] or ()) == 1 and "." not in v[skip:]][:1]
                    for v in options:
                        v = self.space.find(v)
                        if v and self.take(bref, v, how="order"):
                            break
                break


def _row(shape) -> bool:
    """A vector (n,), or a row (1, n) as NumPy code keeps `np.zeros((1, n))` (recognise/row_bias)."""
    return shape is not None and (len(shape) == 1 or (len(shape) == 2 and shape[0] == 1))


def _named_bias(weight: str, vectors: list[str]) -> list[str]:
    """The vector beside a weight that its name pairs with it: `bias_params` / `params_bias` /
    `b_params` beside `params`, `key_bias` beside `key_weights` (leaf_words.role_biases), or the
    one `b...` / `bias...` vector ending in the weight's number (`bias1` beside `k1convL1`).
    Shapes are checked where it is taken."""
    owner, leaf = weight.rsplit(".", 1) if "." in weight else ("", weight)
    mine = {v.rsplit(".", 1)[-1]: v for v in vectors if (v.rsplit(".", 1)[0] if "." in v else "") == owner}
    out = [mine[n] for n in (f"bias_{leaf}", f"{leaf}_bias", f"b_{leaf}", f"{leaf}_b", *role_biases(leaf))
           if n in mine]
    digits = "0123456789"
    num = leaf[len(leaf.rstrip(digits)):]
    numbered = [v for n, v in mine.items() if num and n[len(n.rstrip(digits)):] == num
                and n.rstrip(digits).rstrip("_").lower() in ("b", "bias", "biases")]
    return out + (numbered if len(numbered) == 1 else [])
