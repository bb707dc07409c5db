"""torchformer.checks."""
