"""A project package whose blocks take their parts already built, as a model-building function
hands them in: the attention and the feed-forward (in `layer/`) take their linear layers
(`qkv_fc`, `out_fc`, `fc1`, `fc2`), the encoder block (in `block/`) takes the attention, the
feed-forward and a norm, whose classes live in the other folder. Our own code."""
