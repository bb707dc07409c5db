"""`python -m npformer ...` runs the `npformer` command (npformer.cli.main.main)."""
import sys

from npformer.cli.main import main

sys.exit(main())
