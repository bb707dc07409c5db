"""What a held-out set of n examples holds in memory at once while it is drawn and evaluated, for
the tasks whose held-out set grows with n: the synthetic seq2seq and classification tasks
(npformer.data.tasks.Task) and the mirror-sentence masked LM (npformer.data.mlm_data.MirrorTask).
The held-out sets of the other tasks are bounded by the task (the addition task's held-out pairs, the
validation share of your own text), and evaluation goes over any set in batches of bounded size.

The counts are the peaks measured on these tasks, rounded up to whole (n, width) int64 arrays:
drawing a set holds five (n, max_len) at once (the sources, the random symbols, their padded copy,
the partition's hash terms, the targets), and the masked LM's evaluation masks the whole set at once
(its sentences, the rule-masked and the single-mask copies with their targets: eight (n, 2 max_len + 3)
arrays), so that the result does not depend on the batch size."""
from __future__ import annotations

from npformer.guards.rules import check_examples_fit_memory

__all__ = ["heldout_bytes_per_example", "check_heldout_fits_memory"]

DRAW_ARRAYS = 5                         # (n, max_len) int64 arrays alive while a set is drawn
MLM_EVAL_ARRAYS = 8                     # (n, 2 max_len + 3) arrays alive while a set is masked


def heldout_bytes_per_example(task) -> tuple[int, str] | None:
    """(bytes per example, what they hold) of drawing and evaluating `task.heldout(n)`, or None when
    the task's held-out set does not grow with n."""
    from npformer.data.mlm_data import MirrorTask
    from npformer.data.tasks import Task
    if isinstance(task, MirrorTask):
        L, W = task.max_len, 2 * task.max_len + 3
        return (8 * (DRAW_ARRAYS * L + 2) + 8 * MLM_EVAL_ARRAYS * W,
                f"drawing it ({DRAW_ARRAYS} int64 arrays of max_len={L} ids per example) and masking "
                f"the whole set for evaluation ({MLM_EVAL_ARRAYS} arrays of {W} ids per example)")
    if isinstance(task, Task) and not task.memorise:                   # "pairs": its fixed table
        L = task.max_len
        return (8 * (DRAW_ARRAYS * L + 2),
                f"drawing it: the sources, the random draws, the partition's hash terms and the "
                f"targets ({DRAW_ARRAYS} int64 arrays of max_len={L} ids per example) and the lengths")
    return None


def check_heldout_fits_memory(name: str, task, n: int) -> None:
    """Refuse, naming `name` (the option or argument that gave n), a held-out set of n examples of
    `task` that cannot be drawn and evaluated in this machine's memory."""
    need = heldout_bytes_per_example(task)
    if need is not None:
        check_examples_fit_memory(name, n, *need)
