"""A course project's settings: the model width and the head count, star-imported by its layers."""
model_width = 16
n_heads = 4
