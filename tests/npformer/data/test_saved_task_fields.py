"""A checkpoint whose saved task fields have the wrong type or name (a hand-edited or damaged header)
is one line naming the file from generate, evaluate and train --resume, never a traceback.

Before: a task name that is not a string or not a task, a synthetic task name beside a text corpus,
a tokenizer that is not an object, a field the task does not have, or a task that is not an object
ended in TypeError / AttributeError tracebacks (`Task.__init__() got an unexpected keyword argument
'data'`, `'int' object has no attribute 'vocab_size'`, `'int' object has no attribute 'get'`)."""
import pytest

from npformer.cli.main import main
from tests.npformer.conftest import tiny_train_args
from tests.npformer.data.test_saved_tokenizer_fits_model import edited_copy

LM_ARGS = tiny_train_args(max_len=None, num_symbols=None, steps=1)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    (folder / "corpus.txt").write_text("".join(f"line {i} of some text\n" for i in range(200)),
                                       encoding="utf-8")
    lm, rev = folder / "lm.npz", folder / "rev.npz"
    assert main(["train", *LM_ARGS, "--task", "lm", "--data", str(folder / "corpus.txt"),
                 "--context", "16", "--save", str(lm)]) == 0
    assert main(["train", *tiny_train_args(steps=1), "--save", str(rev)]) == 0
    return {"lm": lm, "reverse": rev}


def set_field(key, value):
    def edit(meta):
        meta[key] = value
    return edit


def replace_task(value):
    def edit(header):
        header["metadata"]["task"] = value
    return edit


CASES = [("lm", set_field("name", 5), "task: expected one of"),
         ("lm", set_field("name", "bogus"), "task: expected one of"),
         ("lm", set_field("name", "reverse"), "data: the reverse task is synthetic and reads no text"),
         ("lm", set_field("tokenizer", 5), "tokenizer: expected a saved tokenizer"),
         ("reverse", set_field("extra", 1), "task field 'extra': not a field of the reverse task"),
         ("reverse", set_field("max_len", 1_000_000), "rows reach 1000001 tokens, but the model's max_len"),
         ("lm", set_field("context", 4096), "rows reach 4096 tokens, but the model's max_len")]


@pytest.mark.parametrize("run,edit,says", CASES, ids=[c[2][:30] for c in CASES])
def test_bad_saved_task_fields_are_one_line(runs, tmp_path, capsys, run, edit, says):
    bad = tmp_path / "bad.npz"
    edited_copy(runs[run], bad, edit)
    for argv in (["generate", str(bad), "abc"], ["evaluate", str(bad)],
                 ["train", "--resume", str(bad), "--steps", "1", "--no-progress"]):
        capsys.readouterr()
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(bad) in err[0] and says in err[0], (argv, err)


def test_a_saved_task_that_is_not_an_object_is_one_line(runs, tmp_path, capsys):
    import json

    import numpy as np
    bad = tmp_path / "bad.npz"
    with np.load(runs["lm"], allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(str(arrays["header"]))
    replace_task(5)(header)
    arrays["header"] = np.array(json.dumps(header))
    np.savez(bad, **arrays)
    for argv in (["generate", str(bad), "abc"], ["evaluate", str(bad)]):
        capsys.readouterr()
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"npformer {argv[0]}: error: checkpoint {bad}: its saved task: expected an "
                       f"object of task fields, got int"]
