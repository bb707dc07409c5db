"""`python -m npformer ...` runs the `npformer` command (npformer.cli.main)."""
import sys

from npformer.cli import main

sys.exit(main())
