"""Speed variants of npformer's layers and optimizers: the same signatures and results as the plain
code in npformer.layers / npformer.optim (each proven equal by tests), picked by training, never by
the plain model a learner reads."""
