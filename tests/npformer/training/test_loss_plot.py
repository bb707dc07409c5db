"""loss.png says why the training loss sits above the held-out loss (label smoothing is in the
training loss only), draws the held-out accuracy, and labels its log axis with plain numbers. It
used to show the two losses apart without a word, no accuracy, and ticks such as 2x10^0."""
import numpy as np
import pytest

pytest.importorskip("matplotlib")

from npformer.cli.main import main  # noqa: E402
from npformer.training import plots  # noqa: E402
from tests.npformer.conftest import tiny_train_args  # noqa: E402


def _figure(monkeypatch):
    figs = []
    real = plots._save                                           # noqa: SLF001 - the drawn figure

    def keep(fig, path):
        figs.append(fig)
        return real(fig, path)
    monkeypatch.setattr(plots, "_save", keep)
    return figs


def test_loss_plot_explains_smoothing_and_draws_accuracy(tmp_path, monkeypatch):
    figs = _figure(monkeypatch)
    plots.plot_loss_curve(np.arange(1, 31), np.linspace(3, 1.5, 30), str(tmp_path / "l.png"),
                          eval_steps=[10, 30], eval_losses=[0.9, 0.3], eval_accuracy=[0.25, 0.5],
                          label_smoothing=0.1)
    fig, = figs
    texts = " ".join(t.get_text() for t in fig.texts)
    assert "label smoothing 0.1" in texts and "held-out loss is plain cross-entropy" in texts
    ax, ax2 = fig.axes
    assert ax2.get_ylabel() == "held-out exact-sequence accuracy (%)"
    np.testing.assert_array_equal(ax2.lines[0].get_ydata(), [25.0, 50.0])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "train (per step, label smoothing 0.1)" in legend
    assert "held-out exact-sequence accuracy" in legend
    fig.canvas.draw()
    ticks = [t.get_text() for t in ax.get_yticklabels(minor=False) + ax.get_yticklabels(minor=True)]
    assert ticks and not any("10^" in t or "times" in t for t in ticks), ticks


def test_loss_plot_without_smoothing_has_no_note(tmp_path, monkeypatch):
    figs = _figure(monkeypatch)
    plots.plot_loss_curve(np.arange(1, 4), [3.0, 2.0, 1.0], str(tmp_path / "l.png"))
    assert not figs[0].texts and len(figs[0].axes) == 1


def test_train_plot_passes_smoothing_and_accuracy(tmp_path, monkeypatch):
    seen = {}
    real = plots.plot_loss_curve

    def spy(steps, losses, path, **kw):
        seen.update(kw)
        return real(steps, losses, path, **kw)
    monkeypatch.setattr(plots, "plot_loss_curve", spy)
    assert main(["train", *tiny_train_args(steps=3), "--label-smoothing", "0.2", "--plot",
                 str(tmp_path / "p")]) == 0
    assert seen["label_smoothing"] == 0.2 and len(seen["eval_accuracy"]) == 1
    assert 0.0 <= seen["eval_accuracy"][0] <= 1.0
