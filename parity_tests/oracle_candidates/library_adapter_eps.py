"""Adapter for FixedEpsLayerNorm: built from d_model, called through run(x)."""


def build(component, hyper, candidate):
    return candidate(hyper["d_model"])


def call(obj, inputs):
    return obj.run(inputs["x"])
