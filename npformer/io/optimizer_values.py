"""The values of a checkpoint's optimizer state, checked before a run resumes from them: a moment
that is NaN or infinite, or an Adam second moment below zero (a square's running mean), cannot come
from training; resumed, it turns the next update into NaN and the run "diverges" for no reason the
user can see. The structure (parameters, keys, shapes, the step) is checked where it is read."""
from __future__ import annotations

import numpy as np

from npformer.io.checkpoint_file import Checkpoint, CheckpointError

__all__ = ["check_optimizer_values", "NON_NEGATIVE_STATE_KEYS"]

NON_NEGATIVE_STATE_KEYS = ("exp_avg_sq", "max_exp_avg_sq")     # running means of squared gradients


def check_optimizer_values(ckpt: Checkpoint) -> None:
    """CheckpointError naming the file, the entry (`optim/<parameter>/<key>`), the first bad value and
    its index when a moment of `ckpt`'s optimizer state is not finite, or a second moment is < 0."""
    sd = ckpt.optimizer_state
    if sd is None:
        return
    for name, state in sd["state"].items():
        for key, value in state.items():
            if key == "step":
                if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                    raise CheckpointError(ckpt.path, f"optimizer state optim/{name}/step: expected a "
                                                     f"non-negative integer, got {value!r}")
                continue
            a = np.asarray(value)
            square = key in NON_NEGATIVE_STATE_KEYS
            bad = ~np.isfinite(a) | (a < 0) if square else ~np.isfinite(a)
            if bad.any():
                where = tuple(int(i) for i in np.argwhere(bad)[0])
                what = "finite values >= 0 (a running mean of squared gradients)" if square \
                    else "finite values"
                raise CheckpointError(ckpt.path, f"optimizer state optim/{name}/{key}: expected {what}, "
                                                 f"got {a[where]!r} at index {where} ({int(bad.sum())} "
                                                 f"bad of {a.size}); the training state is damaged "
                                                 f"and cannot be resumed")
