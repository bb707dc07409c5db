"""`npformer generate BERT_FOLDER "The capital of France is [MASK]."`: BERT fills the masks.

The folder holds config.json + model.safetensors of a BertForMaskedLM (or BertForPreTraining, whose
masked-LM head is the one read) and vocab.txt; tokenizer_config.json's do_lower_case is honoured
(default: lower-case, as bert-base-uncased). Each INPUT is encoded by the project's WordPiece
tokenizer as BERT reads it ([CLS] tokens [SEP]), run once through the model, and for every [MASK]
the --top-k most probable tokens are printed with their probabilities (softmax of the masked
position's logits), as transformers' fill-mask pipeline reports them:

    token_str   the token alone, decoded ("##" kept on a continuation piece)
    sequence    the input with this mask filled, decoded; with one mask the special tokens are
                left out, with several they are kept (the other masks stay visible), as the
                pipeline does
"""
from __future__ import annotations

import json
import os

import numpy as np

from npformer.cli import backends
from npformer.cli.common import to_numpy, torch_and_device
from npformer.cli.errors import CliError
from npformer.cli.text import check_input_text

__all__ = ["fill_mask", "fill_mask_cli", "masked_ids", "is_bert_folder", "load_bert_folder", "folder_lowercase",
           "DEFAULT_TOP_K"]

DEFAULT_TOP_K = 5
MASK = "[MASK]"
NOT_FOR_FILL_MASK = {"beam": "--beam", "alpha": "--alpha", "max_new_tokens": "--max-new-tokens",
                     "no_cache": "--no-cache", "temperature": "--temperature", "top_p": "--top-p",
                     "seed": "--seed"}


def is_bert_folder(folder: str) -> bool:
    """A folder holding BERT's vocab.txt (and no GPT-2 vocab.json)."""
    return os.path.isfile(os.path.join(folder, "vocab.txt")) and \
        not os.path.isfile(os.path.join(folder, "vocab.json"))


def folder_lowercase(folder: str) -> bool:
    """tokenizer_config.json's do_lower_case (default True: an uncased model)."""
    path = os.path.join(folder, "tokenizer_config.json")
    if not os.path.isfile(path):
        return True
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise CliError(f"CHECKPOINT {path}: expected a JSON object (a tokenizer config), got an "
                       f"unreadable file ({e})") from None
    value = cfg.get("do_lower_case", True) if isinstance(cfg, dict) else True
    if not isinstance(value, bool):
        raise CliError(f"CHECKPOINT {path}: do_lower_case: expected true or false, got {value!r}")
    return value


def load_bert_folder(folder: str, backend: str = "numpy", dtype: str = "float32", device=None):
    """(BertForMaskedLM in eval mode, WordPieceTokenizer) of a BERT folder, in `backend`."""
    from npformer.data.tokenizers import WordPieceTokenizer
    try:
        tokenizer = WordPieceTokenizer.from_folder(folder, lowercase=folder_lowercase(folder))
        if backend == "torch":
            model = backends.module("torch", "hub").from_pretrained(folder, dtype, device=device)
        else:
            from npformer.io import hub
            model = hub.from_pretrained(folder, dtype)
    except (OSError, ValueError, TypeError) as e:
        raise CliError(f"CHECKPOINT {folder}: {e}") from None
    if type(model).__name__ != "BertForMaskedLM":
        raise CliError(f"CHECKPOINT {folder}: holds a {type(model).__name__}; filling [MASK] needs "
                       f"a masked-LM head (a BertForMaskedLM or BertForPreTraining folder)")
    if MASK not in tokenizer.vocab:
        raise CliError(f"CHECKPOINT {folder}: vocab.txt has no {MASK} token")
    if tokenizer.vocab_size > model.config.vocab_size:
        raise CliError(f"CHECKPOINT {folder}: vocab.txt has {tokenizer.vocab_size} tokens, the "
                       f"model {model.config.vocab_size}; the tokenizer is not this model's")
    return model.eval(), tokenizer


def masked_ids(model, tokenizer, text: str) -> tuple[list[int], list[int]]:
    """(token ids of `text` with [CLS] and [SEP], the positions of its [MASK]s); a CliError naming
    the INPUT when it has no [MASK] or more tokens than the model reads."""
    ids = tokenizer.encode(text)                                       # [CLS] ... [SEP]
    mask_id = tokenizer.vocab[MASK]
    where = [i for i, t in enumerate(ids) if t == mask_id]
    if not where:
        raise CliError(f"INPUT {text!r}: has no {MASK} to fill")
    if len(ids) > model.config.max_len:
        raise CliError(f"INPUT {text!r}: {len(ids)} tokens with [CLS] and [SEP]; the model reads "
                       f"{model.config.max_len} at most (max_position_embeddings)")
    return ids, where


def fill_mask(model, tokenizer, text: str, top_k: int = DEFAULT_TOP_K, backend: str = "numpy"
              ) -> list[list[dict]]:
    """For each [MASK] of `text`, in order, the `top_k` candidates: dicts with score, token,
    token_str and sequence (the fill-mask pipeline's fields)."""
    ids, where = masked_ids(model, tokenizer, text)
    x = np.asarray([ids], dtype=np.int64)                               # (1, T)
    if backend == "torch":
        import torch
        x = torch.as_tensor(x, device=model.device)
    logits = np.asarray(to_numpy(model(x)), dtype=np.float64)[0, where]          # (M, V)
    z = logits - logits.max(axis=-1, keepdims=True)
    probs = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)           # (M, V) softmax
    # candidates only among the tokenizer's ids (ids past them, a vocabulary padded in the weights or
    # a vocab.txt that is not the model's, have no text); scores stay the softmax over every logit
    V = min(tokenizer.vocab_size, probs.shape[-1])
    k = min(top_k, V)
    best = np.argsort(-probs[:, :V], axis=-1, kind="stable")[:, :k]     # (M, k) most probable first
    out = []
    for m, pos in enumerate(where):
        row = []
        for t in best[m]:
            filled = list(ids)
            filled[pos] = int(t)
            row.append({"score": float(probs[m, t]), "token": int(t),
                        "token_str": tokenizer.decode([int(t)], skip_special_tokens=False),
                        "sequence": tokenizer.decode(filled, skip_special_tokens=len(where) == 1)})
        out.append(row)
    return out


def format_fills(text: str, fills: list[list[dict]]) -> str:
    """What the command prints for one input: the input, then per mask one line per candidate."""
    lines = [text]
    for m, row in enumerate(fills):
        if len(fills) > 1:
            lines.append(f"  [MASK] {m + 1} of {len(fills)}:")
        lines += [f"  {c['score']:.4f}  {c['token_str']:<12} {c['sequence']}" for c in row]
    return "\n".join(lines)


def fill_mask_cli(args, model=None, tokenizer=None) -> int:
    """`npformer generate BERT_FOLDER INPUT...`: every input's masks, top-k each (`model` and
    `tokenizer` given: a BERT checkpoint fine-tuned on text, npformer.data.text_mlm)."""
    given = getattr(args, "given", {}) or {}
    bad = [o for d, o in NOT_FOR_FILL_MASK.items() if d in given]
    if bad:
        raise CliError(f"{', '.join(bad)}: a BERT model fills [MASK] in one pass and decodes no "
                       f"continuation; only --top-k K (candidates per mask, default "
                       f"{DEFAULT_TOP_K}) applies")
    for text in args.inputs:                          # before loading: the error names the INPUT
        check_input_text(text)
    if model is None:
        dev = torch_and_device(args)[1] if args.backend == "torch" else None
        model, tokenizer = load_bert_folder(args.checkpoint, args.backend, args.dtype or "float32",
                                            dev)
    for text in args.inputs:                          # every INPUT checked before the first fill
        masked_ids(model, tokenizer, text)
    for text in args.inputs:
        fills = fill_mask(model, tokenizer, text, args.top_k or DEFAULT_TOP_K, args.backend)
        print(format_fills(text, fills))
    return 0
