"""What reading a submission found about how it must be called and drawn for, as one typed value.

The worker's adapter and its recognisers fill a `Findings`; it crosses to the parent as plain data
(`to_wire`), where `from_wire` keeps only what the parent understands, each field checked for its type
and range (the worker shares the submission's process, so its word is never taken as given): the
fixed settings are the parent's own, and mask kinds can only be narrowed to kinds the component has.
The components' `strategy` and `build`, the structural cases and the completeness rules read it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# fields the parent takes from a worker (the rest say how the worker calls the candidate)
MAX_FIXED_MATRIX = 1 << 22   # elements (32 MiB in float64) of one weight matrix fixed sizes may imply
PARENT_FLAGS = ("self_attention", "shared_kv", "table", "one_vocab", "one_layer_count", "one_sequence",
                "share_embeddings", "tie_embeddings", "learned_table", "final_norm", "time_first")


@dataclass
class Findings:
    fixed: dict = field(default_factory=dict)             # the --set values, the parent's own
    mask_kinds: dict = field(default_factory=dict)        # {mask source: kinds the candidate takes}
    self_attention: bool = False        # mha called with one input (q = k = v)
    shared_kv: bool = False             # mha called as forward(q, kv, mask): key = value
    table: bool = False                 # a positional table function (no x argument)
    one_vocab: bool = False             # a whole model with one vocabulary for both sides
    one_layer_count: bool = False       # ... and one layer count for encoder and decoder
    one_sequence: bool = False          # code written for one (T, d) sequence: batch 1 drawn
    share_embeddings: bool = False      # a whole model with one table for both embeddings
    tie_embeddings: bool = False        # ... or its output projection using the target table
    learned_table: bool = False         # a positional module holding a learned table (learned_table)
    final_norm: bool = False            # a whole model with a final norm after each stack (final_norms)
    d_ff_ratio: int | None = None       # a feed-forward width fixed by the code: ratio * d_model
    norm_eps: float | None = None       # a norm epsilon fixed by the code
    norm_first: bool | None = None      # a layer found pre-norm by behaviour (recognise/norm_order)
    mask_convention: str | None = None  # masks handed over in a convention a recogniser adapted to
    #                                     (drop, additive), the declared / default one being keep
    mask_form: str | None = None        # ... or in a form one adapted to (rank3, heads_merged)
    fixed_sizes: dict = field(default_factory=dict)       # {"d_model": n} a module global fixes,
    #                                                       {"d_ff": n} a feed-forward's own constant,
    #                                                       {"num_heads": h} a head count the code fixes
    # worker side only: how the candidate is called
    list_input: bool = False            # forward(self, inputs) with q, k, v = inputs
    valid_lens: dict = field(default_factory=dict)        # {mask source: per_query} length masks
    bh_layout: bool = False             # sdpa on (batch*heads, T, d) tensors
    time_first: bool = False            # layers on (T, B, d) sequences (recognise/time_first);
    #                                     in the parent only ever a gap (completeness: batch)
    returns_table: bool = False         # a positional module returning the table, not x + PE
    table_from_ids: bool = False        # ... and its forward takes token ids (B, T), not x
    table_from_length: bool = False     # ... or the sequence length T (an int)
    table_no_input: bool = False        # ... or its forward takes no input at all

    def to_wire(self) -> dict:
        return asdict(self)

    @classmethod
    def from_wire(cls, raw: Any, comp, fixed: dict) -> Findings:
        """The findings a worker reported, reduced to what the parent understands."""
        raw = raw if isinstance(raw, dict) else {}
        out = cls(fixed=dict(fixed))
        for key in PARENT_FLAGS:
            if isinstance(raw.get(key), bool):
                setattr(out, key, raw[key])
        ratio = raw.get("d_ff_ratio")       # only changes the sizes drawn, never what is compared
        if isinstance(ratio, int) and not isinstance(ratio, bool) and 1 <= ratio <= 16:
            out.d_ff_ratio = ratio
        sizes = raw.get("fixed_sizes") if isinstance(raw.get("fixed_sizes"), dict) else {}
        width = sizes.get("d_model")        # a width the candidate's code fixes (recognise/global_width)
        if isinstance(width, int) and not isinstance(width, bool) and 8 <= width <= 4096:
            out.fixed_sizes = {"d_model": width}
        heads = sizes.get("num_heads")      # a head count the code fixes (recognise/fixed_heads)
        if isinstance(heads, int) and not isinstance(heads, bool) and 2 <= heads <= 32 and \
                out.fixed_sizes.get("d_model", heads) % heads == 0:      # global_heads: both fixed
            out.fixed_sizes["num_heads"] = heads
        hidden = sizes.get("d_ff")          # a feed-forward width the code fixes (recognise/ffn_width)
        if isinstance(hidden, int) and not isinstance(hidden, bool) and 1 <= hidden <= 8192 \
                and hidden * out.fixed_sizes.get("d_model", 1) <= MAX_FIXED_MATRIX:
            out.fixed_sizes["d_ff"] = hidden
        eps = raw.get("norm_eps")           # the candidate's own norm epsilon (recognise/norm_eps)
        if isinstance(eps, float) and 0.0 < eps < 0.1:
            out.norm_eps = eps
        if raw.get("norm_first") is True:   # only ever to pre-norm (recognise/norm_order)
            out.norm_first = True
        conv = raw.get("mask_convention")   # only ever a gap (completeness: mask_convention)
        if conv in ("drop", "additive"):
            out.mask_convention = conv
        if raw.get("mask_form") in ("rank3", "heads_merged"):     # only ever a gap, as conv
            out.mask_form = raw["mask_form"]
        kinds = raw.get("mask_kinds") if isinstance(raw.get("mask_kinds"), dict) else {}
        for m in comp.masks:
            got = kinds.get(m.name)
            if isinstance(got, list):
                allowed = tuple(k for k in got if k in m.kinds or k == "none")
                out.mask_kinds[m.name] = allowed or ("none",)
        return out
