"""npformer.checks."""
