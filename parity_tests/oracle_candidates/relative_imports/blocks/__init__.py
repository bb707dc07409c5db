"""Blocks built from the package's parts, imported from one folder up (`from ..attention import`)."""
