"""A forward's own training switch, on by default (`forward(x, is_training=True)`,
`forward(x, train_mode=True)`): passed False, as the reference is compared in inference mode, and
the report says so; the train mode passes it True. Before, it was left at its default: the main
run compared the training path (an inference path leaving out the activation MATCHED) and the
one-value line said "is_training left at its default True". Code whose dropout stays on with the
switch False still fails (NONDETERMINISTIC, or MISMATCH where a tiny case kept every unit), and a
dropout at a rate of its own fails in the train mode (MISMATCH; it was NONDETERMINISTIC)."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.recognise.training_switch import is_switch_name

FILE = "forward_training_switches.py"


@pytest.mark.parametrize("name,arg", [("SwitchFeedForward", "is_training"),
                                      ("ModeSwitchFeedForward", "train_mode")])
def test_a_training_switch_is_passed_false_and_said(candidate_file, name, arg):
    res = check("ffn", f"{candidate_file(FILE)}:{name}", examples=6)
    text = render_text(res)
    assert res.verdict == "match", text
    assert f"forward argument {arg!r} defaults to on: passed False" in text, text
    assert "the train mode passes it True" in text, text
    assert f"{arg} left at its default" not in text, text


def test_an_inference_path_bug_is_found_with_the_switch_off(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:InferencePathFeedForwardBUG", examples=25)
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert "[output]" in text, text


def test_dropout_on_with_the_switch_off_still_fails(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:SwitchFeedForwardBUG", examples=6)
    text = render_text(res)
    # two runs differ (nondeterministic), or, where a small case kept every unit both times, a
    # later mode's run does
    assert res.verdict in ("nondeterministic", "mismatch"), text
    assert "forward argument 'is_training' defaults to on: passed False" in text, text


def test_a_switched_dropout_at_a_rate_of_its_own_fails_in_the_train_mode(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:OwnRateSwitchFeedForwardBUG", examples=25)
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert "differs in train() mode" in text, text


@pytest.mark.parametrize("name,switch", [
    ("training", True), ("is_training", True), ("train_mode", True), ("isTraining", True),
    ("use_dropout", True), ("apply_dropout", True), ("train_steps", False), ("dropout_rate", False),
    ("num_train", False), ("mask", False)])
def test_switch_names_are_read_by_their_words(name, switch):
    assert is_switch_name(name) is switch
