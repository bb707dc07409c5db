"""Adapter file for hooked_styles.py:TupleStateNorm (and its BUG twin): --adapter THIS_FILE."""


def build(component, hyper, candidate):
    return candidate(hyper["d_model"])


def call(obj, inputs):
    return obj.run(inputs["x"])


def weights(obj):
    return {"weight": obj.state[0], "bias": obj.state[1]}


def backward(obj, dout):
    return {"x": obj.back(dout)}


def grads(obj):
    return {"weight": obj.dstate[0], "bias": obj.dstate[1]}
