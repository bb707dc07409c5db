"""npformer.optim."""
