"""Interface recognisers: each a short file that teaches the adapter one way people write code.

Registered here, in one place, by the hook point that consults them:

CONSTRUCTOR   a value for a REQUIRED constructor argument no hyperparameter name matched
              (derived: head width, temperature, device; also an OPTIONAL head width with a
              number for its default beside a head count; configs: config objects;
              submodules: sub-modules built from the same file's classes; linear_parts: linear
              layers handed in by name (qkv_fc, fc1); arg_meaning:
              output widths, lengths, dtypes by their name; flags: required switches such as
              log_attention_weights get False; shape_list: a norm's list of normalised
              dimensions, Norm(parameters_shape=[d_model]); width_multiplier: a feed-forward
              width given as a multiple, forward_expansion = d_ff / d_model); and for OPTIONAL
              ones too: an argument the constructor hands to a dropout, nn.Dropout(p_d), gets 0,
              also when it defaults to None (dropout_args); a whole model class taking only its
              parts, built through the function of its file that returns it (model_factory)
SIZES         a feed-forward width fixed by the code, 4 * d_model (ffn_width); a model width fixed
              by a module-level global, n_embd = 384, also beside a hidden width the code fixes
              (global_width); a head count fixed by the code, H = 8 beside a constructor taking
              only d_model (fixed_heads); a norm epsilon fixed by the code, LayerNorm(d)
              defaulting to eps=1e-12 (norm_eps); a layer that
              normalises before each sublayer with no norm_first argument, found by behaviour
              (norm_order); a whole model using one vocabulary table for both embeddings and/or
              the output projection, as the paper does (vocab_tables); a whole model with a
              final norm after each stack (final_norms)
LAZY          lazily created parameters, materialised by a first call (lazy)
FORWARD       how the forward takes its inputs: one list [q, k, v] (list_input); length-style masks
              (valid_lens); (batch*heads, T, d) layouts for sdpa (bh_layout); masks taken in parts
              named for what they are, key padding and causal (mask_parts), the padding part's
              axes (part_layout) and convention (part_convention); time-first (T, B, d) sequences (time_first); a
              decoder-only layer checked as decoder_layer, named as such (decoder_only); key and
              value taken as one argument, forward(x, kv, mask) (shared_kv); a layer taking its
              inputs under the attention's role names, forward(value, key, query, mask)
              (layer_role_args); a mask argument used only as a truth value, forward(x,
              mask=True), a causal switch passed False (mask_switch); a training switch,
              forward(x, is_training=True), passed False (training_switch)
RESOLVE       where parameters live: per-head weight lists (per_head); (1, n) biases (row_bias);
              norms inside the attention / feed-forward block (inner_norm);
              heads on axes of their own, (d, H, d_head) einsum weights (head_axes);
              a module only wrapping the block, self.mha = nn.MultiheadAttention (wrapper);
              attention matrices no name placed, their roles probed (roles); a packed q|k|v
              no name placed, found by its (3D, D) shape (packed_shape); a cross-attention's
              packed k|v beside a query of its own, found by its (2D, D) shape (packed_kv); a candidate with no
              weights at all, said plainly (weightless); a gated feed-forward (GLU, SwiGLU),
              said plainly instead of a weight blamed (gated_ffn); attention whose every head is
              d_model wide, (heads * d_model, d_model) projections, said plainly (wide_heads)
BACKWARD      parameter gradients under names of their own, found by behaviour (grad_behaviour);
              input gradients a backward returning None kept on the object (kept_input_grads);
              input gradients returned grouped in one tuple ahead of the rest (grouped_input_grads)
MASKS         attention that masks the future itself, no mask argument (builtin_causal, on drawn
              weights written through the slots, not the constructor's);
              masks handed to torch.nn.MultiheadAttention in torch's form (torch_mha_mask);
              masks spread over a merged batch*heads axis (merged_mask); a mask argument taken as a key
              padding (batch, Tk) or one (Tq, Tk) mask for the batch, under a general name (mask_forms); a
              whole model's masks as key paddings (batch, length), Hugging Face's attention_mask
              (model_mask_forms)
CALLS         plain functions: one sequence at a time, (in, out) argument matrices, masking the
              future themselves (function_calls); dict-of-arrays arguments (dict_args); NumPy
              module classes written for one (T, d) sequence (one_sequence_modules)
OUTPUT        positional modules that return the table instead of x + PE, or take no input at
              all, or the sequence length, and return it (pe_table); a learned (L, d) table,
              given the sinusoid (learned_table); a frozen torch parameter no reference
              parameter matches, kept as the candidate computes it (frozen)
ABSENT        parameters the candidate provably has none of (absent); others are interface errors
INSTANCE      every freshly built instance: attention matrices no name placed, their roles probed
              (roles); a packed k|v holding the values first (packed_kv); a packed q|k|v whose
              rows are grouped by head (qkv_groups); square
              matrices used as x @ W, read as (in, out) (layout)

This file is the only way in: code outside recognise/ imports nothing but this package's own names
(run_probes, reads_x_at_w, constructor_value, hooks(kind), MISSING, BuildContext), never a
recogniser module; parity_tests/test_oracle_code_structure.py enforces it.
"""
from __future__ import annotations

from . import (
    absent,
    activation_class_names,
    add_norm_block,
    additive_mask,
    affine_free_norm,
    arg_meaning,
    bh_layout,
    builder_files,
    builtin_causal,
    class_layout,
    config_rates,
    configs,
    decoder_only,
    derived,
    dict_args,
    dropout_args,
    encoder_only,
    ffn_layout,
    ffn_width,
    final_norms,
    fixed_heads,
    flags,
    frozen,
    function_calls,
    gated_ffn,
    global_dropout,
    global_width,
    grad_behaviour,
    grouped_input_grads,
    head_axes,
    hidden_mask,
    inner_norm,
    kept_input_grads,
    layer_role_args,
    layout,
    lazy,
    learned_table,
    linear_parts,
    list_input,
    lone_width,
    mask_forms,
    mask_parts,
    mask_rank,
    mask_switch,
    mask_word,
    meaning,
    merged_mask,
    model_factory,
    model_mask_forms,
    norm_eps,
    norm_order,
    one_sequence_modules,
    packed_kv,
    packed_shape,
    part_convention,
    part_layout,
    pe_table,
    per_head,
    qkv_groups,
    roles,
    row_bias,
    shape_list,
    shared_kv,
    shared_norm,
    structure,
    submodules,
    time_first,
    torch_mha_mask,
    training_switch,
    valid_lens,
    vocab_tables,
    weightless,
    wide_heads,
    width_multiplier,
    wrapper,
)
from .base import MISSING, BuildContext, ConstructorRecogniser, Hooks, Probe  # noqa: F401

CONSTRUCTOR: tuple[ConstructorRecogniser, ...] = (configs.value, width_multiplier.value, submodules.value,
                                                  linear_parts.value,
                                                  derived.value, meaning.value, arg_meaning.value, flags.value,
                                                  shape_list.value)
PROBES: tuple[Probe, ...] = (mask_word.probe, function_calls.probe, lone_width.probe, global_width.probe,
                             fixed_heads.probe, bh_layout.probe, pe_table.probe, lazy.probe,
                             one_sequence_modules.probe, part_layout.probe,
                             builtin_causal.probe, head_axes.probe, ffn_width.probe,
                             norm_eps.probe, torch_mha_mask.probe, class_layout.probe, mask_rank.probe,
                             mask_forms.probe, model_mask_forms.probe,
                             merged_mask.probe, hidden_mask.probe, additive_mask.probe, time_first.probe,
                             mask_parts.probe, part_convention.probe, norm_order.probe,
                             vocab_tables.probe, learned_table.probe,
                             final_norms.probe)  # when the adapter is prepared
# INSTANCE (roles, layout) runs through reads_x_at_w below; the other kinds are consulted where
# their hook sits (adapters.py, execute.py, resolver.py, slots.py, adapter_hooks.py), through hooks(kind)

def unclaimed_message(kind: str, unclaimed: list, shapes: dict) -> str | None:
    """Why left-over parameters have no counterpart, when a recogniser knows: a norm inside the
    block (add_norm_block), a gate (gated_ffn), heads each d_model wide (wide_heads); None for the
    generic message."""
    return add_norm_block.message(kind, unclaimed, shapes) or gated_ffn.unclaimed(kind, unclaimed, shapes) \
        or wide_heads.message(kind, unclaimed, shapes)


def forward_switches(adapter, fn, given: dict | None) -> dict | None:
    """naming.bind's constants with the forward's switches passed False: a causal switch under a
    mask's name (mask_switch), a training switch (training_switch)."""
    return training_switch.constants(adapter, fn, mask_switch.constants(adapter, fn, given))


KINDS: dict[str, Hooks] = {h.kind: h for h in (
    Hooks("constructor", config_arg_names=configs.CONFIG_ARG_NAMES, config_flags=configs.config_flags,
          config_rates=config_rates.held_rates,
          config_bag=configs.ConfigBag,
          dropout_rates=dropout_args.rates, global_dropout_rates=global_dropout.zero_rates,
          none_dropout_rates=dropout_args.none_rates,
          optional_head_widths=derived.optional_head_widths,
          input_widths=derived.input_widths, causal_defaults=flags.causal_defaults,
          model_factory=model_factory.factory,
          model_factory_note=model_factory.note, builder_twin_widths=builder_files.twin_widths,
          model_part_named=model_factory.part_named, model_parts_message=model_factory.parts_message,
          class_spelled=activation_class_names.class_spelled,
          class_looked_up=activation_class_names.looked_up),
    Hooks("instance", ffn_layout_applies=ffn_layout.applies, ffn_layout_probe=ffn_layout.probe,
          ffn_layout_switch=ffn_layout.switch),
    Hooks("forward", list_source=list_input.SOURCE, list_arg=list_input.detect, list_sources=list_input.sources,
          list_order=list_input.unpacked_order,
          lens_names=valid_lens.NAMES, lens_kinds=valid_lens.KINDS, lens_detect=valid_lens.detect,
          lens_axes=valid_lens.axes, lens_mask=valid_lens.from_keep, key_order=valid_lens.key_order,
          take_keys=valid_lens.take, untake_keys=valid_lens.untake, untake_last_keys=valid_lens.untake_last,
          untake_key_grads=valid_lens.untake_grads, bh_merge=bh_layout.merge, bh_split=bh_layout.split,
          mask_parts=mask_parts.meanings, decoder_only=decoder_only.decoder_only,
          shared_kv=shared_kv.bind, layer_role_args=layer_role_args.bind, switches=forward_switches),
    Hooks("mask", torch_form=torch_mha_mask.torch_form, call_mask=mask_forms.as_call_mask),
    Hooks("call", squeeze_input=function_calls.squeeze_input, squeeze_mask=function_calls.squeeze_mask,
          unsqueeze=function_calls.unsqueeze, dict_trees=dict_args.trees, dict_leaves=dict_args.leaves,
          dict_note=dict_args.note),
    Hooks("output", with_token_ids=pe_table.with_token_ids, add_input=pe_table.add_input,
          no_input_table=pe_table.no_input_table,
          no_grad=pe_table.NO_GRAD, learned_table=learned_table.place, frozen=frozen.place),
    Hooks("lazy", pending=lazy.pending, first_call=lazy.first_call, drop_activations=lazy.drop_activations),
    Hooks("backward", snapshot=grad_behaviour.snapshot, param_grads=grad_behaviour.param_grads,
          fd_check=grad_behaviour.fd_check, kept_input_grads=kept_input_grads.read,
          ungroup_inputs=grouped_input_grads.ungroup, one_upstream=one_sequence_modules.one_upstream,
          with_batch_axis=one_sequence_modules.with_batch_axis),
    Hooks("resolve", unit_axes_shape=row_bias.unit_axes_shape, head_layout=head_axes.layout,
          arrange_heads=head_axes.arrange, unarrange_heads=head_axes.unarrange, per_head=per_head.resolve,
          structure_block=structure.block, structure_norms=structure.norms, inner_norm=inner_norm.resolve,
          wrapper=wrapper.resolve, class_layout=class_layout.apply, unclaimed_message=unclaimed_message,
          gated_missing=gated_ffn.missing,
          packed_by_shape=packed_shape.resolve, packed_kv=packed_kv.resolve, weightless_message=weightless.message,
          affine_free_message=affine_free_norm.message, shared_norm_message=shared_norm.message,
          encoder_only_message=encoder_only.message,
          vocab_tables=vocab_tables.place),
    Hooks("absent", reason=absent.reason),
)}


def hooks(kind: str) -> Hooks:
    """The registered entries of one kind; a clear error for a kind the registry does not have."""
    if kind not in KINDS:
        raise KeyError(f"recognise has no hook kind {kind!r}; expected one of {sorted(KINDS)}")
    return KINDS[kind]


def run_probes(adapter) -> None:
    """Every registered probe, in order, on a freshly prepared adapter (after the notes loading
    left: a stand-in for a package not installed, ../standins.py)."""
    adapter.notes.extend(n for n in getattr(adapter.loaded, "notes", ()) if n not in adapter.notes)
    for probe in PROBES:
        probe(adapter)


def reads_x_at_w(adapter, inst, case) -> bool:
    """Every freshly built instance: attention matrices no name placed get their probed roles
    (roles), a packed q|k|v its head-grouped rows (qkv_groups), then, once, whether its square
    matrices are used as x @ W (layout); True when the instance must be built again with
    --weight-layout in_out."""
    roles.place(adapter, inst)
    packed_kv.place(adapter, inst, case)
    qkv_groups.place(adapter, inst, case)
    return layout.applies(adapter, inst) and layout.probe(adapter, inst, case)


def constructor_value(ctx: BuildContext, param, values: dict):
    """The first recogniser's value for a required constructor argument, or MISSING."""
    for fn in CONSTRUCTOR:
        v = fn(ctx, param, values)
        if v is not MISSING:
            return v
    return MISSING
