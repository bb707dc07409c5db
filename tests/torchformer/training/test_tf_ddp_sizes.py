"""torchformer.training.distributed.train checks its sizes before a batch is drawn, as the one-process
trainers do (npformer.training.train.check_sizes_fit): `torchrun -m torchformer.training.distributed
--batch-size 100000000` was killed by the kernel (SIGKILL, out of memory) instead of refusing.
Processes on one machine share its memory, so the whole batch counts there; on GPUs each device
holds its share of the rows."""
import socket

import pytest

import npformer.guards.rules as rules
from npformer.models.config import TransformerConfig

torch = pytest.importorskip("torch")
if not torch.distributed.is_available():  # pragma: no cover - depends on the torch build
    pytest.skip("torch.distributed is not available", allow_module_level=True)

from npformer.data.tasks import make_task  # noqa: E402
from npformer.training.resume import BatchStream  # noqa: E402
from npformer.training.train import TrainConfig, model_config_for  # noqa: E402


@pytest.fixture
def one_process_group(monkeypatch):
    """A real gloo group of one process (rank 0 of 1), as torchrun would set it up; torn down after."""
    import torchformer.training.distributed as D
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for k, v in dict(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
                     MASTER_PORT=str(port)).items():
        monkeypatch.setenv(k, v)
    rng = torch.random.get_rng_state()                    # init seeds torch's global generator
    dev = D.init("cpu")
    try:
        yield D, dev
    finally:
        torch.distributed.destroy_process_group()
        torch.random.set_rng_state(rng)


@pytest.mark.parametrize("given", ["config", "stream"])
def test_a_batch_beyond_memory_is_refused_before_drawing(one_process_group, monkeypatch, given):
    import torchformer.training.train as T
    D, dev = one_process_group
    task = make_task("reverse")
    model = T.build_model(model_config_for(task, d_model=8, num_heads=2, d_ff=16,
                                           num_encoder_layers=1, num_decoder_layers=1),
                          task, seed=0, device=dev)
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    config = TrainConfig(steps=1, batch_size=1000, progress=False, eval_every=0)
    batches = BatchStream(task, 1000, 0) if given == "stream" else None
    drawn = batches.state_dict() if batches is not None else None
    monkeypatch.setattr(rules, "physical_memory", lambda: 64 * 1024)
    with pytest.raises(ValueError, match=r"^TrainConfig\.batch_size: expected a size whose arrays fit "
                                         r"in this machine's available memory \(64\.0 KiB\), got 1,000: "):
        D.train(model, task, config, batches=batches)
    if batches is not None:
        assert batches.state_dict() == drawn                        # nothing drawn from the stream
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


CONFIG = TransformerConfig(d_model=8, num_heads=2, d_ff=8, num_encoder_layers=1,
                           num_decoder_layers=1, max_len=12, vocab_size=13)
PER_ROW = 2 * 11 * 11 * 4 + 11 * 13 * 4            # attention weights and logits, float32: 1,540


def test_rows_split_over_devices_count_each_devices_share():
    """4 processes on 4 devices of 100 rows' memory each: 400 rows fit, 401 do not (101 on a
    device), and the message says how many rows each device holds."""
    memory = 100 * PER_ROW
    rules.check_training_fits_memory(CONFIG, 11, False, 400, None, memory, processes=4)
    with pytest.raises(ValueError) as err:
        rules.check_training_fits_memory(CONFIG, 11, False, 401, None, memory, processes=4)
    assert "the device's memory" in str(err.value)
    assert "got 401 (101 on each of 4 processes' devices): at least 1,540 bytes" in str(err.value)


def test_processes_sharing_this_machines_memory_count_every_row(monkeypatch):
    """On the CPU the processes share one memory: 400 rows over 4 processes need all 400 rows."""
    monkeypatch.setattr(rules, "physical_memory", lambda: 100 * PER_ROW)
    rules.check_training_fits_memory(CONFIG, 11, False, 100, None, None, processes=4)
    with pytest.raises(ValueError) as err:
        rules.check_training_fits_memory(CONFIG, 11, False, 400, None, None, processes=4)
    assert "got 400 (the 4 processes share it): at least 1,540 bytes" in str(err.value)
