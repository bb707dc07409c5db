"""Attention figures stay readable for long inputs: the figure is capped in size (heads wrap onto
rows), a long axis labels every Nth token, and short inputs keep one labelled tick per token with
every head side by side."""
import numpy as np
import pytest

pytest.importorskip("matplotlib")

from npformer.training import plots  # noqa: E402


def _png_size(path):
    import matplotlib.image as mpimg
    h, w = mpimg.imread(path).shape[:2]
    return w, h


def test_tick_step_labels_every_token_up_to_forty_then_every_nth():
    assert [plots.tick_step(n) for n in (1, 23, 40, 41, 80, 81, 300)] == [1, 1, 1, 2, 2, 3, 8]


def test_layout_keeps_short_inputs_side_by_side_and_caps_long_ones():
    assert plots.attention_layout(2, 5, 5) == (1, 2, 0.35 * 5 + 1.5)
    rows, cols, panel = plots.attention_layout(4, 23, 23)           # the MLM task's sentences
    assert panel == plots.PANEL_MAX_INCHES and (rows, cols) == (2, 2)
    rows, cols, panel = plots.attention_layout(12, 512, 512)
    assert cols * panel <= plots.FIGURE_MAX_INCHES and rows * cols >= 12


def test_a_long_input_with_many_heads_gives_a_bounded_png(tmp_path):
    """300 tokens, 8 heads: it used to be 0.35 * 300 + 1.5 = 106.5 in per head side by side (over
    90,000 px wide at 110 dpi); now at most ~(16 + 1) in wide."""
    T, H = 300, 8
    w = np.random.default_rng(0).dirichlet(np.ones(T), size=(H, T))     # (H, T, T) rows sum to 1
    toks = [f"t{i}" for i in range(T)]
    path = plots.plot_attention(w, toks, toks, str(tmp_path / "long.png"))
    width, height = _png_size(path)
    assert width <= 17.5 * 110 and height <= 4 * plots.PANEL_MAX_INCHES * 110 + 200


def test_every_nth_token_is_labelled_on_a_long_axis(tmp_path, monkeypatch):
    seen = {}
    real = plots._heatmap

    def spy(ax, w, q_tokens, k_tokens, title, ylabel=True):
        im = real(ax, w, q_tokens, k_tokens, title, ylabel)
        seen["x"] = [t.get_text() for t in ax.get_xticklabels()]
        seen["y"] = [t.get_text() for t in ax.get_yticklabels()]
        return im
    monkeypatch.setattr(plots, "_heatmap", spy)
    T = 100
    toks = [f"t{i}" for i in range(T)]
    plots.plot_attention(np.full((T, T), 1.0 / T), toks, toks, str(tmp_path / "a.png"))
    assert seen["x"] == seen["y"] == [f"t{i}" for i in range(0, T, 3)]   # ceil(100 / 40) = 3
    plots.plot_attention(np.full((5, 7), 1.0 / 7), toks[:5], toks[:7], str(tmp_path / "b.png"))
    assert seen["x"] == toks[:7] and seen["y"] == toks[:5]               # short: every token
