"""npformer.data."""
