"""`train --plot DIR` and `plot --out DIR` never replace a picture already in DIR (an earlier run's
plots, or a file of the user's that happens to carry a plot's name) unless --overwrite is given;
the refusal comes before any work."""
import pytest

from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

pytest.importorskip("matplotlib")

TINY = tiny_train_args(steps=2)


def one_line_error(code, err, *needles):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for n in needles:
        assert n in lines[0], (n, err)


@pytest.mark.parametrize("name", ["loss.png", "attn_encoder_layer0.png", "positions.png",
                                  "attn_decoder_layer1_head0.png", "confusion.png",
                                  "positions_tgt_pos_similarity.png"])
def test_train_plot_refuses_a_folder_holding_a_plot_it_may_write(tmp_path, capsys, name):
    (tmp_path / name).write_bytes(b"mine")
    code, out, err = run(["train", *TINY, "--plot", str(tmp_path)], capsys)
    one_line_error(code, err, "--plot", name, "--overwrite")
    assert out == ""                                    # refused before the run printed anything
    assert (tmp_path / name).read_bytes() == b"mine"


def test_train_plot_leaves_other_files_alone_and_overwrite_replaces(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "holiday.png").write_bytes(b"mine")
    code, _, err = run(["train", *TINY, "--plot", str(tmp_path)], capsys)
    assert code == 0, err
    assert (tmp_path / "loss.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert (tmp_path / "holiday.png").read_bytes() == b"mine"
    (tmp_path / "loss.png").write_bytes(b"mine")
    code, _, err = run(["train", *TINY, "--plot", str(tmp_path)], capsys)
    one_line_error(code, err, "--plot", "loss.png")
    assert (tmp_path / "loss.png").read_bytes() == b"mine"
    code, _, err = run(["train", *TINY, "--plot", str(tmp_path), "--overwrite"], capsys)
    assert code == 0, err
    assert (tmp_path / "loss.png").read_bytes()[:4] == b"\x89PNG"


def test_plot_command_refuses_a_folder_holding_its_plots_before_loading(tmp_path, capsys):
    (tmp_path / "attn_decoder_layer0.png").write_bytes(b"mine")
    # the checkpoint does not even exist: the folder's refusal must come first
    code, _, err = run(["plot", str(tmp_path / "nope.npz"), "--out", str(tmp_path)], capsys)
    one_line_error(code, err, "--out", "attn_decoder_layer0.png", "--overwrite")
    assert (tmp_path / "attn_decoder_layer0.png").read_bytes() == b"mine"


def test_plot_command_overwrite_replaces(tmp_path, capsys):
    ckpt = tmp_path / "m.npz"
    code, _, err = run(["train", *TINY, "--save", str(ckpt)], capsys)
    assert code == 0, err
    out = tmp_path / "pics"
    out.mkdir()
    (out / "attn_encoder_layer0.png").write_bytes(b"mine")
    code, _, err = run(["plot", str(ckpt), "--out", str(out)], capsys)
    one_line_error(code, err, "--out", "attn_encoder_layer0.png")
    code, _, err = run(["plot", str(ckpt), "--out", str(out), "--overwrite"], capsys)
    assert code == 0, err
    assert (out / "attn_encoder_layer0.png").read_bytes()[:4] == b"\x89PNG"
