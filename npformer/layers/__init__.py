"""npformer.layers."""
