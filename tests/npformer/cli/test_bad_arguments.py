"""Bad input to the command line is refused at once with a message naming the option, never ignored
silently, refused late or left hanging (see docs/reliability/input-checks.md)."""
import os

import pytest

import npformer as nf
from npformer.cli.main import main
from npformer.cli.option_rules import check_nproc
from npformer.data import tasks as data
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args()


@pytest.fixture(scope="module")
def run_ckpt(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("bad_arguments") / "run.npz")
    assert main(["train", *TINY, "--save", path]) == 0
    return path


@pytest.mark.parametrize("opt,name", [(["--task", "copy"], "--task"),
                                      (["--d-model=16"], "--d-model"), (["--lr", "0.5"], "--lr"),
                                      (["--dtype", "float64"], "--dtype"), (["--seed", "0"], "--seed"),
                                      (["--norm-first"], "--norm-first")])
def test_resume_refuses_task_model_and_optimisation_options(run_ckpt, tmp_path, capsys, opt, name):
    """They used to be silently ignored (the run continued with the checkpoint's settings)."""
    out = str(tmp_path / "next.npz")
    code = main(["train", "--resume", run_ckpt, "--steps", "1", "--no-progress", "--eval-size", "4",
                 *opt, "--save", out])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"{name}: not allowed with --resume" in err
    assert not os.path.exists(out)                       # refused before any work


def test_resume_still_takes_steps_and_output_options(run_ckpt, tmp_path, capsys):
    out = str(tmp_path / "next.npz")
    assert main(["train", "--resume", run_ckpt, "--steps", "1", "--no-progress", "--eval-size", "4",
                 "--examples", "0", "--eval-every", "1", "--threads", "1", "--save", out]) == 0
    assert os.path.exists(out)


def test_nproc_output_path_checked_before_launching(tmp_path, capsys):
    """`--nproc N --save DIR` used to start torchrun and fail in every child with a traceback."""
    pytest.importorskip("torch")
    code = main(["train", *TINY, "--backend", "torch", "--nproc", "2", "--save", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "--save" in err and "is a folder" in err and "Traceback" not in err


def test_nproc_beyond_the_machine_is_refused():
    """`--nproc 100` on a 2-core machine used to start 100 workers (hours or a hang)."""
    class A:
        nproc, device = 10_000, "cpu"
    with pytest.raises(ValueError, match=r"--nproc: expected at most \d+ \(CPU cores.*got 10000"):
        check_nproc(A)
    A.nproc = 1
    check_nproc(A)                                        # one process is always fine


@pytest.mark.parametrize("command", [["train", *TINY], ["evaluate", "missing.npz"]])
def test_threads_beyond_the_machine_are_refused_before_any_work(command, capsys):
    """`--threads 100000` used to be accepted: numpy 2 steps took 13.5 s instead of 0.1 s and
    torchformer did not finish 2 steps in 2 minutes (oversubscribed cores)."""
    from npformer.cli.option_rules import available_cpus
    n = available_cpus() + 1
    code = main([*command, "--threads", str(n)])
    err = capsys.readouterr().err
    assert code == 2 and f"--threads: expected at most {n - 1}" in err and f"got {n}" in err


def test_pairs_table_larger_than_its_space_refused_before_drawing(monkeypatch):
    """A table bigger than the space of sources used to loop 100 rounds of num_pairs Python
    iterations before saying so (`--num-pairs 10000000` on a small alphabet never returned)."""
    calls = []
    real = data.Task._random_sources
    monkeypatch.setattr(data.Task, "_random_sources",
                        lambda self, rng, n: calls.append(n) or real(self, rng, n))
    with pytest.raises(ValueError, match="num_pairs: the space of sources with 2 symbols"):
        data.Task(name="pairs", num_symbols=2, max_len=3, num_pairs=10 ** 7)
    assert calls == []


def test_pairs_table_rows_are_distinct_and_full():
    t = data.Task(name="pairs", num_symbols=2, min_len=1, max_len=4, num_pairs=30)
    src = t._table.src
    assert src.shape == (30, 4) and len({r.tobytes() for r in src}) == 30


@pytest.mark.parametrize("opts", [["--beam", "3"], ["--alpha", "1.0"], ["--no-cache"],
                                  ["--max-new-tokens", "2"]])
def test_generate_with_a_classifier_refuses_decoding_options(tmp_path, capsys, opts):
    """`generate classifier.npz abc --beam 3` used to print the class and ignore --beam."""
    ckpt = str(tmp_path / "maj.npz")
    assert main(["train", *TINY, "--task", "majority", "--save", ckpt]) == 0
    capsys.readouterr()
    assert main(["generate", ckpt, "abc", *opts]) == 2
    err = capsys.readouterr().err
    assert f"{opts[0]}: a classifier checkpoint predicts one class per input" in err
    assert main(["generate", ckpt, "abc"]) == 0                # without them it answers
    assert "-> class" in capsys.readouterr().out


def test_save_and_plot_on_the_same_path_refused_before_training(tmp_path, capsys):
    """It used to train, create a folder at the path for the plots, then fail to save onto it."""
    p = str(tmp_path / "o.npz")
    assert main(["train", *TINY, "--save", p, "--plot", p]) == 2
    err = capsys.readouterr().err
    assert "--plot" in err and "same path" in err and "Traceback" not in err
    assert not os.path.exists(p)                         # no folder made, nothing trained


def test_sizes_beyond_memory_are_one_line(capsys, monkeypatch):
    """`--batch-size 10000000000` (or --eval-size, --d-model) used to end in a raw
    _ArrayMemoryError traceback, exit status 1. (Where the machine's memory cannot be read, so that
    check_fits_memory cannot refuse first, the MemoryError itself is the one line.)"""
    import npformer.guards.rules as guard_rules
    monkeypatch.setattr(guard_rules, "physical_memory", lambda: None)    # every memory check
    argv = [a for a in TINY]
    argv[argv.index("--eval-size") + 1] = str(10 ** 13)       # 74 TiB of held-out ids
    assert main(["train", *argv]) == 2
    err = capsys.readouterr().err
    assert "error: out of memory (" in err and "--eval-size" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_max_len_whose_attention_cannot_exist_is_refused_before_building(monkeypatch, capsys):
    """`--max-len 100000000` used to spend minutes building a 13 GB positional table, then fail."""
    import npformer.training.train as T

    def never(*a, **kw):
        raise AssertionError("the model was built")
    monkeypatch.setattr(T, "build_model", never)
    argv = [a for a in TINY]
    argv[argv.index("--max-len") + 1] = str(10 ** 8)
    assert main(["train", *argv]) == 2
    err = capsys.readouterr().err
    assert "--max-len 100000000" in err and "the attention weights (batch, heads, T, T)" in err
    assert "this machine has available" in err


@pytest.mark.parametrize("task", ["reverse", "lm"])
def test_beam_wider_than_the_vocabulary_is_refused_before_decoding(task, tmp_path, capsys):
    """A beam of 100000 used to run for minutes (100000 decoder rows a step); the widest useful beam
    is bounded by the output vocabulary, named in the message."""
    path = str(tmp_path / f"{task}.npz")
    args = tiny_train_args(task="lm", max_number=5, max_len=None, num_symbols=None) \
        if task == "lm" else TINY
    assert main(["train", *args, "--save", path]) == 0
    V = nf.load_model(path).config.tgt_vocab
    capsys.readouterr()
    prompt = "1+2=" if task == "lm" else "abc"
    assert main(["generate", path, prompt, "--beam", str(V + 1)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"npformer generate: error: --beam {V + 1}: expected at most {V}, the model's "
                   f"output vocabulary (each step runs K rows through the decoder, and the first "
                   f"step has only {V} candidates)"]
    assert main(["generate", path, prompt, "--beam", str(V)]) == 0      # the widest is allowed


@pytest.mark.parametrize("option,value,what", [
    # 200,000 encoder layers (one attention sublayer each) and 200,000 decoder layers (two each):
    # 600,000 x 4 x 8^2 + 400,000 x 2 x 8 x 16 + 7 x 8 = 256,000,056 weights, 4 copies of 4 bytes
    ("--layers", 200_000, "the weights (4 d_model^2 per attention sublayer, 2 d_model d_ff per "
                          "layer, one vocabulary x d_model table) with their gradients and Adam's "
                          "two moments alone needs 3.8 GiB"),
    # 10^8 rows x 2 sides x 3 tokens x 8 bytes = 4.8e9 bytes
    ("--eval-size", 10 ** 8, "the held-out set's token ids (source and target, int64) alone needs "
                             "4.5 GiB")])
def test_layers_and_eval_size_beyond_memory_are_refused_before_building(option, value, what,
                                                                        monkeypatch, capsys):
    """`--layers 100000` and `--eval-size 1000000000` used to run until killed (small allocations
    one after another, never one MemoryError)."""
    import npformer.guards.rules as rules
    import npformer.training.train as T

    def never(*a, **kw):
        raise AssertionError("the model was built")
    monkeypatch.setattr(T, "build_model", never)
    monkeypatch.setattr(rules, "physical_memory", lambda: 2 ** 30)       # a 1 GiB machine
    argv = [a for a in TINY]
    if option in argv:
        argv[argv.index(option) + 1] = str(value)
    else:
        argv += [option, str(value)]
    assert main(["train", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"npformer train: error: {option} {value} with ")
    assert err[0].endswith(f"{what}, more than the 1.0 GiB this machine has available"), err


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_learning_rate_whose_schedule_overflows_names_lr(backend, capsys):
    if backend == "torch":
        pytest.importorskip("torch")
    with pytest.raises(SystemExit) as stop:
        main(["train", *tiny_train_args(), "--backend", backend, "--lr", "1e308"])
    out, err = capsys.readouterr()
    assert stop.value.code == 2, err
    assert err.strip().splitlines()[-1].startswith("npformer train: error: "), err
    # refused by the option itself now (above float32's largest value); the schedule's own check
    # (npformer.training.train: "lr: expected a peak learning rate below ...") guards the API
    assert "argument --lr: expected a number in (0.0, 3.4e+38]" in err and "1e308" in err, err
    assert "warmup_lr" not in err
