"""npformer.cli."""
