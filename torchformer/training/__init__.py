"""torchformer.training."""
