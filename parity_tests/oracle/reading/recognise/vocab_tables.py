"""Recogniser: a whole model that uses one vocabulary table in several places, as the paper does
("we share the same weight matrix between the two embedding layers and the pre-softmax linear
transformation", section 3.4): `self.tgt_embed.weight = self.src_embed.weight`,
`self.out.weight = self.embed.weight`, one embedding module called for both sides, or logits
computed as `h @ self.embed.weight.T`.

Found on the model built with small sizes (construct.probe_hyper), by counting its distinct
(vocabulary, d_model) tables against the three uses the reference has (source embedding, target
embedding, output projection):

    3 tables                       nothing shared
    1 table                        all three share it: share_embeddings and tie_embeddings
    2 tables, one of them an       the output has its own: the embeddings share the other
      output layer's only            (share_embeddings)
    2 tables, one used both as     the output uses the target table (tie_embeddings)
      an embedding and an output,
      or neither an output layer's

A table counts once however many names reach it (torch lists a tied parameter under its first
name only; NumPy arrays are compared by identity). Then the reference is built the same way (unless
--set fixes share_embeddings / tie_embeddings), both vocabularies are drawn equal when the
embeddings share, and the report says so. Without this, the reference's three tables had nowhere to
go and right code was an interface error. `place` then gives the reference's tables left unplaced
the candidate's one unclaimed table of that shape whose name says embedding.
"""
from __future__ import annotations

OUTPUT_WORDS = ("out", "output", "proj", "projection", "generator", "linear", "fc", "head",
                "logits", "lm", "classifier", "unembed", "vocab", "final", "dense", "prj")
EMBED_WORDS = ("embed", "embedding", "embeddings", "emb", "embedder", "lut", "tok", "token",
               "wte", "table", "word")


def _words(name: str) -> set[str]:
    return {w for part in name.lower().split(".") for w in part.split("_") if w}


def _tables(adapter, obj, sizes: dict) -> list[tuple[list[str], list[str]]]:
    """[(names, owner classes)] per distinct (vocabulary, d_model) table of the built model."""
    D = sizes["d_model"]
    shapes = {s for v in (sizes["src_vocab"], sizes["tgt_vocab"]) for s in ((v, D), (D, v))}
    groups: dict[int, tuple[list[str], list[str]]] = {}
    if adapter.framework == "torch":
        for name, p in obj.named_parameters(remove_duplicate=False):
            if tuple(p.shape) in shapes:
                owner = obj.get_submodule(name.rsplit(".", 1)[0]) if "." in name else obj
                names, owners = groups.setdefault(id(p), ([], []))
                names.append(name)
                owners.append(type(owner).__name__)
    else:
        from ..slots import numpy_space
        space, slots = numpy_space(obj)
        for name, slot in slots.items():
            if tuple(space.shapes.get(name) or ()) in shapes:
                names, owners = groups.setdefault(id(slot.array()), ([], []))
                names.append(name)
                owners.append("")
    return list(groups.values())


def _is_output(name: str, owner: str) -> bool:
    """A use as the output projection: held by a Linear layer, or named for an output and not for an
    embedding."""
    words = _words(name.rsplit(".", 1)[0] if "." in name else name)
    return "linear" in owner.lower() or (bool(words & set(OUTPUT_WORDS)) and not words & set(EMBED_WORDS))


def shared(tables: list[tuple[list[str], list[str]]]) -> tuple[bool, bool] | None:
    """(share_embeddings, tie_embeddings) the tables imply, or None when they say nothing (three
    tables, none, more, or two whose roles cannot be told apart)."""
    if len(tables) == 1:
        return True, True
    if len(tables) != 2:
        return None
    roles = [[_is_output(n, o) for n, o in zip(names, owners)] for names, owners in tables]
    only_output = [all(r) for r in roles]
    both = [any(r) and not all(r) for r in roles]
    if sum(only_output) == 1 and not any(both):
        return True, False                  # an output layer of its own, one embedding for both sides
    if sum(both) == 1 or not any(any(r) for r in roles):
        return False, True                  # the output reuses an embedding table
    return None


def probe(adapter) -> None:
    if adapter.comp.name != "model" or adapter.mode not in ("class", "factory") or \
            (adapter.probe is None and adapter.mode == "class"):
        return
    sizes = adapter.probe_hyper()
    if sizes["d_model"] in (sizes["src_vocab"], sizes["tgt_vocab"]):
        return                              # tables not told apart from square weights by shape
    try:
        built = adapter.probe if adapter.probe is not None else adapter.construct(sizes)   # a builder
        found = shared(_tables(adapter, built, sizes))
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    if found is None:
        return
    settings = adapter.opts.settings
    share = settings.get("share_embeddings", found[0])
    tie = settings.get("tie_embeddings", found[1])
    adapter.caps.share_embeddings, adapter.caps.tie_embeddings = bool(share), bool(tie)
    what = {(True, True): "one table for the source and target embeddings and the output projection",
            (True, False): "one table for the source and target embeddings",
            (False, True): "the target embedding's table for the output projection"}[found]
    adapter.notes.append(f"the model uses {what} (as the paper, section 3.4): the reference is built "
                         f"with share_embeddings={str(share).lower()}, tie_embeddings="
                         f"{str(tie).lower()}" + (" and one vocabulary size for both sides" if share else "")
                         + " (--set share_embeddings=... / tie_embeddings=... to require otherwise)")


SIDE_WORDS = {"src_embed.weight": ("src", "source", "enc", "encoder", "input", "inp"),
              "tgt_embed.weight": ("tgt", "trg", "target", "dec", "decoder", "output", "out")}
"""Words of a table's first name part that say which side it embeds (`src_embed.embedding.0...`)."""


def _on_side(ref: str, names: list[str]) -> list[str]:
    """Of several tables, those whose first name part names `ref`'s side (and not the other's)."""
    side = SIDE_WORDS.get(ref)
    if side is None:
        return names
    other = next(w for k, w in SIDE_WORDS.items() if k != ref)

    def first(n: str) -> set[str]:
        return {w for w in n.split(".")[0].lower().split("_") if w}
    return [n for n in names if first(n) & set(side) and not first(n) & set(other)]


def place(r) -> None:
    """The reference's vocabulary tables still unplaced each take the one unclaimed candidate table
    of that shape (or its transpose) whose name has an embedding word, when there is exactly one;
    of several, the one whose first name part names the table's side (`src_embed.embedding.0.
    embedding.weight` for the source table, `tgt_...` for the target's), when that leaves one."""
    for ref in ("src_embed.weight", "tgt_embed.weight", "output_proj.weight"):
        shape = r.ref_shapes.get(ref)
        if shape is None or ref in r.entries:
            continue
        free = [n for n in r.space.names if n not in r.claimed
                and tuple(r.space.shapes.get(n) or ()) in (tuple(shape), tuple(shape)[::-1])
                and _words(n) & set(EMBED_WORDS)]
        free = free if len(free) == 1 else _on_side(ref, free)
        if len(free) == 1 and r.take(ref, free[0], how="shape"):
            e = r.entries[ref]
            e.why = (e.why + "; " if e.why else "") + "the model's one vocabulary table of this shape"
    _tied_output_bias(r)
    from .output_projection import place as place_output
    place_output(r)


def _tied_output_bias(r) -> None:
    """The output projection's bias when its weight is the tied vocabulary table: the one unclaimed
    candidate `<part>.bias` of the vocabulary's shape whose `<part>.weight` is no parameter of its
    own (torch lists a tied weight under its first name only: `last_linear.weight` is the source
    embedding's)."""
    ref, shape = "output_proj.bias", r.ref_shapes.get("output_proj.bias")
    if shape is None or ref in r.entries or "output_proj.weight" in r.ref_shapes:
        return                              # an untied reference: its weight places the bias
    free = [n for n in r.space.names if n not in r.claimed and n.endswith(".bias")
            and tuple(r.space.shapes.get(n) or ()) == tuple(shape)
            and n[:-len("bias")] + "weight" not in r.space.names]
    if len(free) == 1 and r.take(ref, free[0], how="shape"):
        e = r.entries[ref]
        e.why = (e.why + "; " if e.why else "") + "the bias beside the tied output table"
