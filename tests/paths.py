"""Where the repository is, for tests that start subprocesses or read files beside the code."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
