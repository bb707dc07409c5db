"""Output file names near and beyond the file system's limit (255 bytes on most): a name that fits
is saved (its temp file's name is shortened), one that does not is refused before any work."""
from __future__ import annotations

import errno
import os

import pytest

from npformer.io.files import (
    OutputPathError,
    atomic_write,
    check_output_file,
    clean_stale_temps,
    name_max,
    temp_name,
)
from npformer.io.safetensors import write_safetensors
from tests.npformer.conftest import run_cli, tiny_train_args


def _fits(tmp_path) -> str:
    return "a" * (name_max(tmp_path) - 4) + ".npz"


def test_a_name_at_the_limit_is_saved_and_leaves_no_temp(tmp_path):
    path = tmp_path / _fits(tmp_path)
    atomic_write(path, lambda f: f.write(b"data"))     # was ENAMETOOLONG on the temp file
    assert path.read_bytes() == b"data" and os.listdir(tmp_path) == [path.name]
    assert len(os.fsencode(temp_name(path).name)) <= name_max(tmp_path)


def test_a_stale_temp_of_a_long_name_is_removed_by_the_next_save(tmp_path):
    path = tmp_path / _fits(tmp_path)
    stale = temp_name(path, pid=2 ** 22 + 12345)       # no such process
    stale.write_bytes(b"half")
    assert clean_stale_temps(tmp_path, path.name) == [stale]


def test_a_name_beyond_the_limit_is_refused_before_any_work(tmp_path, capsys):
    long_name = "a" * (name_max(tmp_path) + 1)
    with pytest.raises(OutputPathError, match="--save.*file name is .* bytes"):
        check_output_file(tmp_path / long_name, "--save")
    with pytest.raises(OSError) as e:
        write_safetensors(tmp_path / long_name, {})
    assert e.value.errno == errno.ENAMETOOLONG
    code, out, err = run_cli(["train", *tiny_train_args(steps=2),
                              "--save", str(tmp_path / long_name)], capsys)
    assert code == 2 and "file name is" in err and "step" not in out
    assert os.listdir(tmp_path) == []
