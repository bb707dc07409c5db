"""The `npformer` command: help texts, a tiny train -> save -> evaluate -> generate -> plot round trip,
gradcheck, and bad arguments exiting with status 2."""
import os
import subprocess
import sys

import pytest

from npformer.cli.main import main
from npformer.cli.parser import build_parser
from tests import paths
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

ROOT = str(paths.ROOT)
TINY = tiny_train_args(steps=3, batch_size=8, eval_size=12, max_len=4, num_symbols=5,
                       examples=2)




# -- help --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sub,needles", [
    (None, ["train", "evaluate", "generate", "gradcheck", "plot", "Main job"]),
    ("train", ["--task", "--d-model", "--heads", "--layers", "--steps", "--batch-size", "--lr",
               "--warmup", "--seed", "--backend", "--device", "--dtype", "--save", "--plot",
               "--label-smoothing", "--clip-norm", "(default: reverse)"]),
    ("evaluate", ["checkpoint", "--eval-size", "--backend", "--task"]),
    ("generate", ["checkpoint", "INPUT", "--beam", "--alpha", "--max-new-tokens", "--no-cache"]),
    ("gradcheck", ["--tol", "--only", "float64"]),
    ("plot", ["checkpoint", "--out", "--kinds", "--layer", "--head", "--positions",
              "[plots] extra"]),
])
def test_help_of_every_subcommand(sub, needles, capsys):
    code, out, _ = run(([sub] if sub else []) + ["--help"], capsys)
    assert code == 0
    for n in needles:
        assert n in out, f"{n!r} missing from `npformer {sub or ''} --help`"


def test_every_subcommand_is_documented():
    parser = build_parser()
    subs = next(a for a in parser._actions if a.dest == "command")
    assert set(subs.choices) == {"train", "evaluate", "generate", "gradcheck", "plot"}
    for name, p in subs.choices.items():
        assert p.description, name
        for action in p._actions:
            if action.dest != "help":
                assert action.help, f"{name} {action.option_strings or action.dest} has no help"


def test_python_dash_m_npformer():
    r = subprocess.run([sys.executable, "-m", "npformer", "gradcheck", "--help"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode == 0 and "usage: npformer gradcheck" in r.stdout


# -- the round trip ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    ckpt = str(d / "sub" / "model.npz")
    code = main(["train", *TINY, "--save", ckpt, "--plot", str(d / "plots")])
    assert code == 0
    return d, ckpt


def test_train_saves_and_prints(trained, capsys):
    d, ckpt = trained
    assert os.path.isfile(ckpt)
    names = sorted(os.listdir(d / "plots"))
    assert "loss.png" in names and "positions.png" in names
    assert {"attn_encoder_layer0.png", "attn_decoder_layer0.png", "attn_cross_layer0.png"} <= set(names)
    from npformer.io.checkpoint import load_checkpoint
    c = load_checkpoint(ckpt)
    assert c.model_class == "Transformer" and c.step == 3
    assert c.metadata["task"]["name"] == "reverse" and c.metadata["task"]["max_len"] == 4
    assert c.optimizer_state is not None and c.schedule_state is not None


def test_train_output(capsys, tmp_path):
    code, out, err = run(["train", *TINY, "--task", "copy"], capsys)
    assert code == 0, err
    assert "task=copy" in out and "trained 3 steps" in out and "tokens/s" in out
    assert "exact-sequence accuracy" in out and "examples (source -> target / decoded)" in out


def test_evaluate_checkpoint(trained, capsys):
    _, ckpt = trained
    code, out, err = run(["evaluate", ckpt, "--eval-size", "10"], capsys)
    assert code == 0, err
    assert "step 3" in out and "task=reverse" in out and "exact-sequence accuracy" in out
    assert "(10 sequences)" in out


def test_generate_greedy_beam_and_no_cache(trained, capsys):
    _, ckpt = trained
    code, out, err = run(["generate", ckpt, "abc", "d e"], capsys)
    assert code == 0, err
    lines = [l for l in out.splitlines() if "->" in l]
    assert len(lines) == 2 and lines[0].startswith("abc ->") and lines[1].startswith("d e ->")
    # the task's rule is known, so each line says whether the decode was right
    assert ("expected cba" in lines[0]) != lines[0].rstrip().endswith("ok")
    code, out2, _ = run(["generate", ckpt, "abc", "d e", "--no-cache"], capsys)
    assert code == 0
    assert [l.split("[")[0] for l in out2.splitlines() if "->" in l] == \
        [l.split("[")[0] for l in lines]
    code, out3, err = run(["generate", ckpt, "abc", "--beam", "3", "--alpha", "0.6"], capsys)
    assert code == 0, err
    assert "beam search (K=3" in out3


def test_checkpoint_crosses_to_the_torch_backend(trained, capsys):
    pytest.importorskip("torch")
    _, ckpt = trained
    code, out_np, _ = run(["generate", ckpt, "abcd", "ba", "--dtype", "float64"], capsys)
    assert code == 0
    code, out_tf, err = run(["generate", ckpt, "abcd", "ba", "--backend", "torch", "--dtype",
                             "float64"], capsys)
    assert code == 0, err
    dec = lambda out: [l.split("[")[0] for l in out.splitlines() if "->" in l]  # noqa: E731
    assert dec(out_np) == dec(out_tf)
    code, out, err = run(["evaluate", ckpt, "--backend", "torch", "--eval-size", "8"], capsys)
    assert code == 0, err
    assert "exact-sequence accuracy" in out


def test_train_torch_backend(capsys, tmp_path):
    pytest.importorskip("torch")
    ckpt = str(tmp_path / "t.npz")
    code, out, err = run(["train", *TINY, "--backend", "torch", "--save", ckpt], capsys)
    assert code == 0, err
    assert "torchformer on cpu" in out and os.path.isfile(ckpt)
    code, out, err = run(["evaluate", ckpt, "--eval-size", "8"], capsys)   # read by npformer
    assert code == 0, err
    assert "written by torchformer" in out


def test_plot_command(trained, capsys, tmp_path):
    _, ckpt = trained
    code, out, err = run(["plot", ckpt, "--out", str(tmp_path), "--input", "abc", "--kinds",
                          "cross", "--head", "1", "--positions"], capsys)
    assert code == 0, err
    assert sorted(os.listdir(tmp_path)) == ["attn_cross_layer0_head1.png", "positions.png"]


def test_classification_task_round_trip(capsys, tmp_path):
    ckpt = str(tmp_path / "c.npz")
    code, out, err = run(["train", *TINY, "--task", "majority", "--save", ckpt], capsys)
    assert code == 0, err
    assert "EncoderClassifier" in out
    code, out, err = run(["generate", ckpt, "abce", "eee"], capsys)
    assert code == 0, err
    assert out.count("-> class") == 2


# -- gradcheck ---------------------------------------------------------------------------------------
def test_gradcheck_table(capsys):
    code, out, err = run(["gradcheck", "--only", "linear", "--max-per-tensor", "10"], capsys)
    assert code == 0, err
    assert "Linear" in out and "ok" in out and "1/1 checks passed" in out


def test_gradcheck_reports_a_wrong_backward(capsys, monkeypatch):
    import npformer.layers.layernorm as ln
    real = ln.layernorm_backward

    def wrong(dout, cache):
        dx, dg, db = real(dout, cache)
        return dx, dg * 1.01, db                                 # a 1% error in dgamma
    monkeypatch.setattr(ln, "layernorm_backward", wrong)
    code, out, _ = run(["gradcheck", "--only", "LayerNorm", "--max-per-tensor", "8"], capsys)
    assert code == 1
    assert "FAIL" in out and "weight" in out


# -- bad arguments -----------------------------------------------------------------------------------
@pytest.mark.parametrize("argv,needle", [
    (["train", "--steps", "-1"], "--steps"),
    (["train", "--task", "rot13"], "--task"),
    (["train", "--lr", "0"], "--lr"),
    (["train", "--dropout", "1.5"], "--dropout"),
    (["train", "--backend", "jax"], "--backend"),
    (["train", "--dtype", "float16"], "--dtype"),
    (["frobnicate"], "invalid choice"),
    ([], "required"),
    (["generate"], "required"),
    (["plot", "x.npz"], "--out"),
])
def test_usage_errors_exit_2(argv, needle, capsys):
    code, _, err = run(argv, capsys)
    assert code == 2
    assert needle in err


@pytest.mark.parametrize("argv,needle", [
    (["train", "--d-model", "10", "--heads", "4"], "--heads 4: must divide --d-model 10"),
    (["train", "--min-len", "6", "--max-len", "3"], "min_len"),
    (["train", "--device", "cuda"], "numpy backend runs on the CPU"),
    (["evaluate", "/nonexistent/model.npz"], "no such file"),
])
def test_bad_values_exit_2_with_one_line(argv, needle, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_bad_checkpoint_and_inputs_exit_2(trained, capsys, tmp_path):
    _, ckpt = trained
    bad = tmp_path / "corrupt.npz"
    bad.write_bytes(b"this is not a checkpoint")
    code, _, err = run(["evaluate", str(bad)], capsys)
    assert code == 2 and "corrupt.npz" in err
    trunc = tmp_path / "trunc.npz"
    trunc.write_bytes(open(ckpt, "rb").read()[:200])
    code, _, err = run(["generate", str(trunc), "abc"], capsys)
    assert code == 2 and "trunc.npz" in err
    code, _, err = run(["generate", ckpt, "xyz"], capsys)
    assert code == 2 and "unknown symbols" in err
    code, _, err = run(["generate", ckpt, "abcdeabc"], capsys)       # longer than max_len=4
    assert code == 2 and "max_len" in err
    code, _, err = run(["plot", ckpt, "--out", str(tmp_path), "--kinds", "encoder,bogus"], capsys)
    assert code == 2 and "--kinds" in err
    code, _, err = run(["plot", ckpt, "--out", str(tmp_path), "--layer", "5"], capsys)
    assert code == 2 and "--layer 5" in err
    code, _, err = run(["evaluate", ckpt, "--num-symbols", "7"], capsys)
    assert code == 2 and "vocabulary" in err
    code, _, err = run(["generate", ckpt, "abc", "--max-new-tokens", "50"], capsys)
    assert code == 2 and "max_new_tokens" in err
