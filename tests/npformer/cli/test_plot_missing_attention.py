"""`npformer plot CKPT --kinds cross` on a model without cross-attention is refused in one line
naming --kinds, the model and the kinds it has (it used to exit 0 having printed and written
nothing), and `plot` makes its output folder only once the checkpoint loaded (a bad checkpoint used
to leave an empty folder behind)."""
import pytest

from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

pytest.importorskip("matplotlib")

HAS = {"lm": ("CausalLM", "decoder"), "majority": ("EncoderClassifier", "encoder"),
       "mlm": ("BertForMaskedLM", "encoder")}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    from npformer.cli.main import main
    folder = tmp_path_factory.mktemp("plot_kinds")
    out = {}
    for task in (*HAS, "reverse"):
        out[task] = str(folder / f"{task}.npz")
        sizes = dict(num_symbols=None, max_len=None, max_number=20) if task == "lm" else {}
        assert main(["train", *tiny_train_args(steps=1, task=task, **sizes), "--save", out[task]]) == 0
    return out


@pytest.mark.parametrize("task", list(HAS))
@pytest.mark.parametrize("kinds", ["cross", "encoder,decoder,cross"])
def test_kinds_the_model_lacks_are_refused(checkpoints, task, kinds, tmp_path, capsys):
    out = tmp_path / "pics"
    code, stdout, err = run(["plot", checkpoints[task], "--out", str(out), "--kinds", kinds], capsys)
    assert code == 2, (stdout, err)
    lines = err.strip().splitlines()
    model, has = HAS[task]
    assert len(lines) == 1 and lines[0].startswith(f"npformer plot: error: --kinds {kinds}: checkpoint "
                                                   f"{checkpoints[task]} holds "), err
    assert model in lines[0] and "cross" in lines[0] and f"expected a subset of {has}, got {kinds}" in lines[0]
    assert not out.exists()                                       # nothing made, nothing written


@pytest.mark.parametrize("task", list(HAS))
def test_the_default_kinds_draw_what_the_model_has(checkpoints, task, tmp_path, capsys):
    out = tmp_path / "pics"
    code, stdout, err = run(["plot", checkpoints[task], "--out", str(out)], capsys)
    assert code == 0, err
    names = sorted(p.name for p in out.iterdir())
    assert names and all(n.startswith(f"attn_{HAS[task][1]}_") for n in names), names


def test_cross_attention_of_an_encoder_decoder_is_drawn(checkpoints, tmp_path, capsys):
    out = tmp_path / "pics"
    code, _, err = run(["plot", checkpoints["reverse"], "--out", str(out), "--kinds", "cross"], capsys)
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["attn_cross_layer0.png"]


@pytest.mark.parametrize("content", [b"junk", None])
def test_a_bad_checkpoint_leaves_no_folder_behind(tmp_path, capsys, content):
    ckpt = tmp_path / "bad.npz"
    if content is not None:
        ckpt.write_bytes(content)
    out = tmp_path / "new" / "pics"
    code, _, err = run(["plot", str(ckpt), "--out", str(out)], capsys)
    assert code == 2 and "bad.npz" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "new").exists()


def test_an_out_folder_under_a_file_is_still_refused_before_loading(tmp_path, capsys):
    (tmp_path / "afile").write_text("mine")
    code, _, err = run(["plot", str(tmp_path / "missing.npz"), "--out", str(tmp_path / "afile" / "pics")],
                       capsys)
    assert code == 2 and "--out" in err and "is a file" in err, err
