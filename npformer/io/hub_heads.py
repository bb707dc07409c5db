"""A BERT classifier from a folder that has no classifier: a fresh, seeded head.

`bert-base-uncased` is a BertForPreTraining folder: encoder, pooler, masked-LM and next-sentence
heads, no `classifier`. transformers' BertForSequenceClassification.from_pretrained on it keeps the
encoder (and the pooler when present), initialises what is missing and warns that those weights are
"newly initialized". fresh_head_state() does the same on a Hugging Face state dict of numpy arrays:

    missing weight                        drawn as transformers' _init_weights draws it
    classifier.weight (C, D)              normal(0, initializer_range)
    classifier.bias (C,)                  zeros
    bert.pooler.dense.weight (D, D)       normal(0, initializer_range)   (a BertForMaskedLM folder)
    bert.pooler.dense.bias (D,)           zeros

from np.random.default_rng(seed), so a seed fixes the head bit for bit. The heads the classifier
does not have (cls.predictions.*, cls.seq_relationship.*) are dropped. The values are not
transformers' own draws (its generator is torch's): equal in distribution, not in value.
"""
from __future__ import annotations

import numpy as np

from npformer.io.hub_mapping import normalise_hf_keys

__all__ = ["fresh_head_state", "NEW_HEAD_KEYS", "DEFAULT_INITIALIZER_RANGE"]

DEFAULT_INITIALIZER_RANGE = 0.02
NEW_HEAD_KEYS = ("bert.pooler.dense.weight", "bert.pooler.dense.bias", "classifier.weight",
                 "classifier.bias")


def fresh_head_state(hf_config: dict, hf_state: dict, num_labels: int, seed: int = 0
                     ) -> tuple[dict, list[str]]:
    """(the state with a classifier head added, the names newly initialised) for a BERT folder
    that has no classifier (BertModel, BertForMaskedLM or BertForPreTraining)."""
    if isinstance(num_labels, bool) or not isinstance(num_labels, int) or num_labels < 1:
        raise ValueError(f"num_labels: expected an int >= 1, got {num_labels!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: expected an int >= 0, got {seed!r}")
    std = hf_config.get("initializer_range", DEFAULT_INITIALIZER_RANGE)
    if isinstance(std, bool) or not isinstance(std, (int, float)) or not 0 < std < 1:
        raise ValueError(f"config.json: initializer_range: expected a number in (0, 1), got "
                         f"{std!r}")
    hf = {k: v for k, v in normalise_hf_keys("bert_cls", hf_state).items()
          if not k.startswith("cls.")}                          # masked-LM / next-sentence heads
    emb = hf.get("bert.embeddings.word_embeddings.weight")
    if emb is None or np.ndim(emb) != 2:
        raise ValueError("hf_state: expected bert.embeddings.word_embeddings.weight (V, D) in a "
                         "BERT folder, got " + ("none" if emb is None else f"shape {np.shape(emb)}"))
    D = int(np.shape(emb)[1])
    dtype = np.asarray(emb).dtype
    rng = np.random.default_rng(seed)
    shapes = {"bert.pooler.dense.weight": (D, D), "bert.pooler.dense.bias": (D,),
              "classifier.weight": (num_labels, D), "classifier.bias": (num_labels,)}
    new = [k for k in NEW_HEAD_KEYS if k not in hf]
    for k in new:                                               # fixed order: a seed fixes all
        shape = shapes[k]
        hf[k] = (rng.normal(0.0, std, size=shape) if k.endswith("weight")
                 else np.zeros(shape)).astype(dtype)
    return hf, new
