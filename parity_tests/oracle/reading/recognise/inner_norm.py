"""Recogniser: norms living inside the attention or feed-forward block (the block computes
LayerNorm(x + Sublayer(x)) itself, as in several tutorial repositories). When the oracle's component
is a whole layer, the layer's norm k is looked for inside the k-th sublayer block (self-attention,
cross-attention, feed-forward, in that order), under the usual norm names. Checked alone as `mha` or
`ffn`, such a block computes more than the component: its norm parameters stay unclaimed and the
oracle says so (check it as part of `encoder_layer` / `decoder_layer`)."""
from __future__ import annotations

NAMES = ("layer_norm", "norm", "ln", "layernorm", "LayerNorm", "norm_layer", "lnorm", "add_norm",
         "addnorm", "layer_norm_1", "ln_1")
BLOCKS = ("self_attn", "cross_attn", "feed_forward")


def _common_prefix(names: list[str]) -> str:
    split = [n.split(".") for n in names]
    out = []
    for toks in zip(*split):
        if len(set(toks)) != 1:
            break
        out.append(toks[0])
    if len(names) == 1:
        out = out[:-2]
    return ".".join(out)


def block_prefix(r, block_ref: str) -> str | None:
    """Where the candidate keeps the block the resolver mapped at `block_ref`."""
    cands = [e.cand for ref, e in r.entries.items() if ref.startswith(block_ref + ".")
             and e.cand is not None and not e.parts]
    if not cands:
        return None
    p = _common_prefix(cands)
    return p or None


def resolve(r, ref_child: str, cand_prefix: str) -> bool:
    parent, _, leaf = ref_child.rpartition(".")
    if not leaf.startswith("norm") or not leaf[4:].isdigit():
        return False
    k = int(leaf[4:])
    blocks = [b for b in BLOCKS if any(x.startswith(r.join(parent, b) + ".") for x in r.ref_shapes)]
    if not 1 <= k <= len(blocks):
        return False
    where = block_prefix(r, r.join(parent, blocks[k - 1]))
    if where is None:
        return False
    for name in NAMES:
        before = set(r.entries)
        if r.space.has_prefix(r.join(where, name) + ".") and \
                r.leaf_block("norm", ref_child, r.join(where, name), None, where):
            for ref in set(r.entries) - before:
                r.entries[ref].how = "inner_norm"
            return True
    return False
