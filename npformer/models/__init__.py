"""npformer.models."""
