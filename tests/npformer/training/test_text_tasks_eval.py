"""The scores of translation and classification on your own rows
(npformer.training.text_tasks_eval), against values worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.training.text_tasks_eval import classification_report, corpus_scores


def test_the_classification_report_matches_a_hand_count():
    true = np.array([0, 0, 1, 1, 2])
    pred = np.array([0, 1, 1, 1, 0])
    confusion, precision, recall, f1 = classification_report(true, pred, 3)
    assert confusion.tolist() == [[1, 1, 0], [0, 2, 0], [1, 0, 0]]
    assert precision.tolist() == pytest.approx([1 / 2, 2 / 3, 0.0])
    assert recall.tolist() == pytest.approx([1 / 2, 1.0, 0.0])
    assert f1.tolist() == pytest.approx([1 / 2, 0.8, 0.0])        # 2pr/(p+r); 0 when p = r = 0


def test_a_class_never_present_nor_predicted_scores_zero_not_nan():
    confusion, precision, recall, f1 = classification_report(np.array([0, 1]), np.array([0, 1]), 3)
    assert confusion[2].sum() == 0 and (precision[:2] == 1).all()
    assert precision[2] == recall[2] == f1[2] == 0.0


def test_bleu_and_chrf_are_sacrebleus_scale():
    refs = ["the cat sat on the mat", "a dog ran in the park today"]
    assert corpus_scores(refs, refs) == (pytest.approx(100.0), pytest.approx(100.0))
    bleu, chrf = corpus_scores(["zz qq", "xx yy"], refs)
    assert bleu == pytest.approx(0.0, abs=1e-6) and chrf < 10
