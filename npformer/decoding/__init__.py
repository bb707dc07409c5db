"""npformer.decoding."""
