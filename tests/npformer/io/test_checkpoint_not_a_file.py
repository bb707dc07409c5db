"""A checkpoint path that names something other than a file says what it is, in both twins: a folder
(pointing to the checkpoints it holds), a named pipe, a device. Each said only `not a file`; a
symbolic link to a file that is gone said `no such file` without naming the link's target."""
import os

import pytest

import npformer as nf
from npformer.io.checkpoint_file import CheckpointError

LOADERS = [nf.load_model, nf.load_checkpoint, nf.load_training_state]
try:
    import torchformer as tf
    LOADERS += [tf.load_model, tf.load_training_state]
except ImportError:                                     # numpy only: npformer's loaders
    pass


@pytest.mark.parametrize("load", LOADERS)
def test_a_folder_of_checkpoints_names_them(tmp_path, load):
    for name in ("a.npz", "b.npz", "c.npz", "d.npz", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    with pytest.raises(CheckpointError, match=f"checkpoint {tmp_path}: is a folder, not a checkpoint "
                                              f"file; it holds a.npz, b.npz, c.npz and 1 more: name "
                                              f"the file$"):
        load(tmp_path)


@pytest.mark.parametrize("load", LOADERS)
def test_a_pipe_and_a_device_say_what_they_are(tmp_path, load):
    fifo = tmp_path / "run.npz"
    os.mkfifo(fifo)
    with pytest.raises(CheckpointError, match=f"checkpoint {fifo}: is a named pipe, not a checkpoint "
                                              f"file: a checkpoint is read from a regular file"):
        load(fifo)
    with pytest.raises(CheckpointError, match="checkpoint /dev/null: is a character device, not a "
                                              "checkpoint file"):
        load("/dev/null")


@pytest.mark.parametrize("load", LOADERS)
def test_a_link_that_leads_nowhere_says_so(tmp_path, load):
    link = tmp_path / "run.npz"
    link.symlink_to(tmp_path / "moved" / "run.npz")
    with pytest.raises(FileNotFoundError, match=f"checkpoint {link}: no such file \\(a symbolic link "
                                                f"to '{tmp_path}/moved/run.npz', which leads "
                                                f"nowhere\\)"):
        load(link)
