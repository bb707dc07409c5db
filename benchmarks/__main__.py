"""`python -m benchmarks`: fix thread counts in the environment first, then run the CLI."""
import sys

from benchmarks.machine import pin_threads_from_argv

pin_threads_from_argv(sys.argv[1:])  # before anything imports numpy or torch

from benchmarks.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
