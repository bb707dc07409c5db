"""Which parameter an array that changed in backward sits beside (grad_behaviour): an array kept in
another parameter's part (`out.last_step` beside `out.W`), or named for another parameter
(`cache["g_W_o"]` beside `W_o`), of the same shape, is that parameter's and never read as this
one's gradient. A part whose own gradient is zero on an example (the query's, when there is one
key) keeps an array that does not change in backward; the arrays that did change are its
neighbours' gradients, and taking one of them would call correct code wrong."""
from __future__ import annotations

import re


def _owner(path: str) -> str:
    """`out` for `out.last_step`; "" for an array the candidate object holds itself."""
    return path.rsplit(".", 1)[0] if "." in path else ""


def _within(path: str, owner: str) -> bool:
    return owner == "" or path == owner or path.startswith(owner + ".")


def part_of(path: str, owners: set[str]) -> str | None:
    """The deepest of `owners` (parameter holders, "" the object itself) whose part holds `path`."""
    held = [o for o in owners if _within(_owner(path), o)]
    return max(held, key=len) if held else None


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


PREFIXES = ("", "d", "g", "dl", "dld", "grad", "grads", "gradient", "delta")
SUFFIXES = ("", "grad", "gradient", "delta", "g", "d")


def names(path: str, cand: str) -> bool:
    """Whether the last word of `path` is named for parameter `cand` (`g_W_o`, `dW_o`, `grad_wo`,
    `W_o_grad` for `W_o`): the parameter's last name with a gradient word before or after it."""
    last, leaf = _squash(path.rsplit(".", 1)[-1]), _squash(cand.rsplit(".", 1)[-1])
    return bool(leaf) and any(last == f"{p}{leaf}{s}" for p in PREFIXES for s in SUFFIXES
                              if not (p and s))


def beside_other(path: str, cand: str, shapes: dict[str, tuple]) -> tuple[str, str] | None:
    """(the other parameter of `cand`'s shape that `path` sits beside, "by place" when `path` is in
    its part or "by its name" when named for it and not for `cand`); None when `path` may be
    `cand`'s gradient."""
    shape = tuple(shapes[cand])
    same = [c for c, s in shapes.items() if c != cand and tuple(s) == shape]
    owners = {_owner(c) for c in same} | {_owner(cand)}
    where = part_of(path, owners)
    if where is not None and where != _owner(cand):
        return next(c for c in same if _owner(c) == where), "by place"
    if not names(path, cand):
        other = next((c for c in same if names(path, c) and _within(path, _owner(c))), None)
        return None if other is None else (other, "by its name")
    return None


def kept_alike(cand: str, where: dict, shapes: dict, after: dict, params: set) -> str | None:
    """Where `cand`'s own part keeps the array its neighbours of the same shape keep their
    gradients under (`query.last_step`, when `out.W`'s gradient was read from `out.last_step`):
    `cand`'s gradient, though it did not change in backward (zero on this example). `where`:
    parameter -> the path its gradient was read from on this example. None unless exactly one
    such array exists, of `cand`'s shape, read for no other parameter."""
    own, shape = _owner(cand), tuple(shapes[cand])
    spots = set()
    for other, path in where.items():
        home = _owner(other)
        if other != cand and tuple(shapes.get(other, ())) == shape and home != own \
                and home and path.startswith(home + "."):
            rest = path[len(home) + 1:]
            spots.add(f"{own}.{rest}" if own else rest)
    spots = {s for s in spots if s in after and s not in params and s not in where.values()
             and tuple(after[s].shape) == shape}
    return spots.pop() if len(spots) == 1 else None
