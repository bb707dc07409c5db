"""An empty string given as a path (`--resume ""`, `npformer evaluate ""`) is refused by the parser
with one line naming the option; it used to be read as "not given" (a new run instead of a resumed
one, a checkpoint not saved) or as the current folder (`--data ""` read every text file there)."""
import pytest

from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args()


@pytest.mark.parametrize("argv,name,what", [
    (["train", *TINY, "--resume", ""], "--resume", "a file path"),
    (["train", *TINY, "--save", ""], "--save", "a file path"),
    (["train", *TINY, "--plot", ""], "--plot", "a folder path"),
    (["train", *TINY, "--save=", "--overwrite"], "--save", "a file path"),
    (["train", "--task", "lm", "--data", "", "--steps", "1", "--no-progress"], "--data",
     "a file or folder path"),
    (["train", "--task", "translate", "--data", "", "--steps", "1"], "--data", "a file or folder path"),
    (["train", "--task", "classify", "--data", "x.tsv", "", "--steps", "1"], "--data",
     "a file or folder path"),
    (["train", "--task", "lm", "--init", "", "--data", "x.txt"], "--init", "a folder path"),
    (["train", "--task", "lm", "--init", "gpt2", "--data", "x.txt", "--save-pretrained", ""],
     "--save-pretrained", "a folder path"),
    (["evaluate", ""], "checkpoint", "a file path"),
    (["evaluate", "m.npz", "--data", ""], "--data", "a file path"),
    (["generate", "", "abc"], "checkpoint", "a file or folder path"),
    (["generate", "m.npz", "abc", "--out", ""], "--out", "a file path"),
    (["plot", "", "--out", "pics"], "checkpoint", "a file path"),
    (["plot", "m.npz", "--out", ""], "--out", "a folder path"),
])
def test_an_empty_path_is_refused_naming_the_option(argv, name, what, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)                     # nothing of the caller's folder can be read
    (tmp_path / "notes.txt").write_text("mine")
    code, out, err = run(argv, capsys)
    assert code == 2, (out, err)
    lines = err.rstrip("\n").split("\n")                  # argparse prints the usage first
    assert [i for i, line in enumerate(lines) if ": error: " in line] == [len(lines) - 1], err
    assert "Traceback" not in err
    assert lines[-1].endswith(f"error: argument {name}: expected {what}, got an empty string"), err
    assert out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]     # nothing written


def test_a_path_that_is_only_spaces_is_still_a_path(tmp_path, capsys):
    """Only the empty string is refused by the parser: " " names a file (a missing one here)."""
    code, _, err = run(["evaluate", str(tmp_path / " ")], capsys)
    assert code == 2 and "empty string" not in err and len(err.strip().splitlines()) == 1, err
