"""npformer.training."""
