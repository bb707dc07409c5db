"""torchformer.io."""
