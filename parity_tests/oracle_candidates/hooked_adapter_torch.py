"""Adapter file for hooked_styles.py:DictBatchAttention (and its BUG twin): --adapter THIS_FILE."""
import torch  # noqa: F401


def build(component, hyper, candidate):
    return candidate((hyper["d_model"], hyper["num_heads"]))


def call(obj, inputs):
    return obj({"q": inputs["query"], "k": inputs["key"], "v": inputs["value"]}, inputs["mask"])


def weights(obj):
    return {"q_proj.weight": obj.P["a"], "k_proj.weight": obj.P["b"], "v_proj.weight": obj.P["c"],
            "out_proj.weight": obj.P["d"], "q_proj.bias": "-", "k_proj.bias": "-",
            "v_proj.bias": "-", "out_proj.bias": "-"}
