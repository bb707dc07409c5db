"""torchformer.layers."""
