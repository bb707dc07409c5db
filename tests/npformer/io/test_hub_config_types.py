"""A config.json value of the wrong JSON type is refused by npformer.io.hub_checks.check_hf_config
with one ValueError naming the file, the key, what was expected and what came; the loader no
longer turns every TypeError / KeyError / AttributeError into a bad-file message, so a bug in the
loader surfaces as itself."""
import json

import pytest

import npformer as nf
from npformer.io import hub
from npformer.models.config import gpt2_config


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    c = gpt2_config(vocab_size=20, max_len=16, d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1)
    path = tmp_path_factory.mktemp("hub") / "gpt2"
    hub.save_pretrained(nf.CausalLM(c, seed=0), path)
    return path


def _edited(folder, tmp_path, **kw):
    out = tmp_path / "edited"
    out.mkdir()
    (out / "model.safetensors").write_bytes((folder / "model.safetensors").read_bytes())
    cfg = json.loads((folder / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**cfg, **kw}))
    return out


@pytest.mark.parametrize("key,value,needle", [
    ("n_embd", "8", r"n_embd: expected an integer, got str '8'"),
    ("n_head", 2.0, r"n_head: expected an integer, got float 2\.0"),
    ("n_inner", [16], r"n_inner: expected an integer or null, got list \[16\]"),
    ("resid_pdrop", "0.1", r"resid_pdrop: expected a finite number, got str '0\.1'"),
    ("tie_word_embeddings", "yes", r"tie_word_embeddings: expected true, false or null, got str"),
    ("architectures", "GPT2LMHeadModel", r"architectures: expected a list of class names"),
    ("activation_function", 3, r"activation_function: expected a string, got int 3"),
    ("id2label", ["a", "b"], r"id2label: expected an object"),
])
def test_a_value_of_the_wrong_type_is_named_by_its_key(folder, tmp_path, key, value, needle):
    bad = _edited(folder, tmp_path, **{key: value})
    with pytest.raises(ValueError, match=r"config\.json: " + needle) as e:
        hub.from_pretrained(bad)
    assert str(bad) in str(e.value)


def test_a_bug_in_the_loader_is_not_reported_as_a_bad_file(folder, monkeypatch):
    def broken(*a, **k):
        raise TypeError("unsupported operand type(s) for +: 'int' and 'str'")
    monkeypatch.setattr(hub, "config_from_hf", broken)
    with pytest.raises(TypeError, match="unsupported operand"):
        hub.pretrained_parts(folder)
