"""How the oracle finds its way around code it has never seen: names of arguments and parameters.

Three jobs:

1. `bind(...)` (signatures.py): match a candidate's signature (constructor or forward) to what the
   oracle has to pass, by the names tutorials use (`d_model`/`embed_dim`/`hidden_size`,
   `num_heads`/`h`/`nhead`, `Q`/`query`, `src_mask`/`tgt_mask`, ...), then by the words of a name
   no list holds (name_words.py: `feedforward_dimension`, `tgt_pad_mask`), falling back to position
   for names it does not know.
2. `resolve(...)` (resolver.py, with the trees in trees.py): map every reference parameter
   (npformer's `state_dict` names, such as `self_attn.q_proj.weight`) to where the candidate keeps
   it (`attention.W_q.weight`, `sublayer.0.norm.a_2`, a slice of `in_proj_weight`, a bare `W1`
   argument, ...). Names first, then, inside one attention or feed-forward block, registration order
   for what names did not settle. An explicit map (`--map REF=CAND`, `REF=CAND.T`, `REF=-` for "the
   candidate has none") wins over both; a map key may also be a block
   (`--map self_attn=my_attention`).
3. The layout of each weight: the reference stores Linear weights as (out_features, in_features)
   (`y = x @ W.T + b`, as torch.nn.Linear). A candidate matrix stored the other way round is
   transposed automatically when its shape says so; a square bare matrix is ambiguous and follows
   `--weight-layout` (default out_in).
"""
from __future__ import annotations

from .name_words import names_d_ff, names_hyper, names_num_heads  # noqa: F401
from .resolver import Entry, Resolver, Space, resolve  # noqa: F401

# The implementation lives in four files; this module keeps the names other modules import.
from .signatures import (  # noqa: F401
                         CALL_FLAGS,
                         HYPER_ALIASES,
                         Binding,
                         InterfaceError,
                         bind,
                         signature_of,
)
from .trees import (  # noqa: F401
                         ATTN_CROSS,
                         ATTN_SELF,
                         EMBED_WEIGHT,
                         FFN_NAMES,
                         LEAVES,
                         LINEAR_BIAS,
                         LINEAR_WEIGHT,
                         NORM_BIAS,
                         NORM_WEIGHT,
                         PACKED_QKV,
                         PACKED_RAW,
                         TREES,
                         Child,
)
