"""Input checks, apart from the math: importing npformer.guards registers every guard of npformer's
layers and models in npformer.layers.module.CHECKS (`import npformer` does it)."""
from npformer.guards import config, functional, keep_masks, layers, models, state  # noqa: F401  (importing registers the guards)
