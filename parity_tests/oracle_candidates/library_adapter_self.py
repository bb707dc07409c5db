"""Adapter for SelfOnlyAttention: a self-attention-only forward named run(x)."""
SELF_ATTENTION = True


def build(component, hyper, candidate):
    return candidate(hyper["d_model"], hyper["num_heads"])


def call(obj, inputs):
    return obj.run(inputs["x"], inputs["mask"])
