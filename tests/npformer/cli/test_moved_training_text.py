"""A checkpoint trained on your own text rebuilds its held-out split from that text: when the file is
no longer where training read it, evaluate and --resume say that it is the checkpoint's training text
and where it must be, rather than blaming a --data the user never passed."""
import pytest

from npformer.cli.main import main
from tests.npformer.conftest import tiny_train_args

ARGS = tiny_train_args(max_len=None, num_symbols=None, steps=1)


@pytest.mark.parametrize("task", ["lm", "translate", "classify"])
def test_evaluate_and_resume_after_the_training_text_moved(task, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = {"lm": "".join(f"line {i} of some text to model\n" for i in range(200)),
            "translate": "".join(f"a{i % 7} b c\tc b a{i % 7}\n" for i in range(200)),
            "classify": "".join(f"text number {i}\t{'odd' if i % 2 else 'even'}\n"
                                for i in range(200))}[task]
    (tmp_path / "corpus.txt").write_text(rows, encoding="utf-8")
    assert main(["train", *ARGS, "--task", task, "--data", "corpus.txt", "--context", "24",
                 "--save", "run.npz"]) == 0
    (tmp_path / "corpus.txt").rename(tmp_path / "elsewhere.txt")
    capsys.readouterr()
    for argv in (["evaluate", "run.npz"], ["train", "--resume", "run.npz", "--steps", "1",
                                           "--no-progress"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert "corpus.txt: no such file or folder; it is the text this checkpoint was trained on" \
            in err[0] and "run from that folder or put the file back" in err[0]
