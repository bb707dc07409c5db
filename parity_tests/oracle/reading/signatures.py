"""Signatures: match a candidate's constructor or forward to what the oracle passes, by the names
tutorials use (`d_model`/`embed_dim`/`hidden_size`, `num_heads`/`h`/`nhead`, `Q`/`query`, ...), falling
back to position for names it does not know."""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .name_words import meaning_of, names_hyper, second_meanings, snake
from .shared_bounds import shared_bound


class InterfaceError(Exception):
    """The candidate cannot be called or mapped as the component requires (exit status 2)."""


# ------------------------------------------------------------------------------------------------
# 1. signatures
# ------------------------------------------------------------------------------------------------
HYPER_ALIASES: dict[str, list[str]] = {
    "d_model": ["d_model", "embed_dim", "d_embed", "model_dim", "dim_model", "n_embd", "emb_dim",
                "embedding_dim", "embed_size", "dim", "d", "hidden_size", "hidden_dim", "size",
                "features", "normalized_shape", "num_features", "n_features", "d_hid", "model_size",
                "dmodel", "d_in", "input_dim", "in_dim", "width", "d_word_vec", "emb_size",
                "embedding_size", "dim_embed", "n_hidden", "num_hiddens", "n_dim", "n_embed",
                "n_embedding", "n_input", "n_inputs", "num_inputs"],
    "num_heads": ["num_heads", "n_heads", "nhead", "n_head", "heads", "h", "num_attention_heads",
                  "head_num", "nheads", "n_heads_", "num_head", "attention_heads", "nb_heads"],
    "d_ff": ["d_ff", "dim_feedforward", "ff_dim", "d_hidden", "hidden_dim", "ffn_dim", "d_inner",
             "filter_size", "ff_hidden", "hidden", "d_ffn", "intermediate_size", "dff",
             "feedforward_dim",
             "hidden_size", "d_ff_", "ff_size", "ffn_hidden", "inner_dim", "mlp_dim", "d_fc",
             "hidden_features", "d_inner_hid", "expansion_dim", "dim_ff", "ffn_hidden_dim",
             "forward_expansion_dim", "ff_dim_", "ffn_num_hiddens", "ffn_hidden_size",
             "pf_dim"],
    "eps": ["eps", "epsilon", "layer_norm_eps", "norm_eps", "ln_eps", "layernorm_eps", "variance_epsilon"],
    "max_len": ["max_len", "max_seq_len", "max_seq_length", "max_length", "seq_len", "n_position",
                "max_position", "block_size", "maxlen", "num_positions", "max_positions",
                "max_position_embeddings", "max_sequence_length", "context_length", "length",
                "n_positions", "seq_length", "position", "positions", "max_pos", "len", "n_ctx"],
    "num_layers": ["num_layers", "n_layers", "N", "n", "n_layer", "layers", "depth", "num_blocks",
                   "nlayers", "num_layer", "n_blocks", "number_of_layers"],
    "num_encoder_layers": ["num_encoder_layers", "n_encoder_layers", "enc_layers", "num_enc_layers",
                           "encoder_layers", "n_enc", "num_encoder_blocks", "N_enc", "n_encoder_layer",
                           "num_encoder_layer"],
    "num_decoder_layers": ["num_decoder_layers", "n_decoder_layers", "dec_layers", "num_dec_layers",
                           "decoder_layers", "n_dec", "num_decoder_blocks", "N_dec", "n_decoder_layer",
                           "num_decoder_layer"],
    "src_vocab": ["src_vocab_size", "src_vocab", "input_vocab_size", "source_vocab_size",
                  "enc_vocab_size", "vocab_src", "n_src_vocab", "src_vocab_len", "src_ntoken",
                  "encoder_vocab_size", "src_vocab_sz", "in_vocab", "input_vocab", "src_n_vocab"],
    "tgt_vocab": ["tgt_vocab_size", "tgt_vocab", "trg_vocab_size", "trg_vocab", "output_vocab_size",
                  "target_vocab_size", "dec_vocab_size", "n_trg_vocab", "n_tgt_vocab", "tgt_vocab_len",
                  "tgt_ntoken", "decoder_vocab_size", "tgt_vocab_sz", "out_vocab", "output_vocab",
                  "tgt_n_vocab"],
    "vocab_size": ["vocab_size", "vocab", "n_vocab", "num_tokens", "ntoken", "ntokens", "vocab_len"],
    "dropout": ["dropout", "p", "drop", "dropout_rate", "drop_prob", "dropout_p", "p_drop", "prob",
                "drop_rate", "dropout_prob", "attn_dropout", "attention_dropout", "dropout_ratio",
                "pdrop", "resid_pdrop", "attn_pdrop", "activation_dropout", "dropout_attn"],
    "activation": ["activation", "act", "activation_fn", "activation_function", "act_fn",
                   "nonlinearity", "act_layer", "hidden_act"],
    "norm_first": ["norm_first", "pre_norm", "prenorm", "pre_ln", "normalize_before", "pre_layer_norm"],
    "pad_id": ["pad_idx", "pad_id", "padding_idx", "src_pad_idx", "pad_token_id", "pad",
               "pad_index", "pad_token", "src_pad_id", "padding_id"],
    "tgt_pad_id": ["trg_pad_idx", "tgt_pad_idx", "tgt_pad_id", "trg_pad_id"],
    "batch_first": ["batch_first"],
    "bias": ["bias", "use_bias", "qkv_bias"],
    "dtype": ["dtype"],
}
"""Constructor/factory argument names per hyperparameter. Earlier names in a list win; lists are
consulted in the order a component asks for them, so `hidden_dim` means d_ff for a feed-forward
block (which asks for d_ff first) and d_model for an attention block (which has no d_ff)."""

CALL_FLAGS: dict[str, Any] = {
    # names a forward may take that change what it returns; set so the oracle sees everything
    "need_weights": True, "average_attn_weights": False, "return_attention": True,
    "return_attn": True, "return_weights": True, "output_attentions": True,
    "return_attention_weights": True, "return_attn_weights": True, "is_causal": False,
    "dropout_p": 0.0, "training": False, "train": False,
}
TRAINING_FLAGS = ("training", "train", "is_training", "is_train", "train_mode", "training_mode",
                  "in_training")   # the train mode (sandbox/modes) passes True; recognise/training_switch
# constructor flags that make attention (or a self-attention layer) causal when True: built False
# for the main runs, True in the causal_ctor mode (sandbox/modes), a required one too (recognise/flags)
CAUSAL_CTOR = ("causal", "is_causal", "use_causal_mask", "causal_mask", "mask_future", "masked",
               "autoregressive", "unidirectional")
# in a mask's aliases: no name matched, the one optional `*mask*` argument takes it (mask_word)
ANY_MASK = "*mask*"
CAUSAL_WORDS_CTOR = ("causal", "autoregressive", "unidirectional")
FUTURE_WORDS = ("future", "back", "ahead", "subsequent", "later", "forward", "look")


def is_causal_flag(name: str) -> bool:
    """A constructor flag that makes attention causal: CAUSAL_CTOR's names, or one in words no list
    holds (`causal_attention`, `mask_back_connections`, `mask_future_tokens`): a causal word, or a
    mask word with a word for later positions."""
    n = snake(name)
    words = [w for w in n.split("_") if w]
    return n in CAUSAL_CTOR or any(w in CAUSAL_WORDS_CTOR for w in words) or \
        (any(w in ("mask", "masked", "masking") for w in words)
         and any(w in FUTURE_WORDS for w in words))


# a mask switch (`use_mask=False`) means the causal mask only where the forward takes no mask at all
MASK_CTOR = ("use_mask", "is_mask", "mask", "apply_mask", "with_mask", "masking", "do_mask")


@dataclass(frozen=True)
class PerCall:
    """A constant worked out from each call's inputs (the head width of sdpa's q)."""

    value: Callable[[dict], Any]
    text: str = ""

    def __repr__(self) -> str:
        return self.text or "per call"


@dataclass
class Binding:
    """How to call a signature: (argument name or None for positional, source) pairs in order."""

    positional: list[str] = field(default_factory=list)         # sources passed by position
    keywords: dict[str, str] = field(default_factory=dict)      # arg name -> source
    constants: dict[str, Any] = field(default_factory=dict)     # arg name -> fixed value
    arg_of: dict[str, str] = field(default_factory=dict)        # source -> arg name
    unbound: list[str] = field(default_factory=list)            # sources the signature had no room for
    params: list[str] = field(default_factory=list)             # leftover args (parameters of a function)
    guessed: dict[str, str] = field(default_factory=dict)       # arg name -> meaning it was given by
    by_word: dict[str, str] = field(default_factory=dict)       # arg name -> mask source (ANY_MASK)
    nested: dict[str, dict] = field(default_factory=dict)       # dict-of-arrays args: {arg: key tree}
    root: str = ""                                              # the one dict arg holding every weight

    def call(self, fn: Callable, values: dict[str, Any], extra: dict[str, Any] | None = None):
        args = [values[s] for s in self.positional]
        kwargs = {a: values[s] for a, s in self.keywords.items()}
        kwargs.update({a: (v.value(values) if isinstance(v, PerCall) else v)
                       for a, v in self.constants.items()})
        if extra and self.root:
            kwargs[self.root] = nest({f"{self.root}.{k}": v for k, v in extra.items()},
                                     self.nested)[self.root]
        elif extra:
            kwargs.update(nest(extra, self.nested) if self.nested else extra)
        from .main_sizes import before_call  # sizes a __main__ block set, per instance
        before_call(fn)
        return fn(*args, **kwargs)

    def describe(self) -> str:
        parts = [f"{s} (position {i})" for i, s in enumerate(self.positional)]
        parts += [f"{s} as {a}=" for a, s in self.keywords.items()]
        parts += [f"{a}={v!r}" for a, v in self.constants.items()]
        return ", ".join(parts) or "(no arguments)"


def nest(flat: dict[str, Any], nested: dict[str, dict]) -> dict[str, Any]:
    """Values keyed by leaf path (`attn.c_attn.w`) handed over as the nested dicts the arguments
    in `nested` are (`attn={"c_attn": {"w": ...}}`); other keys pass as they are."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        head = key.split(".", 1)[0]
        if head not in nested or "." not in key:
            out[key] = value
            continue
        parts = key.split(".")
        d = out.setdefault(head, {})
        for part in parts[1:-1]:
            d = d.setdefault(part, {})
        d[parts[-1]] = value
    return out


def signature_of(fn: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _compatible(default: Any, value: Any) -> bool:
    """Pass `value` over a parameter's default only when it is the same sort of thing (a float for a
    float, a bool for a bool, a str for a str): a `dropout=None` that expects a module keeps None."""
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, (int, float)) and isinstance(value, (int, float)):
        return True
    return isinstance(default, str) and isinstance(value, str)


def _norm(name: str) -> str:
    return snake(name)              # camelCase read as snake_case: `numHeads` is num_heads


def bind(fn: Callable, sources: Sequence[tuple[str, Sequence[str], bool]], *,
         constants: dict[str, Any] | None = None, flags: dict[str, Any] | None = None,
         fallback_positional: bool = True, keep_params: bool = False, what: str = "call",
         meanings: dict[str, Any] | None = None) -> Binding:
    """Match fn's parameters to `sources` [(source name, aliases, required)].

    Each named parameter takes the first source whose alias list holds its name (case-insensitive);
    `constants` {alias-list name -> value} are passed to parameters with those names (and only when
    the signature has them); `flags` likewise (CALL_FLAGS). A required parameter the names did not
    settle takes the next unbound source in order (when fallback_positional); with keep_params the
    rest are collected as `.params` (a function's weights) instead of being an error.
    """
    sig = signature_of(fn)
    b = Binding()
    srcs = list(sources)
    if sig is None:  # builtins and C functions: everything by position
        b.positional = [s for s, _, _ in srcs]
        b.arg_of = {s: f"#{i}" for i, s in enumerate(b.positional)}
        return b
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
    alias_of = {s: [_norm(a) for a in al] for s, al, _ in srcs}
    taken: set[str] = set()
    chosen: dict[str, str] = {}           # param name -> source
    # pass 1: names. A name only one source can mean binds first (`filter_size` is d_ff alone, so
    # `hidden_size` beside it, which either could mean, is then d_model); then each other name takes
    # the first source (in the order the component asks) it can mean that is still free
    given = {_norm(k) for k in (constants or {})}     # a value given under the exact name wins
    named = [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
             and _norm(p.name) not in given]
    claims = {p.name: [s for s, _, _ in srcs
                       if _norm(p.name) in alias_of[s] or names_hyper(s, p.name)] for p in named}
    claims = {n: c + [s for s in second_meanings(n) if c and s in alias_of and s not in c]
              for n, c in claims.items()}          # `hidden` beside `feed_forward_hidden`
    for only_one in (True, False):
        for p in named:
            if p.name in chosen or (only_one and len(claims[p.name]) != 1):
                continue
            s = next((s for s in claims[p.name] if s not in taken), None)
            s = s if s is not None or only_one else shared_bound(claims[p.name], taken, p.default)
            if s is not None:
                chosen[p.name] = s
                taken.add(s)
    # pass 2: positions for required parameters left over; flags and constants
    const_vals = {}
    for key, value in (constants or {}).items():
        const_vals.update({_norm(a): value for a in HYPER_ALIASES.get(key, [key])})
    flag_vals = {_norm(k): v for k, v in (flags or {}).items()}
    positional_only_seen = False
    leftovers: list[str] = []
    for p in params:
        if p.kind == p.VAR_KEYWORD or p.name in chosen:
            continue
        if p.kind == p.VAR_POSITIONAL:
            positional_only_seen = True
            continue
        required = p.default is inspect.Parameter.empty
        for table in (flag_vals, const_vals):
            if _norm(p.name) in table and (required or _compatible(p.default, table[_norm(p.name)])):
                b.constants[p.name] = table[_norm(p.name)]
                break
        else:
            table = None
        if table is not None:
            continue
        if required and meanings:
            k = meaning_of(p.name)
            if k in meanings:                 # dropout/cache None, d_k the head width, ...
                b.constants[p.name] = meanings[k]
                b.guessed[p.name] = k
                continue
        if keep_params and required:
            leftovers.append(p.name)
            continue
        if required and fallback_positional:
            nxt = next((s for s, _, _ in srcs if s not in taken), None)
            if nxt is None:
                raise InterfaceError(f"{what}: parameter {p.name!r} is required, but the oracle has "
                                     f"nothing left to pass (it passes: "
                                     f"{', '.join(s for s, _, _ in srcs) or 'nothing'})")
            chosen[p.name] = nxt
            taken.add(nxt)
    for s in [s for s, _, _ in srcs if s not in taken and ANY_MASK in alias_of[s]]:
        free = [p.name for p in params if p.name not in chosen and p.name not in b.constants
                and p.default is None and "mask" in _norm(p.name).split("_")]
        if len(free) == 1:                # (pad_attn_mask=None: recognise/mask_word says so)
            chosen[free[0]], b.by_word[free[0]] = s, s
            taken.add(s)
    b.params = leftovers
    # build the call: positional up to the first keyword-only or skipped parameter, then keywords
    positional_ok = True
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in chosen and positional_ok and p.kind != p.KEYWORD_ONLY:
            b.positional.append(chosen[p.name])
        elif p.name in chosen:
            b.keywords[p.name] = chosen[p.name]
        elif p.name in leftovers:
            positional_ok = False
        else:
            positional_ok = False
    b.arg_of = {s: a for a, s in chosen.items()}
    if positional_only_seen:  # *args: whatever sources are left go after, by position
        rest = [s for s, _, _ in srcs if s not in taken]
        if b.keywords:
            pass
        else:
            b.positional += rest
            taken.update(rest)
            b.arg_of.update({s: f"*args[{i}]" for i, s in enumerate(rest)})
    b.unbound = [s for s, _, _ in srcs if s not in taken]
    missing = [s for s, _, req in srcs if req and s in b.unbound]
    if missing:
        raise InterfaceError(f"{what}: the signature {sig} has no place for {', '.join(missing)}")
    return b
