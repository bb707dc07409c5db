"""The reusable parity harness (used by the suite and by the grading oracle).

numpy/hypothesis-only pieces are imported here; the torch-side pieces live in `torch_utils`,
`recording.record_torch`, `weights` and `parity` and import torch when used.

  tolerances  TOLERANCES, tolerance(dtype, quantity), Tolerance (atol*scale + rtol*|ref|)
  compare     compare(name, got, ref, dtype, quantity) -> Report | raises ParityError; measure; compare_all
  case        note_case / case(...) : what was drawn, printed in every failure with a re-run command
  strategies  Hypothesis strategies: sizes, configs, paddings, attention masks, ids, upstream grads
  profiles    Hypothesis profiles dev / ci / thorough (NPFORMER_HYPOTHESIS_PROFILE)
  recording   record every sub-module output by dotted name (npformer wrapper / torch hooks)
  weights     copy_weights npformer -> torch by name, gradients by name
  parity      run_numpy / run_torch / compare_runs / check_parity / check_pair: the whole comparison
  twins       twins("attention.MultiHeadAttention", ...): an npformer module and its torch twin
  conditioning  condition numbers (LayerNorm) for a tolerance scaled with tolerances.scaled
  torch_utils deterministic_torch (TF32 off), parity_device (NPFORMER_PARITY_DEVICE), conversions
"""
from .case import case, clear_case, current_case, note_case
from .compare import ParityError, Report, as_array, compare, compare_all, measure
from .tolerances import QUANTITIES, TOLERANCES, Tolerance, tolerance

__all__ = ["ParityError", "QUANTITIES", "Report", "TOLERANCES", "Tolerance", "as_array", "case",
           "clear_case", "compare", "compare_all", "current_case", "measure", "note_case",
           "tolerance"]
