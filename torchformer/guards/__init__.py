"""Input checks, apart from the math: importing torchformer.guards registers the constructor and call
guards of torchformer's layers and models, and Dropout's replayed-mask checks, in
torchformer.layers.module.CHECKS (`import torchformer` does it)."""
from torchformer.guards import functional, keep_masks, layers, models  # noqa: F401  (importing registers the guards)
