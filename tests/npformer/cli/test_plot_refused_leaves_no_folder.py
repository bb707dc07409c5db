"""`plot --out DIR` refused for any of its inputs (the input text, --layer, --head, --kinds) leaves no
folder behind: DIR is made only once every input was read and checked. A refused `--layer 5` or an
input of unknown symbols used to leave an empty DIR (its parents too)."""
import contextlib
import io

import pytest

from npformer.cli.main import main
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    path = tmp_path_factory.mktemp("run") / "m.npz"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["train", *tiny_train_args(steps=1), "--save", str(path)]) == 0
    return path


@pytest.mark.parametrize("more,says", [(["--layer", "5"], "--layer 5"), (["--head", "9"], "--head 9"),
                                       (["--input", "zzz"], "unknown symbols"),
                                       (["--input", ""], "expected 1..")])
def test_a_refused_plot_leaves_no_folder(ckpt, tmp_path, capsys, more, says):
    out = tmp_path / "new" / "pics"
    code, _, err = run(["plot", str(ckpt), "--out", str(out), *more], capsys)
    assert code == 2 and says in err
    assert not (tmp_path / "new").exists()


def test_an_accepted_plot_makes_the_folder(ckpt, tmp_path, capsys):
    out = tmp_path / "new" / "pics"
    code, _, err = run(["plot", str(ckpt), "--out", str(out), "--input", "abc"], capsys)
    assert code == 0, err
    assert any(p.suffix == ".png" for p in out.iterdir())
