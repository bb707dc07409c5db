"""hub.from_pretrained(folder, kind="bert_cls") on a BERT folder that has no classifier (a masked-LM,
pre-training or bare BertModel folder, what bert-base-uncased is): the encoder is the folder's, the
missing head is drawn from the seed and named in a warning, and the model equals transformers'
BertForSequenceClassification given the same head (float64)."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.io import hub
from tests.npformer.io.tiny_folders import bert_folder

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers", reason="the [hf] extra is not installed")
pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")

HEAD = ["classifier.weight", "classifier.bias"]
POOLER = ["bert.pooler.dense.weight", "bert.pooler.dense.bias"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    out = {}
    for head in ("BertForMaskedLM", "BertForPreTraining", "BertModel",
                 "BertForSequenceClassification"):
        out[head] = bert_folder(tmp_path_factory.mktemp(head), head=head, num_labels=4)
    return out


def load(folder, **kw):
    with pytest.warns(UserWarning, match="newly initialized") as rec:
        model = hub.from_pretrained(folder, "float64", kind="bert_cls", **kw)
    return model, str(rec[0].message)


@pytest.mark.parametrize("head, new", [("BertForMaskedLM", POOLER + HEAD),
                                       ("BertForPreTraining", HEAD), ("BertModel", HEAD)])
def test_missing_head_is_drawn_and_named(folders, head, new):
    model, message = load(folders[head], num_labels=3, seed=5)
    assert type(model).__name__ == "BertForSequenceClassification"
    assert model.new_weights == new and model.config.num_classes == 3
    for name in new:
        assert name in message
    for name in set(POOLER + HEAD) - set(new):                      # kept, never named new
        assert name not in message
    c = model.classifier
    assert c.weight.data.shape == (3, 32) and not c.bias.data.any()
    assert 0.01 < c.weight.data.std() < 0.04                         # normal(0, 0.02)


def test_the_encoder_and_a_kept_pooler_are_the_folders(folders):
    model, _ = load(folders["BertForPreTraining"], num_labels=3)
    hf = transformers.BertForPreTraining.from_pretrained(str(folders["BertForPreTraining"]))
    ref = {k: v.double().numpy() for k, v in hf.state_dict().items()}
    ours = hub.to_hf_state_dict(model)
    shared = [k for k in ours if not k.startswith("classifier.")]
    assert len(shared) > 30
    for k in shared:
        np.testing.assert_array_equal(ours[k], ref[k], err_msg=k)


def test_seed_fixes_the_head_and_the_twins_agree(folders):
    folder = folders["BertForMaskedLM"]
    a, _ = load(folder, num_labels=3, seed=1)
    b, _ = load(folder, num_labels=3, seed=1)
    c, _ = load(folder, num_labels=3, seed=2)
    np.testing.assert_array_equal(a.classifier.weight.data, b.classifier.weight.data)
    np.testing.assert_array_equal(a.bert.pooler.dense.weight.data, b.bert.pooler.dense.weight.data)
    assert not np.array_equal(a.classifier.weight.data, c.classifier.weight.data)
    from torchformer.io import hub as tf_hub
    with pytest.warns(UserWarning, match="classifier.weight"):
        t = tf_hub.from_pretrained(folder, "float64", kind="bert_cls", num_labels=3, seed=1)
    for k, v in a.state_dict().items():
        np.testing.assert_array_equal(t.state_dict()[k].numpy(), v, err_msg=k)


def test_equals_transformers_classifier_with_the_same_head(folders):
    """transformers builds the same classifier from the folder; given our drawn head, the logits of
    padded input agree in float64."""
    folder = folders["BertForMaskedLM"]
    ours, _ = load(folder, num_labels=3, seed=0)
    ref = transformers.BertForSequenceClassification.from_pretrained(
        str(folder), num_labels=3, dtype=torch.float64).eval()
    head = hub.to_hf_state_dict(ours)
    with torch.no_grad():
        for k, p in ref.named_parameters():
            if k in POOLER + HEAD:
                p.copy_(torch.from_numpy(head[k]))
    rng = np.random.default_rng(0)
    ids = rng.integers(5, ours.config.vocab_size, size=(3, 9))
    mask = np.ones_like(ids)
    mask[1, 6:] = mask[2, 3:] = 0
    with torch.no_grad():
        want = ref(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).logits
    got = ours.eval()(ids, attention_mask=mask)
    np.testing.assert_allclose(got, want.numpy(), rtol=0, atol=1e-12)


def test_a_trained_classifier_loads_without_warning_and_checks_num_labels(folders):
    import warnings
    folder = folders["BertForSequenceClassification"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")                               # nothing new: no warning
        model = hub.from_pretrained(folder, kind="bert_cls")
    assert model.new_weights == [] and model.config.num_classes == 4
    with pytest.raises(ValueError, match="num_labels: .* 4 classes, got num_labels=3"):
        hub.from_pretrained(folder, kind="bert_cls", num_labels=3)
    with pytest.raises(ValueError, match="num_labels: only with kind='bert_cls'"):
        hub.from_pretrained(folders["BertForMaskedLM"], num_labels=3)
    with pytest.raises(ValueError, match="num_labels: expected an int >= 1, got 0"):
        hub.from_pretrained(folders["BertForMaskedLM"], kind="bert_cls", num_labels=0)


def test_bert_classifier_recipe_fine_tunes(folders):
    """docs/GPT2_BERT.md's BERT recipe on a tiny masked-LM folder (a larger rate: random weights)."""
    import npformer as nf
    from npformer.data.tokenizers import WordPieceTokenizer
    folder = folders["BertForMaskedLM"]
    model, _ = load(folder, num_labels=2, seed=0)
    model.train()
    tok = WordPieceTokenizer.from_folder(str(folder))
    texts, labels = ["the capital of France is Paris", "the lazy dog"], np.array([1, 0])
    rows = [tok.encode(t) for t in texts]
    ids = np.zeros((len(rows), max(map(len, rows))), dtype=np.int64)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
    mask = (ids != 0).astype(np.int64)
    assert mask.sum() < mask.size                             # one row is padded
    opt, loss_fn = nf.AdamW(model.parameters(), lr=1e-3), nf.CrossEntropyLoss()
    losses = []
    for _ in range(5):
        losses.append(float(loss_fn(model(ids, attention_mask=mask), labels)))
        model.zero_grad()
        model.backward(loss_fn.backward())
        opt.step()
    assert losses[-1] < losses[0]
    assert model.classifier.weight.grad is not None and np.abs(model.classifier.weight.grad).sum() > 0
