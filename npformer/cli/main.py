"""The `npformer` command (also `python -m npformer`).

    npformer train                 train the default model (reverse task, pure NumPy) and report
    npformer train --backend torch the same run with torchformer (CPU or --device cuda)
    npformer evaluate CKPT         held-out loss / token accuracy / exact-sequence accuracy
    npformer generate CKPT abc ... decode inputs greedily or with --beam K
    npformer gradcheck             finite-difference check of every component and model (float64)
    npformer plot CKPT --out DIR   attention heat maps (--positions: also the positional encoding)

Every subcommand has --help. Bad arguments (and unusable checkpoint files) print one line saying what
is wrong and exit with status 2; a failed gradient check exits with 1.

The package, one file per concept: parser (+ options, argtypes, defaults) builds the command line,
and suggest answers a misspelt option or command with the nearest one;
train, evaluate, generate (+ lm), gradcheck and plot each run one command; common, printing and
figures hold what the commands share; pipes ends a command whose stdout reader left quietly;
guards check option combinations; backends picks npformer or torchformer; errors holds CliError.
"""
from __future__ import annotations

import sys

from npformer.cli.errors import CliError, one_line, where_it_was_looked_for
from npformer.cli.evaluate import cmd_evaluate
from npformer.cli.generate import cmd_generate
from npformer.cli.gradcheck import cmd_gradcheck
from npformer.cli.option_rules import (
    check_threads,
    given_options,
    interrupted_message,
    sigterm_as_interrupt,
)
from npformer.cli.parser import DASH_INPUT_HINT, build_parser
from npformer.cli.pipes import quiet_exit_after_closed_stdout, stdout_reader_gone
from npformer.cli.plot import cmd_plot
from npformer.cli.suggest import command_parser, unknown_options_message
from npformer.cli.train import cmd_train
from npformer.io.files import made_folders_removed_on_failure

__all__ = ["main", "COMMANDS", "out_of_memory_message"]

# what makes each command's arrays smaller, for its out-of-memory line
SMALLER = {"train": "use smaller sizes (--batch-size, --eval-size, --max-len, --d-model, --d-ff)",
           "evaluate": "use a smaller --eval-size",
           "generate": "use fewer or shorter INPUTs, a smaller --beam or --max-new-tokens",
           "plot": "use a shorter --input"}

COMMANDS = {"train": cmd_train, "evaluate": cmd_evaluate, "generate": cmd_generate,
            "gradcheck": cmd_gradcheck, "plot": cmd_plot}


def out_of_memory_message(args, error: MemoryError) -> str:
    """One line for a MemoryError: NumPy's own words when it gave some, what to make smaller for
    this command, and the text of --data, which is read whole and encoded at about 10 times its size."""
    detail = f" ({error})" if str(error) else ""
    smaller = SMALLER.get(args.command, "use smaller sizes")
    data = " or less text in --data (reading and encoding it takes about 10 times its size)" \
        if getattr(args, "data", None) else ""
    return f"out of memory{detail}; {smaller}{data}"


def os_error_line(args, e: OSError) -> int:
    """A file that cannot be read or written: one line, never a traceback; exit status 2."""
    where = f": {e.filename}" if getattr(e, "filename", None) else ""
    print(f"npformer {args.command}: error: {one_line(f'{e.strerror or e}{where}')}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:                                             # what parse_args refuses, with a hint
        dashed = args.command == "generate" and any(a[:1] == "-" and a[:2] != "--" for a in extra)
        sub = command_parser(parser, args.command)        # the command's usage, its nearest options
        sub.error(unknown_options_message(sub, extra) + (DASH_INPUT_HINT if dashed else ""))
    args.given = given_options(parser, list(sys.argv[1:] if argv is None else argv), args.command)
    try:
        check_threads(args)                               # before any work
        with sigterm_as_interrupt(), made_folders_removed_on_failure():   # SIGTERM: as Ctrl-C
            return int(COMMANDS[args.command](args) or 0)
    except CliError as e:
        print(f"npformer {args.command}: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    except (ValueError, FileNotFoundError, ImportError) as e:
        # validation errors name the argument; checkpoint errors name the file
        print(f"npformer {args.command}: error: {one_line(str(e) + where_it_was_looked_for(e))}",
              file=sys.stderr)
        return 2
    except BrokenPipeError as e:
        if not stdout_reader_gone():
            return os_error_line(args, e)
        return quiet_exit_after_closed_stdout()          # `npformer gradcheck | head`: as SIGPIPE
    except OSError as e:
        return os_error_line(args, e)
    except MemoryError as e:                              # sizes beyond the machine: no traceback
        print(f"npformer {args.command}: error: {out_of_memory_message(args, e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        line, code = interrupted_message(args, e)
        print(f"npformer {args.command}: {line}", file=sys.stderr)
        return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
