"""What the resolver works on and produces: the candidate's parameters (`Space`) and, for every
reference parameter, where the candidate keeps it (`Entry`). The resolver itself: resolver.py."""
from __future__ import annotations

from dataclasses import dataclass

from .packed_order import HEAD_GROUPED
from .packed_order import WORDS as ORDER_WORDS


@dataclass
class Space:
    """The candidate's parameters: names in registration order, shapes, and whether each is a bare
    matrix (layout unknown) or a weight of a known layer type (torch.nn.Linear: (out, in))."""

    names: list[str]
    shapes: dict[str, tuple]
    bare: dict[str, bool]
    owner: dict[str, str] | None = None     # the class of the module holding each one (torch)
    made_by_forward: bool = False           # NumPy: none was there before a first forward made them

    def __post_init__(self) -> None:
        self._lower = {}
        for n in self.names:
            self._lower.setdefault(n.lower(), n)

    def find(self, name: str) -> str | None:
        """Exact name, else a case-insensitive match; for a function's arguments (no shapes), a
        block's parameter is also its name with the dot as an underscore (`proj_w` for `proj.w`)."""
        if name in self.shapes:
            return name
        hit = self._lower.get(name.lower())
        if hit is None and "." in name:
            flat = self._lower.get(name.replace(".", "_").lower())
            if flat is not None and self.shapes.get(flat) is None:
                return flat
        return hit

    def made_by(self, names: list[str]) -> Space:
        """These of its arrays, all made by a first forward (reading/adapters.py, lazy ones)."""
        return Space(names, {n: self.shapes[n] for n in names}, {n: self.bare[n] for n in names},
                     self.owner, made_by_forward=True)

    def has_prefix(self, prefix: str) -> bool:
        p = prefix.lower()
        flat = p[:-1].replace(".", "_") + "_" if p.endswith(".") else None    # `proj_` for `proj.`
        return any(n.lower().startswith(p) or flat is not None and n.lower().startswith(flat)
                   and self.shapes.get(n) is None for n in self.names)


@dataclass
class Entry:
    """A reference parameter and where the candidate keeps it."""

    ref: str
    cand: str | None                 # None: the candidate has none (neutral value, not compared)
    transpose: bool = False          # candidate stores it transposed
    rows: tuple[int, int] | None = None   # a slice of a packed matrix (rows of the (out, in) view)
    how: str = "name"                # name | order | map | absent | packed | per_head
    cand_shape: tuple | None = None  # kept with size-1 axes added ((1, n), Conv1d (out, in, 1))
    ref_shape: tuple | None = None   # the reference's shape, when cand_shape is set
    parts: tuple = ()                # per-head pieces: ((cand, (row0, row1), transpose, shape), ...)
    why: str = ""                    # absent: how the oracle knows the candidate has none
    pre_shape: tuple | None = None   # heads on axes of their own: (W.T if transpose else W)
    perm: tuple | None = None        # .reshape(pre_shape).transpose(perm) (recognise/head_axes)
    grouped: int = 0                 # packed rows in another order: H heads (recognise/qkv_groups)
    group_order: tuple = HEAD_GROUPED  # that order of the (part, head, width) axes (packed_order.py)

    def describe(self) -> str:
        if self.cand is None:
            return f"{self.ref} <- (none: fixed at its neutral value, not compared" + (
                f"; {self.why}" if self.why else "") + ")"
        if self.parts:
            return (f"{self.ref} <- rows of {len(self.parts)} per-head pieces "
                    + ", ".join(p[0] for p in self.parts) + (" (transposed)" if self.parts[0][2] else ""))
        extra = []
        if self.cand_shape is not None:
            extra.append(f"kept as {self.cand_shape}" + (", heads on axes of their own"
                                                         if self.pre_shape else ""))
        if self.rows:
            extra.append(f"rows {self.rows[0]}:{self.rows[1]} of a packed matrix"
                         + (f" grouped by head ({self.grouped} heads)" if self.grouped
                            and self.group_order == HEAD_GROUPED else f" in the order "
                            f"{ORDER_WORDS[self.group_order]} ({self.grouped} heads)" if self.grouped
                            else ""))
        if self.transpose:
            extra.append("transposed")
        if self.why:
            extra.append(self.why)
        if self.how == "order":
            extra.append("by registration order")
        if self.how == "role":
            extra.append("role found by probing")
        if self.how == "inner_norm":
            extra.append("a norm inside the sublayer block")
        if self.how == "map":
            extra.append("from --map")
        return f"{self.ref} <- {self.cand}" + (f" ({', '.join(extra)})" if extra else "")


def any_layer(name: str) -> str:
    """A dotted name with its layer indices as "*" (`enc.layers.1.attn.W_q` -> `enc.layers.*.attn.W_q`):
    what a probe build of one layer saw holds for every layer of the class."""
    return ".".join("*" if part.isdigit() else part for part in name.split("."))
