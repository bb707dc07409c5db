"""npformer.io."""
