"""`npformer generate --stop STR --out FILE`: a sample ends at the first stop string (not kept), and
the samples go to FILE (UTF-8, atomically, never over an existing file without --overwrite, the path
checked before the model is loaded); commands that generate no text refuse both."""
from __future__ import annotations

import pytest

from npformer.cli.main import main
from tests.npformer.conftest import train_text_lm

SAMPLE = ["--max-new-tokens", "20", "--seed", "3", "--temperature", "2.0"]   # varied characters


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    return train_text_lm(tmp_path_factory.mktemp("lm"), context=32, steps=2)


def _sample(capsys, argv) -> str:
    """What `generate` printed after its header line (one sample, which may hold newlines)."""
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.endswith("\n")
    return out.split("\n", 1)[1][:-1]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_sample_ends_before_the_first_stop_string(lm, capsys, backend):
    if backend == "torch":
        pytest.importorskip("torch")
    argv = ["generate", lm, "the ", *SAMPLE, "--backend", backend]
    full = _sample(capsys, argv)[len("the "):]                 # the continuation without --stop
    assert len(set(full)) > 2                                  # something to cut in the middle
    stop = full[len(full) // 2]
    expected = "the " + full[: full.index(stop)]
    assert _sample(capsys, argv + ["--stop", stop]) == expected
    # repeatable: the earliest occurrence of any of them ends the sample (the prompt is not searched)
    other = full[len(full) // 2 + 1:][-1]
    first = min(full.index(stop), full.index(other))
    assert _sample(capsys, argv + ["--stop", other, "--stop", stop, "--stop", "never here"]) == \
        "the " + full[:first]


def test_cut_at_stop_keeps_the_text_before_the_earliest_stop():
    from npformer.decoding.stop import cut_at_stop
    assert cut_at_stop("abc\n\nxyz", ["\n\n"]) == "abc"
    assert cut_at_stop("abcxyz", ["y", "c"]) == "ab"
    assert cut_at_stop("abc", ["q"]) == "abc" and cut_at_stop("abc", None) == "abc"


def test_out_writes_the_samples_as_utf8_and_refuses_an_existing_file(lm, capsys, tmp_path):
    out = tmp_path / "samples.txt"
    argv = ["generate", lm, "the Ωcat", "the dog", *SAMPLE, "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    written = out.read_bytes().decode("utf-8")
    note = f"wrote 2 sample(s) to {out}\n"
    assert printed.endswith(note) and written == printed.split("\n", 1)[1][: -len(note)]
    assert written.startswith("the Ωcat") and "\nthe dog" in written
    out.write_text("mine", encoding="utf-8")
    assert main(argv) == 2
    assert f"--out {out}: exists (pass --overwrite to replace it)" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "mine"                  # the user's file kept
    assert main(argv + ["--overwrite"]) == 0
    assert out.read_text(encoding="utf-8") == written
    assert [p.name for p in tmp_path.iterdir()] == ["samples.txt"]    # no temp file left


def test_out_is_checked_before_the_model_is_loaded(capsys, tmp_path):
    out = tmp_path / "taken.txt"
    out.write_text("x", encoding="utf-8")
    assert main(["generate", str(tmp_path / "missing.npz"), "a", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--out {out}: exists" in err and "missing.npz" not in err


def test_out_over_the_checkpoint_is_refused_even_with_overwrite(lm, capsys):
    assert main(["generate", lm, "the", "--out", lm, "--overwrite"]) == 2
    assert f"--out {lm}: is the checkpoint this command reads" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--stop", ""], "--stop: expected a non-empty string"),
    (["--overwrite"], "--overwrite: lets --out FILE replace an existing file"),
])
def test_bad_text_output_options_are_refused(lm, capsys, argv, message):
    assert main(["generate", lm, "the", *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_checkpoint_that_generates_no_text_refuses_stop_and_out(capsys, tmp_path):
    save = str(tmp_path / "add.npz")
    assert main(["train", "--task", "lm", "--max-number", "10", "--d-model", "16", "--heads", "2",
                 "--d-ff", "32", "--layers", "1", "--steps", "1", "--batch-size", "4",
                 "--no-progress", "--threads", "1", "--save", save]) == 0
    capsys.readouterr()
    for option in (["--stop", "="], ["--out", str(tmp_path / "o.txt")]):
        assert main(["generate", save, "1+2=", *option]) == 2
        err = capsys.readouterr().err
        assert f"{option[0]}: for commands that generate text" in err and "CausalLM" in err
    assert not (tmp_path / "o.txt").exists()
