"""The confusion matrix of a classifier on your own text, drawn by `train --plot`
(npformer.training.plots.plot_confusion)."""
from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from npformer.training.plots import plot_confusion  # noqa: E402


def test_the_plot_is_a_png_and_a_wrong_shape_is_refused(tmp_path):
    path = plot_confusion([[3, 1], [0, 4]], ["neg", "pos"], str(tmp_path / "c.png"))
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match=r"expected shape \(3, 3\) for 3 labels, got \(2, 2\)"):
        plot_confusion([[3, 1], [0, 4]], ["a", "b", "c"], str(tmp_path / "d.png"))


def test_train_plot_of_a_classifier_writes_its_confusion_matrix(tmp_path):
    from npformer.cli.main import main
    data = tmp_path / "l.tsv"
    data.write_text("".join(f"word{i % 5} text\t{'odd' if i % 2 else 'even'}\n" for i in range(60)))
    out = tmp_path / "plots"
    assert main(["train", "--task", "classify", "--data", str(data), "--d-model", "16", "--heads",
                 "2", "--d-ff", "16", "--layers", "1", "--steps", "2", "--no-progress",
                 "--examples", "0", "--plot", str(out)]) == 0
    assert (out / "confusion.png").read_bytes()[:4] == b"\x89PNG"
