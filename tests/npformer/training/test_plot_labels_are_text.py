"""Tokens and labels drawn on figures are text, never matplotlib mathtext: a BPE model of a LaTeX or
Markdown corpus has tokens such as `$$\\` and `}$$`, and `npformer plot LM.npz --input '$$\\frac{a}{b}$$'`
ended in `ParseException: Expected end of text, found '$'` (a label with two `$` is parsed as
math). A confusion matrix of labels such as `$5` and `$10` drew them as one formula."""
import numpy as np
import pytest

pytest.importorskip("matplotlib")

from npformer.training.plots import plot_attention, plot_confusion  # noqa: E402

TOKENS = ["$$\\", "frac", "{", "a", "}{", "b", "}$$", " $x$", "$\\sum_i$"]


def test_attention_tokens_with_dollars_are_drawn_as_written(tmp_path):
    n = len(TOKENS)
    w = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]               # rows sum to 1
    path = plot_attention(w, TOKENS, TOKENS, str(tmp_path / "attn.png"))
    assert (tmp_path / "attn.png").stat().st_size > 0 and path.endswith("attn.png")


def test_confusion_labels_with_dollars_are_drawn_as_written(tmp_path):
    labels = ["$5", "$10", "$$x$$"]
    plot_confusion(np.array([[3, 1, 0], [0, 2, 1], [1, 0, 4]]), labels, str(tmp_path / "c.png"))
    assert (tmp_path / "c.png").stat().st_size > 0
