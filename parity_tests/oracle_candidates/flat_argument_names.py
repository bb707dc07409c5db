"""NumPy feed-forward functions taking their weights as flat arguments named `<layer>_<leaf>`,
GPT-2's inference style (`fc_w`, `fc_b` expand; `proj_w`, `proj_b` project back), weights (in, out)
(test data for parity_tests/test_oracle_flat_argument_names.py). The BUG twin says so."""
import numpy as np


def feed_forward(x, fc_w, fc_b, proj_w, proj_b):
    h = np.maximum(0.0, x @ fc_w + fc_b)     # (B, T, d_ff)
    return h @ proj_w + proj_b               # (B, T, d_model)


def feed_forward_BUG(x, fc_w, fc_b, proj_w, proj_b):
    """BUG: the second bias is added before the projection's product."""
    h = np.maximum(0.0, x @ fc_w + fc_b)
    return (h + proj_b[: h.shape[-1]].sum()) @ proj_w
