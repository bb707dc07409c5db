"""One rule for the command line's options: an option that does not apply to the chosen task,
backend or command is refused before any work with one line naming it; a long option is never
abbreviated; size-like options have bounds checked before allocation or launch."""
import os

import pytest

from npformer.cli.main import main
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

LM = tiny_train_args(task="lm", max_number=20, steps=2, batch_size=4, eval_size=4,
                     max_len=None, num_symbols=None)
MLM = tiny_train_args(task="mlm", num_symbols=5, max_len=3, steps=2, batch_size=4, eval_size=4)




def refused(argv, capsys, needle):
    code, out, err = run(argv, capsys)
    assert code == 2, (out, err)
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "steps x" not in out                           # before any work
    return err


@pytest.mark.parametrize("opt", [["--num-symbols", "7"], ["--min-len", "2"], ["--max-len", "5"],
                                 ["--num-pairs", "9"], ["--encoder-layers", "2"]])
def test_lm_refuses_options_it_ignores(opt, capsys):
    """Each used to train exactly the model the command trains without it."""
    refused(["train", *LM, *opt], capsys, f"{opt[0]}: does not apply to --task lm")


@pytest.mark.parametrize("opt", [["--decoder-layers", "2"], ["--num-pairs", "9"]])
def test_mlm_refuses_options_it_ignores(opt, capsys):
    refused(["train", *MLM, *opt], capsys, f"{opt[0]}: does not apply to --task mlm")


@pytest.mark.parametrize("task,opt", [("majority", "--decoder-layers"), ("reverse", "--num-pairs")])
def test_seq2seq_and_classifier_refuse_options_they_ignore(task, opt, capsys):
    refused(["train", *tiny_train_args(task=task), opt, "3"], capsys,
            f"{opt}: does not apply to --task {task}")


def test_pairs_takes_num_pairs(capsys):
    code, out, err = run(["train", *tiny_train_args(task="pairs"), "--num-pairs", "5"], capsys)
    assert code == 0, err


def test_data_parallel_with_the_torch_backend_is_refused(capsys):
    """`--data-parallel on --backend torch` used to train on one process without a word."""
    refused(["train", *tiny_train_args(), "--backend", "torch", "--data-parallel", "on"], capsys,
            "--data-parallel: the numpy backend's thread-level data parallelism")


def test_long_options_are_never_abbreviated(capsys):
    """`--data-par on` used to mean --data-parallel; `--ta copy`, --task."""
    for argv in (["train", "--data-par", "on"], ["train", "--ta", "copy"],
                 ["generate", "x.npz", "abc", "--bea", "2"]):
        code, _, err = run(argv, capsys)
        assert code == 2 and "unrecognized arguments" in err, (argv, err)


def test_lm_batch_beyond_memory_refused_before_building(monkeypatch, capsys):
    """The memory check returned early for --task lm: `--batch-size 1000000000` ran on."""
    import npformer.training.train as T

    def never(*a, **kw):
        raise AssertionError("the model was built")
    monkeypatch.setattr(T, "build_model", never)
    argv = list(LM)
    argv[argv.index("--batch-size") + 1] = str(10 ** 9)
    err = refused(["train", *argv], capsys, "--max-number 20 with --batch-size 1000000000")
    assert "the attention weights (batch, heads, T, T)" in err


def test_mlm_rows_count_both_halves_in_the_memory_check(monkeypatch, capsys):
    """--task mlm's rows hold 2 * max_len + 3 tokens: the check must size them so."""
    from npformer.guards import rules
    monkeypatch.setattr(rules, "physical_memory", lambda: 100 * 2 * 9 * 9 * 4 - 1)
    argv = list(MLM)
    argv[argv.index("--batch-size") + 1] = "100"        # 100 rows x 2 heads x 9 x 9 tokens x 4 B
    refused(["train", *argv], capsys, "--max-len 3 with --batch-size 100")


def test_max_number_beyond_its_bound_names_the_option(capsys):
    """`--max-number 10**12` used to fail with numpy's "Maximum allowed size exceeded"."""
    code, _, err = run(["train", *LM[:LM.index("--max-number")], "--max-number", str(10 ** 12)],
                       capsys)
    assert code == 2 and "argument --max-number: expected an integer in 2..10000" in err


def test_arithmetic_task_bounds_max_number():
    from npformer.data.lm_data import MAX_NUMBER, ArithmeticTask
    with pytest.raises(ValueError, match=r"max_number: expected an int in 2\.\.10000, got 10001"):
        ArithmeticTask(max_number=MAX_NUMBER + 1)


@pytest.fixture(scope="module")
def mlm_ckpt(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("rules") / "mlm.npz")
    assert main(["train", *MLM, "--save", path]) == 0
    return path


@pytest.fixture(scope="module")
def lm_ckpt(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("rules") / "lm.npz")
    assert main(["train", *LM, "--save", path]) == 0
    return path


@pytest.mark.parametrize("opt", [["--max-new-tokens", "3"], ["--no-cache"], ["--alpha", "0.3"]])
def test_generate_on_a_masked_lm_refuses_decoding_options(mlm_ckpt, opt, capsys):
    refused(["generate", mlm_ckpt, "ab#b_", *opt], capsys,
            f"{opt[0]}: a masked language model fills every mask in one pass")


def test_alpha_without_beam_is_refused(lm_ckpt, capsys):
    refused(["generate", lm_ckpt, "1+2=", "--alpha", "0.3"], capsys,
            "--alpha: the length penalty of beam search; it needs --beam K")


def test_evaluate_refuses_a_task_option_the_checkpoint_task_ignores(lm_ckpt, capsys):
    refused(["evaluate", lm_ckpt, "--num-symbols", "7"], capsys,
            "--num-symbols: does not apply to --task lm")


def test_evaluate_an_lm_checkpoint_as_another_task_blames_the_model(lm_ckpt, capsys):
    """`evaluate lm.npz --task mlm` used to blame --max-number, which the user never gave."""
    err = refused(["evaluate", lm_ckpt, "--task", "mlm"], capsys, "checkpoint")
    assert "--max-number" not in err


def test_steps_zero_prints_no_nan_loss(capsys):
    code, out, err = run(["train", *tiny_train_args(steps=0)], capsys)
    assert code == 0, err
    assert "nan" not in out and "trained 0 steps (--steps 0)" in out


def test_nproc_forwards_examples(monkeypatch, capsys):
    """`--nproc 2` used to drop --examples 0 (printing examples anyway), --num-pairs and
    --max-number."""
    pytest.importorskip("torch")
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs 2 CPUs for --nproc 2")
    from npformer.training import launcher
    seen = {}

    def fake(argv, nproc, **kw):
        seen["argv"] = argv
        return 0
    monkeypatch.setattr(launcher, "run_workers", fake)
    assert main(["train", *tiny_train_args(examples=0), "--backend", "torch", "--nproc", "2",
                 "--task", "pairs", "--num-pairs", "5"]) == 0
    argv = seen["argv"]
    assert argv[argv.index("--examples") + 1] == "0"
    assert argv[argv.index("--num-pairs") + 1] == "5"
    assert main(["train", *LM, "--backend", "torch", "--nproc", "2", "--max-number", "30"]) == 0
    argv = seen["argv"]
    assert argv[argv.index("--max-number") + 1] == "30"


def test_beam_search_score_is_not_called_a_log_prob(lm_ckpt, capsys):
    """Beam search prints log-prob / lp(length); it used to be labelled "log-prob score"."""
    code, out, err = run(["generate", lm_ckpt, "1+2=", "--beam", "2", "--alpha", "0.6"], capsys)
    assert code == 0, err
    assert "[score (log-prob / length penalty) " in out and "log-prob score" not in out
    code, out, err = run(["generate", lm_ckpt, "1+2="], capsys)
    assert code == 0 and "[log-prob score " in out                  # greedy: a real log-prob


def test_threads_without_data_parallelism_says_where_the_threads_go(monkeypatch, capsys):
    """`--threads 2` on a small model used to say nothing about data parallelism staying off."""
    from npformer.cli import option_rules
    monkeypatch.setattr(option_rules, "available_cpus", lambda: 2)
    code, out, err = run(["train", *tiny_train_args(), "--threads", "2"], capsys)
    assert code == 0, err
    assert "data parallelism off (each replica's activations would be below 65536" in out
    code, out, err = run(["train", *tiny_train_args(), "--threads", "2", "--data-parallel", "off"],
                         capsys)
    assert code == 0 and "data parallelism off (--data-parallel off)" in out


def test_train_help_gives_the_mlm_defaults(capsys):
    from npformer.cli.defaults import MLM_DEFAULTS
    code, out, _ = run(["train", "--help"], capsys)
    text = " ".join(out.split())
    assert code == 0 and "mlm (mirror sentences" in text
    for key in ("steps", "lr", "warmup"):
        assert f"--task mlm: {MLM_DEFAULTS[key]}" in text, key


def test_a_classifier_is_scored_and_answered_as_a_classifier(tmp_path, capsys):
    """majority used to print "exact-sequence accuracy" and a bare "class 0"."""
    ckpt = str(tmp_path / "maj.npz")
    code, out, err = run(["train", *tiny_train_args(task="majority", num_symbols=4), "--save",
                          ckpt], capsys)
    assert code == 0, err
    assert "classification accuracy" in out and "exact-sequence" not in out
    code, out, err = run(["generate", ckpt, "ddd", "aaa"], capsys)       # d: upper half of a..d
    assert code == 0, err
    lines = [ln for ln in out.splitlines() if "-> class" in ln]
    assert len(lines) == 2
    for ln in lines:
        cls = int(ln.split("-> class ")[1][0])
        half = "more than half" if cls == 1 else "at most half"
        assert f"({half} of the symbols are from the upper half of the alphabet)" in ln
