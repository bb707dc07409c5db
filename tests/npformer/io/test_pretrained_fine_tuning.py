"""Fine-tuning a pretrained folder with the hand-written backward takes the same steps as
transformers + torch.optim on the same folder (float64, dropout 0):

  GPT-2   npformer.training.train.train (what `npformer train --init` runs: Adam(0.9, 0.98, 1e-9),
          the warm-up schedule, clipping) on batches of the folder's own tokenizer, against
          GPT2LMHeadModel with torch.optim.Adam, the same schedule written out and
          clip_grad_norm_: the loss of every step and every weight after it.
  BERT    the classifier with a fresh head (hub.from_pretrained(kind="bert_cls")) on padded
          sentences, npformer's Adam against BertForSequenceClassification given that head.

Tolerances (every quantity float64): observed, losses differ by <= 3e-16 relative and weights by
<= 3e-14 absolute, except the attention KEY biases: their gradient is exactly zero in exact
arithmetic (a constant added to every score of a row leaves the softmax unchanged), so both
frameworks hold rounding noise (~1e-17) there, which Adam turns into updates of noise / eps
(eps 1e-9), ~1e-12 per step, different in each. Those are compared at KEY_BIAS_TOL, the rest at
WEIGHT_TOL, both far below one Adam step (lr 1e-3)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import npformer as nf
from npformer.io import hub
from tests.npformer.io.tiny_folders import bert_folder, gpt2_folder, text_file

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers", reason="the [hf] extra is not installed")
pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")

STEPS, LR, WARMUP, CLIP = 4, 1e-3, 2, 0.5
LOSS_TOL, WEIGHT_TOL, KEY_BIAS_TOL = 1e-13, 1e-12, 1e-10


def warmup_lr(step: int) -> float:
    """The peak-LR form of the schedule: rises linearly to LR at WARMUP, then decays as step^-0.5."""
    return LR * min(math.sqrt(WARMUP / step), step / WARMUP)


def key_bias_part(name: str, value: np.ndarray):
    """The slice of `name` holding attention key biases (None: none of it)."""
    if name.endswith("attention.self.key.bias"):
        return slice(None)
    if name.endswith("attn.c_attn.bias"):                         # GPT-2's packed q|k|v
        d = value.shape[0] // 3
        return slice(d, 2 * d)
    return None


def assert_same_weights(ours: dict, ref_model):
    ref = {k: v.detach().numpy() for k, v in ref_model.state_dict().items()}
    for k, v in ours.items():
        key = key_bias_part(k, v)
        rest = np.ones(v.shape, dtype=bool)
        if key is not None:
            rest[key] = False
            np.testing.assert_allclose(v[key], ref[k][key], rtol=0, atol=KEY_BIAS_TOL, err_msg=k)
        np.testing.assert_allclose(v[rest], ref[k][rest], rtol=0, atol=WEIGHT_TOL, err_msg=k)
    assert len(ours) > 20


def test_gpt2_training_loop_equals_transformers_and_torch_adam(tmp_path):
    folder = gpt2_folder(tmp_path / "gpt2", dropout=0.0)
    from npformer.data.text_lm import TextLMTask
    from npformer.data.tokenizers import GPT2Tokenizer
    from npformer.training.train import TrainConfig, train
    task = TextLMTask([str(text_file(tmp_path / "t.txt"))], GPT2Tokenizer.from_folder(str(folder)),
                      context=16)
    rng = np.random.default_rng(0)
    batches = [task.collate(task.sample(rng, 3)) for _ in range(STEPS)]
    ours = hub.from_pretrained(folder, "float64")
    tc = TrainConfig(steps=STEPS, batch_size=3, lr=LR, warmup=WARMUP, clip_norm=CLIP,
                     label_smoothing=0.0, progress=False)
    result = train(ours, task, tc, batches=batches)

    ref = transformers.GPT2LMHeadModel.from_pretrained(str(folder), dtype=torch.float64).train()
    opt = torch.optim.Adam(ref.parameters(), lr=LR, betas=(0.9, 0.98), eps=1e-9)
    losses = []
    for n, b in enumerate(batches, start=1):
        for g in opt.param_groups:
            g["lr"] = warmup_lr(n)
        logits = ref(input_ids=torch.from_numpy(b.ids)).logits                 # (B, T, V)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 torch.from_numpy(b.targets).reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ref.parameters(), CLIP)
        opt.step()
        losses.append(loss.item())
    np.testing.assert_allclose(result.lrs, [warmup_lr(n) for n in range(1, STEPS + 1)], rtol=1e-14)
    np.testing.assert_allclose(result.losses, losses, rtol=LOSS_TOL)
    assert result.losses[-1] < result.losses[0]
    hf_state = hub.to_hf_state_dict(ours)
    assert_same_weights({k: v for k, v in hf_state.items() if k != "lm_head.weight"}, ref)


def test_bert_classifier_with_a_fresh_head_fine_tunes_like_transformers(tmp_path):
    folder = bert_folder(tmp_path / "bert", dropout=0.0)
    with pytest.warns(UserWarning, match="newly initialized"):
        ours = hub.from_pretrained(folder, "float64", kind="bert_cls", num_labels=3, seed=0)
    ref = transformers.BertForSequenceClassification.from_pretrained(
        str(folder), num_labels=3, dtype=torch.float64)
    head = hub.to_hf_state_dict(ours)
    with torch.no_grad():                                   # the same fresh head in both
        for k, p in ref.named_parameters():
            if k in ours.new_weights:
                p.copy_(torch.from_numpy(head[k]))
    rng = np.random.default_rng(1)
    ids = rng.integers(5, ours.config.vocab_size, size=(STEPS, 4, 10))
    mask = (np.arange(10)[None, None, :] < rng.integers(3, 11, size=(STEPS, 4, 1))).astype(np.int64)
    labels = rng.integers(0, 3, size=(STEPS, 4))
    ours.train()
    ref.train()
    opt = nf.Adam(ours.parameters(), lr=LR, betas=(0.9, 0.98), eps=1e-9)
    t_opt = torch.optim.Adam(ref.parameters(), lr=LR, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = nf.CrossEntropyLoss()
    for n in range(STEPS):
        loss = float(loss_fn(ours(ids[n], attention_mask=mask[n]), labels[n]))
        ours.zero_grad()
        ours.backward(loss_fn.backward())
        opt.step()
        out = ref(input_ids=torch.from_numpy(ids[n]), attention_mask=torch.from_numpy(mask[n]),
                  labels=torch.from_numpy(labels[n]))
        t_opt.zero_grad()
        out.loss.backward()
        t_opt.step()
        assert loss == pytest.approx(out.loss.item(), rel=LOSS_TOL, abs=0), n
    assert_same_weights(hub.to_hf_state_dict(ours), ref)
