"""torchformer.decoding."""
