"""`npformer evaluate CKPT --task T` with a task the checkpoint's kind of model cannot evaluate is
refused up front in one line naming --task, the model and the tasks it evaluates. It used to crash
with a traceback (an encoder-decoder given `--task majority`: transformer_call() missing 'tgt'; a
masked LM given `--task reverse`: Task.__init__() unexpected keyword 'mask_prob') or end in an
internal message about an ambiguous 2-D mask (a classifier given `--task reverse`)."""
import pytest

from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

KINDS = {"reverse": "an encoder-decoder Transformer", "majority": "an EncoderClassifier",
         "lm": "a CausalLM", "mlm": "a BertForMaskedLM"}
NEEDS = {**KINDS, "copy": KINDS["reverse"]}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    from npformer.cli.main import main
    folder = tmp_path_factory.mktemp("kinds")
    out = {}
    for task in KINDS:
        out[task] = str(folder / f"{task}.npz")
        sizes = dict(num_symbols=None, max_len=None, max_number=20) if task == "lm" else dict(max_len=5)
        assert main(["train", *tiny_train_args(steps=1, task=task, **sizes), "--save", out[task]]) == 0
    return out


@pytest.mark.parametrize("trained,asked", [("reverse", "majority"), ("mlm", "reverse"), ("mlm", "majority"),
                                           ("majority", "reverse"), ("lm", "copy"), ("lm", "mlm"),
                                           ("reverse", "lm"), ("majority", "mlm")])
def test_a_task_for_another_kind_of_model_is_refused_naming_task(checkpoints, trained, asked, capsys):
    sizes = [] if asked in ("lm", "mlm") else ["--max-len", "3"]     # rows the model could hold
    code, out, err = run(["evaluate", checkpoints[trained], "--task", asked, *sizes, "--eval-size", "4"],
                         capsys)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    line = lines[0]
    assert line.startswith(f"npformer evaluate: error: --task {asked}: expected a task that "
                           f"checkpoint {checkpoints[trained]} can evaluate; it holds {KINDS[trained]}"), line
    assert trained in line.split("which evaluates --task ")[1].split(", got")[0].split(" / "), line
    assert f"got {asked}, which needs {NEEDS[asked]}" in line, line
    assert out == ""                                          # refused before any evaluation


@pytest.mark.parametrize("trained,asked", [("reverse", "copy"), ("reverse", "sort"), ("majority", "majority"),
                                           ("lm", "lm"), ("mlm", "mlm")])
def test_a_task_for_the_same_kind_of_model_still_evaluates(checkpoints, trained, asked, capsys):
    sizes = [] if asked == "lm" else ["--max-len", "3"]
    code, out, err = run(["evaluate", checkpoints[trained], "--task", asked, *sizes, "--eval-size", "4",
                          "--examples", "0"], capsys)
    assert code == 0, err


@pytest.mark.parametrize("trained,extra", [("reverse", ["--num-symbols", "9"]), ("mlm", ["--num-symbols", "9"])])
def test_a_vocabulary_mismatch_counts_the_symbols_and_specials_it_names(checkpoints, trained, extra, capsys):
    """The numbers in the message add up (it said `--num-symbols 10 + 3 specials` for a masked LM,
    whose vocabulary is not 13), and it names no option value the user did not give."""
    import re
    code, out, err = run(["evaluate", checkpoints[trained], *extra, "--max-len", "5", "--eval-size", "4"],
                         capsys)
    assert code == 2 and "Traceback" not in err, (out, err)
    m = re.search(r"the task needs (\d+) \((\d+) symbols, which --num-symbols sets, and (\d+) special tokens\)",
                  err)
    assert m and int(m.group(1)) == int(m.group(2)) + int(m.group(3)) and m.group(2) == "9", err
