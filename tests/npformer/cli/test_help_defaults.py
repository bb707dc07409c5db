"""Every option of every command says in its help what happens when it is not given."""
import argparse

import pytest

from npformer.cli.parser import build_parser

# options whose absence is plain from the help itself: nothing is read, saved, drawn or cut
NOTHING_WHEN_ABSENT = {("train", "--data"), ("train", "--save"), ("train", "--save-pretrained"),
                       ("train", "--resume"), ("train", "--plot"), ("evaluate", "--data"),
                       ("generate", "--stop"), ("generate", "--out"), ("plot", "--out")}


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    p = build_parser()
    return next(a for a in p._actions if a.dest == "command").choices


def valued_options():
    for name, sp in command_parsers().items():
        for a in sp._actions:
            if a.option_strings and a.nargs != 0:         # flags (store_true, --help) take no value
                yield name, a


@pytest.mark.parametrize("command,action", list(valued_options()),
                         ids=lambda v: v if isinstance(v, str) else v.option_strings[-1])
def test_option_help_states_its_default(command, action):
    if (command, action.option_strings[-1]) in NOTHING_WHEN_ABSENT:
        return
    assert "default" in (action.help or ""), (command, action.option_strings, action.help)


def test_generate_input_help_covers_text_checkpoints():
    """INPUT is letters only for a synthetic task; a text model or a Hugging Face folder reads text."""
    gen = command_parsers()["generate"]
    text = " ".join(next(a for a in gen._actions if a.dest == "inputs").help.split())
    assert "letters (abc)" in text and "the text itself" in text


def test_max_new_tokens_help_gives_the_folder_default():
    from npformer.cli.pretrained import DEFAULT_NEW_TOKENS
    gen = command_parsers()["generate"]
    text = " ".join(next(a for a in gen._actions if a.dest == "max_new_tokens").help.split())
    assert f"{DEFAULT_NEW_TOKENS} for a Hugging Face folder" in text


def test_evaluate_description_names_what_each_kind_of_checkpoint_reports():
    """evaluate on a translation, classification or own-text checkpoint reports other metrics than
    the synthetic tasks' token and exact-sequence accuracy: the description names them."""
    ev = command_parsers()["evaluate"]
    text = " ".join(ev.description.split())
    for metric in ("BLEU and chrF", "accuracy and macro F1", "bits per character"):
        assert metric in text, metric


def test_eval_size_help_says_what_it_counts_on_your_own_text():
    for command in ("train", "evaluate"):
        sp = command_parsers()[command]
        text = " ".join(next(a for a in sp._actions if a.dest == "eval_size").help.split())
        assert "validation windows" in text and "rows" in text, (command, text)
