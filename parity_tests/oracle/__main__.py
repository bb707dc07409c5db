"""`python -m parity_tests.oracle ...` is `npformer-oracle ...`."""
import sys

from .cli import main

sys.exit(main())
