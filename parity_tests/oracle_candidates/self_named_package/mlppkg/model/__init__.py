"""The package's model folder. Our own code."""
