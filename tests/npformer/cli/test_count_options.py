"""Every count option of every command (steps, sizes, lengths, layer indices, ...) takes an integer
written in digits, from its lower bound up to int64's largest value, and refuses anything else with
argparse's one usage line naming the option, what it allows and what came."""
import argparse

import pytest

from npformer.cli.parser import build_parser

HUGE = str(10 ** 20)


def count_options():
    """(command, option string) of every option whose type is one of argtypes' integer counts."""
    parser = build_parser()
    found = []
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, sub in commands.choices.items():
        for a in sub._actions:
            name = getattr(a.type, "__name__", "")
            if a.option_strings and name.startswith("int"):
                found.append((command, sub, a))
    return found


COUNTS = count_options()


def test_the_commands_have_count_options():
    names = {(c, a.option_strings[-1]) for c, _, a in COUNTS}
    for expected in [("train", "--steps"), ("train", "--batch-size"), ("train", "--eval-every"),
                     ("train", "--max-len"), ("generate", "--max-new-tokens"), ("plot", "--layer")]:
        assert expected in names


@pytest.mark.parametrize("command,sub,action", COUNTS,
                         ids=[f"{c}{a.option_strings[-1]}" for c, _, a in COUNTS])
@pytest.mark.parametrize("text,needle", [
    (HUGE, f"to 2**63 - 1 (int64's largest value), got {HUGE}"),
    ("1e20", "(write a count in digits), got '1e20'"),
    ("3.0", "(write a count in digits), got '3.0'"),
])
def test_huge_and_float_looking_counts_are_refused(command, sub, action, text, needle):
    with pytest.raises(argparse.ArgumentTypeError) as e:
        action.type(text)
    msg = str(e.value)
    assert msg.startswith("expected an integer"), msg
    if text == HUGE and action.type.__name__.startswith("int in"):    # a bounded count names its range
        assert msg.startswith("expected an integer in ") and msg.endswith(f"got {HUGE}"), msg
    else:
        assert needle in msg, msg


def test_steps_of_int64_overflow_is_one_usage_line(capsys):
    with pytest.raises(SystemExit) as e:          # the parser alone: the code before trained forever
        build_parser().parse_args(["train", "--steps", HUGE])
    out, err = capsys.readouterr()
    assert e.value.code == 2 and out == ""
    last = err.strip().splitlines()[-1]
    assert last == ("npformer train: error: argument --steps: expected an integer from 0 to 2**63 - 1 "
                    f"(int64's largest value), got {HUGE}"), err
    assert "Traceback" not in err


def test_largest_count_is_still_accepted():
    from npformer.cli.argtypes import int_at_least
    assert int_at_least(0)(str(2 ** 63 - 1)) == 2 ** 63 - 1
