"""Leaf names read by their words where no alias list holds them: a plural of a known leaf
(`weights`, `biases`, `gammas` on a norm) and a leaf named with its role (`key_bias` beside
`key_weights`, `final_linear_bias` beside `final_linear_weights`, `biases_first` beside
`weights_first`). Each name is only offered; the resolver's `take` refuses one already claimed, so
no name fills two slots."""
from __future__ import annotations

WEIGHT_WORDS = ("weights", "weight", "w", "matrix", "kernel")
BIAS_WORDS = ("biases", "bias", "b")


def with_plurals(aliases) -> list[str]:
    """The aliases, then each word alias (two letters or more, not ending in a digit) in the plural:
    `weight` -> `weights`, `gamma` -> `gammas`, `bias` -> `biases`; `g`, `0` and `alias.sub` stay
    as they are."""
    out = list(aliases)
    for a in aliases:
        if len(a) > 1 and a.isidentifier() and not a[-1].isdigit():
            plural = a + ("es" if a.endswith("s") else "s")
            if plural not in out:
                out.append(plural)
    return out


def role_of(leaf: str) -> str | None:
    """The role a weight's name gives it besides the weight word: `final_linear` for
    `final_linear_weights`, `first` for `weights_first`, `query` for `query_W`; None for a name that
    is only a weight word or has none."""
    words = leaf.split("_")
    if len(words) < 2:
        return None
    if words[-1].lower() in WEIGHT_WORDS:
        return "_".join(words[:-1])
    if words[0].lower() in WEIGHT_WORDS:
        return "_".join(words[1:])
    return None


def role_biases(leaf: str) -> list[str]:
    """The bias names that share a weight's role: `key_bias` / `key_biases` / `key_b` and
    `bias_key` / `biases_key` / `b_key` for `key_weights`."""
    role = role_of(leaf)
    if not role:
        return []
    return [f"{role}_{b}" for b in BIAS_WORDS] + [f"{b}_{role}" for b in BIAS_WORDS]
