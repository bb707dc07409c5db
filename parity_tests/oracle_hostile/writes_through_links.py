"""Hostile: a right scaled dot-product attention that, when imported, writes through every link in
its folder (to a file of the instructor's beside the class folder, to a folder of the harness, and
`..` above itself), hoping the throwaway writable copy of its folder reaches the real files
(test_oracle_writable_copy_aliases.py). Links are copied as links and the worker may write only in
the copy and its scratch folder, so every write fails or lands in the copy."""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
for name in sorted(os.listdir(HERE)):
    for target in (os.path.join(HERE, name), os.path.join(HERE, name, "planted.txt"),
                   os.path.join(HERE, "..", name + ".planted")):
        try:
            with open(target, "a") as f:
                f.write("planted by the submission\n")
        except OSError:
            pass


def attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask == 0, -1e9, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
