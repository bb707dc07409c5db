"""A newcomer's slips on the command line get an answer that says what to do: a misspelt option or
command names the nearest real one and the command's own usage and --help; `--backend torch`
without torch gives the CPU-only install command the README gives."""
import builtins

import pytest

from tests.npformer.conftest import run_cli as run


@pytest.mark.parametrize("argv, near", [
    (["train", "--stpes", "10"], "--steps"),
    (["train", "--lr-warmup=3"], "--warmup"),
    (["generate", "ck.npz", "abc", "--temprature", "0.5"], "--temperature"),
    (["gradcheck", "--olny", "ffn"], "--only"),
])
def test_a_misspelt_option_names_the_nearest_one_and_the_commands_help(argv, near, capsys):
    code, _, err = run(argv, capsys)
    assert code == 2
    assert f"did you mean {near}?" in err, err
    assert f"`npformer {argv[0]} --help` lists every option" in err, err
    assert f"usage: npformer {argv[0]} " in err, err          # the command's usage, not the top level's


def test_an_unknown_option_with_no_near_one_still_points_at_help(capsys):
    code, _, err = run(["train", "--zzzzqqq"], capsys)
    assert code == 2 and "did you mean" not in err and "`npformer train --help`" in err, err


def test_a_misspelt_command_names_the_nearest_one(capsys):
    code, _, err = run(["trian"], capsys)
    assert code == 2 and "did you mean 'train'?" in err, err


@pytest.mark.parametrize("argv, near", [
    (["train", "--task", "revrese"], "reverse"),
    (["train", "--backend", "troch"], "torch"),
    (["train", "--tokenizer", "chars"], "char"),
])
def test_a_misspelt_choice_names_the_nearest_one(argv, near, capsys):
    code, _, err = run(argv, capsys)
    assert code == 2 and f"did you mean '{near}'?" in err, err


def test_backend_torch_without_torch_gives_the_cpu_only_install_command(monkeypatch, capsys):
    real_import = builtins.__import__

    def no_torch(name, *args, **kwargs):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("No module named 'torch'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    code, _, err = run(["train", "--backend", "torch", "--steps", "1", "--no-progress"], capsys)
    assert code == 2, err
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in err, err
    assert "npformer[torch]" not in err, err


def test_choice_hint_reads_both_argparse_spellings_of_the_choices():
    from npformer.cli.suggest import choice_hint
    for listed in ("'copy', 'reverse', 'sort'", "copy, reverse, sort"):        # Python < 3.12.8 / later
        assert choice_hint(f"argument --task: invalid choice: 'revrese' (choose from {listed})") == \
            "; did you mean 'reverse'?"
    assert choice_hint("argument --task: invalid choice: 'zzz' (choose from copy, reverse)") == ""
    assert choice_hint("argument --steps: expected an int") == ""
