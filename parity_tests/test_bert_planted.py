"""Planted bugs in BERT's hand-written backward (npformer.models.bert): each mutant replaces one piece with a
plausible mistake; the BERT parity tests (test_bert_parity.py), re-run exactly as written with the
machinery of test_planted_bugs.py, must fail with a ParityError whose first line names the tensor
that went wrong. `python -m pytest -s` prints bug -> test -> first line.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import npformer.models.bert as B
from parity_tests import test_bert_parity as T_bert
from parity_tests.test_planted_bugs import PM, plant, run_suite_test

ORIG = {"tanh_backward": B.tanh_backward, "BertModel.backward": B.BertModel.backward}


def tanh_missing_square(dout, cache):
    return dout * (1.0 - cache.y)                                  # 1 - y instead of 1 - y^2


def pooler_grad_to_last_position(self, dpooled):
    tcache, h_shape = self._require_cache()
    dh = np.zeros(h_shape, dtype=self.dtype)
    dh[:, -1, :] = self.dense.backward(B.tanh_backward(dpooled, tcache))   # [CLS] is position 0
    return dh


def _bert_backward_with(skip_types=False, skip_embed_norm=False):
    def backward(self, dhidden, dpooled=None):
        h, pooled = self._require_cache()
        dh = np.zeros_like(h) if dhidden is None else dhidden.copy()
        if dpooled is not None:
            dh += self.pooler.backward(dpooled)
        dx = self.encoder.backward(dh)
        de = self.embed_dropout.backward(dx)
        if self.config.embedding_norm and not skip_embed_norm:
            de = self.embed_norm.backward(de)
        elif self.config.embedding_norm:
            self.embed_norm.backward(de)                           # grads of gamma/beta kept, dx lost
        if self.config.type_vocab_size and not skip_types:
            self.type_embed.backward(de)
        self.tok_embed.backward(self.pos.backward(de))
        return {"encoder_input": dx}
    return backward


BUGS = [  # (name, (owner, attribute), mutant, ((suite test, regex of the first line), ...))
    ("tanh backward: 1 - y instead of 1 - y^2", (B, "tanh_backward"), tanh_missing_square,
     ((T_bert.test_bert_heads_eval, PM + r"bert\.pooler\.dense\.(weight|bias)\.grad "),
      (T_bert.test_bert_model_hidden_and_pooled, PM + r"pooler\.dense\.(weight|bias)\.grad "))),
    ("pooler backward: gradient sent to the last position, not [CLS]",
     (B.Pooler, "backward"), pooler_grad_to_last_position,
     ((T_bert.test_bert_heads_eval, PM + r"\S+\.grad "),)),
    ("BERT backward: segment embedding gets no gradient",
     (B.BertModel, "backward"), _bert_backward_with(skip_types=True),
     ((T_bert.test_bert_heads_eval, PM + r"bert\.type_embed\.weight\.grad "),)),
    ("BERT backward: embedding LayerNorm skipped on the way to the tables",
     (B.BertModel, "backward"), _bert_backward_with(skip_embed_norm=True),
     ((T_bert.test_bert_heads_training_replayed_dropout_with_loss,
       PM + r"bert\.(tok_embed|pos|type_embed)\.weight\.grad "),)),
]


@pytest.mark.parametrize("bug", BUGS, ids=[b[0] for b in BUGS])
def test_planted_bert_bug_is_caught_and_named(bug, monkeypatch):
    name, (owner, attr), mutant, catches = bug
    if isinstance(owner, type):
        monkeypatch.setattr(owner, attr, mutant)
    else:
        plant(monkeypatch, owner, attr, mutant)
    for test_fn, pattern in catches:
        err = run_suite_test(test_fn)
        first = str(err).splitlines()[0]
        print(f"\nPLANTED | {name} | {test_fn.__name__} | {first}")
        assert re.search(pattern, first), (f"{test_fn.__name__} failed, but its message does not "
                                           f"name the expected tensor ({pattern}):\n{err}")
