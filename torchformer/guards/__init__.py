"""Input checks, apart from the math: importing torchformer.guards registers the call guards of
torchformer's layers in torchformer.layers.module.CHECKS (`import torchformer` does it)."""
from torchformer.guards import layers, models  # noqa: F401  (importing registers the guards)
