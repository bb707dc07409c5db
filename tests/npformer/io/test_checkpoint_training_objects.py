"""save_checkpoint and restore, in both twins, refuse an optimizer or a schedule that is not the
twin's own kind (a string, the other twin's, the two swapped) in one line naming the argument,
before a file is written or a weight is changed (they were AttributeErrors from inside)."""
import os

import numpy as np
import pytest

import npformer as nf
import torchformer as tf

CFG = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1,
                           vocab_size=11, max_len=6, dropout=0.0)


def twins():
    np_model, tf_model = nf.Transformer(CFG), tf.Transformer(CFG)
    np_opt = nf.Adam(np_model.named_parameters(), lr=0.1)
    tf_opt = tf.Adam(tf_model.parameters(), lr=0.1)
    np_sched = nf.WarmupSchedule(np_opt, d_model=8, warmup_steps=4)
    tf_sched = tf.WarmupSchedule(tf_opt, d_model=8, warmup_steps=4)
    return {"npformer": (nf, np_model, np_opt, np_sched, tf_opt),
            "torchformer": (tf, tf_model, tf_opt, tf_sched, np_opt)}


@pytest.mark.parametrize("twin", ["npformer", "torchformer"])
def test_foreign_optimizers_and_schedules_are_refused_before_writing(twin, tmp_path):
    tw, model, opt, sched, other_opt = twins()[twin]
    a = "an" if twin == "npformer" else "a"
    other = "torchformer Adam" if twin == "npformer" else "npformer Adam"
    cases = [
        ({"optimizer": "adam"}, f"optimizer: expected None or {a} {twin} optimizer (SGD, Adam, AdamW), got str"),
        ({"optimizer": other_opt}, f"optimizer: expected None or {a} {twin} optimizer (SGD, Adam, AdamW), got {other}"),
        ({"optimizer": sched}, f"optimizer: expected None or {a} {twin} optimizer"),
        ({"optimizer": opt, "schedule": opt}, f"schedule: expected None or {a} {twin} WarmupSchedule, got "),
    ]
    path = tmp_path / "run.npz"
    for kwargs, message in cases:
        with pytest.raises(TypeError) as e:
            tw.save_checkpoint(path, model, **kwargs)
        assert str(e.value).startswith("save_checkpoint: " + message), str(e.value)
        assert not path.exists() and os.listdir(tmp_path) == []
    tw.save_checkpoint(path, model, opt, sched, step=3)
    fresh = (nf if twin == "npformer" else tf).Transformer(CFG, seed=5)
    before = {k: np.array(v.detach().numpy() if hasattr(v, "detach") else v, copy=True)
              for k, v in fresh.state_dict().items()}
    for kwargs, message in cases:
        with pytest.raises(TypeError) as e:
            tw.restore(path, fresh, **kwargs)
        assert str(e.value).startswith("restore: " + message), str(e.value)
    after = {k: np.array(v.detach().numpy() if hasattr(v, "detach") else v) for k, v in fresh.state_dict().items()}
    assert all(np.array_equal(before[k], after[k]) for k in before)        # nothing was loaded
    assert tw.restore(path, fresh).step == 3
