"""Checks npformer.io.hub runs on what it reads, before any model is allocated (one line each, naming
the file or tensor, what was expected and what came)."""
from __future__ import annotations

import json
from pathlib import Path

from npformer.models.config import TransformerConfig

__all__ = ["read_json", "expected_shape"]


def read_json(path: Path, what: str) -> dict:
    """A JSON object from `path`, or a ValueError naming the file, what was expected and what came."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:          # not UTF-8, not JSON, a number of more than 4300 digits
        raise ValueError(f"{path}: expected {what}, got text that is not JSON ({e})") from None
    except RecursionError:                               # [[[[...]]]] deeper than Python's stack
        raise ValueError(f"{path}: expected {what}, got JSON nested too deeply to read") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: expected {what}, got a JSON {type(value).__name__}")
    return value


def expected_shape(ours: str, c: TransformerConfig) -> tuple | None:
    """The shape our parameter `ours` has under config `c` (None: not one checked here), so that
    a config.json that disagrees with its weights is refused before a model is allocated (an
    n_positions of 2**40 used to ask for 64 TiB)."""
    D, F, V = c.d_model, c.d_ff, c.tgt_vocab
    last = ours.rsplit(".", 2)[-2:]                             # [module, weight|bias]
    rows = {"tgt_embed": V, "tok_embed": V, "tgt_pos": c.max_len, "pos": c.max_len,
            "type_embed": c.type_vocab_size, "linear1": F, "linear2": D, "out_proj": D,
            "dense": D, "mlm_dense": D, "classifier": c.num_classes, "output_proj": V}
    if last[0] in rows:
        n = rows[last[0]]
        if last[1] == "bias":
            return (n,)
        return (n, F) if last[0] == "linear2" else (n, D)
    if last[0].startswith("norm") or last[0].endswith("norm"):
        return (D,)
    return None
