"""Interface recognisers: each a short file that teaches the adapter one way people write code.

Registered here, in one place, by the hook point that consults them:

CONSTRUCTOR   a value for a REQUIRED constructor argument no hyperparameter name matched
              (derived: head width, temperature, device; configs: config objects;
              submodules: sub-modules built from the same file's classes; arg_meaning:
              output widths, lengths, dtypes by their name)
SIZES         a feed-forward width fixed by the code, 4 * d_model (ffn_width); a model width fixed
              by a module-level global, n_embd = 384 (global_width); a norm epsilon
              fixed by the code, LayerNorm(d) defaulting to eps=1e-12 (norm_eps)
LAZY          lazily created parameters, materialised by a first call (lazy)
FORWARD       how the forward takes its inputs: one list [q, k, v] (list_input); length-style masks
              (valid_lens); (batch*heads, T, d) layouts for sdpa (bh_layout)
RESOLVE       where parameters live: per-head weight lists (per_head); (1, n) biases (row_bias);
              norms inside the attention / feed-forward block (inner_norm);
              heads on axes of their own, (d, H, d_head) einsum weights (head_axes);
              a module only wrapping the block, self.mha = nn.MultiheadAttention (wrapper);
              attention matrices no name placed, their roles probed (roles)
BACKWARD      parameter gradients under names of their own, found by behaviour (grad_behaviour)
MASKS         attention that masks the future itself, no mask argument (builtin_causal);
              masks handed to torch.nn.MultiheadAttention in torch's form (torch_mha_mask)
CALLS         plain functions: one sequence at a time, (in, out) argument matrices, masking the
              future themselves (function_calls); dict-of-arrays arguments (dict_args)
OUTPUT        positional modules that return the table instead of x + PE (pe_table)
ABSENT        parameters the candidate provably has none of (absent); others are interface errors
INSTANCE      every freshly built instance: attention matrices no name placed, their roles probed
              (roles); square matrices used as x @ W, read as (in, out) (layout)
"""
from __future__ import annotations

from . import (
    additive_mask,
    arg_meaning,
    bh_layout,
    builtin_causal,
    class_layout,
    configs,
    derived,
    ffn_width,
    function_calls,
    global_width,
    head_axes,
    layout,
    lazy,
    mask_rank,
    meaning,
    norm_eps,
    pe_table,
    roles,
    submodules,
    torch_mha_mask,
)
from .base import MISSING, BuildContext, ConstructorRecogniser, Probe  # noqa: F401

CONSTRUCTOR: tuple[ConstructorRecogniser, ...] = (configs.value, submodules.value, derived.value, meaning.value,
                                                  arg_meaning.value)
PROBES: tuple[Probe, ...] = (function_calls.probe, global_width.probe, bh_layout.probe, pe_table.probe,
                             lazy.probe, builtin_causal.probe, head_axes.probe, ffn_width.probe,
                             norm_eps.probe, torch_mha_mask.probe, class_layout.probe, mask_rank.probe,
                             additive_mask.probe)        # run once when the adapter is prepared
# INSTANCE (roles, layout) runs through reads_x_at_w below (ffn_layout after it, in adapters.py);
# FORWARD (list_input, valid_lens), LAZY (lazy, also a probe), RESOLVE (per_head, row_bias, inner_norm)
# and ABSENT (absent) are consulted where their hook sits: adapters.py, execute.py and resolver.py


def run_probes(adapter) -> None:
    """Every registered probe, in order, on a freshly prepared adapter."""
    for probe in PROBES:
        probe(adapter)


def reads_x_at_w(adapter, inst, case) -> bool:
    """Every freshly built instance: attention matrices no name placed get their probed roles
    (roles), then, once, whether its square matrices are used as x @ W (layout); True when the
    instance must be built again with --weight-layout in_out."""
    roles.place(adapter, inst)
    return layout.applies(adapter, inst) and layout.probe(adapter, inst, case)


def constructor_value(ctx: BuildContext, param, values: dict):
    """The first recogniser's value for a required constructor argument, or MISSING."""
    for fn in CONSTRUCTOR:
        v = fn(ctx, param, values)
        if v is not MISSING:
            return v
    return MISSING
