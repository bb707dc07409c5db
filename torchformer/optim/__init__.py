"""torchformer.optim."""
