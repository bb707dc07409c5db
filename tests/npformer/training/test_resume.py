"""`train --resume`: N steps, save, resume M more == N + M uninterrupted, bit for bit (npformer), with
dropout on so the dropout generator's position matters as much as the data order's."""
import numpy as np
import pytest

from npformer.cli.main import main
from npformer.data.tasks import Task, batch_iterator
from npformer.io import checkpoint as ck
from npformer.training.resume import BatchStream, load_training_state
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args(steps=None, max_len=4, num_symbols=5, dropout=0.2, warmup=3, seed=3)


def weights(path):
    c = ck.load_checkpoint(path)
    return c.state, c.optimizer_state, c.schedule_state, c.step


def assert_identical(a, b):
    sa, oa, ha, ta = a
    sb, ob, hb, tb = b
    assert ta == tb and ha == hb
    assert sa.keys() == sb.keys()
    for k in sa:
        assert np.array_equal(sa[k], sb[k]), k                  # bit-identical, not allclose
    for p in oa["state"]:
        for key, v in oa["state"][p].items():
            assert np.array_equal(v, ob["state"][p][key]), (p, key)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_resume_equals_uninterrupted(tmp_path, capsys, backend):
    if backend == "torch":
        pytest.importorskip("torch")
    extra = ["--backend", backend]
    full, half, resumed = (str(tmp_path / n) for n in ("full.npz", "half.npz", "resumed.npz"))
    assert main(["train", *TINY, *extra, "--steps", "5", "--save", full]) == 0
    assert main(["train", *TINY, *extra, "--steps", "3", "--save", half]) == 0
    assert main(["train", *extra, "--resume", half, "--steps", "2", "--save", resumed,
                 "--no-progress", "--examples", "0", "--eval-size", "4"]) == 0
    capsys.readouterr()
    a, b = weights(full), weights(resumed)
    assert b[3] == 5
    assert_identical(a, b)
    # without the saved data order and dropout state the run differs (so the test can fail)
    c = weights(half)
    assert not all(np.array_equal(a[0][k], c[0][k]) for k in a[0])


def test_batch_stream_is_batch_iterator_and_resumes():
    task = Task("reverse", num_symbols=5, max_len=4)
    it, s = batch_iterator(task, 4, seed=7), BatchStream(task, 4, seed=7)
    for _ in range(3):
        a, b = next(it), next(s)
        assert np.array_equal(a.src, b.src) and np.array_equal(a.tgt_out, b.tgt_out)
    sd = s.state_dict()
    s2 = BatchStream(task, 4, seed=7)
    s2.load_state_dict(sd)
    assert np.array_equal(next(s2).src, next(it).src)
    with pytest.raises(ValueError, match="batch_size"):
        BatchStream(task, 5, seed=7).load_state_dict(sd)


def test_resume_from_a_model_only_checkpoint_is_refused(tmp_path, capsys):
    from npformer.models.config import TransformerConfig
    from npformer.models.transformer import Transformer
    p = tmp_path / "m.npz"
    ck.save_checkpoint(p, Transformer(TransformerConfig(d_model=8, num_heads=2, d_ff=8,
                                                        vocab_size=8, max_len=6)))
    with pytest.raises(ck.CheckpointError, match="no training state"):
        load_training_state(p)
    assert main(["train", "--resume", str(p), "--steps", "1", "--no-progress"]) == 2
    assert "no training state" in capsys.readouterr().err


def test_a_checkpoint_with_an_optimizer_but_no_run_says_what_writes_a_run(tmp_path):
    """save_checkpoint(model, optimizer, schedule) keeps no task or data position: the refusal
    names what writes a resumable run and how to read the weights, not 'save_checkpoint(model)'."""
    import npformer as nf
    model = nf.Transformer(nf.TransformerConfig(d_model=8, num_heads=2, d_ff=8, vocab_size=8, max_len=6))
    opt = nf.Adam(model.parameters(), lr=1e-3)
    p = tmp_path / "model.npz"
    nf.save_checkpoint(p, model, opt, nf.WarmupSchedule(opt, d_model=8, warmup_steps=4), step=1)
    with pytest.raises(ck.CheckpointError) as e:
        load_training_state(p)
    assert "npformer train --save" in str(e.value) and "load_model" in str(e.value), str(e.value)
    assert "save_checkpoint(model)" not in str(e.value)


def test_resume_with_the_other_backend_is_refused(tmp_path, capsys):
    pytest.importorskip("torch")
    half = str(tmp_path / "half.npz")
    assert main(["train", *TINY, "--steps", "1", "--save", half]) == 0
    assert main(["train", "--backend", "torch", "--resume", half, "--steps", "1",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "saved by the numpy backend" in err[0] and "--backend numpy" in err[0]
