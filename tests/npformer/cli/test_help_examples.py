"""Every example quoted in `npformer ... --help` runs (training ones with tiny step counts)."""
import re
import shlex

import pytest

from npformer.cli.main import main
from npformer.cli.parser import build_parser
from tests.npformer.conftest import tiny_train_args

SMALL = tiny_train_args(steps=2, max_len=None, num_symbols=None, examples=1)
RUN = ["--eval-size", "4", "--examples", "1", "--no-progress"]     # not fixed by a --resume file


def help_examples() -> list[str]:
    """Backquoted `npformer ...` commands in every description, epilog and option help."""
    p = build_parser()
    subs = next(a for a in p._actions if a.dest == "command")
    texts = [p.description or "", p.epilog or ""]
    for sp in subs.choices.values():
        texts += [sp.description or "", sp.epilog or ""] + [a.help or "" for a in sp._actions]
    found = []
    for t in texts:
        for cmd in re.findall(r"`(npformer [^`]*)`", " ".join(t.split())):
            if "<" not in cmd and cmd not in found:              # <command> is a placeholder
                found.append(cmd)
    return found


@pytest.fixture(scope="module")
def model_npz(tmp_path_factory):
    """A checkpoint of the main job's task (default symbols and lengths), trained for 2 steps."""
    path = tmp_path_factory.mktemp("ex") / "model.npz"
    assert main(["train", *SMALL, "--save", str(path)]) == 0
    return str(path)


def test_there_are_examples():
    ex = help_examples()
    assert "npformer train" in ex and any(e.startswith("npformer generate") for e in ex)


@pytest.mark.parametrize("example", help_examples())
def test_help_example_runs(example, model_npz, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    words = shlex.split(example)[1:]
    argv = [model_npz if a == "model.npz" or (a == "run.npz" and words[i - 1] == "--resume") else a
            for i, a in enumerate(words)]
    if argv[0] == "train":
        # tiny step counts; the flags are the same (a resumed run takes its model from the file)
        argv += SMALL[SMALL.index("--steps"):SMALL.index("--steps") + 2] + RUN if "--resume" in argv \
            else SMALL
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, (example, err)


def test_command_list_names_the_own_text_and_pretrained_workflows(capsys):
    """`npformer --help` is where a newcomer starts: the one-line summaries must not hide that train
    takes your own text and Hugging Face folders, and generate continues, translates and classifies."""
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "train a model on a synthetic task or your own text (--data), or fine-tune (--init)" in out
    assert "continue text, translate, classify, fill [MASK]" in out
