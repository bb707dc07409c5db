"""A misspelt TransformerConfig field is named, with the field it probably meant."""
from __future__ import annotations

import pickle

import pytest

import npformer as nf


@pytest.mark.parametrize("build", [
    lambda: nf.TransformerConfig(dmodel=16),
    lambda: nf.TransformerConfig(d_model=16, num_heads=2).replace(dmodel=8),
    lambda: nf.bert_config(dmodel=16),
])
def test_constructor_names_the_typo_and_the_close_field(build):
    with pytest.raises(TypeError) as e:
        build()
    msg = str(e.value)
    assert "'dmodel'" in msg and "did you mean 'd_model'" in msg and "num_heads" in msg


def test_from_dict_names_the_close_field():
    with pytest.raises(ValueError, match=r"'d_modle'.*did you mean 'd_model'"):
        nf.TransformerConfig.from_dict({"d_modle": 8})


def test_a_name_close_to_nothing_gets_the_list_only():
    with pytest.raises(TypeError) as e:
        nf.TransformerConfig(zzzz=1)
    assert "did you mean" not in str(e.value) and "'d_model'" in str(e.value)


def test_valid_configs_still_build_copy_and_pickle():
    c = nf.TransformerConfig(32, num_heads=4, d_ff=8)                  # a positional field too
    assert (c.d_model, c.num_heads, c.d_ff) == (32, 4, 8)
    assert c.replace(d_ff=16).d_ff == 16
    assert pickle.loads(pickle.dumps(c)) == c
    assert nf.TransformerConfig.from_dict(c.to_dict()) == c


@pytest.mark.parametrize("given", [None, [("d_model", 8)], "d_model=8", 8])
def test_from_dict_refuses_what_is_not_a_dict_by_its_type(given):
    with pytest.raises(TypeError, match=r"TransformerConfig\.from_dict: expected a dict of fields, got "
                                        + type(given).__name__):
        nf.TransformerConfig.from_dict(given)


@pytest.mark.parametrize("eps", [float("inf"), True, float("nan"), 0.0])
def test_layer_norm_eps_must_be_a_positive_finite_number(eps):
    with pytest.raises(ValueError, match=r"TransformerConfig\.layer_norm_eps: expected a positive finite "
                                         r"float, got " + repr(eps).replace("(", r"\(")):
        nf.TransformerConfig(layer_norm_eps=eps)
    assert nf.TransformerConfig(layer_norm_eps=1e-12).layer_norm_eps == 1e-12
