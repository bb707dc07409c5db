"""`train --plot` and `plot --positions` draw the positions the model has: its learned position
embeddings (and their cosine similarity) for learned positions, the sinusoidal table over enough
positions for its waves to show otherwise. They used to draw an 11-row sinusoidal table for every
model, learned positions included."""
import os

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from npformer.cli import figures  # noqa: E402
from npformer.cli.main import main  # noqa: E402
from npformer.layers.positional import sinusoidal_table  # noqa: E402
from npformer.training import plots  # noqa: E402
from tests.npformer.conftest import tiny_train_args  # noqa: E402


def _model(positional):
    import npformer as nf
    from npformer.data.tasks import make_task
    from npformer.training.train import model_config_for
    task = make_task("reverse", num_symbols=4, max_len=3)
    c = model_config_for(task, d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                         num_decoder_layers=1, positional=positional)
    return nf.Transformer(c, seed=0)


def _drawn(monkeypatch):
    seen = []
    real_table, real_sim = plots.plot_positional_encoding, plots.plot_position_similarity
    monkeypatch.setattr(plots, "plot_positional_encoding",
                        lambda t, p, **kw: seen.append(("table", np.array(t), kw)) or
                        real_table(t, p, **kw))
    monkeypatch.setattr(plots, "plot_position_similarity",
                        lambda t, p, **kw: seen.append(("similarity", np.array(t), kw)) or
                        real_sim(t, p, **kw))
    return seen


def test_learned_positions_are_drawn_from_the_model(tmp_path, monkeypatch):
    model = _model("learned")
    seen = _drawn(monkeypatch)
    paths = figures.position_plots(model, str(tmp_path))
    names = sorted(os.path.basename(p) for p in paths)
    assert names == ["positions.png", "positions_similarity.png", "positions_tgt_pos.png",
                     "positions_tgt_pos_similarity.png"]
    assert all(os.path.getsize(p) > 0 for p in paths)
    tables = [t for kind, t, _ in seen if kind == "table"]
    np.testing.assert_array_equal(tables[0], model.src_pos.weight.data)
    np.testing.assert_array_equal(tables[1], model.tgt_pos.weight.data)
    assert all(kw.get("limit", 1.0) is None for kind, _, kw in seen if kind == "table")


def test_sinusoidal_positions_are_drawn_over_enough_rows(tmp_path, monkeypatch):
    model = _model("sinusoidal")
    seen = _drawn(monkeypatch)
    paths = figures.position_plots(model, str(tmp_path))
    assert [os.path.basename(p) for p in paths] == ["positions.png"]
    (kind, table, _), = seen
    assert kind == "table" and table.shape == (figures.SINUSOID_ROWS, 8)
    np.testing.assert_allclose(table, sinusoidal_table(figures.SINUSOID_ROWS, 8))


def test_train_plot_with_learned_positions_writes_their_similarity(tmp_path):
    out = tmp_path / "plots"
    assert main(["train", *tiny_train_args(), "--positional", "learned", "--plot", str(out)]) == 0
    assert {"positions.png", "positions_similarity.png"} <= set(os.listdir(out))


def test_position_similarity_refuses_a_vector():
    with pytest.raises(ValueError, match=r"table: expected shape \(max_len, d_model\)"):
        plots.plot_position_similarity(np.zeros(3), "x.png")
