"""torchformer.models."""
