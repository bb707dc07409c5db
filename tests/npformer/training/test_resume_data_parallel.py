"""`train --threads 2 --data-parallel on` with dropout, resumed: N steps, save, M more equal N + M in
one run, bit for bit, as a one-thread run does. The replicas' dropout generators were spawned afresh
from the model's at every start, so a resumed run drew other masks than the uninterrupted one."""
import numpy as np

from npformer.cli.main import main
from npformer.io import checkpoint as ck
from npformer.training.parallel import DataParallel
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args(steps=None, max_len=4, num_symbols=5, dropout=0.2, warmup=3, seed=3,
                       batch_size=8)
PARALLEL = ["--threads", "2", "--data-parallel", "on"]


def test_a_resumed_data_parallel_run_equals_the_uninterrupted_one(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("npformer.cli.option_rules.available_cpus", lambda: 2)   # --threads 2 anywhere
    full, half, resumed = (str(tmp_path / n) for n in ("full.npz", "half.npz", "resumed.npz"))
    assert main(["train", *TINY, *PARALLEL, "--steps", "4", "--save", full]) == 0
    assert main(["train", *TINY, *PARALLEL, "--steps", "2", "--save", half]) == 0
    assert main(["train", "--resume", half, "--steps", "2", "--save", resumed, *PARALLEL,
                 "--no-progress", "--examples", "0", "--eval-size", "4"]) == 0
    assert "data parallelism: 2 replicas" in capsys.readouterr().out
    a, b = ck.load_checkpoint(full), ck.load_checkpoint(resumed)
    assert b.step == 4 and a.state.keys() == b.state.keys()
    for k in a.state:
        assert np.array_equal(a.state[k], b.state[k]), k
    assert a.metadata["resume"] == b.metadata["resume"]


def test_the_replicas_masks_follow_from_the_models_generator_alone():
    """A wrapper that has stepped before and a fresh one, their models' generators put in one state,
    draw the same masks in every replica at the next step."""
    import npformer as nf
    from npformer.data.tasks import Task, batch_iterator
    from npformer.training.train import build_model, model_config_for
    task = Task("reverse", num_symbols=5, max_len=4)
    batch = next(batch_iterator(task, 8, seed=0))

    def wrapper():
        model = build_model(model_config_for(task, d_model=8, num_heads=2, d_ff=16, dropout=0.3,
                                             num_encoder_layers=1, num_decoder_layers=1), task, seed=1)
        model.train()
        gen = next(m.rng for _, m in model.named_modules() if type(m).__name__ == "Dropout")
        return DataParallel(model, 2), gen

    used, used_gen = wrapper()
    for _ in range(3):                                          # every replica's stream moves on
        used.step(batch, nf.CrossEntropyLoss())
    fresh, fresh_gen = wrapper()
    used_gen.bit_generator.state = fresh_gen.bit_generator.state
    masks = []
    for dp in (used, fresh):
        with dp:
            dp.step(batch, nf.CrossEntropyLoss())
            masks.append(dp.collect_dropout_masks())
    for k in range(2):
        assert masks[0][k].keys() == masks[1][k].keys() and masks[0][k]
        for name in masks[0][k]:
            assert np.array_equal(masks[0][k][name], masks[1][k][name]), (k, name)
